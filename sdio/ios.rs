// SPDX-License-Identifier: GPL-2.0

//! Bus settings (`set_ios`).
//!
//! The data bus width, the card clock and the card's supply.

use kernel::prelude::*;

use crate::mmc::{
    BusWidth,
    Ios,
    PowerMode, //
};

use crate::{
    host::SdioHost,
    hw, //
};

/// Applies `ios`, as `meson_mx_mmc_set_ios()` does.
///
/// A failure is kept for the requests that follow, until a call succeeds.
pub(crate) fn set_ios(host: &SdioHost, ios: &Ios) {
    *host.set_ios_error.lock() = apply(host, ios).err();
}

fn apply(host: &SdioHost, ios: &Ios) -> Result {
    let sdio = &host.sdio;
    match ios.bus_width {
        BusWidth::One => hw::set_bus_width(&sdio.regs, false),
        BusWidth::Four => hw::set_bus_width(&sdio.regs, true),
        BusWidth::Eight | BusWidth::Other(_) => {
            dev_err!(sdio.dev, "unsupported bus width: {:?}\n", ios.bus_width);
            return Err(EINVAL);
        }
    }
    sdio.clkc.set_rate(ios.clock).inspect_err(|e| {
        dev_warn!(
            sdio.dev,
            "failed to set MMC clock to {}: {}\n",
            ios.clock,
            e.to_errno()
        );
    })?;
    ios.set_actual_clock(sdio.clkc.rate());
    match ios.power_mode {
        PowerMode::Off => ios.set_vmmc_ocr(0),
        PowerMode::Up => ios.set_vmmc_ocr(ios.vdd),
        PowerMode::On | PowerMode::Undefined => Ok(()),
    }
}
