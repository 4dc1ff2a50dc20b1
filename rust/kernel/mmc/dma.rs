// SPDX-License-Identifier: GPL-2.0

//! Streaming DMA of an MMC request's scatterlist, and what the DMA code of the kernel crate
//! needs of a request.
//!
//! C header: [`include/linux/dma-mapping.h`](srctree/include/linux/dma-mapping.h)
//!
//! [`DmaRequest`] owns the in-flight [`Request`] while its data is mapped: dropping it unmaps,
//! then completes. A request's data is mapped in `pre_req` by [`PreReqRequest::pre_map`], a
//! [`PreMap`] of its scatterlist with `host_cookie` as the cookie: the value
//! [`COOKIE_PRE_MAPPED`] is `PreMap`'s, a driver cannot write it (this layer's
//! [`Data::set_host_cookie`] refuses negative values), the C core only ever zeroes it, and every
//! unmapping clears it. The CPU copies between the data and a bounce buffer go
//! through a [`CpuSgList`] of the scatterlist, handed out only while nothing maps it.

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
    IdleRequest,
    PreReqRequest,
    Request, //
};

use crate::bindings;
use crate::kernel_ext::dma::{
    cpu_copy::{
        CpuBuffer,
        CpuBufferMut,
        CpuSgList, //
    },
    pre_map::{
        PreMap,
        COOKIE_PRE_MAPPED, //
    }, //
};
use crate::kernel_ext::out_of_tree::DeviceAsRaw as _;

/// Returns whether the cookie of `data` says it was mapped in `pre_req` ([`PreMap`]).
///
/// The MMC core's own value is 0, and a driver's are positive ([`Data::set_host_cookie`]
/// ignores negative ones).
pub(super) fn is_pre_mapped(data: &Data) -> bool {
    data.host_cookie() == COOKIE_PRE_MAPPED
}

/// Returns the [`PreMap`] of the data of a request of `host`, mapped on the host's DMA device.
///
/// # Safety
///
/// `host` must be the host the request was passed to, and a callback of it running or the
/// request in flight on it, for as long as `data` is borrowed; and no [`DmaRequest`] may hold a
/// mapping of `data` then, other than a `PreMapped` one being undone (taken out of it).
unsafe fn pre_map_of(host: NonNull<bindings::mmc_host>, data: &Data) -> Option<PreMap<'_>> {
    let sg = NonNull::new(data.sg_list().as_raw())?;
    let dir = dma_dir(Some(data))?;
    // SAFETY: The parent of a host whose callback runs, or with a request in flight, is bound,
    // or registered for a host on a child device (safety requirements, `host_dma_dev`).
    let dev = unsafe { host_dma_dev(host) };
    // The cookie is the host driver's: only `PreMap` writes a negative value into it
    // (`set_host_cookie` refuses them), and the C core writes it only by zeroing the structure
    // that holds it (drivers/mmc/core/block.c, where `mmc_blk_data_prep()` and
    // `mmc_blk_cqe_prep_dcmd()` clear `brq`; `= {}` or memset in sd.c, sdio_ops.c, mmc_ops.c,
    // mmc_test.c; sdhci's `COOKIE_UNMAPPED` is 0 for the same reason), which it does only to a
    // request whose `post_req` ran (every `pre_req` is followed by `post_req` before a requeue
    // prepares the request again), so its data is not mapped then. We trust that C convention:
    // a submitter leaving -1 in a cookie would have `DmaRequest::new` take unmapped data for
    // mapped. The core calls `pre_req`, the request, its completion and `post_req` of one
    // request one after the other, so nothing else accesses the cookie meanwhile.
    //
    // SAFETY: The data's scatterlist and cookie are valid while `data` is borrowed, and the
    // cookie is -1 only while `PreMap` holds a mapping (above). Every mapping of a request's
    // data is on its host's DMA device (`host_dma_dev`), for its direction: `PreMap::map`'s, or
    // `DmaRequest`'s, and no `DmaRequest` holds one now (safety requirements).
    Some(unsafe { PreMap::from_raw(dev, sg, data.sg_list().len(), data.cookie_ptr(), dir) })
}

/// Returns the data's scatterlist as one the CPU may copy.
///
/// # Safety
///
/// No device may use the scatterlist and nothing map it while `data` is borrowed.
unsafe fn cpu_sg(data: &Data) -> Option<CpuSgList<'_>> {
    // Nothing to copy without bytes.
    if data.is_empty() {
        return None;
    }
    let sg = NonNull::new(data.sg_list().as_raw())?;
    // SAFETY: The data's scatterlist is valid while `data` is borrowed; the rest is the
    // caller's (safety requirements).
    Some(unsafe { CpuSgList::from_raw(sg, data.sg_list().len()) })
}

/// The reason [`DmaRequest::map_count`] failed.
#[derive(Clone, Copy, Debug)]
pub enum DmaMapError {
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
const SKIP_CPU_SYNC: c_ulong = bindings::DMA_ATTR_SKIP_CPU_SYNC as c_ulong;

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
/// of the host is running, or a request of it is in flight); for a host on a child device
/// ([`UnregisteredHost::new_for_child`](super::UnregisteredHost::new_for_child)), whose parent
/// is still registered (the device it belongs to, bound, destroys it after removing the host).
pub(super) unsafe fn host_dma_dev(host: NonNull<bindings::mmc_host>) -> NonNull<bindings::device> {
    // SAFETY: `host` is valid (safety requirements); `mmc_alloc_host()` set `parent`, which
    // never changes and is not NULL.
    unsafe { NonNull::new_unchecked((*host.as_ptr()).parent) }
}

/// Returns the DMA merge boundary of `dev` (`dma_get_merge_boundary()`).
///
/// Returns 0 when mapping a scatterlist for `dev` never merges entries into one DMA segment (no
/// IOMMU), otherwise the boundary mask merged segments keep.
pub fn dma_merge_boundary(dev: &Device<Bound>) -> usize {
    // SAFETY: `dev` is a valid, bound device.
    unsafe { bindings::dma_get_merge_boundary(dev.as_raw()) }
}

/// An in-flight request and the DMA state of its data.
///
/// # Invariants
///
/// `dev` is the DMA device of the host `mrq` is in flight on (`mmc_dev()`), bound (registered, for
/// a host on a child device) until `mrq` is completed (the host is removed, which waits for its
/// requests, before its parent unbinds or the child is destroyed). If `mapped` is `Some(m)`, the
/// data scatterlist of `mrq` is DMA-mapped on `dev` for the direction in `m`: with
/// `Mapping::Counted` or `Mapping::ForDevice` by this object, with `DMA_ATTR_SKIP_CPU_SYNC`, and
/// with `Mapping::ForDevice` it has also been synchronized for the device since; with
/// `Mapping::PreMapped` in `pre_req`, and `post_req` will not unmap it while this object holds it
/// (the request is not idle).
pub struct DmaRequest {
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
    pub fn new(mrq: Request) -> Self {
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
    pub fn pre_mapped_segments(&self) -> Option<u32> {
        matches!(self.mapped, Some(Mapping::PreMapped(_))).then_some(1)
    }

    /// Returns whether the data is mapped by `pre_req`.
    ///
    /// The mapping is held by this object, or handed back by [`Self::end_transfer`] for
    /// `post_req` to unmap. Returns `false` once the request path unmapped it (it was bounced,
    /// failed before it started, or timed out).
    pub fn pre_mapped(&self) -> bool {
        self.mrq.data().is_some_and(is_pre_mapped)
    }

    /// Maps the data scatterlist without CPU cache maintenance and returns its DMA segments.
    ///
    /// The mapping (`dma_map_sg()`) stays until [`Self::unmap`] or drop; a request bounced
    /// instead is unmapped without ever touching the caches of its data. Fails, mapping
    /// nothing, without data or if mapped already.
    pub fn map_count(&mut self) -> Result<u32, DmaMapError> {
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
        // SAFETY: `dev` is bound, or registered (type invariant); `sg` is the request's valid
        // scatterlist of `nents` entries (it lives as long as `mrq`, which we own), not mapped
        // yet.
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
    pub fn dma_for_device(&mut self) -> Option<(u64, u32)> {
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
    pub fn unmap(&mut self) {
        let (dir, attrs) = match self.mapped.take() {
            None => return,
            Some(Mapping::Counted(dir, _)) => (dir, SKIP_CPU_SYNC),
            Some(Mapping::ForDevice(dir)) => (dir, 0),
            Some(Mapping::PreMapped(_)) => {
                if let Some(data) = self.mrq.data() {
                    // SAFETY: The request is in flight on its host, and this object holds no
                    // mapping of it: the `PreMapped` one was taken out above and is undone here.
                    if let Some(pre_map) = unsafe { pre_map_of(self.mrq.host_raw(), data) } {
                        pre_map.unmap();
                    }
                }
                return;
            }
        };
        let Some(data) = self.mrq.data() else { return };
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
    pub fn end_transfer(&mut self) {
        if let Some(Mapping::PreMapped(_)) = self.mapped {
            // INVARIANT: No longer this object's; the cookie still says it is mapped.
            self.mapped = None;
        } else {
            self.unmap();
        }
    }

    /// Returns the data's scatterlist as one the CPU may copy, if nothing maps it.
    ///
    /// Neither this object nor `pre_req` (whose mapping this object may have handed back,
    /// [`Self::end_transfer`]) may map it. While the list is borrowed, this object cannot map
    /// it (`&mut self`), and the request is the driver's, not the device's.
    fn cpu_sg(&self) -> Option<CpuSgList<'_>> {
        let data = self
            .mrq
            .data()
            .filter(|d| self.mapped.is_none() && !is_pre_mapped(d))?;
        // SAFETY: Not DMA-mapped (checked), and the request is not handed to the device while
        // `self` is borrowed.
        unsafe { cpu_sg(data) }
    }

    /// Copies the first `len` bytes of the data scatterlist into `buf`, for a write.
    ///
    /// Returns the number of bytes copied, at most the size of `buf`: 0 without data or while
    /// the scatterlist is DMA-mapped (the CPU must not touch it then).
    ///
    /// `buf` is accessed only through its raw address; that the device is not using it is the
    /// caller's concern for correct data, not a safety requirement.
    pub fn copy_to_buffer(&self, buf: &dyn CpuBufferMut, len: u32) -> u32 {
        self.cpu_sg().map_or(0, |sg| sg.copy_to_buffer(buf, len))
    }

    /// Copies `len` bytes from `buf` into the data scatterlist, for a read.
    ///
    /// Follows the rules of [`Self::copy_to_buffer`].
    pub fn copy_from_buffer(&self, buf: &dyn CpuBuffer, len: u32) -> u32 {
        self.cpu_sg().map_or(0, |sg| sg.copy_from_buffer(buf, len))
    }

    /// Unmaps the data and completes the request with the errors set on it ([`Request::done`]).
    pub fn done(self) {
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

impl PreReqRequest {
    /// Maps the data in `pre_req`, off the request path ([`PreMap::map`]).
    ///
    /// The data is a single scatterlist entry that the driver will send direct; it is mapped for
    /// the DMA device of its host with its cache maintenance (a clean for a write, an invalidate
    /// for a read) and marked in `host_cookie`. Returns whether it did: not if the cookie is set
    /// already, or if the mapping gave other than one segment (then nothing stays mapped and
    /// `request` maps it itself). The mapping is undone exactly once: by the layer's `post_req`
    /// (`IdleRequest::unmap_pre_mapped`, whatever the driver's `post_req` does) after a
    /// transfer, or by the request path ([`DmaRequest`]) if it bounces or fails the request.
    pub fn pre_map(&self) -> bool {
        let Some(data) = self.data() else {
            return false;
        };
        // SAFETY: The request was passed to `pre_req` of its host, which is running; it is not
        // in flight, so no `DmaRequest` holds it or a mapping of it.
        unsafe { pre_map_of(self.host_raw(), data) }.is_some_and(|m| m.map())
    }
}

impl IdleRequest {
    /// Unmaps the data in `post_req` if it is still mapped from `pre_req`.
    ///
    /// The data is unmapped if the request path left it mapped (it went direct), synchronizing
    /// it for the CPU (the invalidate after a read), and the cookie is cleared. Returns whether
    /// it did. The layer's `post_req` calls it for every request, before the driver's own
    /// `post_req`, so a mapping made in `pre_req` never outlives the request's `post_req`.
    pub(super) fn unmap_pre_mapped(&self) -> bool {
        let Some(data) = self.data() else {
            return false;
        };
        // SAFETY: The request was passed to `post_req` of its host, which is running; it is
        // idle, so the controller is done with it and no `DmaRequest` holds it or a mapping of
        // it.
        unsafe { pre_map_of(self.host_raw(), data) }.is_some_and(|m| m.unmap())
    }

    /// Returns the data's scatterlist as one the CPU may copy, unless `pre_req` mapped it.
    fn cpu_sg(&self) -> Option<CpuSgList<'_>> {
        let data = self.data().filter(|d| !is_pre_mapped(d))?;
        // SAFETY: An idle request is not in flight, so no device moves its data, and `pre_req`
        // has not mapped it (checked): nothing else maps an idle request's data.
        unsafe { cpu_sg(data) }
    }

    /// Copies the first `len` bytes of the data into `buf`, in `pre_req`.
    ///
    /// Follows the rules of [`DmaRequest::copy_to_buffer`].
    pub fn copy_to_buffer(&self, buf: &dyn CpuBufferMut, len: u32) -> u32 {
        self.cpu_sg().map_or(0, |sg| sg.copy_to_buffer(buf, len))
    }

    /// Copies `len` bytes from `buf` into the data, in `post_req`.
    ///
    /// Follows the rules of [`DmaRequest::copy_from_buffer`].
    pub fn copy_from_buffer(&self, buf: &dyn CpuBuffer, len: u32) -> u32 {
        self.cpu_sg().map_or(0, |sg| sg.copy_from_buffer(buf, len))
    }
}
