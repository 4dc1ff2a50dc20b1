// SPDX-License-Identifier: GPL-2.0

//! The driver's bounce buffers: `kernel::mmc::bounce` with the buffers the module parameters
//! ask for, the queue limits they give, and
//! the longest transfer this controller is given to one DMA address
//! ([`MAX_DIRECT_LEN`](crate::logic::MAX_DIRECT_LEN)).
//!
//! A buffer that cannot be allocated is not fatal: without the first the host keeps the C
//! driver's single-segment limits, without the second it bounces through one buffer.

use kernel::{
    device::{
        Bound,
        Device, //
    },
    prelude::*, //
};

use crate::{
    logic::{
        self,
        Params,
        MAX_DIRECT_LEN, //
    },
    mmc::bounce::{
        policy::Limits,
        BounceBuffer,
        Bouncer,
        MAX_BUFFERS, //
    }, //
};

/// The bounce buffers of a new host and the parameters they were allocated for.
pub(crate) struct Buffers {
    /// The module parameters.
    params: Params,
    /// The buffers: none, one, or two with `double_buffer`.
    bufs: [Option<BounceBuffer>; MAX_BUFFERS],
}

impl Buffers {
    /// Allocates the buffers the module parameters ask for, as many as can be had.
    pub(crate) fn allocate(dev: &Device<Bound>) -> Self {
        let params = crate::params();
        let first = first_buffer(dev, &params);
        let second = first.as_ref().and_then(|b| second_buffer(dev, b));
        Self {
            params,
            bufs: [first, second],
        }
    }

    /// Size of each buffer in bytes, 0 for none.
    pub(crate) fn size(&self) -> u32 {
        self.bufs[0].as_ref().map_or(0, BounceBuffer::size)
    }

    /// Whether the buffers are cached memory with streaming syncs.
    #[cfg(feature = "stats")]
    pub(crate) fn cached(&self) -> bool {
        self.bufs[0].as_ref().is_some_and(BounceBuffer::cached)
    }

    /// The number of buffers allocated.
    #[cfg(feature = "stats")]
    pub(crate) fn count(&self) -> usize {
        self.bufs.iter().filter(|b| b.is_some()).count()
    }

    /// The host's queue limits with these buffers.
    pub(crate) fn limits(&self) -> Limits {
        logic::limits(&self.params, self.size())
    }

    /// The bounce policy over these buffers, for a controller whose DMA mapping has the merge
    /// boundary `merge_boundary`.
    pub(crate) fn into_bouncer(self, merge_boundary: usize) -> impl PinInit<Bouncer> {
        Bouncer::new(
            self.bufs,
            merge_boundary,
            MAX_DIRECT_LEN,
            crate::skip_clean_invalidate(),
        )
    }
}

/// The bounce buffer of `bounce_size` bytes, if there is to be one and it can be allocated.
fn first_buffer(dev: &Device<Bound>, params: &Params) -> Option<BounceBuffer> {
    if params.bounce_size == 0 {
        return None;
    }
    BounceBuffer::new(dev, params.bounce_size, crate::bounce_cached())
        .inspect_err(|e| {
            dev_warn!(
                dev,
                "cannot allocate a {} byte bounce buffer (error {}), using single-segment requests\n",
                params.bounce_size,
                e.to_errno()
            )
        })
        .ok()
}

/// Without double buffering there is no second buffer: the host bounces through one.
#[cfg(not(feature = "double_buffer"))]
fn second_buffer(_dev: &Device<Bound>, _first: &BounceBuffer) -> Option<BounceBuffer> {
    None
}

/// The second bounce buffer of `double_buffer`, like the first; without it the host bounces
/// through one buffer.
#[cfg(feature = "double_buffer")]
fn second_buffer(dev: &Device<Bound>, first: &BounceBuffer) -> Option<BounceBuffer> {
    if !crate::double_buffer() {
        return None;
    }
    BounceBuffer::new(dev, first.size(), first.cached())
        .inspect_err(|e| {
            dev_warn!(
                dev,
                "cannot allocate a second {} byte bounce buffer (error {}), using one\n",
                first.size(),
                e.to_errno()
            )
        })
        .ok()
}
