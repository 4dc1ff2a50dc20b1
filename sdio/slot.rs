// SPDX-License-Identifier: GPL-2.0

//! The slot sub-nodes, the controller's child nodes `compatible = "mmc-slot"`.
//!
//! Each has the port of the controller's mux it is wired to as its `reg`. Each slot's MMC host
//! belongs to a device created for it, as in `meson-mx-sdio.c`: its node holds the card's
//! properties (bus width, card detect, supplies) that `mmc_of_parse()` and the regulators read.

use kernel::{
    device::{
        property::FwNode,
        Bound,
        Device, //
    },
    prelude::*,
    sync::aref::ARef, //
};

use crate::kernel_ext::platform::of_child;
use crate::logic::ports::PORTS;

/// A slot, its node and its port.
pub(crate) struct Slot {
    pub(crate) node: ARef<FwNode>,
    /// The port, below [`PORTS`].
    pub(crate) id: usize,
}

impl Slot {
    /// Finds the available `mmc-slot` child nodes of `dev`, in their order in the device tree.
    ///
    /// Each must have a `reg` of its own below [`PORTS`].
    pub(crate) fn find_all(dev: &Device<Bound>) -> Result<KVec<Self>> {
        let node = dev.fwnode().ok_or(ENODEV)?;
        let mut slots = KVec::with_capacity(PORTS, GFP_KERNEL)?;
        for slot in node
            .children()
            .filter(|c| c.property_match_string(c"compatible", c"mmc-slot").is_ok())
        {
            let id: u32 = slot
                .property_read(c"reg")
                .required_by(dev)
                .map_err(|_| EINVAL)?;
            let id = usize::try_from(id).unwrap_or(usize::MAX);
            if id >= PORTS {
                dev_err!(dev, "invalid 'reg' property value {}\n", id);
                return Err(EINVAL);
            }
            if slots.iter().any(|s: &Self| s.id == id) {
                dev_err!(
                    dev,
                    "more than one 'mmc-slot' child node with 'reg' {}\n",
                    id
                );
                return Err(EINVAL);
            }
            slots.push(Self { node: slot, id }, GFP_KERNEL)?;
        }
        if slots.is_empty() {
            dev_err!(dev, "no 'mmc-slot' compatible child node\n");
            return Err(ENODEV);
        }
        Ok(slots)
    }

    /// Creates the slot's device, destroyed when `dev` is unbound.
    pub(crate) fn create<'a>(&self, dev: &'a Device<Bound>) -> Result<of_child::Child<'a>> {
        of_child::create(dev, &self.node).inspect_err(|_| {
            dev_err!(
                dev,
                "Failed to create platform device for the mmc-slot node\n"
            );
        })
    }
}
