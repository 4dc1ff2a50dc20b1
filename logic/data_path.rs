// SPDX-License-Identifier: GPL-2.0

//! Which requests go straight to the controller and which through a bounce buffer, and which are
//! mapped ahead in `pre_req`.
//!
//! The same rule in both drivers, each with its own alignment (the SDHC's `bounce/policy.rs`: 64
//! bytes; the SD card slot's `sdio/logic.rs`: a word).
//!
//! Plain `core` Rust only: no allocation, no kernel types.

/// How a request's data reaches the controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DataPath {
    /// The scatterlist mapped to a single DMA segment.
    ///
    /// The controller uses it directly.
    Direct,
    /// More than one segment, a single one too long, or one whose address or length is not a
    /// multiple of the rule's granule.
    ///
    /// The data goes through the bounce buffer.
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
    /// A single segment whose address or length is not a multiple of the granule (the
    /// controller would write memory outside it, or cannot take it) and no bounce buffer big
    /// enough for it.
    Unaligned {
        /// Offset of the segment in its page.
        offset: u32,
        /// Bytes of the transfer.
        len: u32,
        /// Size of the bounce buffer (0: none).
        bounce: u32,
    },
}

/// A host's rule for the data path of its requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PathRule {
    /// A single segment goes to the controller in place only if its address and its length are
    /// multiples of this many bytes.
    pub(crate) granule: u32,
    /// Size of the bounce buffer in bytes (0: none).
    pub(crate) bounce: u32,
    /// The longest transfer the controller is trusted with to one DMA address.
    pub(crate) max_direct: u32,
    /// Bounce a single segment too when it fits (for tests and measurements).
    pub(crate) force_bounce: bool,
}

impl PathRule {
    /// Returns whether a single DMA segment of `len` bytes that starts at `offset` bytes into its
    /// page (the low bits of its DMA address, with or without an IOMMU) may go to the controller in
    /// place.
    ///
    /// Both are multiples of the granule.
    pub(crate) fn aligned(&self, offset: u32, len: u32) -> bool {
        offset % self.granule == 0 && len % self.granule == 0
    }

    /// Chooses the data path for a transfer of `len` bytes whose scatterlist mapped to `segments`
    /// DMA segments, the first `offset` bytes into its page.
    ///
    /// A single segment goes direct when it is [aligned](Self::aligned), up to `max_direct` bytes;
    /// other ones are bounced when they fit, and an unaligned one that does not fit is refused
    /// rather than sent. With `force_bounce` a single segment is bounced too when it fits.
    pub(crate) fn choose(
        &self,
        segments: u32,
        offset: u32,
        len: u32,
    ) -> Result<DataPath, PathError> {
        let bounce = self.bounce;
        let fits = bounce != 0 && len <= bounce;
        let aligned = self.aligned(offset, len);
        match segments {
            0 => Err(PathError::NoSegments),
            1 if self.force_bounce && fits => Ok(DataPath::Bounce),
            1 if aligned && len <= self.max_direct => Ok(DataPath::Direct),
            _ if fits => Ok(DataPath::Bounce),
            1 if !aligned => Err(PathError::Unaligned {
                offset,
                len,
                bounce,
            }),
            _ => Err(PathError::TooBig {
                segments,
                len,
                bounce,
            }),
        }
    }

    /// Returns whether `pre_req` maps the data of a request of `len` bytes in `sg_len` scatterlist
    /// entries, the first `offset` bytes into its page.
    ///
    /// Only a write, only a single entry, which maps to a single DMA segment with or without an
    /// IOMMU, and only when [`Self::choose`] sends that segment direct, so that `request` decides
    /// the same from the same figures. A list of more entries is left to `request`.
    ///
    /// Reads are left to `request` too: a read mapped in `pre_req` stays mapped until
    /// `post_req`, which the core calls after it started the next request, so two reads into
    /// the same memory (`mmc_test`'s non-blocking cases do that) would be mapped for the device
    /// at once, which the DMA API forbids (`CONFIG_DMA_API_DEBUG`: "overlapping mappings aren't
    /// supported").
    pub(crate) fn pre_map(&self, sg_len: u32, offset: u32, len: u32, write: bool) -> bool {
        write && sg_len == 1 && self.choose(1, offset, len) == Ok(DataPath::Direct)
    }
}
