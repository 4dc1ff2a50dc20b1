// SPDX-License-Identifier: GPL-2.0

//! RX clock phase tuning (`meson_mx_sdhc_execute_tuning()`).

use kernel::{
    io::Io,
    prelude::*,
    sync::atomic::Relaxed, //
};

use crate::{
    controller::SdhcHost,
    mmc::Tuning,
    regs, //
};

/// Tuning commands that must all succeed at one RX phase.
const NUM_TUNING_TRIES: u32 = 10;

/// The longest run of RX phases at which tuning worked.
#[derive(Clone, Copy, Default)]
struct Window {
    start: u32,
    len: u32,
}

impl Window {
    fn middle(&self) -> u32 {
        self.start + self.len / 2
    }
}

impl SdhcHost {
    /// Whether all tuning commands succeed at the current RX phase.
    fn tuning_point_matches(tuning: &Tuning<'_>, opcode: u32) -> bool {
        (0..NUM_TUNING_TRIES)
            .filter(|_| tuning.send(opcode).is_ok())
            .count()
            == NUM_TUNING_TRIES as usize
    }

    /// Tries every RX phase the divider allows and settles in the middle of the longest
    /// working window; without any, goes back to the original phase and fails.
    pub(crate) fn execute_tuning(&self, tuning: &Tuning<'_>, opcode: u32) -> Result {
        let sdhc = &self.sdhc;
        let hw = sdhc.hw();
        let old_phase = sdhc.regs.read(regs::CLK2).rx_clk_phase().get();
        let div = sdhc.regs.read(regs::CLKC).clk_div().get();

        let mut cur = Window::default();
        let mut best = Window::default();

        for phase in 0..=div {
            hw.set_rx_phase(phase);

            if Self::tuning_point_matches(tuning, opcode) {
                if cur.len == 0 {
                    cur.start = phase;
                    dev_dbg!(sdhc.dev, "New RX phase window starts at {}\n", phase);
                }
                cur.len += 1;
            } else {
                if cur.len > best.len {
                    best = cur;
                    dev_dbg!(
                        sdhc.dev,
                        "New best RX phase window: {} - {}\n",
                        best.start,
                        best.start + best.len
                    );
                }
                // Reset the current window.
                cur.len = 0;
            }
        }

        // The last window may be the best (or the only) one.
        if cur.len > best.len {
            best = cur;
        }
        if best.len == 0 {
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
        }

        hw.set_rx_phase(best.middle());
        dev_dbg!(sdhc.dev, "Tuned RX clock phase to {}\n", best.middle());
        Ok(())
    }
}
