// SPDX-License-Identifier: GPL-2.0

//! RX clock phase tuning (`meson_mx_sdhc_execute_tuning()`).

use kernel::{
    prelude::*,
    sync::atomic::Relaxed, //
};

use crate::mmc::Tuning;

use crate::{
    controller::SdhcHost,
    logic::PhaseScan,
    regs, //
};

/// Tuning commands that must all succeed at one RX phase.
const NUM_TUNING_TRIES: u32 = 10;

impl SdhcHost {
    /// Returns whether all tuning commands succeed at the current RX phase.
    fn tuning_point_matches(tuning: &Tuning<'_>, opcode: u32) -> bool {
        (0..NUM_TUNING_TRIES)
            .filter(|_| tuning.send(opcode).is_ok())
            .count()
            == NUM_TUNING_TRIES as usize
    }

    /// Tries every RX phase the divider allows and settles in the middle of the longest working
    /// window, which may wrap from the last phase to phase 0 ([`PhaseScan`]).
    ///
    /// Without any, goes back to the original phase and fails.
    pub(crate) fn execute_tuning(&self, tuning: &Tuning<'_>, opcode: u32) -> Result {
        let sdhc = &self.sdhc;
        let hw = sdhc.hw();
        let old_phase = sdhc.regs.read(regs::CLK2).rx_clk_phase().get();
        let div = sdhc.regs.read(regs::CLKC).clk_div().get();

        let mut scan = PhaseScan::default();
        for phase in 0..=div {
            hw.set_rx_phase(phase);
            scan.push(Self::tuning_point_matches(tuning, opcode));
        }

        let Some(best) = scan.window() else {
            // No window was found at all: back to the original phase. The C driver leaves the
            // message to the core ("tuning execution failed"); the clock and the phases tried
            // say where to look.
            hw.set_rx_phase(old_phase);
            dev_err!(
                sdhc.dev,
                "RX phase tuning failed: no phase 0-{} works at {} Hz (CLKC divider {}), back to phase {}\n",
                div,
                sdhc.bus_hz.load(Relaxed),
                div,
                old_phase
            );
            return Err(EIO);
        };

        hw.set_rx_phase(best.middle);
        dev_dbg!(
            sdhc.dev,
            "Tuned RX clock phase to {} (window of {} from phase {}, of 0-{})\n",
            best.middle,
            best.len,
            best.start,
            div
        );
        Ok(())
    }
}
