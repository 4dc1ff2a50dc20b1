// SPDX-License-Identifier: GPL-2.0

//! The software deadline of a request.
//!
//! When it is due, and what the controller shows when no interrupt came in time.
//!
//! The MMC core never times a request out for a host without a command queue engine, and the
//! controller can freeze without raising an interrupt (upstream c82efcaad2a4); an edge that
//! the interrupt controller missed is lost for good. `request` computes the instant the
//! request is due (`logic::request_deadline_ms`: the card's data timeout for every block) and
//! arms the driver's timer (the watchdog) for it. When the watchdog fires and the request in
//! flight is past that instant ([`Deadline::expiry`]), the controller looks at what it shows
//! ([`overdue`]): a command that completed without its interrupt completes as that interrupt
//! would have; else the controller is quiesced (reset, then a bounded wait for its DMA engine,
//! `Sdhc::quiesce`) and the request completes with `ETIMEDOUT`, which the core retries. A
//! watchdog that fires before the request in flight is due (the timer wheel's granularity, an
//! earlier request's arming, or the `watchdog_early_ms` fault) arms itself again for the rest
//! (`logic::expiry`). An interrupt raised before the reset finds the request gone and is
//! counted, nothing else. The host's data stops the watchdog first when it is dropped (`SdhcHost`).
//!
//! This module only measures and looks: the controller (`controller.rs`, `irq.rs`) holds the
//! request in flight with its [`Deadline`], arms the watchdog and runs the completion.

use kernel::{
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
    time::{
        Delta,
        Instant,
        Monotonic, //
    }, //
};

use crate::mmc::RequestView;

use crate::{
    hw::{
        CmdInfo,
        Hw, //
    },
    logic::{
        self,
        DeadlineInput, //
    },
    regs, //
};

/// The software deadline of a request.
///
/// The instant it is due, and how long it is.
pub(crate) struct Deadline {
    due: Instant<Monotonic>,
    ms: u32,
}

impl Deadline {
    /// Creates the deadline of `mrq` on a bus at `bus_hz` as wide as `bus_lines`, from now.
    pub(crate) fn new(mrq: &RequestView, bus_hz: u32, bus_lines: &BusLines) -> Self {
        let cmd = mrq.cmd();
        let data = mrq.data();
        let (data_timeout_ns, data_timeout_clks) = data.map_or((0, 0), |d| d.timeout());
        let ms = logic::request_deadline_ms(&DeadlineInput {
            bus_hz,
            bus_width: bus_lines.get(),
            data_len: mrq.data_len(),
            blocks: data.map_or(0, |d| d.blocks()),
            data_timeout_ns,
            data_timeout_clks,
            busy: cmd.resp_busy(),
            busy_timeout_ms: cmd.busy_timeout_ms(),
        });
        Self {
            due: Instant::now() + Delta::from_millis(i64::from(ms)),
            ms,
        }
    }

    /// Returns how long the deadline is, in milliseconds.
    pub(crate) fn ms(&self) -> u32 {
        self.ms
    }

    /// Returns when the watchdog is to fire for this deadline, in milliseconds from now.
    ///
    /// Its length, or the test fault's `early_ms` (`watchdog_early_ms`) before.
    pub(crate) fn arm_after_ms(&self, early_ms: u32) -> u32 {
        logic::arm_after_ms(self.ms, early_ms)
    }

    /// Starts the deadline's clock again once the command is written to the controller.
    ///
    /// The time before (waiting for the controller, a preempted thread) is not the card's, and the
    /// request cannot complete before it (`request.rs` sends under `cur`).
    pub(crate) fn restart(&mut self) {
        self.due = Instant::now() + Delta::from_millis(i64::from(self.ms));
    }

    /// Returns whether the deadline has passed, or how long is left of it.
    pub(crate) fn expiry(&self) -> logic::Expiry {
        let left = self.due - Instant::<Monotonic>::now();
        logic::expiry(left.as_nanos())
    }
}

/// What the controller shows for a request past its deadline without an interrupt.
pub(crate) enum Overdue {
    /// Its command completed.
    ///
    /// `ISTA` (this value) latched its status, the interrupt was lost on its way (an edge the
    /// interrupt controller missed).
    Completed(u32),
    /// Nothing, as the controller froze or the card never answered.
    Hung,
}

/// Looks at what the controller shows for `mrq`, past its deadline without an interrupt.
pub(crate) fn overdue(hw: &Hw<'_>, mrq: &RequestView) -> Overdue {
    let ista = hw.regs.read(regs::ISTA).into_raw();
    // The command's own enables, not `ICTL`'s: a late interrupt may have cleared those.
    // (The address does not change them.)
    let enables = hw.cmd_enables(&CmdInfo::new(mrq.cmd(), mrq.data(), Some(0)));
    if logic::IrqSources::new(enables, ista).cmd {
        Overdue::Completed(ista)
    } else {
        Overdue::Hung
    }
}

/// The bus width in lines, as `set_ios` left it, for the deadlines.
pub(crate) struct BusLines(Atomic<u32>);

impl BusLines {
    /// Creates a bus width of one line, until `set_ios` sets the width.
    pub(crate) fn new() -> Self {
        Self(Atomic::new(1))
    }

    /// Records the bus width `lines` that `set_ios` set.
    pub(crate) fn set(&self, lines: u32) {
        self.0.store(lines, Relaxed);
    }

    /// Returns the bus width in lines.
    fn get(&self) -> u32 {
        self.0.load(Relaxed)
    }
}
