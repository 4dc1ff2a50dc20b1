// SPDX-License-Identifier: GPL-2.0

//! The module parameter rules both drivers share (the SDHC's `logic.rs` and the SD card slot's
//! `sdio/logic.rs`).
//!
//! `max_segs`, and `bounce_size` as -1 (the driver's default size), 0 (no bounce buffer) or a power
//! of two in a range, with the messages that name the parameter, its value and the values it may
//! take.
//!
//! Plain `core` Rust only: no allocation, no kernel types.

use core::fmt;

/// Smallest bounce buffer, in bytes (one page).
pub(crate) const BOUNCE_MIN: u32 = 4 * 1024;
/// Most DMA segments a request may have (`max_segs` range is `1..=MAX_SEGS_LIMIT`).
pub(crate) const MAX_SEGS_LIMIT: u32 = 256;
/// Default `max_segs`.
pub(crate) const MAX_SEGS_DEFAULT: u32 = 64;
/// The `bounce_size` -1, the driver's default size (the SDHC's `max_dma_size`, the SD card slot's
/// largest request).
pub(crate) const BOUNCE_SIZE_DEFAULT: i32 = -1;

/// Returns whether `v` bytes is a power of two from [`BOUNCE_MIN`] to `max`.
pub(crate) fn pow2_size_ok(v: u32, max: u32) -> bool {
    v.is_power_of_two() && (BOUNCE_MIN..=max).contains(&v)
}

/// Returns `max_segs` as the host takes it, if it is from 1 to [`MAX_SEGS_LIMIT`].
pub(crate) fn max_segs(v: u32) -> Option<u16> {
    u16::try_from(v)
        .ok()
        .filter(|n| (1..=MAX_SEGS_LIMIT).contains(&u32::from(*n)))
}

/// The message of a `bounce_size` out of range.
///
/// `value`, what -1 means (`default`) and the largest power of two it may be (`max`). The value is
/// an `i32` or a `u32` as the driver took it (a 64-bit one would be printed with a 64-bit division,
/// which 32-bit ARM lacks).
pub(crate) struct BounceSizeMsg<V> {
    /// The parameter's value.
    pub(crate) value: V,
    /// What -1, the default, means.
    pub(crate) default: &'static str,
    /// The largest size.
    pub(crate) max: u32,
}

impl<V: fmt::Display> fmt::Display for BounceSizeMsg<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid bounce_size={}: must be -1 ({}, the default), 0 (no bounce buffer) or a power of two from {} to {}",
            self.value, self.default, BOUNCE_MIN, self.max
        )
    }
}

/// The message of a `max_segs` out of range.
pub(crate) struct MaxSegsMsg(pub(crate) u32);

impl fmt::Display for MaxSegsMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid max_segs={}: must be from 1 to {}",
            self.0, MAX_SEGS_LIMIT
        )
    }
}
