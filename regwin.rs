// SPDX-License-Identifier: GPL-2.0

//! The controller's register window, mapped by the driver itself.
//!
//! The upstream device trees give the SDHC `reg = <0x8e00 0x42>` (`meson.dtsi`): 0x42 bytes,
//! not a multiple of 4. Linux 7.3's `IoMem` maps a resource's whole size and refuses any size
//! that is not a multiple of 4 (`Region::ptr_try_from_raw_parts_mut()`), so with it the driver
//! would not probe on a real board. The registers end at 0x3c (`CLK2`): [`RegWindow`] maps the
//! first `SIZE` bytes of the resource (checked to lie inside it) and gives them the kernel
//! crate's `Io` accessors through its public MMIO view, as `IoMem` does. The whole resource
//! is requested first through the kernel crate (`Resource::request_region`, as
//! `ExclusiveIoMem` does): the mapping is exclusive and shows in `/proc/iomem`.

use core::ffi::c_void;

use kernel::{
    bindings,
    device::{Bound, Device},
    io::{
        resource::{self, Resource},
        IoBase, Mmio, MmioBackend, MmioRaw, Region,
    },
    prelude::*,
};

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
    _region: resource::Region,
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
        let name = res.name().unwrap_or(dev.name()).to_cstring()?;
        let region = res
            .request_region(
                res.start(),
                res.size(),
                name,
                resource::Flags::IORESOURCE_MEM,
            )
            .ok_or(EBUSY)?;
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
