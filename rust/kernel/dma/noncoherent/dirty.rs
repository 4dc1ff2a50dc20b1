// SPDX-License-Identifier: GPL-2.0

//! Which bytes of a non-coherent buffer may have dirty cache lines: the pure bookkeeping of
//! [`NoncoherentPages`](super::NoncoherentPages), also built on the host for `cargo test`.
//!
//! A mapping for a transfer from the device must invalidate the buffer's range before the
//! transfer for one reason only: a dirty line in it could be evicted (written back) after the
//! device stored its data, and overwrite it. Clean lines are harmless then; whatever the CPU
//! fetched into the cache before or during the transfer is discarded by the invalidate that
//! unmapping does after it. So the first invalidate can be skipped (`DMA_ATTR_SKIP_CPU_SYNC`)
//! when no byte of the buffer can be in a dirty line:
//!
//! - after allocation every byte may be dirty (the allocator, or a zeroing, wrote it);
//! - a CPU write makes its bytes maybe dirty, and is noted before it starts, so that a write
//!   that fails halfway leaves them so;
//! - a clean (mapping to the device or both ways) or an invalidate (mapping from the device
//!   without skipping, unmapping from the device or both ways) of a range leaves no dirty line
//!   in it: the DMA API works on whole cache lines and cleans a line the range shares with
//!   bytes outside it before invalidating it.
//!
//! The maybe-dirty bytes are kept as one interval that contains them all (a superset): the
//! buffer is clean when the interval is empty. Plain `core` Rust only.

/// The bytes of a buffer that may be in dirty cache lines: all lie in `lo..hi` (none if
/// `lo >= hi`). Offsets are `u32`, so that the state fits in one 64-bit atomic
/// ([`Self::to_bits`]); a buffer is at most 4 GiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dirty {
    lo: u32,
    hi: u32,
}

impl Dirty {
    /// Every byte of a buffer of `size` bytes may be dirty (just allocated).
    pub(crate) const fn all(size: u32) -> Self {
        Self { lo: 0, hi: size }
    }

    /// No byte may be dirty.
    pub(crate) const fn clean() -> Self {
        Self { lo: 0, hi: 0 }
    }

    /// Whether no byte of the buffer may be in a dirty cache line.
    pub(crate) const fn is_clean(&self) -> bool {
        self.lo >= self.hi
    }

    /// The interval of maybe-dirty bytes, `None` when clean (what the tests look at).
    #[cfg(any(test, CONFIG_KUNIT))]
    pub(crate) const fn range(&self) -> Option<(u32, u32)> {
        if self.is_clean() {
            None
        } else {
            Some((self.lo, self.hi))
        }
    }

    /// The CPU is about to write `len` bytes at `offset`: they may be dirty from now on.
    #[must_use]
    pub(crate) fn cpu_write(self, offset: u32, len: u32) -> Self {
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

    /// `len` bytes at `offset` were cleaned or invalidated: none of them is dirty any more.
    /// The interval shrinks only where the range covers one of its ends (it stays a superset).
    #[must_use]
    pub(crate) fn maintained(self, offset: u32, len: u32) -> Self {
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

    /// Whether a mapping of the buffer for a transfer in a direction that would invalidate or
    /// clean it first may skip that (`DMA_ATTR_SKIP_CPU_SYNC`): only if the whole buffer is
    /// clean, so that no cache line the range shares with other bytes can be dirty either.
    pub(crate) const fn may_skip_sync(&self) -> bool {
        self.is_clean()
    }

    /// The state as one `u64`, for an atomic.
    pub(crate) const fn to_bits(self) -> u64 {
        ((self.hi as u64) << 32) | self.lo as u64
    }

    /// The state [`Self::to_bits`] gave.
    pub(crate) const fn from_bits(bits: u64) -> Self {
        Self {
            lo: bits as u32,
            hi: (bits >> 32) as u32,
        }
    }
}

/// How a transfer direction maintains the cache when a range is mapped (`map`) and unmapped
/// (`!map`) without `DMA_ATTR_SKIP_CPU_SYNC`: whether the range is left without dirty lines.
/// Mapping cleans (to the device, both ways) or invalidates (from the device); unmapping
/// invalidates from the device and both ways, and does nothing to the device.
pub(crate) const fn leaves_clean(to_device: bool, from_device: bool, map: bool) -> bool {
    if map {
        to_device || from_device
    } else {
        from_device
    }
}

#[cfg(any(test, CONFIG_KUNIT))]
#[path = "dirty/tests.rs"]
mod tests;
