// SPDX-License-Identifier: GPL-2.0

//! The module parameters, the queue limits they give and the rule of a request's data path.
//!
//! Of the SDHC driver's parameters two apply, with the same names and meanings:
//! `bounce_size` (-1, the default: the largest request, 128 KiB; 0: no bounce buffer, the C
//! driver's limits; else a power of two from 4 KiB to 128 KiB) and `max_segs` (1 to 256, the
//! most segments of a request with the bounce buffer). The others do not:
//! `max_dma_size` (a command moves at most 255 blocks, `SEND.REPEAT_PACKAGE_TIMES`, and the
//! largest request is the C driver's 128 KiB: there is no larger transfer to allow),
//! `bounce_cached`, `skip_clean_invalidate` and `double_buffer` (the bounce buffer is one
//! buffer of coherent memory, with no cache maintenance to choose or skip), `dram_write_check`
//! (no read's last words are checked in memory) and `sdio_irq` (the driver has no SDIO card
//! interrupt, as the C driver).

use core::fmt;

use super::data_path::PathRule;
use super::params::{
    self,
    BounceSizeMsg,
    MaxSegsMsg,
    BOUNCE_SIZE_DEFAULT, //
};

/// The largest request in bytes, and the largest bounce buffer.
///
/// The C driver's `max_req_size`.
pub(crate) const MAX_REQ_SIZE: u32 = 128 * 1024;

/// The alignment of a segment the controller takes in place, in bytes.
///
/// A word, as the C driver refuses any other (`meson_mx_mmc_map_dma()`: offset and length multiples
/// of 4).
pub(crate) const WORD: u32 = 4;

/// A module parameter out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamError {
    /// `bounce_size` is not -1, 0 or a power of two from 4096 to [`MAX_REQ_SIZE`].
    BounceSize(i32),
    /// `max_segs` is not from 1 to 256.
    MaxSegs(u32),
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::BounceSize(v) => fmt::Display::fmt(
                &BounceSizeMsg {
                    value: v,
                    default: "the largest request, 131072",
                    max: MAX_REQ_SIZE,
                },
                f,
            ),
            Self::MaxSegs(v) => fmt::Display::fmt(&MaxSegsMsg(v), f),
        }
    }
}

/// The queue limits the parameters give the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueueLimits {
    /// Most segments per request.
    pub(crate) max_segs: u16,
    /// Largest request, and largest segment, in bytes.
    pub(crate) max_req_size: u32,
}

/// Validated module parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    /// Size of the bounce buffer in bytes.
    ///
    /// 0 for none.
    pub(crate) bounce_size: u32,
    /// Most segments per request with the bounce buffer.
    pub(crate) max_segs: u16,
}

impl Params {
    /// Checks the parameters as given.
    ///
    /// `bounce_size` is checked first.
    pub(crate) fn from_module(bounce_size: i32, max_segs: u32) -> Result<Self, ParamError> {
        let bounce = match bounce_size {
            BOUNCE_SIZE_DEFAULT => MAX_REQ_SIZE,
            0 => 0,
            v => u32::try_from(v)
                .ok()
                .filter(|v| params::pow2_size_ok(*v, MAX_REQ_SIZE))
                .ok_or(ParamError::BounceSize(v))?,
        };
        let max_segs = params::max_segs(max_segs).ok_or(ParamError::MaxSegs(max_segs))?;
        Ok(Self {
            bounce_size: bounce,
            max_segs,
        })
    }

    /// Returns the queue limits.
    ///
    /// With a bounce buffer, `max_segs` segments and requests as large as the buffer; without one
    /// the C driver's, one segment of up to [`MAX_REQ_SIZE`].
    pub(crate) fn limits(&self) -> QueueLimits {
        match self.bounce_size {
            0 => QueueLimits {
                max_segs: 1,
                max_req_size: MAX_REQ_SIZE,
            },
            size => QueueLimits {
                max_segs: self.max_segs,
                max_req_size: size,
            },
        }
    }

    /// Returns the rule of a request's data path.
    ///
    /// One segment of whole, aligned words goes to the controller in place; any other request goes
    /// through the bounce buffer if it fits, and fails if it does not.
    pub(crate) fn path_rule(&self) -> PathRule {
        PathRule {
            granule: WORD,
            bounce: self.bounce_size,
            max_direct: MAX_REQ_SIZE,
            force_bounce: false,
        }
    }
}
