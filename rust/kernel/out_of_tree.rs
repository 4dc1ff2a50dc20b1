// SPDX-License-Identifier: GPL-2.0

//! Extension traits for the raw accessors a module built out of tree cannot reach.
//!
//! C headers: [`include/linux/device.h`](srctree/include/linux/device.h),
//! [`include/linux/gfp_types.h`](srctree/include/linux/gfp_types.h),
//! [`include/linux/clk.h`](srctree/include/linux/clk.h)
//!
//! A module imports a trait on a `use` item of its own and calls the method as in the kernel
//! crate (`dev.as_raw()`, `gfp.as_raw()`, `Clk::from_raw(ptr)`), or, for the one method whose
//! name the kernel crate has already, under a name the series maps to it
//! (`pdev.fixed_io_request_by_index(0)`, the kernel crate's `pdev.io_request_by_index(0)`).

use kernel::{
    alloc::Flags,
    clk::Clk,
    device::{
        Bound,
        Device,
        DeviceContext, //
    },
    platform, //
};

use crate::bindings;
#[cfg(CONFIG_HAS_IOMEM)]
use crate::kernel_ext::io::mem::IoRequest;

/// An extension trait giving [`Device`] its `as_raw()`, private to the kernel crate.
pub trait DeviceAsRaw {
    /// Returns a raw pointer to the `struct device` of the device.
    fn as_raw(&self) -> *mut bindings::device;
}

impl<Ctx: DeviceContext> DeviceAsRaw for Device<Ctx> {
    #[inline]
    fn as_raw(&self) -> *mut bindings::device {
        // CAST: `Device<Ctx>` is a `#[repr(transparent)]` wrapper of `Opaque<struct device>`
        // (and a zero-sized marker), which itself is a transparent wrapper of `struct device`.
        core::ptr::from_ref(self)
            .cast::<bindings::device>()
            .cast_mut()
    }
}

/// An extension trait giving [`Flags`] its `as_raw()`, private to the kernel crate.
pub trait FlagsAsRaw {
    /// Returns the `gfp_t` value of the flags.
    // By value, as `Flags::as_raw()` (`Flags` is `Copy`).
    #[allow(clippy::wrong_self_convention)]
    fn as_raw(self) -> bindings::gfp_t;
}

impl FlagsAsRaw for Flags {
    /// Returns the union of the kernel crate's allocation flags that `self` contains.
    #[inline]
    fn as_raw(self) -> bindings::gfp_t {
        use kernel::alloc::flags::*;
        [
            (GFP_KERNEL_ACCOUNT, bindings::GFP_KERNEL_ACCOUNT),
            (GFP_KERNEL, bindings::GFP_KERNEL),
            (GFP_ATOMIC, bindings::GFP_ATOMIC),
            (GFP_NOWAIT, bindings::GFP_NOWAIT),
            (__GFP_ZERO, bindings::__GFP_ZERO),
            (__GFP_HIGHMEM, bindings::__GFP_HIGHMEM),
            (__GFP_NOWARN, bindings::__GFP_NOWARN),
        ]
        .iter()
        .filter(|(f, _)| self.contains(*f))
        .fold(0, |raw, (_, r)| raw | r)
    }
}

/// An extension trait giving [`Clk`] the `from_raw()` that Linux 7.3 lacks.
pub trait ClkFromRaw {
    /// Creates a [`Clk`] from a raw `struct clk` pointer, which it puts when dropped.
    ///
    /// # Safety
    ///
    /// `ptr` must be a reference to a clock that the caller owns (from `clk_get()`,
    /// `clk_hw_get_clk()`, ...), or NULL; the [`Clk`] takes it over.
    unsafe fn from_raw(ptr: *mut bindings::clk) -> Self;
}

impl ClkFromRaw for Clk {
    #[inline]
    unsafe fn from_raw(ptr: *mut bindings::clk) -> Self {
        // SAFETY: `Clk` is a `#[repr(transparent)]` wrapper of a `struct clk` pointer whose
        // invariant the caller guarantees; it puts the reference when dropped.
        unsafe { core::mem::transmute::<*mut bindings::clk, Clk>(ptr) }
    }
}

/// An extension trait giving a platform device the `io_request_by_index()` of the fixed
/// `kernel::io::mem` (its stand-in, `kernel_ext::io::mem`).
#[cfg(CONFIG_HAS_IOMEM)]
pub trait FixedIoRequest {
    /// Returns the request of the device's memory resource `index`, if there is one.
    fn fixed_io_request_by_index(&self, index: u32) -> Option<IoRequest<'_>>;
}

#[cfg(CONFIG_HAS_IOMEM)]
impl FixedIoRequest for platform::Device<Bound> {
    fn fixed_io_request_by_index(&self, index: u32) -> Option<IoRequest<'_>> {
        self.resource_by_index(index)
            // SAFETY: `resource` is a resource of the device, valid while it is borrowed.
            .map(|resource| unsafe { IoRequest::new(self.as_ref(), resource) })
    }
}
