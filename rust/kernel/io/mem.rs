// SPDX-License-Identifier: GPL-2.0

//! The out-of-tree stand-in for `kernel::io::mem` as the series' fixes leave it.
//!
//! It is not posted.
//!
//! C header: [`include/linux/io.h`](srctree/include/linux/io.h)
//!
//! Linux 7.3's [`IoMem`](kernel::io::mem::IoMem) refuses a resource whose size is not a
//! multiple of 4, and its [`ExclusiveIoMem`](kernel::io::mem::ExclusiveIoMem) requests the
//! region under the resource instead of at the root of the I/O memory tree. The rust-fixes
//! posting repairs both; this module gives a module built out of tree the same API with those
//! fixes: [`IoRequest::iomap_exclusive_sized`], [`ExclusiveIoMem::into_devres`] and the
//! [`IoBase`] view of [`ExclusiveIoMem`]. The request comes from the platform device through
//! `kernel_ext::out_of_tree`.

use kernel::{
    device::{
        Bound,
        Device, //
    },
    devres::DevresLt,
    io::{
        resource::{
            Flags,
            Resource, //
        },
        IoBase,
        Mmio,
        MmioBackend,
        MmioRaw,
        PhysAddr,
        Region,
        ResourceSize, //
    },
    prelude::*,
    str::CString,
    types::{
        CovariantForLt,
        ForLt, //
    }, //
};

use crate::bindings;

/// An I/O request for a memory resource of a bound device.
pub struct IoRequest<'a> {
    device: &'a Device<Bound>,
    resource: &'a Resource,
}

impl<'a> IoRequest<'a> {
    /// Creates the request of `resource` of `device`.
    ///
    /// # Safety
    ///
    /// `resource` is a resource of `device`, valid for `'a`.
    pub unsafe fn new(device: &'a Device<Bound>, resource: &'a Resource) -> Self {
        Self { device, resource }
    }

    /// Requests the resource at the root of the I/O memory tree and maps all of it.
    ///
    /// Returns `EINVAL` if the resource is empty, not 4-byte aligned or its 32-bit words are
    /// fewer than `SIZE` bytes, `EBUSY` if any part of it is busy, `ENOMEM` if it cannot be
    /// mapped.
    pub fn iomap_exclusive_sized<const SIZE: usize>(self) -> Result<ExclusiveIoMem<'a, SIZE>> {
        let res = self.resource;
        let name = res.name().unwrap_or_default().to_cstring()?;
        let region = MemRegion::request(res.start(), res.size(), name)?;
        let iomem = IoMem::ioremap(self.device, res)?;
        Ok(ExclusiveIoMem {
            iomem,
            _region: region,
        })
    }
}

/// A busy range of the I/O memory tree, requested at its root (`request_mem_region()`).
///
/// # Invariants
///
/// `[start, start + size)` was requested with `request_mem_region()` under the name `_name`,
/// which lives as long as the request, and is released only by `drop`.
struct MemRegion {
    start: PhysAddr,
    size: ResourceSize,
    _name: CString,
}

impl MemRegion {
    /// Requests `size` bytes at `start` under `name`, or fails with `EBUSY` if any is busy.
    fn request(start: PhysAddr, size: ResourceSize, name: CString) -> Result<Self> {
        // SAFETY: The resource functions take their own locks; the I/O memory tree keeps a
        // pointer to `name`, which `Self` owns until the range is released.
        let res = unsafe { bindings::request_mem_region(start, size, name.as_char_ptr()) };
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
        // SAFETY: By the type invariant the range was requested and is not released yet.
        unsafe { bindings::release_mem_region(self.start, self.size) };
    }
}

/// A memory-mapped resource of a bound device, its 32-bit words at least `SIZE` bytes.
///
/// # Invariants
///
/// `io` starts at an `ioremap()` (or `ioremap_np()`) mapping of the whole resource, owned by
/// this object and unmapped only by `drop`; its size is the resource's size rounded down to a
/// multiple of 4, at least `SIZE`, and its address is 4-byte aligned.
pub struct IoMem<'a, const SIZE: usize = 0> {
    dev: &'a Device<Bound>,
    io: MmioRaw<Region<SIZE>>,
}

impl<'a, const SIZE: usize> IoMem<'a, SIZE> {
    /// Maps all of `resource`, whose region is the resource's whole 32-bit words.
    fn ioremap(dev: &'a Device<Bound>, resource: &Resource) -> Result<Self> {
        let size: usize = resource.size().try_into()?;
        let words = size & !3;
        if size == 0 || words < SIZE {
            return Err(EINVAL);
        }
        let start = resource.start();
        let addr = if resource.flags().contains(Flags::IORESOURCE_MEM_NONPOSTED) {
            // SAFETY: `start` and `size` (not zero) are read from a valid `struct resource`.
            unsafe { bindings::ioremap_np(start, size) }
        } else {
            // SAFETY: As above.
            unsafe { bindings::ioremap(start, size) }
        };
        if addr.is_null() {
            return Err(ENOMEM);
        }
        let io = MmioRaw::new_region(addr as usize, words).inspect_err(|_| {
            // SAFETY: `addr` was returned by `ioremap()` above and is not used after this.
            unsafe { bindings::iounmap(addr) };
        })?;
        // INVARIANT: The whole resource was mapped just now; `words` is its size rounded down
        // to a multiple of 4 and at least `SIZE`, the address was checked to be aligned.
        Ok(Self { dev, io })
    }
}

impl<const SIZE: usize> Drop for IoMem<'_, SIZE> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `io` starts at a mapping owned by `self`; nothing uses it
        // after this (the views borrow `self`).
        unsafe { bindings::iounmap(self.io.addr() as *mut c_void) };
    }
}

impl<'a, const SIZE: usize> IoBase<'a> for &'a IoMem<'_, SIZE> {
    type Backend = MmioBackend;
    type Target = Region<SIZE>;

    #[inline]
    fn as_view(self) -> Mmio<'a, Region<SIZE>> {
        // SAFETY: By the type invariant `io` is a valid, 4-byte aligned MMIO mapping of its size,
        // a multiple of 4 and at least `SIZE`, for as long as `self` is borrowed.
        unsafe { Mmio::from_raw(self.io) }
    }
}

/// A memory-mapped resource of a bound device with its range requested.
pub struct ExclusiveIoMem<'a, const SIZE: usize> {
    iomem: IoMem<'a, SIZE>,
    /// Released after the unmap (fields drop in order).
    _region: MemRegion,
}

impl<const SIZE: usize> ForLt for ExclusiveIoMem<'static, SIZE> {
    type Of<'a> = ExclusiveIoMem<'a, SIZE>;
}

// SAFETY: `ExclusiveIoMem<'a, SIZE>` is covariant over `'a`: it holds `&'a Device<Bound>`, which
// is covariant, and no other use of `'a`.
unsafe impl<const SIZE: usize> CovariantForLt for ExclusiveIoMem<'static, SIZE> {}

/// A device-managed exclusive I/O memory region, revoked when the device is unbound.
pub type DevresExclusiveIoMem<const SIZE: usize> = DevresLt<ExclusiveIoMem<'static, SIZE>>;

impl<const SIZE: usize> ExclusiveIoMem<'_, SIZE> {
    /// Consumes the mapping and registers it as a device-managed resource.
    ///
    /// Access to it is revoked, and it is unmapped, when the device is unbound.
    pub fn into_devres(self) -> Result<DevresExclusiveIoMem<SIZE>> {
        let dev = self.iomem.dev;
        // SAFETY: The mapping holds only a reference to the bound device and a mapping of one
        // of its resources, both valid for the device's whole bound scope.
        unsafe { DevresLt::new(dev, self) }
    }
}

impl<'a, const SIZE: usize> IoBase<'a> for &'a ExclusiveIoMem<'_, SIZE> {
    type Backend = MmioBackend;
    type Target = Region<SIZE>;

    #[inline]
    fn as_view(self) -> Mmio<'a, Region<SIZE>> {
        (&self.iomem).as_view()
    }
}
