// SPDX-License-Identifier: GPL-2.0

//! A scatterlist mapped for DMA ahead of its transfer, and the cookie that says so.
//!
//! C header: [`include/linux/dma-mapping.h`](srctree/include/linux/dma-mapping.h)
//!
//! A driver may map the next transfer's scatterlist while the previous transfer runs
//! (Documentation/driver-api/mmc/mmc-async-req.rst: `pre_req` maps, `post_req` unmaps), so that
//! the cache maintenance is off the transfer's path. What says that the list is mapped is a
//! cookie, an `int` its subsystem keeps with the list for the driver (`mmc_data.host_cookie`):
//! [`COOKIE_PRE_MAPPED`] while it is mapped by [`PreMap::map`], cleared by the one unmap,
//! [`PreMap::unmap`]. The value is negative and only this module writes it: the subsystem's C
//! code writes the cookie only by zeroing the structure that holds it, and a driver's values
//! are positive, which the subsystem's Rust layer checks (it refuses a driver's negative
//! values, `kernel::mmc::Data::set_host_cookie`), so that the cookie says the truth and the
//! mapping is undone exactly once.
//!
//! The cookie is read and written with plain accesses, as the C side does: the subsystem
//! serializes the callbacks that touch it for one list (for MMC: `pre_req`, the request, its
//! completion, `post_req`), so no two of them run at once.

use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    dma::DataDirection,
    prelude::*, //
};

use crate::bindings;

/// The cookie of a scatterlist mapped by [`PreMap::map`].
///
/// It is negative: a subsystem's own value is 0, and a driver's are positive.
pub const COOKIE_PRE_MAPPED: i32 = -1;

/// The `attrs` argument `DMA_ATTR_SKIP_CPU_SYNC` of the mapping functions.
const SKIP_CPU_SYNC: c_ulong = bindings::DMA_ATTR_SKIP_CPU_SYNC as c_ulong;

/// A scatterlist, the cookie kept with it, and the device and direction of its transfer.
///
/// # Invariants
///
/// For `'a`: `dev` is a device the DMA API maps on, bound or registered as the child of a bound
/// device (an MMC slot's, as `meson-mx-sdio.c` creates it, which no driver binds: its DMA
/// configuration is `of_platform_device_create()`'s, without `of_dma_configure()`); `sg` points to
/// `nents` valid, chained scatterlist entries, of which no mapping exists but one made by
/// [`PreMap::map`] (the caller of [`PreMap::from_raw`] guarantees it), so no device uses them but
/// through such a mapping; `cookie` points to a valid `int` that is [`COOKIE_PRE_MAPPED`] exactly
/// while `sg` is mapped on `dev` for `dir` by [`PreMap::map`], and nothing but this module writes a
/// negative value into it; nothing else accesses the cookie while `self` does (the subsystem
/// serializes the callbacks that do).
pub struct PreMap<'a> {
    dev: NonNull<bindings::device>,
    sg: NonNull<bindings::scatterlist>,
    nents: u32,
    cookie: NonNull<c_int>,
    dir: DataDirection,
    _list: PhantomData<&'a bindings::scatterlist>,
}

impl PreMap<'_> {
    /// Creates a [`PreMap`] of the scatterlist at `sg` and its cookie.
    ///
    /// # Safety
    ///
    /// For `'a`: `dev` must be a device the DMA API maps on, bound or registered as the child of a
    /// bound device (see the type's invariants); `sg` must point to `nents` valid, chained
    /// scatterlist entries, of which no mapping exists but one made by a [`PreMap`] of the same
    /// list, device, direction and cookie, and nothing else maps or unmaps them; `cookie` must
    /// point to a valid `int` into which nothing but this module writes a negative value, and
    /// which nothing else accesses meanwhile; and the cookie is [`COOKIE_PRE_MAPPED`] only if
    /// such a [`PreMap`] mapped the list and did not unmap it since.
    pub unsafe fn from_raw<'a>(
        dev: NonNull<bindings::device>,
        sg: NonNull<bindings::scatterlist>,
        nents: u32,
        cookie: NonNull<c_int>,
        dir: DataDirection,
    ) -> PreMap<'a> {
        // INVARIANT: By the safety requirements.
        PreMap {
            dev,
            sg,
            nents,
            cookie,
            dir,
            _list: PhantomData,
        }
    }

    /// Returns whether the list is mapped by [`Self::map`].
    pub fn is_mapped(&self) -> bool {
        // SAFETY: By the type invariant the cookie is valid and nothing else accesses it.
        unsafe { self.cookie.as_ptr().read() == COOKIE_PRE_MAPPED }
    }

    /// Maps the list, of one entry, for its device with cache maintenance (`dma_map_sg()`: a
    /// clean for a write, an invalidate for a read) and sets the cookie.
    ///
    /// Returns whether it did: not if the cookie is set already (by this module or the driver),
    /// if the list has other than one entry, or if the mapping gave other than one DMA segment
    /// (then nothing stays mapped).
    pub fn map(&self) -> bool {
        // SAFETY: By the type invariant the cookie is valid and nothing else accesses it.
        if unsafe { self.cookie.as_ptr().read() } != 0 || self.nents != 1 {
            return false;
        }
        let (dev, sg, dir) = (self.dev.as_ptr(), self.sg.as_ptr(), self.dir.into());
        // SAFETY: `dev` is a device to map on (type invariant); `sg` is a valid list of one
        // entry that nothing maps: its cookie is 0, so `map` did not map it, and the caller of
        // `from_raw` guarantees that no other mapping exists (type invariant).
        let count = unsafe { bindings::dma_map_sg_attrs(dev, sg, 1, dir, 0) };
        match count {
            1 => {
                // INVARIANT: Mapped just now, by `map`.
                // SAFETY: By the type invariant the cookie is valid and nothing else accesses
                // it.
                unsafe { self.cookie.as_ptr().write(COOKIE_PRE_MAPPED) };
                true
            }
            0 => false,
            _ => {
                // SAFETY: Mapped just now for `dir` on `dev` with its one entry; the device never
                // had it.
                unsafe { bindings::dma_unmap_sg_attrs(dev, sg, 1, dir, SKIP_CPU_SYNC) };
                false
            }
        }
    }

    /// Unmaps the list if [`Self::map`] mapped it, synchronizing it for the CPU (the invalidate
    /// after a read), and clears the cookie.
    ///
    /// Returns whether it did. The device should be done with the list: for the data to be right
    /// (a read's invalidate before its last bytes land is undone by them), not for soundness.
    /// Whether a device still moves data is no condition of a safe function in the kernel crate,
    /// which cannot know it: the drop of `scatterlist::SGTable<Owned<P>>` unmaps its table
    /// (`Devres<DmaMappedSgt>`, also at unbind) and frees its pages whatever the device does, and
    /// that of `dma::Coherent` frees its memory with only a note that the device must be halted;
    /// a driver writes DMA addresses into its registers with safe `Io` writes, so nothing safe
    /// could keep a device from any memory. What unmapping must guarantee is the CPU's side: the
    /// list is valid, was mapped by [`Self::map`] for this device and direction, and is
    /// unmapped once (the type invariants). A transfer still running when it is unmapped moves
    /// bytes of a DMA buffer (the list's pages, which the request keeps until it completes, or
    /// a SWIOTLB slot), never memory this API gives the CPU as anything but bytes.
    pub fn unmap(&self) -> bool {
        if !self.is_mapped() {
            return false;
        }
        // INVARIANT: Unmapped next, and the cookie cleared with it.
        // SAFETY: By the type invariant the cookie is valid and nothing else accesses it.
        unsafe { self.cookie.as_ptr().write(0) };
        // SAFETY: The cookie said `map` mapped the list of one entry for `dir` on `dev` (type
        // invariant) and nothing unmapped it since, so this is the one unmapping of that mapping,
        // on a valid list. Whether the device is done with it is not the CPU's concern (see
        // above): the list's memory stays valid, as the request keeps it.
        unsafe {
            bindings::dma_unmap_sg_attrs(self.dev.as_ptr(), self.sg.as_ptr(), 1, self.dir.into(), 0)
        };
        true
    }
}
