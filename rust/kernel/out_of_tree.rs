// SPDX-License-Identifier: GPL-2.0

//! What the kernel crate's new modules call on the crate's types that a module built out of
//! tree cannot reach.
//!
//! `Device::as_raw()` and `Flags::as_raw()` are private to the kernel crate, and Linux 7.3's
//! [`Clk`] has no `from_raw()` (the upstream series adds it). Here each is a method of an
//! extension trait, so that the modules call them as they do in the kernel crate
//! (`dev.as_raw()`, `gfp.as_raw()`, `Clk::from_raw(ptr)`); a module imports the trait on a `use`
//! item of its own, which the upstream series leaves out with this module.

use kernel::{
    alloc::Flags,
    clk::Clk,
    device::{
        Device,
        DeviceContext, //
    }, //
};

use crate::bindings;

/// `Device::as_raw()`.
pub(crate) trait DeviceAsRaw {
    /// The `struct device` of the device.
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

/// `Flags::as_raw()`.
pub(crate) trait FlagsAsRaw {
    /// The `gfp_t` value of the flags.
    // By value, as `Flags::as_raw()` (`Flags` is `Copy`).
    #[allow(clippy::wrong_self_convention)]
    fn as_raw(self) -> bindings::gfp_t;
}

impl FlagsAsRaw for Flags {
    /// The union of the kernel crate's allocation flags that `self` contains.
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

/// `Clk::from_raw()`, which the upstream series adds to [`Clk`].
pub(crate) trait ClkFromRaw {
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
