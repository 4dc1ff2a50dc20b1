// SPDX-License-Identifier: GPL-2.0

//! The slot sub-node.
//!
//! The controller's child node `compatible = "mmc-slot"` whose `reg` is the port of the
//! controller's mux it is wired to. The MMC host belongs to a device created for it, as in
//! `meson-mx-sdio.c`: its node holds the card's properties (bus width, card detect, supplies) that
//! `mmc_of_parse()` and the regulators read.

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

/// The mux's ports.
const MAX_SLOTS: u32 = 3;

/// The slot, its node and its port.
pub(crate) struct Slot {
    pub(crate) node: ARef<FwNode>,
    pub(crate) id: u32,
}

impl Slot {
    /// Finds the first available `mmc-slot` child node of `dev`.
    ///
    /// The MMC core serves one slot per host, so others are ignored with a warning, as the C driver
    /// does.
    pub(crate) fn find(dev: &Device<Bound>) -> Result<Self> {
        let node = dev.fwnode().ok_or(ENODEV)?;
        let mut slots = node
            .children()
            .filter(|c| c.property_match_string(c"compatible", c"mmc-slot").is_ok());
        let Some(slot) = slots.next() else {
            dev_err!(dev, "no 'mmc-slot' compatible child node\n");
            return Err(ENODEV);
        };
        if slots.next().is_some() {
            dev_warn!(
                dev,
                "more than one 'mmc-slot' compatible child found - using the first one and ignoring all subsequent ones\n"
            );
        }
        let id: u32 = slot
            .property_read(c"reg")
            .required_by(dev)
            .map_err(|_| EINVAL)?;
        if id >= MAX_SLOTS {
            dev_err!(dev, "invalid 'reg' property value {}\n", id);
            return Err(EINVAL);
        }
        Ok(Self { node: slot, id })
    }

    /// Creates the slot's device, destroyed when `dev` is unbound.
    pub(crate) fn create<'a>(&self, dev: &'a Device<Bound>) -> Result<&'a Device> {
        of_child::create(dev, &self.node).inspect_err(|_| {
            dev_err!(
                dev,
                "Failed to create platform device for the mmc-slot node\n"
            );
        })
    }
}
