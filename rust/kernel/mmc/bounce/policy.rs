// SPDX-License-Identifier: GPL-2.0

//! The pure decisions of a bounce buffer: the queue limits a host gets from it, which
//! requests go straight to the controller and which through the buffer, and how much of a
//! bounced read is copied back.
//!
//! Plain `core` Rust only (no allocation, no kernel types), so that the rules are also unit
//! tested outside the kernel.

/// The queue limits of a host (`struct mmc_host`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Most DMA segments per request.
    pub(crate) max_segs: u16,
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
    /// The limits of a host that bounces through buffers of `buffer` bytes: a request of up to
    /// `max_segs` segments fills at most one buffer (so does one segment), in blocks of up to
    /// `max_blk_size` bytes, and at most `max_blk_count` blocks (the controller's own limit).
    pub(crate) fn bounced(
        buffer: u32,
        max_segs: u16,
        max_blk_size: u32,
        max_blk_count: u32,
    ) -> Self {
        Self {
            max_segs,
            max_req_size: buffer,
            max_seg_size: buffer,
            max_blk_size,
            max_blk_count: buffer
                .checked_div(max_blk_size)
                .unwrap_or(0)
                .min(max_blk_count),
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
    /// More than one segment (or one too long to go direct) and no bounce buffer big enough
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
/// DMA segments, with a bounce buffer of `bounce` bytes (0: none). A single segment goes
/// direct up to `max_direct` bytes, the longest transfer the controller is trusted with to
/// one address; longer ones are bounced when they fit. With `force_bounce` (for tests and
/// measurements) a single segment is bounced too when it fits.
pub(crate) fn data_path(
    segments: u32,
    len: u32,
    bounce: u32,
    max_direct: u32,
    force_bounce: bool,
) -> Result<DataPath, PathError> {
    let fits = bounce != 0 && len <= bounce;
    match segments {
        0 => Err(PathError::NoSegments),
        1 if force_bounce && fits => Ok(DataPath::Bounce),
        1 if len <= max_direct => Ok(DataPath::Direct),
        _ if fits => Ok(DataPath::Bounce),
        _ => Err(PathError::TooBig {
            segments,
            len,
            bounce,
        }),
    }
}

/// The number of DMA segments a scatterlist of `sg_len` entries maps to, when it is known
/// without mapping it: `merge_boundary` is `dma_get_merge_boundary()` of the device, 0 when its
/// DMA mapping cannot merge entries (no IOMMU). Then every entry becomes one segment, and a
/// list of more than one entry is bounced anyway, so it is not mapped at all (`None`: map it
/// and count). A single entry is always mapped: it may go to the controller.
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

/// Whether `pre_req` maps the data of a request of `len` bytes in `sg_len` scatterlist entries
/// (`bounce`, `max_direct` and `force_bounce` as in [`data_path`]): only a write, only a single
/// entry, which maps to a single DMA segment with or without an IOMMU, and only when
/// [`data_path`] sends that segment direct, so that `request` decides the same from the same
/// figures. A list of more entries is left to `request`: without an IOMMU it is bounced
/// unmapped ([`segments_without_mapping`]); with one it must be mapped to count its segments.
///
/// Reads are left to `request` too: a read mapped in `pre_req` stays mapped until `post_req`,
/// which the core calls after it started the next request, so two reads into the same memory
/// (`mmc_test`'s non-blocking cases do that) would be mapped for the device at once, which the
/// DMA API forbids (`CONFIG_DMA_API_DEBUG`: "overlapping mappings aren't supported").
pub(crate) fn pre_map(
    sg_len: u32,
    len: u32,
    bounce: u32,
    max_direct: u32,
    force_bounce: bool,
    write: bool,
) -> bool {
    write
        && sg_len == 1
        && data_path(1, len, bounce, max_direct, force_bounce) == Ok(DataPath::Direct)
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

#[cfg(any(test, CONFIG_KUNIT))]
#[path = "policy/tests.rs"]
mod tests;
