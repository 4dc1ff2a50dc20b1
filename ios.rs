// SPDX-License-Identifier: GPL-2.0

//! Bus settings, power, clock and bus width (`meson_mx_sdhc_set_ios()`).

use kernel::{
    num::Bounded,
    prelude::*,
    sync::atomic::Relaxed, //
};

use crate::mmc::{
    BusWidth,
    Ios,
    PowerMode, //
};

use crate::{
    controller::{
        BusState,
        SdhcHost, //
    },
    regs, //
};

impl SdhcHost {
    /// Applies the `set_ios` callback's settings.
    ///
    /// A failure fails the requests until a later call succeeds.
    pub(crate) fn set_ios(&self, ios: &Ios) {
        let mut bus = self.sdhc.bus.lock();
        let result = self.apply_ios(&mut bus, ios);
        bus.set_ios_error = result.err();
    }

    fn apply_ios(&self, bus: &mut BusState, ios: &Ios) -> Result {
        match ios.power_mode {
            PowerMode::Off => ios.set_vmmc_ocr(0)?,
            PowerMode::Up => ios.set_vmmc_ocr(ios.vdd)?,
            PowerMode::On | PowerMode::Undefined => {}
        }

        self.set_clk(bus, ios)?;

        let (dat_type, lines) = match ios.bus_width {
            BusWidth::One => (0, 1),
            BusWidth::Four => (1, 4),
            BusWidth::Eight => (2, 8),
            BusWidth::Other(w) => {
                dev_err!(self.sdhc.dev, "unsupported bus width: {}\n", w);
                return Err(EINVAL);
            }
        };
        self.sdhc.regs.update(regs::CTRL, |r| {
            r.with_dat_type(Bounded::from_expr(dat_type & 0x3))
        });
        self.sdhc.bus_lines.set(lines);

        Ok(())
    }

    /// Programs the bus clock (`meson_mx_sdhc_set_clk()`).
    fn set_clk(&self, bus: &mut BusState, ios: &Ios) -> Result {
        let sdhc = &self.sdhc;
        sdhc.gates_off(bus);

        if ios.clock == 0 {
            sdhc.bus_hz.store(0, Relaxed);
            ios.set_actual_clock(0);
            return Ok(());
        }

        sdhc.clkc.set_rate(ios.clock).inspect_err(|e| {
            dev_warn!(
                sdhc.dev,
                "Failed to set MMC clock to {}Hz: {}\n",
                ios.clock,
                e.to_errno()
            )
        })?;

        sdhc.gates_on(bus)?;

        let rate = sdhc.clkc.rate();
        sdhc.bus_hz.store(rate, Relaxed);
        ios.set_actual_clock(rate);

        // Phase 90 should work in most cases. For data transmission, execute_tuning() will find
        // a accurate value.
        let rx_clk_phase = sdhc.regs.read(regs::CLKC).clk_div() / 4;
        sdhc.regs.update(regs::CLK2, |r| {
            r.with_rx_clk_phase(regs::phase(rx_clk_phase))
        });

        Ok(())
    }
}
