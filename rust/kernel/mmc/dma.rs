// SPDX-License-Identifier: GPL-2.0

//! Streaming DMA of an MMC request's scatterlist.
//!
//! C header: [`include/linux/dma-mapping.h`](srctree/include/linux/dma-mapping.h)
//!
//! [`DmaRequest`] owns the in-flight [`Request`] while its data is mapped: dropping it unmaps,
//! then completes. The `host_cookie` value `COOKIE_PRE_MAPPED` (-1) is this module's: only a
//! mapping made in `pre_req` writes it, a driver cannot (negative values are refused), and
//! every unmapping clears it.

use core::{
    mem::ManuallyDrop,
    ops::Deref,
    ptr::NonNull, //
};

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::DataDirection,
    prelude::*, //
};

use super::{
    Data,
    Request, //
};

use crate::bindings;
use crate::kernel_ext::out_of_tree::DeviceAsRaw as _;

/// The `host_cookie` of a request whose data was mapped for the device in `pre_req`.
///
/// It is negative: the MMC core's own value is 0, and a driver's are positive
/// ([`Data::set_host_cookie`] ignores negative ones).
pub(super) const COOKIE_PRE_MAPPED: i32 = -1;

/// Returns whether the cookie of `data` says it was mapped in `pre_req`.
pub(super) fn is_pre_mapped(data: &Data) -> bool {
    data.host_cookie() == COOKIE_PRE_MAPPED
}

/// The reason [`DmaRequest::map_count`] failed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum DmaMapError {
    /// The request has no data.
    NoData,
    /// The data is mapped already.
    AlreadyMapped,
    /// `dma_map_sg()` mapped nothing.
    MapFailed,
}

impl From<DmaMapError> for Error {
    fn from(e: DmaMapError) -> Error {
        match e {
            DmaMapError::NoData | DmaMapError::AlreadyMapped => EINVAL,
            DmaMapError::MapFailed => ENOMEM,
        }
    }
}

/// The `attrs` argument `DMA_ATTR_SKIP_CPU_SYNC` of the mapping functions.
pub(super) const SKIP_CPU_SYNC: c_ulong = bindings::DMA_ATTR_SKIP_CPU_SYNC as c_ulong;

/// The DMA mapping of a request's scatterlist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mapping {
    /// Mapped for `dir` without CPU cache maintenance, to this many DMA segments.
    ///
    /// The mapping only learns their number; the device has not been given the memory.
    Counted(DataDirection, u32),
    /// Mapped for `dir` to one DMA segment and synchronized for the device, which may use it.
    ForDevice(DataDirection),
    /// Mapped for `dir` and synchronized for the device by `pre_req`.
    ///
    /// The request's cookie says so until it is unmapped.
    PreMapped(DataDirection),
}

/// Returns the data's transfer direction (`mmc_get_dma_dir()`).
pub(super) fn dma_dir(data: Option<&Data>) -> Option<DataDirection> {
    data.map(|d| {
        if d.is_write() {
            DataDirection::ToDevice
        } else {
            DataDirection::FromDevice
        }
    })
}

/// Returns the device that maps a host's requests (`mmc_dev()`, the host's parent).
///
/// Every mapping of a request's data is made and undone on this device, taken from the host the
/// request was passed to and never given by the driver, so that a driver cannot map on one
/// device and unmap on another.
///
/// # Safety
///
/// `host` must be a host allocated by `mmc_alloc_host()` whose parent is still bound (a callback
/// of the host is running, or a request of it is in flight).
pub(super) unsafe fn host_dma_dev(host: NonNull<bindings::mmc_host>) -> NonNull<bindings::device> {
    // SAFETY: `host` is valid (safety requirements); `mmc_alloc_host()` set `parent`, which
    // never changes and is not NULL.
    unsafe { NonNull::new_unchecked((*host.as_ptr()).parent) }
}

/// Returns the DMA merge boundary of `dev` (`dma_get_merge_boundary()`).
///
/// Returns 0 when mapping a scatterlist for `dev` never merges entries into one DMA segment (no
/// IOMMU), otherwise the boundary mask merged segments keep.
pub(crate) fn dma_merge_boundary(dev: &Device<Bound>) -> usize {
    // SAFETY: `dev` is a valid, bound device.
    unsafe { bindings::dma_get_merge_boundary(dev.as_raw()) }
}

/// An in-flight request and the DMA state of its data.
///
/// # Invariants
///
/// `dev` is the DMA device of the host `mrq` is in flight on (`mmc_dev()`), bound until
/// `mrq` is completed (the host is removed, which waits for its requests, before its parent
/// unbinds). If `mapped` is `Some(m)`, the data scatterlist of `mrq` is DMA-mapped on `dev` for
/// the direction in `m`: with `Mapping::Counted` or `Mapping::ForDevice` by this object, with
/// `DMA_ATTR_SKIP_CPU_SYNC`, and with `Mapping::ForDevice` it has also been synchronized for the
/// device since; with `Mapping::PreMapped` in `pre_req`, and `post_req` will not unmap it
/// while this object holds it (the request is not idle).
pub(crate) struct DmaRequest {
    mrq: ManuallyDrop<Request>,
    dev: NonNull<bindings::device>,
    mapped: Option<Mapping>,
}

// SAFETY: As `Request`, which may be completed from any thread; `dev` is only passed to the DMA
// API, which may be called from any thread.
unsafe impl Send for DmaRequest {}

impl DmaRequest {
    /// Creates a [`DmaRequest`] that takes over `mrq`, whose data the host's DMA device moves.
    ///
    /// If `pre_req` mapped the data (on the same host's device), the mapping comes with it.
    pub(crate) fn new(mrq: Request) -> Self {
        // SAFETY: `mrq` is in flight on its host, whose parent stays bound until it completes.
        let dev = unsafe { host_dma_dev(mrq.host_raw()) };
        let pre_mapped = mrq.data().is_some_and(is_pre_mapped);
        let mapped = dma_dir(mrq.data())
            .filter(|_| pre_mapped)
            .map(Mapping::PreMapped);
        // INVARIANT: Only a mapping in `pre_req` writes `COOKIE_PRE_MAPPED`, after mapping the
        // data on the DMA device of the host whose `pre_req` it was passed to, which is this
        // request's host (the core sends a request to one host only); the driver cannot write it
        // (`set_host_cookie` ignores negative values); every unmapping clears it, and the core
        // writes only 0 (a new or prepared-again request).
        Self {
            mrq: ManuallyDrop::new(mrq),
            dev,
            mapped,
        }
    }

    /// Returns the data's transfer direction (`mmc_get_dma_dir()`).
    fn dir(&self) -> Option<DataDirection> {
        dma_dir(self.mrq.data())
    }

    /// Returns the number of DMA segments `pre_req` mapped the data to, or `None`.
    ///
    /// The number is always 1 (`pre_req` maps only a single segment); `None` if `pre_req` did
    /// not map the data.
    pub(crate) fn pre_mapped_segments(&self) -> Option<u32> {
        matches!(self.mapped, Some(Mapping::PreMapped(_))).then_some(1)
    }

    /// Returns whether the data is mapped by `pre_req`.
    ///
    /// The mapping is held by this object, or handed back by [`Self::end_transfer`] for
    /// `post_req` to unmap. Returns `false` once the request path unmapped it (it was bounced,
    /// failed before it started, or timed out).
    pub(crate) fn pre_mapped(&self) -> bool {
        self.mrq.data().is_some_and(is_pre_mapped)
    }

    /// Maps the data scatterlist without CPU cache maintenance and returns its DMA segments.
    ///
    /// The mapping (`dma_map_sg()`) stays until [`Self::unmap`] or drop; a request bounced
    /// instead is unmapped without ever touching the caches of its data. Fails, mapping
    /// nothing, without data or if mapped already.
    pub(crate) fn map_count(&mut self) -> Result<u32, DmaMapError> {
        let (Some(data), Some(dir)) = (self.mrq.data(), self.dir()) else {
            return Err(DmaMapError::NoData);
        };
        // Also when `pre_req` mapped it and this object has handed that mapping back
        // (`end_transfer`): the cookie says it is still mapped.
        if self.mapped.is_some() || is_pre_mapped(data) {
            return Err(DmaMapError::AlreadyMapped);
        }
        let sg = data.sg_list();
        let nents = c_int::try_from(sg.len()).map_err(|_| DmaMapError::MapFailed)?;
        // SAFETY: `dev` is bound; `sg` is the request's valid scatterlist of `nents` entries
        // (it lives as long as `mrq`, which we own), not mapped yet.
        let count = unsafe {
            bindings::dma_map_sg_attrs(
                self.dev.as_ptr(),
                sg.as_raw(),
                nents,
                dir.into(),
                SKIP_CPU_SYNC,
            )
        };
        if count == 0 {
            return Err(DmaMapError::MapFailed);
        }
        // INVARIANT: Mapped now, without cache maintenance.
        self.mapped = Some(Mapping::Counted(dir, count));
        Ok(count)
    }

    /// Hands the mapped scatterlist to the device and returns its one DMA segment.
    ///
    /// Synchronizes the mapping for the device (`dma_sync_sg_for_device()`, once) and returns
    /// the DMA address and length of the segment; `None` if the scatterlist is not mapped, or
    /// mapped to more than one segment.
    pub(crate) fn dma_for_device(&mut self) -> Option<(u64, u32)> {
        let dir = match self.mapped? {
            Mapping::Counted(dir, 1) | Mapping::ForDevice(dir) | Mapping::PreMapped(dir) => dir,
            Mapping::Counted(..) => return None,
        };
        let sg = self.mrq.data()?.sg_list();
        if self.mapped == Some(Mapping::Counted(dir, 1)) {
            // SAFETY: By the type invariant the scatterlist is mapped for `dir` on `dev` with
            // `sg.len()` entries.
            unsafe {
                bindings::dma_sync_sg_for_device(
                    self.dev.as_ptr(),
                    sg.as_raw(),
                    sg.len() as c_int,
                    dir.into(),
                )
            };
            // INVARIANT: Synchronized for the device just now.
            self.mapped = Some(Mapping::ForDevice(dir));
        }
        // SAFETY: The scatterlist is mapped to one segment, which its first entry describes.
        let (addr, len) = unsafe {
            (
                bindings::sg_dma_address(sg.as_raw()),
                bindings::sg_dma_len(sg.as_raw()),
            )
        };
        #[allow(clippy::useless_conversion)]
        Some((u64::from(addr), len))
    }

    /// Unmaps the data scatterlist if it is mapped (`dma_unmap_sg()`).
    ///
    /// After the device had it, the CPU caches are synchronized for the CPU; a mapping that only
    /// counted segments is dropped without cache maintenance. A mapping made in `pre_req` is
    /// undone here too (the request is bounced or failed, or timed out): its cookie is cleared
    /// for `post_req`.
    pub(crate) fn unmap(&mut self) {
        let (dir, attrs) = match self.mapped.take() {
            None => return,
            Some(Mapping::Counted(dir, _)) => (dir, SKIP_CPU_SYNC),
            Some(Mapping::ForDevice(dir) | Mapping::PreMapped(dir)) => (dir, 0),
        };
        let Some(data) = self.mrq.data() else { return };
        if is_pre_mapped(data) {
            data.write_host_cookie(0);
        }
        let sg = data.sg_list();
        // SAFETY: By the type invariant the scatterlist was mapped for `dir` on `dev` with
        // `sg.len()` entries.
        unsafe {
            bindings::dma_unmap_sg_attrs(
                self.dev.as_ptr(),
                sg.as_raw(),
                sg.len() as c_int,
                dir.into(),
                attrs,
            )
        };
    }

    /// Ends the controller's use of the data, unmapping it unless `pre_req` mapped it.
    ///
    /// A mapping `pre_req` made is left for `post_req` to unmap; a request the core starts
    /// again before `post_req` (a retry) finds it still mapped.
    pub(crate) fn end_transfer(&mut self) {
        if let Some(Mapping::PreMapped(_)) = self.mapped {
            // INVARIANT: No longer this object's; the cookie still says it is mapped.
            self.mapped = None;
        } else {
            self.unmap();
        }
    }

    /// Returns the data if nothing maps it.
    ///
    /// Neither this object nor `pre_req` (whose mapping this object may have handed back,
    /// [`Self::end_transfer`]) may map it.
    pub(super) fn unmapped_data(&self) -> Option<&Data> {
        self.mrq
            .data()
            .filter(|d| self.mapped.is_none() && !is_pre_mapped(d))
    }

    /// Unmaps the data and completes the request with the errors set on it ([`Request::done`]).
    pub(crate) fn done(self) {
        let mut this = ManuallyDrop::new(self);
        this.unmap();
        // SAFETY: `this` is never dropped, so `mrq` is taken once and not used again.
        unsafe { ManuallyDrop::take(&mut this.mrq) }.done();
    }
}

impl Deref for DmaRequest {
    type Target = Request;

    fn deref(&self) -> &Request {
        &self.mrq
    }
}

impl Drop for DmaRequest {
    /// Unmaps the data, then drops the request, which completes as failed.
    ///
    /// The request completes with a warning (see [`Request`]), as it was not completed with
    /// [`DmaRequest::done`].
    fn drop(&mut self) {
        self.unmap();
        // SAFETY: This is the only place `mrq` is dropped, once, and nothing uses it after.
        unsafe { ManuallyDrop::drop(&mut self.mrq) };
    }
}
