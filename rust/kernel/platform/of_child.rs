// SPDX-License-Identifier: GPL-2.0

//! A platform device for a child node of a bound device's device tree node.
//!
//! C header: [`include/linux/of_platform.h`](srctree/include/linux/of_platform.h)
//!
//! Some controllers describe what hangs off them in child nodes the driver core does not
//! populate: the slots of a multi-slot MMC controller (`compatible = "mmc-slot"`), each a device
//! of its own for the MMC core (the host's parent, whose node `mmc_of_parse()` reads). The
//! driver of the controller creates the child's device (`of_platform_device_create()`) while it
//! is bound, and destroys it (`of_platform_device_destroy()`) before it unbinds.
//!
//! [`create`] does both: the child's device lives until the parent is unbound (the parent's
//! devres destroys it). No driver binds to it; it is a device for the controller's driver to
//! hang things on. What [`create`] returns, a [`Child`], is the proof of that: what takes one
//! (`kernel::mmc::UnregisteredHost::new_for_child`) may rely on the device staying registered
//! while the parent is bound, and on its own devres actions on the parent, added later, being
//! released first.

use core::ptr::NonNull;

use kernel::{
    device::{
        property::FwNode,
        Bound,
        Device, //
    },
    devres,
    prelude::*, //
};

use crate::bindings;
use crate::kernel_ext::out_of_tree::DeviceAsRaw as _;

/// The platform device of a child node, destroyed when dropped (`of_platform_device_destroy()`).
///
/// # Invariants
///
/// `pdev` was created by `of_platform_device_create()` and is destroyed only by `drop`.
struct ChildDevice {
    pdev: NonNull<bindings::platform_device>,
}

// SAFETY: Destroying the device may happen on any thread; nothing else is done with it.
unsafe impl Send for ChildDevice {}

impl Drop for ChildDevice {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `pdev` was created and not destroyed yet; its `dev` is
        // valid. A NULL `data` is allowed (the callback's argument, unused by it).
        unsafe {
            bindings::of_platform_device_destroy(
                &raw mut (*self.pdev.as_ptr()).dev,
                core::ptr::null_mut(),
            )
        };
    }
}

/// The platform device of a child node [`create`] made, borrowed for as long as its parent is.
///
/// # Invariants
///
/// `dev` is the device of a platform device [`create`] made under `parent`, registered; the
/// devres of `parent` destroys it when `parent` is unbound, not before, so it stays registered
/// during `'a`, and every devres action added to `parent` after it is released before it.
#[derive(Clone, Copy)]
pub struct Child<'a> {
    parent: &'a Device<Bound>,
    dev: &'a Device,
}

impl<'a> Child<'a> {
    /// Returns the bound device the child belongs to.
    pub fn parent(&self) -> &'a Device<Bound> {
        self.parent
    }

    /// Returns the child's device.
    pub fn device(&self) -> &'a Device {
        self.dev
    }
}

impl AsRef<Device> for Child<'_> {
    fn as_ref(&self) -> &Device {
        self.dev
    }
}

/// Creates the platform device of `node`, a child node of the device tree node of `parent`, and
/// returns it.
///
/// It is destroyed when `parent` is unbound.
///
/// The device is created under `parent` with `node` as its node (its name is the node's
/// unit address and name, `<parent's node address>.<parent's node name>:<node's name>`), and no
/// driver binds to it. Returns `EINVAL` if `node` is not a device tree node, `ENODEV` if the
/// device cannot be created (the node already has one, for one).
pub fn create<'a>(parent: &'a Device<Bound>, node: &FwNode) -> Result<Child<'a>> {
    if !node.is_of_node() {
        return Err(EINVAL);
    }
    // CAST: `FwNode` is a transparent wrapper of `struct fwnode_handle`, which an OF node
    // embeds as its `fwnode` (`is_of_node()` above).
    let np = core::ptr::from_ref::<FwNode>(node)
        .cast::<u8>()
        .cast_mut()
        .wrapping_sub(core::mem::offset_of!(bindings::device_node, fwnode))
        .cast::<bindings::device_node>();
    // SAFETY: `np` is a valid device tree node (a reference is held by `node`), `parent` a valid
    // device; a NULL bus id makes one from the node. The function takes its own reference of the
    // node for the device.
    let pdev =
        unsafe { bindings::of_platform_device_create(np, core::ptr::null(), parent.as_raw()) };
    let pdev = NonNull::new(pdev).ok_or(ENODEV)?;
    // SAFETY: `pdev` was just created; its device is valid.
    let dev = unsafe { &raw mut (*pdev.as_ptr()).dev };
    // INVARIANT: Created just now; destroyed by its `drop` only.
    let child = ChildDevice { pdev };
    // Destroyed when `parent` is unbound, or at once if devres cannot take it.
    devres::register(parent, child, GFP_KERNEL)?;
    // SAFETY: The device is registered and holds a reference of itself until the parent's
    // devres destroys it, when `parent` is unbound, after `'a`.
    let dev = unsafe { Device::from_raw(dev) };
    // INVARIANT: Created under `parent` just now, its destruction the newest devres action of
    // `parent`, run when `parent` is unbound.
    Ok(Child { parent, dev })
}
