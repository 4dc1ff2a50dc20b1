// SPDX-License-Identifier: GPL-2.0

//! Non-coherent DMA pages.
//!
//! Cached memory handed between the CPU and a device by streaming DMA.
//!
//! C header: [`include/linux/dma-mapping.h`](srctree/include/linux/dma-mapping.h)
//!
//! [`NoncoherentPages`] are mapped for one transfer at a time ([`NoncoherentPages::map`]) and
//! unmapped after it ([`NoncoherentPages::unmap`]). They keep track of which of their bytes may
//! be in dirty cache lines ([`dirty`]), so that a mapping may skip its cache maintenance
//! ([`MapSync::SkipIfClean`]). The CPU reaches the memory only through a view, while nothing
//! is mapped: [`CpuWriteView`] ([`NoncoherentPages::cpu_write`]) notes the range it covers as
//! maybe dirty before it is written, [`CpuReadView`] ([`NoncoherentPages::cpu_read`]) reads
//! what the last unmapping handed back (its invalidate done). No mapping is made while a view
//! lives.
//!
//! As with 7.3's [`Coherent`](kernel::dma::Coherent), the memory is the CPU's to keep after the
//! device is unbound, and the pages hold a reference to the device. Unlike there, what the device
//! holds of them, a mapping, is a device resource that does not outlive the binding: a mapping is
//! made only with the bound device at hand ([`NoncoherentPages::map`]), and the pages' side of the
//! DMA API is a [`Devres`] object, which undoes a mapping still there when the device is unbound
//! (before the driver core tears the device's DMA configuration down). Nothing calls the DMA API
//! for the device after that; dropping the pages then only frees them.

pub mod dirty;

use core::{
    cell::UnsafeCell,
    ptr::NonNull, //
};

use kernel::{
    alloc::Flags,
    device::{
        Bound,
        Device, //
    },
    devres::Devres,
    dma::{
        DataDirection,
        DmaAddress, //
    },
    ffi::{
        c_int,
        c_ulong, //
    },
    prelude::*,
    sync::{
        aref::ARef,
        atomic::{
            Atomic,
            Full,
            Relaxed, //
        },
        Arc, //
    }, //
};

use crate::bindings;
use crate::kernel_ext::out_of_tree::{
    DeviceAsRaw as _,
    FlagsAsRaw as _, //
};

use dirty::Dirty;

/// The `attrs` argument `DMA_ATTR_SKIP_CPU_SYNC` of the mapping functions.
const SKIP_CPU_SYNC: c_ulong = bindings::DMA_ATTR_SKIP_CPU_SYNC as c_ulong;

/// The DMA address of a failed mapping, `DMA_MAPPING_ERROR` (`(dma_addr_t)~0`).
const MAPPING_ERROR: DmaAddress = DmaAddress::MAX;

/// Returns whether `addr` is a failed mapping (`dma_mapping_error()`, a static inline function).
///
/// Tells `CONFIG_DMA_API_DEBUG` that the mapping was checked, then checks it.
#[cfg(CONFIG_DMA_API_DEBUG)]
fn mapping_error(dev: &Device, addr: DmaAddress) -> bool {
    // SAFETY: `dev` is a valid device; the function only looks the address up.
    unsafe { bindings::debug_dma_mapping_error(dev.as_raw(), addr) };
    addr == MAPPING_ERROR
}

/// Returns whether `addr` is a failed mapping (`dma_mapping_error()`, a static inline function).
#[cfg(not(CONFIG_DMA_API_DEBUG))]
fn mapping_error(_dev: &Device, addr: DmaAddress) -> bool {
    addr == MAPPING_ERROR
}

/// Returns whether a mapping in `dir` may be made of pages allocated for `allowed`.
///
/// It may in the same direction, or in any transfer direction of pages allocated for both.
fn dir_allowed(allowed: DataDirection, dir: DataDirection) -> bool {
    match (allowed, dir) {
        (_, DataDirection::None) => false,
        (DataDirection::Bidirectional, _) => true,
        (a, d) => a == d,
    }
}

/// Returns `(to_device, from_device)` of a transfer direction.
fn dir_sides(dir: DataDirection) -> (bool, bool) {
    match dir {
        DataDirection::ToDevice => (true, false),
        DataDirection::FromDevice => (false, true),
        DataDirection::Bidirectional => (true, true),
        DataDirection::None => (false, false),
    }
}

/// The cache maintenance a mapping does for its direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapSync {
    /// Always (the DMA API's default).
    Always,
    /// Not if no byte of the pages can be in a dirty cache line ([`dirty`]).
    ///
    /// A dirty line is the only reason for the maintenance before a transfer from the device;
    /// the unmapping after it still invalidates. Skipping is right only when the device is
    /// given the pages' own memory, which [`NoncoherentPages::map_target`] tells of a mapping
    /// (not when the DMA API bounces the data through SWIOTLB).
    SkipIfClean,
}

/// The range a mapping of the pages covers.
///
/// The pages keep it, so that a mapping whose [`Mapping`] was leaked is still unmapped when the
/// pages are dropped or the device is unbound.
#[derive(Clone, Copy)]
struct MapState {
    addr: DmaAddress,
    /// The range's offset in the pages and its length.
    offset: u32,
    len: usize,
    dir: DataDirection,
}

/// A mapping of (a range of) [`NoncoherentPages`] for one transfer, from [`NoncoherentPages::map`].
///
/// [`NoncoherentPages::unmap`] takes it back. If it is leaked the pages stay mapped until they
/// are dropped or the device is unbound, whichever comes first, which unmaps them.
#[must_use = "the pages stay mapped until unmapped or dropped"]
pub struct Mapping {
    /// The mapping's id, [`NEXT_ID`] when it was made, never 0.
    id: u64,
    state: MapState,
}

/// The id of the next mapping of any pages.
///
/// Ids are unique (a 64-bit counter does not wrap), so that a [`Mapping`] of pages that were
/// freed is not taken for one of other pages.
static NEXT_ID: Atomic<u64> = Atomic::new(1);

/// The value of `NoncoherentPages::mapped` while a mapping is being made.
const MAPPING: u64 = u64::MAX;

/// The value of `NoncoherentPages::mapped` while the CPU has a view of the pages.
const CPU_VIEW: u64 = u64::MAX - 1;

impl Mapping {
    /// Returns the DMA address the device is given for the mapped range.
    #[inline]
    pub fn dma_address(&self) -> DmaAddress {
        self.state.addr
    }
}

/// The memory the DMA address of a [`Mapping`] reaches, from [`NoncoherentPages::map_target`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapTarget {
    /// The mapped bytes of the pages themselves, which the device reads and writes.
    Pages,
    /// Other memory.
    ///
    /// It is a buffer the DMA API copies the data through (SWIOTLB), or an address that is not
    /// one of System RAM (an IOMMU's).
    Elsewhere,
    /// Not known.
    ///
    /// The device has DMA ranges (`dma_range_map`), which are not translated, or the memory
    /// could not be looked up.
    Unknown,
}

/// The counts [`NoncoherentPages::counts`] returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncCounts {
    /// Mappings from the device that invalidated the range first (wrapping).
    pub invalidates_done: usize,
    /// Mappings from the device that skipped it, the pages being clean (wrapping).
    pub invalidates_skipped: usize,
}

/// Cached pages (`alloc_pages()`) of `size` bytes for DMA by one device.
///
/// The pages are freed (`__free_pages()`) when dropped.
///
/// At most one range is mapped at a time ([`Self::map`], which takes the bound device); while it
/// is, the device owns it and the CPU cannot have a view of it. The CPU reaches the memory only
/// through one view at a time, taken while nothing is mapped: [`Self::cpu_write`] for writes,
/// which notes the range as maybe dirty first, and [`Self::cpu_read`] for reads. A mapping still
/// there when the pages are dropped, or when the device is unbound, is undone then; after the
/// unbinding the pages are the CPU's alone (as the memory of a [`Coherent`](kernel::dma::Coherent)
/// is), and cannot be mapped again.
pub struct NoncoherentPages {
    /// The device's side: dropped first, which undoes a mapping still there.
    dma: Devres<DmaSide>,
    pages: Arc<Pages>,
}

/// The pages, their state and what is known of their cache lines.
///
/// # Invariants
///
/// - `page` was returned by `alloc_pages(.., order)` without `__GFP_HIGHMEM`, with
///   `size <= PAGE_SIZE << order`, `size` not zero and at most `u32::MAX`, and is owned by this
///   object.
/// - `cpu_addr` is the kernel virtual address of `page` (`page_address()`), valid for `size`
///   bytes while this object lives.
/// - `mapped` is 0 while nothing is mapped, `MAPPING` while a mapping is being made,
///   `CPU_VIEW` while a [`CpuWriteView`] or [`CpuReadView`] of the pages lives, and the id of
///   the [`Mapping`] while a range of the pages is mapped for the device; `map_state` holds that
///   mapping then. Only the caller that changed `mapped` from 0 to `MAPPING` (holding access to
///   the [`DmaSide`]) writes `map_state`, before it hands out the [`Mapping`]; only the holder of
///   that [`Mapping`] (one exists: it is not `Clone`), while it has access to the [`DmaSide`], or
///   the [`DmaSide`]'s drop, which no such access overlaps, clears it and `mapped`.
/// - Nothing is mapped when this object is dropped: the [`DmaSide`] holds a reference to it
///   until its drop has undone a mapping.
struct Pages {
    page: NonNull<bindings::page>,
    order: u32,
    cpu_addr: NonNull<u8>,
    size: usize,
    dir: DataDirection,
    mapped: Atomic<u64>,
    map_state: UnsafeCell<Option<MapState>>,
    /// The maybe-dirty bytes, [`Dirty::to_bits`].
    dirty: Atomic<u64>,
    invalidates_done: Atomic<usize>,
    invalidates_skipped: Atomic<usize>,
}

// SAFETY: The pages are plain memory owned by this object, which may be freed on any thread.
unsafe impl Send for Pages {}

// SAFETY: Shared access updates atomics or reads plain values; `map_state` is only accessed as the
// type invariants say, by one party at a time.
unsafe impl Sync for Pages {}

impl Drop for Pages {
    fn drop(&mut self) {
        // SAFETY: By the type invariants the pages were allocated with this order, are owned by
        // this object, which goes now, and are not mapped.
        unsafe { bindings::__free_pages(self.page.as_ptr(), self.order) };
    }
}

/// The pages' side of the DMA API, [`Devres`]-managed: dropped when the pages are, or when the
/// device is unbound, whichever comes first.
///
/// Dropping it undoes a mapping still there ([`Pages`]' `map_state`): every mapping is undone
/// while the device is bound, with the device's DMA configuration still in place.
///
/// # Invariants
///
/// `dev` is the device the pages were allocated for.
struct DmaSide {
    dev: ARef<Device>,
    pages: Arc<Pages>,
}

impl Drop for DmaSide {
    fn drop(&mut self) {
        let pages = &*self.pages;
        let id = pages.mapped.load(kernel::sync::atomic::Acquire);
        // Nothing is mapped, or a view (which does not need the device) lives: not `MAPPING`,
        // which only a caller with access to this object sets, and none has it now.
        if id == 0 || id == CPU_VIEW || id == MAPPING {
            return;
        }
        // SAFETY: A mapping is there, and no one has access to this object, which goes: its
        // drop is the one to clear `map_state` (type invariants of `Pages`).
        let leaked = unsafe { (*pages.map_state.get()).take() };
        if let Some(MapState { addr, len, dir, .. }) = leaked {
            // SAFETY: The mapping was made for `dev` with these values (type invariants), and
            // nobody else can unmap it now.
            unsafe { bindings::dma_unmap_page_attrs(self.dev.as_raw(), addr, len, dir.into(), 0) };
        }
        // INVARIANT: Unmapped, `map_state` cleared; views may be taken.
        pages.mapped.store(0, kernel::sync::atomic::Release);
    }
}

// SAFETY: `ARef<Device>` and `Arc<Pages>` may be sent to and shared with any thread; the DMA API
// may be called from any thread.
unsafe impl Send for DmaSide {}

// SAFETY: As for `Send`; shared access only maps and unmaps through the DMA API, which may be
// called concurrently, under the rules of `Pages`.
unsafe impl Sync for DmaSide {}

impl Pages {
    /// Takes the pages for the CPU (`mapped` from 0 to `CPU_VIEW`) for a view.
    ///
    /// Returns `EBUSY` while a range is mapped or another view lives.
    fn claim_for_cpu(&self) -> Result {
        self.mapped
            .cmpxchg(0, CPU_VIEW, Full)
            .map(|_| ())
            .map_err(|_| EBUSY)
    }

    fn dirty(&self) -> Dirty {
        Dirty::from_bits(self.dirty.load(Relaxed))
    }

    fn update_dirty(&self, f: impl Fn(Dirty) -> Dirty) {
        let mut old = self.dirty.load(Relaxed);
        loop {
            let new = f(Dirty::from_bits(old)).to_bits();
            match self.dirty.cmpxchg(old, new, Full) {
                Ok(_) => return,
                Err(cur) => old = cur,
            }
        }
    }

    /// Checks that `len` bytes at `offset` lie inside the buffer and returns them as `u32`.
    fn range(&self, offset: usize, len: usize) -> Result<(u32, u32)> {
        match offset.checked_add(len) {
            // `size` fits in `u32` (type invariants), so do `offset` and `len`.
            Some(end) if end <= self.size => Ok((
                u32::try_from(offset).map_err(|_| EINVAL)?,
                u32::try_from(len).map_err(|_| EINVAL)?,
            )),
            _ => Err(EINVAL),
        }
    }
}

impl NoncoherentPages {
    /// Allocates `size` bytes of pages for `dev`, for transfers in `dir`.
    ///
    /// [`DataDirection::Bidirectional`] allows either way. `gfp_flags` must not ask for high
    /// memory. Returns `EINVAL` if `size` is zero or too big, or `dir` is [`DataDirection::None`],
    /// `ENOMEM` if the allocation fails.
    pub fn alloc(
        dev: &Device<Bound>,
        size: usize,
        dir: DataDirection,
        gfp_flags: Flags,
    ) -> Result<Self> {
        let size32 = u32::try_from(size).map_err(|_| EINVAL)?;
        if size == 0 || dir == DataDirection::None || gfp_flags.contains(__GFP_HIGHMEM) {
            return Err(EINVAL);
        }
        let order = size
            .div_ceil(kernel::page::PAGE_SIZE)
            .next_power_of_two()
            .trailing_zeros();
        // SAFETY: `alloc_pages()` may be called with any flags and order.
        let page = unsafe { bindings::alloc_pages(gfp_flags.as_raw(), order) };
        let page = NonNull::new(page).ok_or(ENOMEM)?;
        // SAFETY: `page` is a valid page just allocated.
        let cpu_addr = unsafe { bindings::page_address(page.as_ptr()) }.cast::<u8>();
        let Some(cpu_addr) = NonNull::new(cpu_addr) else {
            // SAFETY: `page` was allocated above with this order and is not used again.
            unsafe { bindings::__free_pages(page.as_ptr(), order) };
            return Err(ENOMEM);
        };
        // INVARIANT: Allocated above, low memory, `PAGE_SIZE << order >= size`, owned now (freed
        // by its drop if what follows fails); `cpu_addr` is its address; nothing is mapped.
        let pages = Pages {
            page,
            order,
            cpu_addr,
            size,
            dir,
            mapped: Atomic::new(0),
            map_state: UnsafeCell::new(None),
            dirty: Atomic::new(Dirty::all(size32).to_bits()),
            invalidates_done: Atomic::new(0),
            invalidates_skipped: Atomic::new(0),
        };
        let pages = Arc::new(pages, gfp_flags)?;
        // INVARIANT: The pages are for `dev`.
        let side = DmaSide {
            dev: dev.into(),
            pages: pages.clone(),
        };
        Ok(Self {
            dma: Devres::new(dev, side)?,
            pages,
        })
    }

    /// Returns access to the device's side of the pages, for mapping them on `dev`.
    ///
    /// Returns `EINVAL` if `dev` is not the device the pages are for, `ENODEV` if it was unbound
    /// since they were allocated (the pages outlived its binding).
    fn dma_side(
        &self,
        dev: &Device<Bound>,
    ) -> Result<kernel::revocable::RevocableGuard<'_, DmaSide>> {
        if self.dma.device().as_raw() != dev.as_raw() {
            return Err(EINVAL);
        }
        self.dma.try_access().ok_or(ENODEV)
    }

    /// Returns the size in bytes.
    #[inline]
    pub fn size(&self) -> usize {
        self.pages.size
    }

    /// Returns whether no byte of the pages can be in a dirty cache line.
    pub fn is_clean(&self) -> bool {
        self.pages.dirty().is_clean()
    }

    /// Returns the counts of mappings from the device that invalidated or skipped.
    pub fn counts(&self) -> SyncCounts {
        SyncCounts {
            invalidates_done: self.pages.invalidates_done.load(Relaxed),
            invalidates_skipped: self.pages.invalidates_skipped.load(Relaxed),
        }
    }

    /// Returns a view for the CPU to write `len` bytes at `offset`, and notes them as written.
    ///
    /// They may be in dirty cache lines from now on (also if the write stops halfway), until a
    /// mapping or unmapping cleans or invalidates them. Returns `EINVAL` if the range is not
    /// inside the buffer, `EBUSY` while a range is mapped or another view lives.
    pub fn cpu_write(&self, offset: usize, len: usize) -> Result<CpuWriteView<'_>> {
        let (off32, len32) = self.pages.range(offset, len)?;
        self.pages.claim_for_cpu()?;
        self.pages.update_dirty(|d| d.cpu_write(off32, len32));
        // INVARIANT: Claimed for the CPU above, inside the buffer (checked), noted as written.
        Ok(CpuWriteView {
            pages: &self.pages,
            offset,
            len,
        })
    }

    /// Returns a view for the CPU to read the whole buffer.
    ///
    /// Nothing is mapped while it lives: a transfer from the device was unmapped before, which
    /// invalidated the CPU caches over its range, so the view reads what the device wrote.
    /// Returns `EBUSY` while a range is mapped or another view lives.
    pub fn cpu_read(&self) -> Result<CpuReadView<'_>> {
        self.pages.claim_for_cpu()?;
        // INVARIANT: Claimed for the CPU above.
        Ok(CpuReadView { pages: &self.pages })
    }

    /// Maps `len` bytes at `offset` for one transfer in `dir` on `dev` (`dma_map_page_attrs()`).
    ///
    /// `dev` is the device the pages were allocated for, bound: a mapping is made only while it
    /// is, and is undone at the latest when it is unbound. The mapping cleans the CPU caches over
    /// the bytes (to the device, both ways) or invalidates them (from the device); with
    /// [`MapSync::SkipIfClean`] that is skipped when no byte of the pages can be in a dirty cache
    /// line (`DMA_ATTR_SKIP_CPU_SYNC`). The device owns the range until [`Self::unmap`].
    ///
    /// Returns `EINVAL` if `dev` is another device, the range is not inside the buffer, empty,
    /// or `dir` is not allowed by the allocation's direction; `ENODEV` if the device was unbound
    /// since the allocation; `EBUSY` if a range is mapped already or the CPU has a view of the
    /// pages; `ENOMEM` if the mapping fails.
    pub fn map(
        &self,
        dev: &Device<Bound>,
        offset: usize,
        len: usize,
        dir: DataDirection,
        sync: MapSync,
    ) -> Result<Mapping> {
        let pages = &*self.pages;
        let (off32, len32) = pages.range(offset, len)?;
        if len == 0 || !dir_allowed(pages.dir, dir) {
            return Err(EINVAL);
        }
        // Held until the mapping is handed out: the device is not unbound meanwhile.
        let _side = self.dma_side(dev)?;
        if pages.mapped.cmpxchg(0, MAPPING, Full).is_err() {
            return Err(EBUSY);
        }
        let (to_device, from_device) = dir_sides(dir);
        let skip = sync == MapSync::SkipIfClean && pages.dirty().may_skip_sync();
        let attrs = if skip { SKIP_CPU_SYNC } else { 0 };
        // The pages start at a page boundary: `offset` may be larger than a page.
        let page_offset = offset % kernel::page::PAGE_SIZE;
        // SAFETY: By the type invariants `page` owns at least `size` bytes of low memory;
        // `offset / PAGE_SIZE` pages on is inside them, and `len` bytes from `page_offset` in it
        // are inside the buffer (checked above). `dev` is a valid, bound device.
        let addr = unsafe {
            bindings::dma_map_page_attrs(
                dev.as_raw(),
                pages.page.as_ptr().add(offset / kernel::page::PAGE_SIZE),
                page_offset,
                len,
                dir.into(),
                attrs,
            )
        };
        if mapping_error(dev, addr) {
            pages.mapped.store(0, kernel::sync::atomic::Release);
            return Err(ENOMEM);
        }
        let state = MapState {
            addr,
            offset: off32,
            len,
            dir,
        };
        // SAFETY: This caller changed `mapped` from 0 to `MAPPING` above: it is the only one to
        // access `map_state` until it hands out the mapping (type invariants).
        unsafe { *pages.map_state.get() = Some(state) };
        if !skip && dirty::leaves_clean(to_device, from_device, true) {
            pages.update_dirty(|d| d.maintained(off32, len32));
        }
        if from_device && !to_device {
            let count = if skip {
                &pages.invalidates_skipped
            } else {
                &pages.invalidates_done
            };
            count.add(1, Relaxed);
        }
        let id = NEXT_ID.fetch_add(1, Relaxed);
        // INVARIANT: `mapped` is the id of the mapping, `map_state` holds it.
        pages.mapped.store(id, kernel::sync::atomic::Release);
        Ok(Mapping { id, state })
    }

    /// Returns what the DMA address of `mapping`, a mapping of these pages on `dev`, reaches.
    ///
    /// It reaches the pages themselves when the DMA API hands the device the memory it maps,
    /// other memory when it bounces the data through a buffer of its own (SWIOTLB:
    /// `swiotlb=force`, or pages above the device's DMA mask) or the device sees an IOMMU's
    /// addresses.
    ///
    /// For a device without DMA ranges (`dma_range_map`) a DMA address is the physical address
    /// it reaches (`dma_to_phys()`). That is the pages' when it is System RAM and its CPU
    /// address (`memremap()`: the linear mapping, for low memory) is the mapped bytes'. Nothing
    /// is read or written.
    ///
    /// Returns `EINVAL` if `dev` is another device or `mapping` is not a mapping of these pages.
    pub fn map_target(&self, dev: &Device<Bound>, mapping: &Mapping) -> Result<MapTarget> {
        if self.dma.device().as_raw() != dev.as_raw()
            || self.pages.mapped.load(kernel::sync::atomic::Acquire) != mapping.id
        {
            return Err(EINVAL);
        }
        // SAFETY: `dev` is a valid, bound device: its DMA ranges are set up before it is probed
        // and stay until it is unbound, and this only reads whether it has any.
        let ranges = unsafe { (*dev.as_raw()).dma_range_map };
        if !ranges.is_null() {
            return Ok(MapTarget::Unknown);
        }
        // The DMA address is taken as the physical one: the other way round,
        // `phys_to_dma(page_to_phys())`, takes static inline functions.
        // `dma_addr_t` may be wider than `phys_addr_t` (`ARCH_DMA_ADDR_T_64BIT` without LPAE).
        #[allow(clippy::unnecessary_fallible_conversions)]
        let Some(phys) = bindings::resource_size_t::try_from(mapping.state.addr).ok() else {
            return Ok(MapTarget::Elsewhere);
        };
        // SAFETY: `region_intersects()` only looks the range up in the resource tree.
        let ram = unsafe {
            bindings::region_intersects(
                phys,
                1,
                (bindings::IORESOURCE_MEM | bindings::IORESOURCE_SYSRAM) as c_ulong,
                bindings::IORES_DESC_NONE as c_ulong,
            )
        };
        if ram != bindings::REGION_INTERSECTS as c_int {
            return Ok(MapTarget::Elsewhere);
        }
        // SAFETY: `phys` is a byte of System RAM: `memremap()` returns its CPU address, the
        // linear mapping's for low memory or a new mapping, which `memunmap()` below undoes.
        // Nothing is accessed through it.
        let cpu = unsafe { bindings::memremap(phys, 1, bindings::MEMREMAP_WB as c_ulong) };
        if cpu.is_null() {
            return Ok(MapTarget::Unknown);
        }
        // `offset` is inside the pages (it was checked when mapped).
        let own = self
            .pages
            .cpu_addr
            .as_ptr()
            .wrapping_add(usize::try_from(mapping.state.offset).unwrap_or(usize::MAX));
        let same = core::ptr::eq(cpu.cast::<u8>().cast_const(), own.cast_const());
        // SAFETY: `cpu` was returned by `memremap()` above and is not used after this.
        unsafe { bindings::memunmap(cpu) };
        Ok(if same {
            MapTarget::Pages
        } else {
            MapTarget::Elsewhere
        })
    }

    /// Unmaps `mapping` (`dma_unmap_page_attrs()`), handing the bytes back to the CPU.
    ///
    /// Unmapping invalidates the CPU caches over the range after a transfer from the device or
    /// both ways. It needs no bound device: a mapping is there only while the device is bound,
    /// its unbinding undoes it.
    ///
    /// Returns `EINVAL`, and leaves the pages mapped until they are dropped or the device is
    /// unbound, if `mapping` is not a mapping of these pages; `ENODEV` if the device was unbound
    /// since the mapping was made, which undid it (a transfer from the device is invalidated
    /// then).
    pub fn unmap(&self, mapping: Mapping) -> Result {
        // Held until the mapping is undone: the device's side is not dropped meanwhile.
        let side = self.dma.try_access().ok_or(ENODEV)?;
        let pages = &*self.pages;
        if pages.mapped.load(kernel::sync::atomic::Acquire) != mapping.id {
            return Err(EINVAL);
        }
        let MapState {
            addr,
            offset,
            len,
            dir,
        } = mapping.state;
        // SAFETY: `mapping` is the mapping of these pages (its id is theirs, type invariants),
        // made by `dma_map_page_attrs()` for the device (`side.dev`, type invariant of `DmaSide`)
        // with these values, and consumed here; the device's side, which would undo it at unbind,
        // is not dropped while `side` is held.
        unsafe { bindings::dma_unmap_page_attrs(side.dev.as_raw(), addr, len, dir.into(), 0) };
        let (to_device, from_device) = dir_sides(dir);
        if dirty::leaves_clean(to_device, from_device, false) {
            // `len` fits in `u32`: it was checked against the size when mapped.
            let len32 = u32::try_from(len).unwrap_or(u32::MAX);
            pages.update_dirty(|d| d.maintained(offset, len32));
        }
        // SAFETY: The holder of the mapping, with access to the device's side, accesses
        // `map_state` (type invariants); it is consumed here.
        unsafe { *pages.map_state.get() = None };
        // INVARIANT: Unmapped, `map_state` cleared.
        pages.mapped.store(0, kernel::sync::atomic::Release);
        Ok(())
    }
}

/// A view for the CPU to write a range of [`NoncoherentPages`], from
/// [`NoncoherentPages::cpu_write`].
///
/// The range is noted as maybe dirty, so that the next mapping cleans it; nothing is mapped
/// while the view lives. `kernel::dma::cpu_copy` copies into it.
///
/// # Invariants
///
/// `pages.mapped` is `CPU_VIEW`, set for this view; `len` bytes at `offset` are inside the
/// pages and noted as written ([`Dirty::cpu_write`]).
pub struct CpuWriteView<'a> {
    pages: &'a Pages,
    offset: usize,
    len: usize,
}

impl CpuWriteView<'_> {
    /// Returns the CPU address of the range, valid for reads and writes of [`Self::size`] bytes
    /// while the view lives (the pages are the CPU's, no device has them).
    ///
    /// Not to be accessed through Rust references.
    pub fn as_mut_ptr(&self) -> *mut u8 {
        // `offset` is inside the pages (type invariants).
        self.pages.cpu_addr.as_ptr().wrapping_add(self.offset)
    }

    /// Returns the size of the range in bytes.
    pub fn size(&self) -> usize {
        self.len
    }
}

impl Drop for CpuWriteView<'_> {
    fn drop(&mut self) {
        // INVARIANT: The view goes: the pages may be mapped again.
        self.pages.mapped.store(0, kernel::sync::atomic::Release);
    }
}

/// A view for the CPU to read [`NoncoherentPages`], from [`NoncoherentPages::cpu_read`].
///
/// Nothing is mapped while it lives. `kernel::dma::cpu_copy` copies out of it.
///
/// # Invariants
///
/// `pages.mapped` is `CPU_VIEW`, set for this view.
pub struct CpuReadView<'a> {
    pages: &'a Pages,
}

impl CpuReadView<'_> {
    /// Returns the CPU address of the pages, valid for reads of [`Self::size`] bytes while the view
    /// lives (the pages are the CPU's, no device has them).
    ///
    /// Not to be accessed through Rust references, and not written: a write would not be noted as
    /// dirty.
    pub fn as_ptr(&self) -> *const u8 {
        self.pages.cpu_addr.as_ptr().cast_const()
    }

    /// Returns the size of the pages in bytes.
    pub fn size(&self) -> usize {
        self.pages.size
    }
}

impl Drop for CpuReadView<'_> {
    fn drop(&mut self) {
        // INVARIANT: The view goes: the pages may be mapped again.
        self.pages.mapped.store(0, kernel::sync::atomic::Release);
    }
}

#[cfg(CONFIG_KUNIT)]
mod tests;
