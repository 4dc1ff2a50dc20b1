// SPDX-License-Identifier: GPL-2.0

//! The software deadline of a request: what happens when no interrupt came in time.
//!
//! The MMC core never times a request out for a host without a command queue engine, and the
//! controller can freeze without raising an interrupt (upstream c82efcaad2a4); an edge that
//! the interrupt controller missed is lost for good. `request` computes the instant the
//! request is due (`logic::request_deadline_ms`: the card's data timeout for every block) and
//! arms the host's timer (the watchdog) for it. When the watchdog fires and the request in
//! flight is past that instant, the controller is quiesced (reset, then a bounded wait for its
//! DMA engine, `Sdhc::quiesce`) and the request completes with `ETIMEDOUT`, which the core
//! retries. A watchdog that fires before the request in flight is due (the timer wheel's
//! granularity, an earlier request's arming, or the `watchdog_early_ms` fault) arms itself
//! again for the rest (`logic::expiry`). An interrupt raised before the reset finds the request
//! gone and is counted, nothing else. The host cancels its timer before it drops its data
//! (`SdhcHost`).

use kernel::{
    io::Io,
    prelude::*,
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

use crate::mmc::{
    Host,
    Request, //
};

use crate::{
    controller::{
        InFlight,
        Sdhc,
        SdhcHost, //
    },
    hw::CmdInfo,
    irq::{
        DataResult,
        Errors, //
    },
    logic::{
        self,
        DeadlineInput,
        ErrorKind, //
    },
    regs, //
};

/// The software deadline of a request: the instant it is due, and how long it is.
pub(crate) struct Deadline {
    due: Instant<Monotonic>,
    ms: u32,
}

impl Deadline {
    /// The deadline of `mrq` at the current bus settings of `sdhc`, from now.
    pub(crate) fn new(sdhc: &Sdhc, mrq: &Request) -> Self {
        let cmd = mrq.cmd();
        let data = mrq.data();
        let (data_timeout_ns, data_timeout_clks) = data.map_or((0, 0), |d| d.timeout());
        let ms = logic::request_deadline_ms(&DeadlineInput {
            bus_hz: sdhc.bus_hz.load(Relaxed),
            bus_width: sdhc.bus_lines.get(),
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

    /// Arms the host's timer, the watchdog, for this deadline.
    pub(crate) fn arm(&self, host: &Host<SdhcHost>) {
        host.arm_timer(SdhcHost::watch_period(
            host,
            SdhcHost::arm_after(host, self.ms),
        ));
    }

    /// Starts the deadline's clock again once the command is written to the controller: the
    /// time before (waiting for the controller, a preempted thread) is not the card's, and the
    /// request cannot complete before it (`request.rs` sends under `cur`).
    pub(crate) fn restart(&mut self) {
        self.due = Instant::now() + Delta::from_millis(i64::from(self.ms));
    }
}

/// The bus width in lines, as `set_ios` left it, for the deadlines.
pub(crate) struct BusLines(Atomic<u32>);

impl BusLines {
    /// One line, until `set_ios` sets the width.
    pub(crate) fn new() -> Self {
        Self(Atomic::new(1))
    }

    /// `set_ios` set the bus width to `lines`.
    pub(crate) fn set(&self, lines: u32) {
        self.0.store(lines, Relaxed);
    }

    /// The bus width in lines.
    fn get(&self) -> u32 {
        self.0.load(Relaxed)
    }
}

impl SdhcHost {
    /// When the watchdog is to fire for a request due in `deadline_ms`: then, or the test
    /// fault's `watchdog_early_ms` before.
    fn arm_after(host: &Host<Self>, deadline_ms: u32) -> u32 {
        logic::arm_after_ms(deadline_ms, host.data().sdhc.debugfs.watchdog_early_ms())
    }

    /// `ms` as the timer's delay, at most the period at which the timer looks for a missed
    /// SDIO card interrupt while one is enabled: a request's deadline must not keep the timer
    /// away that long (it arms itself again for the rest of a deadline not yet due).
    fn watch_period(host: &Host<Self>, ms: u32) -> Delta {
        let ms = i64::from(ms);
        if host.data().sdhc.sdio.watched() {
            Delta::from_millis(ms.min(crate::sdio_irq::RECOVER_PERIOD_MS))
        } else {
            Delta::from_millis(ms)
        }
    }

    /// The host's timer, the watchdog, fired: the deadline passed, or the watchdog fired early.
    pub(crate) fn deadline_expired(host: &Host<Self>) {
        let sdhc = &host.data().sdhc;
        match sdhc.take_expired() {
            Due::TimedOut(f) => sdhc.expire(f),
            Due::Later(ms) => {
                sdhc.debugfs.stats().record_deadline_rearm();
                // Unless a later request armed the watchdog meanwhile: its own deadline stands.
                host.arm_timer_if_idle(Self::watch_period(host, ms));
            }
            Due::Idle => {}
        }
        Self::watch_sdio_irq(host);
    }

    /// Looks for an SDIO card interrupt no interrupt reported (`SdioIrqs::recover`) when no
    /// request is in flight, and arms the host's timer to look again while the interrupt is
    /// enabled, unless a request's deadline has it armed already.
    pub(crate) fn watch_sdio_irq(host: &Host<Self>) {
        let sdhc = &host.data().sdhc;
        {
            // Under the lock no command starts: DAT1 is the card's interrupt, not data.
            let cur = sdhc.cur.lock();
            if cur.is_none() && sdhc.sdio.recover(&sdhc.regs) {
                sdhc.debugfs.stats().record_sdio_irq_recovered();
            }
        }
        if sdhc.sdio.watched() {
            host.arm_timer_if_idle(Delta::from_millis(crate::sdio_irq::RECOVER_PERIOD_MS));
        }
    }
}

/// What the watchdog found in flight.
enum Due {
    /// Nothing.
    Idle,
    /// A request not yet due: this many milliseconds are left.
    Later(u32),
    /// A request past its deadline, taken out of `cur`.
    TimedOut(InFlight),
}

impl Sdhc {
    /// The request in flight, taken out of `cur` if its deadline has passed. An expiry armed
    /// for an earlier request (completed since) or fired early finds a request not yet due.
    fn take_expired(&self) -> Due {
        let mut cur = self.cur.lock();
        let Some(f) = cur.as_ref() else {
            return Due::Idle;
        };
        let left = f.deadline.due - Instant::<Monotonic>::now();
        match logic::expiry(left.as_nanos()) {
            logic::Expiry::Rearm(ms) => Due::Later(ms),
            logic::Expiry::TimeOut => cur.take().map_or(Due::Idle, Due::TimedOut),
        }
    }

    /// Completes `f`, past its deadline without an interrupt: as its interrupt would have if
    /// `ISTA` shows it completed (the controller latched the status, the interrupt was lost on
    /// its way: an edge the interrupt controller missed), else with `ETIMEDOUT`.
    fn expire(&self, f: InFlight) {
        let ista = self.regs.read(regs::ISTA).into_raw();
        // The command's own enables, not `ICTL`'s: a late interrupt may have cleared those.
        // (The address does not change them.)
        let enables = self
            .hw()
            .cmd_enables(&CmdInfo::new(f.mrq.cmd(), f.mrq.data(), Some(0)));
        if !logic::IrqSources::new(enables, ista).cmd {
            self.time_out(f);
            return;
        }
        dev_warn!(
            self.dev,
            "CMD{} completed without its interrupt (ISTA 0x{:08x}): completed at its {} ms deadline\n",
            f.mrq.cmd().opcode(),
            ista,
            f.deadline.ms
        );
        self.debugfs.stats().record_deadline_completed();
        self.complete(f, ista);
    }

    /// Quiesces the controller and completes `f` with `ETIMEDOUT`.
    fn time_out(&self, f: InFlight) {
        let InFlight {
            mrq,
            slot,
            deadline,
            ..
        } = f;
        let ista = self.regs.read(regs::ISTA).into_raw();
        let stat = self.regs.read(regs::STAT).into_raw();
        dev_err!(
            self.dev,
            "CMD{} got no interrupt within its {} ms deadline (ISTA 0x{:08x}, STAT 0x{:08x}): resetting the controller\n",
            mrq.cmd().opcode(),
            deadline.ms,
            ista,
            stat
        );
        // Stop the controller and its DMA before the request's memory is handed back.
        let idle = self.quiesce();
        if !idle && slot.is_none() {
            self.hold_direct();
        }
        self.hw().disable_irqs();

        mrq.cmd().set_error(ETIMEDOUT);
        if let Some(d) = mrq.data() {
            d.set_bytes_xfered(0);
        }
        let errors = Errors {
            cmd: Some(ErrorKind::Deadline),
            data: None,
        };
        // The controller froze mid-transfer: the card may be left in its data state.
        self.stop_after_error(&mrq, &errors);
        match slot {
            // Nothing is copied back: the buffer is free again.
            Some(slot) if idle => self.bounce.release(slot),
            Some(slot) => self.hold_back(slot),
            None => {}
        }
        self.record(&mrq, slot.is_some(), errors, DataResult::default(), true);
        // Unmapped, then completed.
        mrq.done();
    }
}
