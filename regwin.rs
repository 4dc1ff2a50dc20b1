// SPDX-License-Identifier: GPL-2.0

//! The controller's register window, mapped by the driver itself.
//!
//! The upstream device trees give the SDHC `reg = <0x8e00 0x42>` (`meson.dtsi`): 0x42 bytes,
//! not a multiple of 4. Linux 7.3's `IoMem` maps a resource's whole size and refuses any size
//! that is not a multiple of 4 (`Region::ptr_try_from_raw_parts_mut()`), so with it the driver
//! would not probe on a real board. The registers end at 0x3c (`CLK2`): [`RegWindow`] maps the
//! first `SIZE` bytes of the resource (checked to lie inside it) and gives them the kernel
//! crate's `Io` accessors through its public MMIO view, as `IoMem` does.
//!
//! The whole resource is requested first ([`MemRegion`], `request_mem_region()` as the C
//! driver's `devm_platform_ioremap_resource()` does): the mapping is exclusive, also against
//! the C driver, and shows in `/proc/iomem`. The kernel crate's `Resource::request_region`
//! (which `ExclusiveIoMem` uses) cannot do it for a device made from the device tree: it
//! requests the region under the device's own resource, which `of_platform` never inserts
//! into the I/O memory tree (only `platform_device_add()` does), so nothing else sees it,
//! and its `Region` releases from the tree's root, where the region is not: "Trying to free
//! nonexistent resource", the region stays busy and the next bind fails with `EBUSY`.

use core::ffi::c_void;

use kernel::{
    bindings,
    device::{
        Bound,
        Device, //
    },
    io::{
        resource::Resource,
        IoBase,
        Mmio,
        MmioBackend,
        MmioRaw,
        PhysAddr,
        Region,
        ResourceSize, //
    },
    prelude::*,
    str::CString, //
};

/// A busy region of the I/O memory tree, requested at its root (`request_mem_region()`) and
/// released when dropped (`release_mem_region()`).
///
/// # Invariants
///
/// `[start, start + size)` was requested at the root of the I/O memory tree with `name`,
/// which lives as long as the region, and is released only by `drop`.
struct MemRegion {
    start: PhysAddr,
    size: ResourceSize,
    _name: CString,
}

impl MemRegion {
    /// Requests `size` bytes at `start`; `EBUSY` if any part of them is busy already.
    fn request(start: PhysAddr, size: ResourceSize, name: CString) -> Result<Self> {
        // SAFETY: `iomem_resource` is the root of the I/O memory tree, which the resource
        // functions lock themselves; the tree keeps a pointer to `name`, which `Self` owns
        // until the region is released.
        let res = unsafe {
            bindings::__request_region(
                &raw mut bindings::iomem_resource,
                start,
                size,
                name.as_char_ptr(),
                0,
            )
        };
        if res.is_null() {
            return Err(EBUSY);
        }
        // INVARIANT: Requested just now.
        Ok(Self {
            start,
            size,
            _name: name,
        })
    }
}

impl Drop for MemRegion {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the range was requested at the root and not released.
        unsafe {
            bindings::__release_region(&raw mut bindings::iomem_resource, self.start, self.size)
        };
    }
}

/// The first `SIZE` bytes of a device's memory resource, mapped (`ioremap()`).
///
/// # Invariants
///
/// `io` is an `ioremap()` mapping of `SIZE` bytes (a non-zero multiple of 4) of a memory
/// resource of `dev`, valid until `self` is dropped, which unmaps it. `_region` holds the
/// resource requested for the driver and is released after the unmap (fields drop after
/// `drop`).
pub(crate) struct RegWindow<'a, const SIZE: usize> {
    _dev: &'a Device<Bound>,
    io: MmioRaw<Region<SIZE>>,
    _region: MemRegion,
}

impl<'a, const SIZE: usize> RegWindow<'a, SIZE> {
    /// Requests the whole of `res`, a memory resource of `dev`, and maps its first `SIZE`
    /// bytes; `EINVAL` if the resource is shorter, `EBUSY` if another driver holds it.
    pub(crate) fn map(dev: &'a Device<Bound>, res: &Resource) -> Result<Self> {
        const { assert!(SIZE > 0 && SIZE % 4 == 0) };
        let len: usize = res.size().try_into()?;
        if len < SIZE {
            return Err(EINVAL);
        }
        let region = MemRegion::request(res.start(), res.size(), dev.name().to_cstring()?)?;
        // SAFETY: `res` is a memory resource of the bound device `dev` and `SIZE` (not zero)
        // bytes from its start lie inside it.
        let addr = unsafe { bindings::ioremap(res.start(), SIZE) };
        if addr.is_null() {
            return Err(ENOMEM);
        }
        match MmioRaw::new_region(addr as usize, SIZE) {
            // INVARIANT: Mapped just now, `SIZE` bytes, a non-zero multiple of 4.
            Ok(io) => Ok(Self {
                _dev: dev,
                io,
                _region: region,
            }),
            Err(e) => {
                // SAFETY: `addr` was returned by `ioremap()` above and is not used again.
                unsafe { bindings::iounmap(addr) };
                Err(e)
            }
        }
    }
}

impl<const SIZE: usize> Drop for RegWindow<'_, SIZE> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `io` is an `ioremap()` mapping; nothing uses it after
        // this (the views borrow `self`).
        unsafe { bindings::iounmap(self.io.addr() as *mut c_void) };
    }
}

impl<'a, const SIZE: usize> IoBase<'a> for &'a RegWindow<'_, SIZE> {
    type Backend = MmioBackend;
    type Target = Region<SIZE>;

    fn as_view(self) -> Mmio<'a, Region<SIZE>> {
        // SAFETY: By the type invariant `io` is a valid, 4-byte aligned MMIO mapping of `SIZE`
        // bytes for as long as `self` is borrowed.
        unsafe { Mmio::from_raw(self.io) }
    }
}
