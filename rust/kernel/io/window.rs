// SPDX-License-Identifier: GPL-2.0

//! I/O memory windows: memory resources of any size, requested and mapped.
//!
//! C header: [`include/linux/io.h`](srctree/include/linux/io.h)
//!
//! [`IoWindow`] requests a device's memory resource at the root of the I/O memory tree
//! (`request_mem_region()`) and maps all of it (`ioremap()`), as a C driver's
//! `devm_platform_ioremap_resource()` does. Its whole 32-bit words have the
//! [`Io`](kernel::io::Io) accessors, checked at build time against the minimum size `SIZE` and
//! at run time against the mapped size; unlike [`IoMem`](kernel::io::mem::IoMem), whose
//! [`Region`] must be, the size need not be a multiple of 4.

use kernel::{
    device::{
        Bound,
        Device, //
    },
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
    str::CString, //
};

use crate::bindings;

/// A busy range of the I/O memory tree, requested at its root (`request_mem_region()`).
///
/// The range is released when dropped (`release_mem_region()`).
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
    /// Requests `size` bytes at `start` under `name`.
    ///
    /// Returns `EBUSY` if any part of them is busy already.
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

/// A memory resource of a bound device, of any size, requested and mapped.
///
/// Its 32-bit words, at least `SIZE` bytes of them, have the [`Io`](kernel::io::Io) accessors.
/// The window owns its mapping and its request: it is valid for as long as it lives, which may
/// be longer than the device's binding (held by registrations that end at unbind, or leaked: a
/// leaked window keeps the range mapped and busy). It is created only for a bound device.
///
/// # Invariants
///
/// - `io` starts at an `ioremap()` (or `ioremap_np()`) mapping of the whole of a memory resource,
///   owned by this object and unmapped only by `drop`; its size is the resource's size rounded
///   down to a multiple of 4, at least `SIZE`, and its address is 4-byte aligned.
/// - `_region` holds the resource's range requested; it is released after the unmap (fields
///   drop after `drop`).
pub(crate) struct IoWindow<const SIZE: usize = 0> {
    io: MmioRaw<Region<SIZE>>,
    _region: MemRegion,
}

impl<const SIZE: usize> IoWindow<SIZE> {
    /// Requests all of `resource`, a memory resource of `dev`, and maps it.
    ///
    /// The request is made under the device's name. Returns `EINVAL` if the resource is not I/O
    /// memory, is empty, not 4-byte aligned or shorter than `SIZE` bytes (or its 32-bit words are),
    /// `EBUSY` if any part of it is busy, `ENOMEM` if it cannot be mapped.
    pub(crate) fn request_and_map(dev: &Device<Bound>, resource: &Resource) -> Result<Self> {
        let size: usize = resource.size().try_into()?;
        let words = size & !3;
        if !resource.flags().contains(Flags::IORESOURCE_MEM) || size == 0 || words < SIZE {
            return Err(EINVAL);
        }
        let start = resource.start();
        let region = MemRegion::request(start, resource.size(), dev.name().to_cstring()?)?;

        let addr = if resource.flags().contains(Flags::IORESOURCE_MEM_NONPOSTED) {
            // SAFETY: `start` and `size` (not zero) describe a memory resource requested above.
            unsafe { bindings::ioremap_np(start, size) }
        } else {
            // SAFETY: As above.
            unsafe { bindings::ioremap(start, size) }
        };
        if addr.is_null() {
            return Err(ENOMEM);
        }
        match MmioRaw::new_region(addr as usize, words) {
            // INVARIANT: The whole resource was mapped just now; `words` is its size rounded
            // down to a multiple of 4 and at least `SIZE`, the address was checked to be aligned.
            Ok(io) => Ok(Self {
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

impl<const SIZE: usize> Drop for IoWindow<SIZE> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `io` starts at a mapping owned by `self`; nothing uses it
        // after this (the views borrow `self`).
        unsafe { bindings::iounmap(self.io.addr() as *mut c_void) };
    }
}

impl<'a, const SIZE: usize> IoBase<'a> for &'a IoWindow<SIZE> {
    type Backend = MmioBackend;
    type Target = Region<SIZE>;

    #[inline]
    fn as_view(self) -> Mmio<'a, Region<SIZE>> {
        // SAFETY: By the type invariant `io` is a valid, 4-byte aligned MMIO mapping of its size,
        // a multiple of 4 and at least `SIZE`, for as long as `self` is borrowed.
        unsafe { Mmio::from_raw(self.io) }
    }
}
