// SPDX-License-Identifier: GPL-2.0

//! Bookkeeping of the bytes of a non-coherent buffer that may be in dirty cache lines.
//!
//! C header: [`include/linux/dma-mapping.h`](srctree/include/linux/dma-mapping.h)
//!
//! This is the pure part of [`NoncoherentPages`](super::NoncoherentPages), plain `core` Rust,
//! also built on the host for `cargo test`. The maybe-dirty bytes are kept as one interval that
//! contains them all (a superset): the buffer is clean when the interval is empty.

/// The bytes of a buffer that may be in dirty cache lines.
///
/// All lie in `lo..hi` (none if `lo >= hi`). Offsets are `u32`, so that the state fits in one
/// 64-bit atomic ([`Self::to_bits`]); a buffer is at most 4 GiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dirty {
    lo: u32,
    hi: u32,
}

impl Dirty {
    /// Returns the state of a just allocated buffer of `size` bytes.
    ///
    /// Every byte may be dirty.
    pub const fn all(size: u32) -> Self {
        Self { lo: 0, hi: size }
    }

    /// Returns the state in which no byte may be dirty.
    pub const fn clean() -> Self {
        Self { lo: 0, hi: 0 }
    }

    /// Returns whether no byte of the buffer may be in a dirty cache line.
    pub const fn is_clean(&self) -> bool {
        self.lo >= self.hi
    }

    /// Returns the interval of maybe-dirty bytes, `None` when clean.
    #[cfg(any(test, CONFIG_KUNIT))]
    pub const fn range(&self) -> Option<(u32, u32)> {
        if self.is_clean() {
            None
        } else {
            Some((self.lo, self.hi))
        }
    }

    /// Notes that the CPU is about to write `len` bytes at `offset`, making them maybe dirty.
    #[must_use]
    pub fn cpu_write(self, offset: u32, len: u32) -> Self {
        if len == 0 {
            return self;
        }
        let end = offset.saturating_add(len);
        if self.is_clean() {
            Self {
                lo: offset,
                hi: end,
            }
        } else {
            Self {
                lo: self.lo.min(offset),
                hi: self.hi.max(end),
            }
        }
    }

    /// Notes that `len` bytes at `offset` were cleaned or invalidated.
    ///
    /// None of them is dirty any more. The interval shrinks only where the range covers one of its
    /// ends (it stays a superset).
    #[must_use]
    pub fn maintained(self, offset: u32, len: u32) -> Self {
        let end = offset.saturating_add(len);
        if self.is_clean() || len == 0 || end <= self.lo || offset >= self.hi {
            return self;
        }
        match (offset <= self.lo, end >= self.hi) {
            (true, true) => Self::clean(),
            (true, false) => Self {
                lo: end,
                hi: self.hi,
            },
            (false, true) => Self {
                lo: self.lo,
                hi: offset,
            },
            // Inside: the interval cannot have a hole.
            (false, false) => self,
        }
    }

    /// Returns whether a mapping may skip the clean or invalidate it would do first.
    ///
    /// A mapping of the buffer for a transfer in a direction that would invalidate or clean it
    /// first may skip that (`DMA_ATTR_SKIP_CPU_SYNC`) only if the whole buffer is clean, so
    /// that no cache line the range shares with other bytes can be dirty either.
    pub const fn may_skip_sync(&self) -> bool {
        self.is_clean()
    }

    /// Returns the state as one `u64`, for an atomic.
    pub const fn to_bits(self) -> u64 {
        ((self.hi as u64) << 32) | self.lo as u64
    }

    /// Returns the state [`Self::to_bits`] gave.
    pub const fn from_bits(bits: u64) -> Self {
        Self {
            lo: bits as u32,
            hi: (bits >> 32) as u32,
        }
    }
}

/// Returns whether a direction's cache maintenance leaves a range without dirty lines.
///
/// The maintenance is that of a mapping (`map`) or an unmapping (`!map`) without
/// `DMA_ATTR_SKIP_CPU_SYNC`. Mapping cleans (to the device, both ways) or invalidates (from the
/// device); unmapping invalidates from the device and both ways, and does nothing to the device.
pub const fn leaves_clean(to_device: bool, from_device: bool, map: bool) -> bool {
    if map {
        to_device || from_device
    } else {
        from_device
    }
}

#[cfg(any(test, CONFIG_KUNIT))]
#[path = "dirty/tests.rs"]
mod tests;
