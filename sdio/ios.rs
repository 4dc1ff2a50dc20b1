// SPDX-License-Identifier: GPL-2.0

//! Bus settings (`set_ios`), the data bus width, the card clock and the card's supply.
//!
//! The width and the clock are the controller's, which the slots share: they are written at
//! once when the controller is idle, else before the slot's next request.

use kernel::prelude::*;

use crate::mmc::{
    BusWidth,
    Ios,
    PowerMode, //
};

use crate::{
    host::SdioHost,
    logic::ports::BusSettings,
    request::write_settings, //
};

/// Applies `ios`, as `meson_mx_mmc_set_ios()` does.
///
/// A failure is kept for the requests that follow, until a call succeeds.
pub(crate) fn set_ios(host: &SdioHost, ios: &Ios) {
    *host.set_ios_error.lock() = apply(host, ios).err();
}

fn apply(host: &SdioHost, ios: &Ios) -> Result {
    let sdio = &host.sdio;
    let four = match ios.bus_width {
        BusWidth::One => false,
        BusWidth::Four => true,
        BusWidth::Eight | BusWidth::Other(_) => {
            dev_err!(sdio.dev, "unsupported bus width: {:?}\n", ios.bus_width);
            return Err(EINVAL);
        }
    };
    let settings = BusSettings {
        four,
        hz: ios.clock,
    };
    {
        let mut bus = sdio.bus.lock();
        bus.mux.set(host.port, settings);
        if bus.cur.is_none() {
            write_settings(sdio, &mut bus, settings)?;
            ios.set_actual_clock(sdio.clkc.rate());
        } else {
            // Another slot's request is on the bus: the clock this one will get.
            let hz = c_ulong::try_from(ios.clock)
                .ok()
                .and_then(|hz| sdio.clkc.round_rate(hz).ok())
                .unwrap_or(0);
            ios.set_actual_clock(hz);
        }
    }
    match ios.power_mode {
        PowerMode::Off => ios.set_vmmc_ocr(0),
        PowerMode::Up => ios.set_vmmc_ocr(ios.vdd),
        PowerMode::On | PowerMode::Undefined => Ok(()),
    }
}
