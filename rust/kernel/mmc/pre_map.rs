// SPDX-License-Identifier: GPL-2.0

//! DMA mapping of an MMC request's data in `pre_req`, off the request path.
//!
//! C header: [`include/linux/dma-mapping.h`](srctree/include/linux/dma-mapping.h)
//!
//! A mapping made by [`pre_map`] is undone exactly once: by the layer's `post_req`
//! ([`unmap_pre_mapped`], whatever the driver's `post_req` does) after a transfer, or by the
//! request path ([`DmaRequest`]) if it bounces or fails the request. A driver that uses
//! [`pre_map`] keeps its own `host_cookie` values positive (0 is the core's); negative ones are
//! refused.

use super::{
    dma::{
        dma_dir,
        host_dma_dev,
        is_pre_mapped,
        COOKIE_PRE_MAPPED,
        SKIP_CPU_SYNC, //
    },
    IdleRequest, //
};

use crate::bindings;

/// Maps the data of `mrq` in `pre_req` and marks it `COOKIE_PRE_MAPPED`.
///
/// The data is a single scatterlist entry that the driver will send direct; it is mapped for
/// the DMA device of its host with its cache maintenance (`dma_map_sg()`: a clean for a write,
/// an invalidate for a read). Returns whether it did: not if the cookie is set already, or if
/// the mapping gave other than one segment (then nothing stays mapped and `request` maps it
/// itself).
pub(crate) fn pre_map(mrq: &IdleRequest) -> bool {
    let (Some(data), Some(dir)) = (mrq.data(), dma_dir(mrq.data())) else {
        return false;
    };
    // SAFETY: `mrq` was passed to a callback of its host, which is running.
    let dev = unsafe { host_dma_dev(mrq.host_raw()) }.as_ptr();
    let sg = data.sg_list();
    if data.host_cookie() != 0 || sg.len() != 1 {
        return false;
    }
    // SAFETY: `dev` is bound; `sg` is the valid scatterlist of one entry of a request that is
    // idle, so the request path holds no mapping of it, and whose cookie is 0, so no earlier
    // `pre_map` does either (the core maps nothing of a host's requests).
    let count = unsafe { bindings::dma_map_sg_attrs(dev, sg.as_raw(), 1, dir.into(), 0) };
    match count {
        1 => {
            data.write_host_cookie(COOKIE_PRE_MAPPED);
            true
        }
        0 => false,
        _ => {
            // SAFETY: Mapped just now for `dir` on `dev` with its one entry; the device never
            // had it.
            unsafe { bindings::dma_unmap_sg_attrs(dev, sg.as_raw(), 1, dir.into(), SKIP_CPU_SYNC) };
            false
        }
    }
}

/// Unmaps the data of `mrq` in `post_req` if it is still mapped from `pre_req`.
///
/// The data is unmapped if the request path left it mapped (it went direct), on the DMA device
/// of its host, synchronizing it for the CPU (the invalidate after a read), and the cookie is
/// cleared. Returns whether it did. The layer's `post_req` calls it for every request, before
/// the driver's own `post_req`, so a mapping [`pre_map`] made never outlives the request's
/// `post_req`.
pub(super) fn unmap_pre_mapped(mrq: &IdleRequest) -> bool {
    let (Some(data), Some(dir)) = (mrq.data(), dma_dir(mrq.data())) else {
        return false;
    };
    if !is_pre_mapped(data) {
        return false;
    }
    let sg = data.sg_list();
    // SAFETY: `mrq` was passed to a callback of its host, which is running.
    let dev = unsafe { host_dma_dev(mrq.host_raw()) }.as_ptr();
    // SAFETY: The cookie says `pre_map` mapped the one-entry scatterlist for `dir` on `dev`, the
    // DMA device of the host whose `pre_req` it was passed to, which is this request's host
    // (only `pre_map` writes that value: `set_host_cookie` ignores negative ones) and nothing
    // unmapped it since (every unmapping clears the cookie); the request is idle, so the
    // controller is done with it.
    unsafe { bindings::dma_unmap_sg_attrs(dev, sg.as_raw(), 1, dir.into(), 0) };
    data.write_host_cookie(0);
    true
}
