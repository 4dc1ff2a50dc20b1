// SPDX-License-Identifier: GPL-2.0

//! Runtime power management and system sleep of a platform driver's devices.
//!
//! C header: [`include/linux/pm_runtime.h`](srctree/include/linux/pm_runtime.h)
//!
//! A driver registers through [`Adapter`], which gives the platform driver a
//! `struct dev_pm_ops`, and enables runtime PM for a device at probe with [`Runtime::enable`],
//! handing the state its callbacks need ([`PmOps`]) to the device's devres. System sleep goes
//! through the same callbacks (`pm_runtime_force_suspend()`, `pm_runtime_force_resume()`), as
//! most MMC host drivers do it.
//!
//! When the device is unbound the devres of [`Runtime::enable`] disables runtime PM, resumes
//! the device if it is suspended and drops the state: what was registered before it (the
//! device's clocks, its registers, an MMC host registered earlier) is released with the device
//! powered, as a C driver's `remove` does with `pm_runtime_get_sync()` and
//! `pm_runtime_disable()`.

use core::{
    any::TypeId,
    ffi::c_void,
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    device::{
        Bound,
        Device, //
    },
    driver::{
        DriverLayout,
        RegistrationOps, //
    },
    error::{
        from_result,
        to_result, //
    },
    platform,
    prelude::*,
    sync::{
        aref::ARef,
        Arc, //
    },
    types::Opaque, //
};

use crate::bindings;
use crate::kernel_ext::out_of_tree::DeviceAsRaw as _;

/// The runtime PM callbacks of a device (`runtime_suspend`, `runtime_resume` of
/// `struct dev_pm_ops`).
///
/// The PM core runs at most one of them at a time for a device, in process context, and only
/// while no one holds a runtime PM reference to it calls `runtime_suspend` (an [`Active`], the
/// MMC core's claim of a host).
pub trait PmOps: Send + Sync + 'static {
    /// Powers the idle device down.
    fn runtime_suspend(&self) -> Result;

    /// Powers the device up again.
    fn runtime_resume(&self) -> Result;
}

/// A platform driver whose devices have runtime PM state of type [`Driver::Pm`].
pub trait Driver: platform::Driver {
    /// What the runtime PM callbacks of a device act on, given to [`Runtime::enable`].
    type Pm: PmOps;
}

/// The registration of a [`Driver`].
///
/// A platform driver with power management callbacks.
pub struct Adapter<T: Driver>(PhantomData<T>);

// SAFETY: The same layout as `platform::Adapter<T>`, whose registration this one is:
// - `bindings::platform_driver` is a C type declared as `repr(C)`,
// - `T::Data` is the type of the driver's device private data (`platform::Adapter` stores it),
// - `struct platform_driver` embeds a `struct device_driver` at `DEVICE_DRIVER_OFFSET`.
unsafe impl<T: Driver> DriverLayout for Adapter<T> {
    type DriverType = bindings::platform_driver;
    type DriverData<'bound> = T::Data<'bound>;
    const DEVICE_DRIVER_OFFSET: usize = core::mem::offset_of!(Self::DriverType, driver);
}

// SAFETY: `unregister` is `platform::Adapter::<T>::unregister`, called only after its
// `register` succeeded in our `register` (the caller's guarantee).
unsafe impl<T: Driver> RegistrationOps for Adapter<T> {
    unsafe fn register(
        pdrv: &Opaque<Self::DriverType>,
        name: &'static CStr,
        module: &'static ThisModule,
    ) -> Result {
        // SAFETY: `pdrv` is valid and not registered yet, so nothing reads it concurrently; the
        // table is a `'static` constant. `platform::Adapter::register` leaves `driver.pm` alone.
        unsafe { (*pdrv.get()).driver.pm = &Self::PM_OPS };
        // SAFETY: The caller keeps `pdrv` pinned and valid until `unregister`.
        unsafe { <platform::Adapter<T> as RegistrationOps>::register(pdrv, name, module) }
    }

    unsafe fn unregister(pdrv: &Opaque<Self::DriverType>) {
        // SAFETY: `register` succeeded for `pdrv` (the caller's guarantee), so did
        // `platform::Adapter::register`.
        unsafe { <platform::Adapter<T> as RegistrationOps>::unregister(pdrv) }
    }
}

impl<T: Driver> Adapter<T> {
    const PM_OPS: bindings::dev_pm_ops = bindings::dev_pm_ops {
        suspend: Some(bindings::pm_runtime_force_suspend),
        resume: Some(bindings::pm_runtime_force_resume),
        freeze: Some(bindings::pm_runtime_force_suspend),
        thaw: Some(bindings::pm_runtime_force_resume),
        poweroff: Some(bindings::pm_runtime_force_suspend),
        restore: Some(bindings::pm_runtime_force_resume),
        runtime_suspend: Some(Self::runtime_suspend),
        runtime_resume: Some(Self::runtime_resume),
        ..pin_init::zeroed()
    };

    /// Handles the `runtime_suspend` callback.
    ///
    /// Refused (`EBUSY`, the device stays active) while the device has no runtime PM state, which
    /// only happens at unbind, before [`Runtime`]'s devres disables runtime PM.
    ///
    /// # Safety
    ///
    /// Only the PM core calls this, with a device bound to this driver.
    unsafe extern "C" fn runtime_suspend(dev: *mut bindings::device) -> c_int {
        // SAFETY: The PM core passes a device bound to this driver, in a runtime PM callback.
        match unsafe { Runtime::<T::Pm>::find(dev) } {
            Some(pm) => from_result(|| pm.runtime_suspend().map(|()| 0)),
            None => EBUSY.to_errno(),
        }
    }

    /// Handles the `runtime_resume` callback.
    ///
    /// `EAGAIN` while the device has no runtime PM state (at unbind, where [`Runtime`]'s devres
    /// then resumes the device itself).
    ///
    /// # Safety
    ///
    /// Only the PM core calls this, with a device bound to this driver.
    unsafe extern "C" fn runtime_resume(dev: *mut bindings::device) -> c_int {
        // SAFETY: The PM core passes a device bound to this driver, in a runtime PM callback.
        match unsafe { Runtime::<T::Pm>::find(dev) } {
            Some(pm) => from_result(|| pm.runtime_resume().map(|()| 0)),
            None => EAGAIN.to_errno(),
        }
    }
}

/// The devres data of [`Runtime::enable`]: the state of type `P` and the key of that type.
///
/// The callbacks of a driver whose state is of type `P` look for the node of `P`: devres finds a
/// node by the address of its release function, which two monomorphisations of
/// [`Runtime::release`] may share (identical code folding merges functions whose machine code is
/// the same), so the node also holds `P`'s [`TypeId`], which the search compares
/// ([`same_key`]). `repr(C)`: the key is at the start of every node, whatever `P`.
#[repr(C)]
struct Node<P> {
    key: TypeId,
    pm: Arc<P>,
}

/// Returns whether the devres node `res` holds the key `data` points to.
///
/// # Safety
///
/// Only `devres_find()` calls this, from [`Runtime::find`], with `res` a [`Node`] (the data of a
/// node whose release function is a [`Runtime::release`]) and `data` a valid [`TypeId`].
unsafe extern "C" fn same_key(
    _dev: *mut bindings::device,
    res: *mut c_void,
    data: *mut c_void,
) -> c_int {
    // SAFETY: `res` is a `Node` of some type, whose first field is its key (`repr(C)`), and
    // `data` a valid key (safety requirements); both are only read.
    c_int::from(unsafe { *res.cast::<TypeId>() == *data.cast::<TypeId>() })
}

/// Runtime PM of a bound device with the state `P`, enabled by [`Runtime::enable`] until the
/// device is unbound.
pub struct Runtime<P: PmOps>(PhantomData<P>);

impl<P: PmOps> Runtime<P> {
    /// Enables runtime PM of `dev`, active now, suspended `autosuspend_ms` after its last use
    /// (`pm_runtime_set_active()`, `pm_runtime_use_autosuspend()`, `pm_runtime_enable()`), with
    /// `pm` for its callbacks.
    ///
    /// The device's driver must be an [`Adapter`] whose [`Driver::Pm`] is `P`: its callbacks
    /// find `pm` in the device's devres. When `dev` is unbound, runtime PM is disabled, the
    /// device resumed (`P::runtime_resume`) if it was suspended, and `pm` dropped; what `dev`'s
    /// devres holds from before this call is released after that, with the device active.
    /// Returns `EBUSY` if this binding enabled it already, or the error of
    /// `pm_runtime_set_active()` (a parent or supplier that is not active).
    pub fn enable(dev: &Device<Bound>, pm: Arc<P>, autosuspend_ms: i32) -> Result {
        let raw = dev.as_raw();
        // SAFETY: `raw` is the valid, bound device.
        if unsafe { Self::find_node(raw) }.is_some() {
            return Err(EBUSY);
        }
        // SAFETY: `raw` is the valid, bound device. Runtime PM is not enabled for it by this
        // function before in this binding (`EBUSY` above); were it enabled otherwise,
        // `__pm_runtime_set_status()` would refuse (`-EAGAIN`) and change nothing, and
        // `pm_runtime_enable()` below warn of the imbalance: nothing this call relies on.
        to_result(unsafe {
            bindings::__pm_runtime_set_status(raw, bindings::rpm_status_RPM_ACTIVE as u32)
        })?;
        let node = Self::new_node(pm, Some(Self::release))?;
        // SAFETY: `raw` is the valid, bound device, its runtime PM not enabled by this function.
        unsafe {
            bindings::pm_runtime_set_autosuspend_delay(raw, autosuspend_ms);
            bindings::__pm_runtime_use_autosuspend(raw, true);
        }
        // SAFETY: `node` is a node of `release` holding an initialised `Node<P>`, handed to the
        // devres of the bound device, which calls `release` once when the device is unbound (or
        // its probe fails).
        unsafe { bindings::devres_add(raw, node.as_ptr().cast()) };
        // SAFETY: `raw` is valid; the callbacks find `node` from now until `release` disables
        // runtime PM again.
        unsafe { bindings::pm_runtime_enable(raw) };
        Ok(())
    }

    /// Allocates the devres node of `pm`, released by `release`, not added to a device yet.
    ///
    /// `release` is [`Self::release`] but in a test, which gives another type's to play
    /// identical code folding.
    fn new_node(pm: Arc<P>, release: bindings::dr_release_t) -> Result<NonNull<Node<P>>> {
        // SAFETY: `release` takes a `*mut Node<P>` node of this size (or is never called, in a
        // test); a NUL-terminated name.
        let node = unsafe {
            bindings::__devres_alloc_node(
                release,
                size_of::<Node<P>>(),
                bindings::GFP_KERNEL,
                bindings::NUMA_NO_NODE,
                c"kernel::pm::Runtime".as_char_ptr(),
            )
        };
        let node = NonNull::new(node.cast::<Node<P>>()).ok_or(ENOMEM)?;
        // SAFETY: `node` is a fresh allocation of a `Node<P>`'s size, aligned for any type up to
        // `ARCH_DMA_MINALIGN` (devres data are), which a `TypeId` and an `Arc` are.
        unsafe {
            node.as_ptr().write(Node {
                key: TypeId::of::<P>(),
                pm,
            })
        };
        Ok(node)
    }

    /// Returns the state of `dev`, if its devres holds one for `P`.
    ///
    /// # Safety
    ///
    /// `dev` must be a valid device in one of its runtime PM callbacks (a system sleep callback
    /// of `pm_runtime_force_suspend()`/`pm_runtime_force_resume()` included, which run with the
    /// device locked, so never during an unbind).
    unsafe fn find<'a>(dev: *mut bindings::device) -> Option<&'a P> {
        // SAFETY: `dev` is valid (the caller's guarantee).
        let node = unsafe { Self::find_node(dev) }?;
        // A node found by the address of `release` is a `Node` of some type even if two
        // monomorphisations of `release` share one address (identical code folding), so its key
        // may be read. `release` drops it only after `__pm_runtime_disable()` has waited for the
        // runtime PM callback running, the caller's, to return; a system sleep callback runs with
        // the device locked, which an unbind (the only caller of `release`) holds throughout.
        // SAFETY: The node was made by `enable` of the type whose `TypeId` it holds (`same_key`),
        // `P`, so it holds a `Node<P>`, alive while the caller's callback runs (above).
        Some(unsafe { &*(*node.as_ptr()).pm })
    }

    /// Returns the devres node of `P`'s state in `dev`'s devres, if there is one.
    ///
    /// # Safety
    ///
    /// `dev` must be a valid device.
    unsafe fn find_node(dev: *mut bindings::device) -> Option<NonNull<Node<P>>> {
        let mut key = TypeId::of::<P>();
        // SAFETY: `dev` is valid; `same_key` reads the key at the start of a node of a
        // `release` of this type, every such node being a `Node` (`new_node`), and `key` lives
        // during the call.
        let node = unsafe {
            bindings::devres_find(
                dev,
                Some(Self::release),
                Some(same_key),
                (&raw mut key).cast(),
            )
        };
        NonNull::new(node.cast::<Node<P>>())
    }

    /// Disables runtime PM of `dev` and drops the state `node`, with the device resumed.
    ///
    /// # Safety
    ///
    /// Only devres calls this, once, for a node made by [`Self::enable`].
    unsafe extern "C" fn release(dev: *mut bindings::device, node: *mut c_void) {
        // SAFETY: `dev` is valid during its devres release. Disabling waits for a callback in
        // progress to finish; none runs or starts afterwards.
        unsafe { bindings::__pm_runtime_disable(dev, true) };
        // SAFETY: The node holds the `Node<P>` written by `enable`, dropped below, after this.
        // A folded `release` of another type does the same as this one to that type's node.
        let pm = unsafe { &*(*node.cast::<Node<P>>()).pm };
        // SAFETY: Runtime PM is disabled, so the status is stable and may be set.
        unsafe {
            if (*dev).power.runtime_status == bindings::rpm_status_RPM_SUSPENDED
                && pm.runtime_resume().is_ok()
            {
                bindings::__pm_runtime_set_status(dev, bindings::rpm_status_RPM_ACTIVE as u32);
            }
            bindings::__pm_runtime_use_autosuspend(dev, false);
        }
        // SAFETY: No callback runs or will run (runtime PM is disabled, system sleep callbacks
        // are excluded by the unbind holding the device lock); devres frees the node after this.
        unsafe { core::ptr::drop_in_place(node.cast::<Node<P>>()) };
    }
}

/// A runtime PM reference to a device.
///
/// It is resumed and kept active while this lives (`pm_runtime_resume_and_get()`, then
/// `__pm_runtime_put_autosuspend()`: the time of the last use is not updated, what holds the device
/// meanwhile, the MMC core's claim of a host, does).
pub struct Active {
    dev: ARef<Device>,
}

impl Active {
    /// Resumes `dev` if it is suspended and keeps it active.
    pub fn get(dev: &Device) -> Result<Self> {
        let raw = dev.as_raw();
        // SAFETY: `raw` is a valid device. With `RPM_GET_PUT` the usage count is taken whatever
        // the result.
        let ret = unsafe { bindings::__pm_runtime_resume(raw, bindings::RPM_GET_PUT as c_int) };
        if ret < 0 {
            // SAFETY: Drops the usage count taken above (`pm_runtime_put()`).
            unsafe {
                bindings::__pm_runtime_idle(
                    raw,
                    (bindings::RPM_GET_PUT | bindings::RPM_ASYNC) as c_int,
                )
            };
            return Err(Error::from_errno(ret));
        }
        Ok(Self { dev: dev.into() })
    }
}

impl Drop for Active {
    fn drop(&mut self) {
        let raw = self.dev.as_raw();
        // SAFETY: `raw` is valid (a reference is held) and its usage count holds ours
        // (`__pm_runtime_put_autosuspend()`).
        unsafe {
            bindings::__pm_runtime_suspend(
                raw,
                (bindings::RPM_GET_PUT | bindings::RPM_ASYNC | bindings::RPM_AUTO) as c_int,
            )
        };
    }
}

#[cfg(CONFIG_KUNIT)]
mod tests;
