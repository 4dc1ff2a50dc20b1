// SPDX-License-Identifier: GPL-2.0

//! The bounce buffer's pure decisions.
//!
//! Which requests go straight to the controller and which through a buffer, and which are mapped
//! ahead in `pre_req`. (The queue limits a buffer gives and how much of a bounced read is copied
//! back are the driver's other pure decisions, in `logic.rs`.)
//!
//! Plain `core` Rust only (no allocation, no kernel types), so that the rules are also unit
//! tested outside the kernel. The rule itself, with the alignment as a parameter, is the one
//! the SD card slot's driver uses too (`logic/data_path.rs`).

pub(crate) use crate::logic::data_path::{
    DataPath,
    PathError,
    PathRule, //
};

/// The unit the driver assumes the controller's DMA engine moves memory in, in bytes.
///
/// A single segment goes to the controller in place only if its address and its length are
/// multiples of it; any other is bounced. What a read does outside the request when they are not is
/// unknown: the FIFOs are a word wide (`STAT` counts them in words), every driver programs
/// `PDMA.WR_BURST` to write memory in bursts of 8 words (32 bytes), Linux's `meson-mx-sdio.c`
/// refuses a segment whose offset or length is not a multiple of 4 (the SoC's other controller),
/// FreeBSD's driver gives its DMA tag a 4-byte alignment, and Amlogic's own driver always bounces;
/// the emulated board's default writes the rest of each 32-byte unit. 64 bytes, `ARCH_DMA_MINALIGN`
/// of a multi_v7 kernel (the Cortex-A5's own cache line is 32), covers the word, the burst the
/// drivers program and a burst twice as long, and costs nothing: block I/O is in 512-byte sectors
/// at sector-aligned addresses (the queue's DMA alignment), and the core's small buffers are
/// `kmalloc`'d at cache-line alignment; what is left is short reads (the SD card's 8-byte SCR) and
/// unaligned buffers of SDIO function drivers and `mmc_test`.
pub(crate) const DMA_GRANULE: u32 = 64;

/// Returns the rule of the bounce buffer's data path with [`DMA_GRANULE`].
fn rule(bounce: u32, max_direct: u32, force_bounce: bool) -> PathRule {
    PathRule {
        granule: DMA_GRANULE,
        bounce,
        max_direct,
        force_bounce,
    }
}

/// Returns whether a single DMA segment of `len` bytes that starts at `offset` bytes into its page
/// (the low bits of its DMA address, with or without an IOMMU) may go to the controller in place.
///
/// Both are multiples of [`DMA_GRANULE`].
pub(crate) fn granule_aligned(offset: u32, len: u32) -> bool {
    rule(0, 0, false).aligned(offset, len)
}

/// Returns the bytes at the start of a bounce buffer of `size` bytes that a transfer of `len` bytes
/// hands to the controller.
///
/// `len` rounded up to whole [`DMA_GRANULE`]s (a read may write them whole), at most the buffer.
/// The buffer starts page-aligned, so the units stay inside it; only `len` bytes are ever copied
/// back.
pub(crate) fn device_len(len: u32, size: u32) -> u32 {
    len.div_ceil(DMA_GRANULE)
        .saturating_mul(DMA_GRANULE)
        .min(size)
}

/// The words at the very end of a read that are all marked before it ([`TailMarks`]).
///
/// The words of a write burst (`PDMA.WR_BURST` 7, 8 words), more than the RX FIFO keeps back below
/// its threshold (`PDMA.RXFIFO_TH` 7).
pub(crate) const TAIL_MARK_WORDS: u32 = 8;
/// Before those, one word in every this many bytes is marked.
///
/// A write burst, so that each burst before the last words holds a mark whatever its alignment.
pub(crate) const TAIL_MARK_STRIDE: u32 = 32;
/// How many bursts before the last words are marked.
///
/// 64, 2 KiB. Nothing the controller signals orders a read's writes into DRAM (Amlogic's driver
/// waits for the DDR controller's whole channel to go idle), so the bursts before the last words
/// may reach memory after them; these are the ones the check covers.
pub(crate) const TAIL_MARK_BURSTS: u32 = 64;
/// The most marks of one read.
///
/// [`TAIL_MARK_WORDS`] and [`TAIL_MARK_BURSTS`].
pub(crate) const TAIL_MARKS_MAX: u32 = TAIL_MARK_WORDS + TAIL_MARK_BURSTS;

/// The words of a read into a bounce buffer that are marked before the transfer and looked at after
/// it ([`tail_mark`]).
///
/// Its last whole words, at most [`TAIL_MARK_WORDS`], and one word in every [`TAIL_MARK_STRIDE`]
/// bytes before them, [`TAIL_MARK_BURSTS`] at most: any 32 bytes of the read's last 2080 (the last
/// words and 64 bursts) hold a mark. A read shorter than a word has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TailMarks {
    /// The end of the read's last whole word.
    end: u32,
    /// How many words are marked.
    count: u32,
}

impl TailMarks {
    /// Returns the marks of a read of `len` bytes.
    pub(crate) fn of(len: u32) -> Self {
        let end = len / 4 * 4;
        let last = (end / 4).min(TAIL_MARK_WORDS);
        // Strided mark k (from 1) is at end - 4 - k * stride, inside the read.
        let strided = (end.saturating_sub(4) / TAIL_MARK_STRIDE).min(TAIL_MARK_BURSTS);
        Self {
            end,
            count: last + if last == TAIL_MARK_WORDS { strided } else { 0 },
        }
    }

    /// Returns how many words are marked.
    pub(crate) fn count(self) -> u32 {
        self.count
    }

    /// Returns the offset of mark `index` (0 is the read's last word), for `index` below
    /// [`Self::count`].
    pub(crate) fn offset(self, index: u32) -> u32 {
        if index < TAIL_MARK_WORDS {
            self.end - 4 - 4 * index
        } else {
            self.end - 4 - TAIL_MARK_STRIDE * (index - TAIL_MARK_WORDS + 1)
        }
    }

    /// Returns the marks in order.
    ///
    /// Their index and offset.
    pub(crate) fn iter(self) -> impl Iterator<Item = (u32, u32)> {
        (0..self.count).map(move |i| (i, self.offset(i)))
    }

    /// Returns the bytes the marks lie in.
    ///
    /// The offset of the lowest and the length to the read's last whole word's end. `(end, 0)`
    /// without marks.
    pub(crate) fn span(self) -> (u32, u32) {
        match self.count {
            0 => (self.end, 0),
            n => {
                let first = self.offset(n - 1);
                (first, self.end - first)
            }
        }
    }
}

/// Returns the mark of word `index` of the end of read number `seq` ([`TailMarks`]).
///
/// A scrambled value, never all zeroes or all ones (what erased or zeroed memory holds), and
/// different for the next read, so that a read whose data happened to match a mark passes when the
/// core retries it.
pub(crate) fn tail_mark(seq: u32, index: u32) -> u32 {
    let mut x = seq.wrapping_mul(0x9e37_79b9) ^ index.wrapping_mul(0x85eb_ca6b) ^ 0xa5c3_5a3c;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    if x == 0 || x == u32::MAX {
        0x6d2b_79f5
    } else {
        x
    }
}

/// Returns whether the end of a read is in memory.
///
/// `words` are the marked words as memory now holds them, in order; every one must differ from its
/// mark for read `seq`, so that how the last words are split between the DMA's bursts and the
/// FIFO's flush, and in which order the bursts reach memory, do not matter. (A word of data equal
/// to its mark is taken for missing: the read fails as late and its retry has other marks.)
pub(crate) fn tail_landed(seq: u32, words: impl IntoIterator<Item = u32>) -> bool {
    (0u32..).zip(words).all(|(i, w)| w != tail_mark(seq, i))
}

/// Chooses the data path for a transfer of `len` bytes whose scatterlist mapped to `segments` DMA
/// segments, the first `offset` bytes into its page, with a bounce buffer of `bounce` bytes (0:
/// none).
///
/// A single segment goes direct when its address and length are multiples of [`DMA_GRANULE`], up to
/// `max_direct` bytes, the longest transfer the controller is trusted with to one address; other
/// ones are bounced when they fit, and an unaligned one that does not fit is refused rather than
/// sent (the controller would write memory outside it). With `force_bounce` (for tests and
/// measurements) a single segment is bounced too when it fits. ([`PathRule::choose`], the rule the
/// SD card slot's driver shares.)
pub(crate) fn data_path(
    segments: u32,
    offset: u32,
    len: u32,
    bounce: u32,
    max_direct: u32,
    force_bounce: bool,
) -> Result<DataPath, PathError> {
    rule(bounce, max_direct, force_bounce).choose(segments, offset, len)
}

/// Returns the number of DMA segments a scatterlist of `sg_len` entries maps to, when it is known
/// without mapping it.
///
/// `merge_boundary` is `dma_get_merge_boundary()` of the device, 0 when its DMA mapping cannot
/// merge entries (no IOMMU). Then every entry becomes one segment, and a list of more than one
/// entry is bounced anyway, so it is not mapped at all (`None`: map it and count). A single entry
/// is always mapped: it may go to the controller.
///
/// Not mapping a list that is bounced also keeps the mapping rules: a read scatterlist may name
/// the same page more than once (mmc_test does), which must not be mapped for the device.
pub(crate) fn segments_without_mapping(sg_len: u32, merge_boundary: usize) -> Option<u32> {
    if sg_len > 1 && merge_boundary == 0 {
        Some(sg_len)
    } else {
        None
    }
}

/// Returns whether `pre_req` maps the data of a request of `len` bytes in `sg_len` scatterlist
/// entries, the first `offset` bytes into its page (`bounce`, `max_direct` and `force_bounce` as in
/// [`data_path`]).
///
/// Only a write, only a single entry, and only when [`data_path`] sends it direct
/// ([`PathRule::pre_map`]). A list of more entries is left to `request`: without an IOMMU it is
/// bounced unmapped ([`segments_without_mapping`]); with one it must be mapped to count its
/// segments.
pub(crate) fn pre_map(
    sg_len: u32,
    offset: u32,
    len: u32,
    bounce: u32,
    max_direct: u32,
    force_bounce: bool,
    write: bool,
) -> bool {
    rule(bounce, max_direct, force_bounce).pre_map(sg_len, offset, len, write)
}

#[cfg(any(test, CONFIG_KUNIT))]
#[path = "policy/tests.rs"]
mod tests;
