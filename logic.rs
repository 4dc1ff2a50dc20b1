// SPDX-License-Identifier: GPL-2.0

//! Pure decisions of the driver, free of kernel types so that they can be unit tested on the
//! host (`tests/host/`, `cargo test`): the module parameters and the queue limits they give,
//! whether a request goes straight to the controller or through the bounce buffer, and how
//! much of a bounced read is copied back.
//!
//! Plain `core` Rust only: no allocation, no kernel imports.

use core::fmt;

/// Smallest bounce buffer, in bytes (one page).
pub(crate) const BOUNCE_MIN: u32 = 4 * 1024;
/// Largest bounce buffer, in bytes.
pub(crate) const BOUNCE_MAX: u32 = 4 * 1024 * 1024;
/// Default `bounce_size`.
pub(crate) const BOUNCE_DEFAULT: u32 = 128 * 1024;
/// Most DMA segments a request may have (`max_segs` range is `1..=MAX_SEGS_LIMIT`).
pub(crate) const MAX_SEGS_LIMIT: u32 = 256;
/// Default `max_segs`.
pub(crate) const MAX_SEGS_DEFAULT: u32 = 64;
/// Largest block the controller transfers (`MESON_SDHC_MAX_BLK_SIZE`).
pub(crate) const MAX_BLK_SIZE: u32 = 512;
/// Most blocks of one command: `TOTAL_PACK` is 16 bits and holds `blocks - 1`.
pub(crate) const MAX_BLK_COUNT_HW: u32 = 65536;
/// The C driver's largest request (and segment), used without a bounce buffer.
pub(crate) const C_MAX_REQ_SIZE: u32 = 128 * 1024;
/// The C driver's block count limit (`FIELD_GET(MESON_SDHC_SEND_TOTAL_PACK, ~0)`).
pub(crate) const C_MAX_BLK_COUNT: u32 = 0xffff;

/// A module parameter that is out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamError {
    /// `bounce_size` is neither 0 nor a power of two from [`BOUNCE_MIN`] to [`BOUNCE_MAX`].
    BounceSize(u32),
    /// `max_segs` is not in `1..=`[`MAX_SEGS_LIMIT`].
    MaxSegs(u32),
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::BounceSize(v) => write!(
                f,
                "invalid bounce_size={}: must be 0 (no bounce buffer) or a power of two from {} to {}",
                v, BOUNCE_MIN, BOUNCE_MAX
            ),
            Self::MaxSegs(v) => write!(
                f,
                "invalid max_segs={}: must be from 1 to {}",
                v, MAX_SEGS_LIMIT
            ),
        }
    }
}

/// Validated module parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    /// Size of the bounce buffer in bytes; 0 for none.
    pub(crate) bounce_size: u32,
    /// Most DMA segments per request when bouncing.
    pub(crate) max_segs: u32,
}

impl Params {
    /// Checks the raw parameter values; `bounce_size` is checked first.
    pub(crate) fn new(bounce_size: u32, max_segs: u32) -> Result<Self, ParamError> {
        let bounce_ok = bounce_size == 0
            || (bounce_size.is_power_of_two() && (BOUNCE_MIN..=BOUNCE_MAX).contains(&bounce_size));
        if !bounce_ok {
            return Err(ParamError::BounceSize(bounce_size));
        }
        if !(1..=MAX_SEGS_LIMIT).contains(&max_segs) {
            return Err(ParamError::MaxSegs(max_segs));
        }
        Ok(Self {
            bounce_size,
            max_segs,
        })
    }
}

/// The queue limits of a host (`struct mmc_host`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Most DMA segments per request.
    pub(crate) max_segs: u32,
    /// Largest request, in bytes.
    pub(crate) max_req_size: u32,
    /// Largest DMA segment, in bytes.
    pub(crate) max_seg_size: u32,
    /// Largest block, in bytes.
    pub(crate) max_blk_size: u32,
    /// Most blocks per request.
    pub(crate) max_blk_count: u32,
}

impl Limits {
    /// The limits for `params`, given the size of the bounce buffer actually allocated (0 if
    /// there is none). Without a buffer these are the C driver's limits: one segment, 128 KiB.
    pub(crate) fn new(params: &Params, bounce_buffer: u32) -> Self {
        if bounce_buffer == 0 {
            return Self {
                max_segs: 1,
                max_req_size: C_MAX_REQ_SIZE,
                max_seg_size: C_MAX_REQ_SIZE,
                max_blk_size: MAX_BLK_SIZE,
                max_blk_count: C_MAX_BLK_COUNT,
            };
        }
        Self {
            max_segs: params.max_segs,
            max_req_size: bounce_buffer,
            max_seg_size: bounce_buffer,
            max_blk_size: MAX_BLK_SIZE,
            max_blk_count: MAX_BLK_COUNT_HW.min(bounce_buffer / MAX_BLK_SIZE),
        }
    }
}

/// How a request's data reaches the controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataPath {
    /// The scatterlist mapped to a single DMA segment: the controller uses it directly.
    Direct,
    /// More than one segment: the data goes through the bounce buffer.
    Bounce,
}

/// Why a request's data cannot be transferred.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathError {
    /// The mapping has no segment at all.
    NoSegments,
    /// More than one segment and no bounce buffer (`bounce` is its size, maybe 0) big enough
    /// for `len` bytes.
    TooBig {
        /// Mapped DMA segments.
        segments: u32,
        /// Bytes of the transfer.
        len: u32,
        /// Size of the bounce buffer (0: none).
        bounce: u32,
    },
}

/// Chooses the data path for a transfer of `len` bytes whose scatterlist mapped to `segments`
/// DMA segments, with a bounce buffer of `bounce` bytes (0: none).
pub(crate) fn data_path(segments: u32, len: u32, bounce: u32) -> Result<DataPath, PathError> {
    match segments {
        0 => Err(PathError::NoSegments),
        1 => Ok(DataPath::Direct),
        _ if bounce != 0 && len <= bounce => Ok(DataPath::Bounce),
        _ => Err(PathError::TooBig {
            segments,
            len,
            bounce,
        }),
    }
}

/// `bytes_xfered` of a finished transfer of `len` bytes: all of it, or 0 whenever the command
/// or the data phase reported an error.
pub(crate) fn bytes_xfered(cmd_error: bool, data_error: bool, len: u32) -> u32 {
    if cmd_error || data_error {
        0
    } else {
        len
    }
}

/// How many bytes of a bounced transfer to copy from the bounce buffer back into the
/// request's scatterlist: only for reads, only without a command or data error, and only
/// `bytes_xfered` bytes.
pub(crate) fn copy_back_len(read: bool, cmd_error: bool, data_error: bool, xfered: u32) -> u32 {
    if read && !cmd_error && !data_error {
        xfered
    } else {
        0
    }
}
