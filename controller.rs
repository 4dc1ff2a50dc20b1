// SPDX-License-Identifier: GPL-2.0

//! The controller's state (`struct meson_mx_sdhc_host`).
//!
//! What the MMC callbacks and the interrupt handlers share ([`Sdhc`]) and what only the MMC
//! callbacks use ([`SdhcHost`], the driver data in the MMC host's private area).
//!
//! The controller holds the feature modules' state (the bounce buffers, the SDIO card
//! interrupt, the deadline of the request in flight, the statistics) and alone acts on what
//! they return: it starts requests (`request.rs`), completes them (`irq.rs`) and runs the
//! driver's timer, the watchdog (here). The feature modules never import it.

use kernel::{
    clk::Clk,
    device::Device,
    new_mutex,
    prelude::*,
    str::CString,
    sync::{
        aref::ARef,
        atomic::{
            Atomic,
            Relaxed, //
        },
        Arc,
        Mutex, //
    },
    time::Delta, //
};

use crate::kernel_ext::pm;
use crate::kernel_ext::workqueue::{
    alloc::Flags,
    timer::{
        Timer,
        TimerHandler,
        TimerRef, //
    }, //
};
use crate::mmc::DmaRequest;

use crate::{
    bounce::{
        Bouncer,
        Slot, //
    },
    clkc::Clkc,
    deadline::{
        BusLines,
        Deadline, //
    },
    hw::Hw,
    logic::Expiry,
    regs::Regs,
    sdio_irq::{
        SdioIrqs,
        RECOVER_PERIOD_MS, //
    },
    soc::SocData,
    stats::HostDebugfs, //
};

/// A "pclk" that is prepared and enabled for as long as this object lives, except while runtime
/// PM has it gated ([`Self::gate`]).
pub(crate) struct EnabledClk {
    clk: Clk,
    /// Whether [`Self::gate`] has it off.
    ///
    /// Written under [`Sdhc::bus`].
    gated: Atomic<bool>,
}

impl EnabledClk {
    pub(crate) fn new(clk: Clk) -> Result<Self> {
        clk.prepare_enable()?;
        Ok(Self {
            clk,
            gated: Atomic::new(false),
        })
    }

    /// Disables the clock until [`Self::ungate`].
    fn gate(&self) {
        if !self.gated.load(Relaxed) {
            self.clk.disable_unprepare();
            self.gated.store(true, Relaxed);
        }
    }

    /// Enables the clock again after [`Self::gate`].
    fn ungate(&self) -> Result {
        if self.gated.load(Relaxed) {
            self.clk.prepare_enable()?;
            self.gated.store(false, Relaxed);
        }
        Ok(())
    }
}

impl Drop for EnabledClk {
    fn drop(&mut self) {
        if !self.gated.load(Relaxed) {
            self.clk.disable_unprepare();
        }
    }
}

/// The request in flight.
pub(crate) struct InFlight {
    pub(crate) mrq: DmaRequest,
    /// The bounce buffer its data goes through, if any.
    pub(crate) slot: Option<Slot>,
    /// The request's number, so that an interrupt raised for an earlier request never completes it.
    pub(crate) seq: u32,
    /// Its software deadline.
    ///
    /// Computed before the watchdog was armed, started again when the command is written to the
    /// controller ([`Deadline::restart`]).
    pub(crate) deadline: Deadline,
}

/// The controller, shared by the MMC callbacks and the interrupt handlers.
///
/// Teardown: the fields go in declaration order: pclk off, clock tree unregistered,
/// registers unmapped.
#[pin_data]
pub(crate) struct Sdhc {
    pub(crate) dev: ARef<Device>,
    pub(crate) soc: SocData,
    pub(crate) pclk: EnabledClk,
    pub(crate) clkc: Clkc,
    pub(crate) regs: Regs,
    /// The bounce policy and its buffers (`bounce.rs`).
    #[pin]
    pub(crate) bounce: Bouncer,
    /// The request in flight, from `request` until the threaded IRQ handler completes it.
    #[pin]
    pub(crate) cur: Mutex<Option<InFlight>>,
    /// `ISTA` as the hard IRQ handler saw it, for the threaded handler.
    ///
    /// The line stays masked (`IRQF_ONESHOT`) until the thread is done, so there is one value per
    /// thread run.
    pub(crate) irq_ista: Atomic<u32>,
    /// The bounce buffers held back after an error, one bit each, while the controller may
    /// still write them (`drain.rs`).
    pub(crate) held_slots: Atomic<u32>,
    /// How many data requests in a row have found the controller busy with buffers held.
    pub(crate) held_tries: Atomic<u32>,
    /// The number of the request last handed to the controller (`InFlight::seq`).
    pub(crate) started_seq: Atomic<u32>,
    /// `started_seq` when the hard IRQ handler ran.
    ///
    /// The request the interrupt is for.
    pub(crate) irq_seq: Atomic<u32>,
    /// The bus clock in Hz, as `set_ios` left it.
    pub(crate) bus_hz: Atomic<u32>,
    /// The bus width in lines, as `set_ios` left it (for deadlines).
    pub(crate) bus_lines: BusLines,
    /// What `set_ios` leaves for `request`, and which clocks are on.
    #[pin]
    pub(crate) bus: Mutex<BusState>,
    /// The SDIO card interrupt and the `ICTL` writes.
    #[pin]
    pub(crate) sdio: SdioIrqs,
    /// Counters and switches, in debugfs.
    #[pin]
    pub(crate) debugfs: HostDebugfs,
}

impl Sdhc {
    /// Returns the registers with what programming them needs, the SDIO card interrupt's `ICTL`
    /// enables included.
    pub(crate) fn hw(&self) -> Hw<'_> {
        Hw {
            dev: &self.dev,
            regs: &self.regs,
            soc: &self.soc,
            sdio: &self.sdio,
        }
    }

    /// Probes the silicon's DAT1 latch (`SdioIrqs::probe_latch`) if an SDIO card interrupt serviced
    /// since the last command left it one.
    ///
    /// The result is counted in the statistics (`dat1_relatched`, `dat1_not_relatched`).
    ///
    /// `request` calls it with `cur` held and no command in flight, before the command is sent.
    pub(crate) fn probe_dat1_latch(&self) {
        if let Some(relatched) = self.sdio.probe_latch(&self.regs, self.bus_hz.load(Relaxed)) {
            self.debugfs.stats().record_dat1_probe(relatched);
        }
    }

    /// Enables the card interrupt again (`ack_sdio_irq`), the faulty way with the test knob
    /// `sdio_ack_fault` (`SdioIrqs::ack`).
    pub(crate) fn ack_sdio_irq(&self) {
        self.sdio.ack(&self.regs, self.debugfs.sdio_ack_fault());
    }

    /// Returns the request in flight, taken out of `cur` if its deadline has passed.
    ///
    /// An expiry armed for an earlier request (completed since) or fired early finds a request not
    /// yet due.
    fn take_expired(&self) -> Due {
        let mut cur = self.cur.lock();
        let Some(f) = cur.as_ref() else {
            return Due::Idle;
        };
        match f.deadline.expiry() {
            Expiry::Rearm(ms) => Due::Later(ms),
            Expiry::TimeOut => cur.take().map_or(Due::Idle, Due::TimedOut),
        }
    }
}

/// What the watchdog found in flight.
enum Due {
    /// Nothing.
    Idle,
    /// A request not yet due.
    ///
    /// This many milliseconds are left.
    Later(u32),
    /// A request past its deadline, taken out of `cur`.
    TimedOut(InFlight),
}

/// The bus state `set_ios` leaves for `request` (both serialized by the MMC core), and the
/// clocks runtime PM switches off while the host is idle.
pub(crate) struct BusState {
    /// Why the last `set_ios` failed.
    ///
    /// Requests fail with it until one succeeds (`host->error` in the C driver).
    pub(crate) set_ios_error: Option<Error>,
    /// Whether the four gate clocks of the controller's clock tree are on, as `set_ios` wants them.
    ///
    /// They are off while `suspended` all the same.
    pub(crate) gates_on: bool,
    /// Whether runtime PM has the module clock and the gate clocks off.
    pub(crate) suspended: bool,
}

impl BusState {
    /// Returns the state at probe.
    ///
    /// The gate clocks off, the module clock on.
    pub(crate) fn new() -> Self {
        Self {
            set_ios_error: None,
            gates_on: false,
            suspended: false,
        }
    }
}

/// The driver's timer, the watchdog.
///
/// What it holds and does when it expires.
///
/// It runs on a `WQ_MEM_RECLAIM` workqueue of its own, `mmc_timer/<device>`: a request it
/// times out may be one that memory reclaim waits for.
pub(crate) struct Watchdog {
    sdhc: Arc<Sdhc>,
}

impl TimerHandler for Watchdog {
    fn expired(timer: &TimerRef<Self>) {
        SdhcHost::deadline_expired(timer);
    }
}

/// The driver data of the MMC host (in its private area).
#[pin_data(PinnedDrop)]
pub(crate) struct SdhcHost {
    pub(crate) sdhc: Arc<Sdhc>,
    /// The watchdog, stopped first when the host drops its data.
    pub(crate) watchdog: Timer<Watchdog>,
    /// The controller kept powered (runtime PM) while the SDIO card interrupt is enabled.
    ///
    /// The interrupt comes through DAT1, which only a clocked controller sees.
    #[pin]
    pub(crate) sdio_awake: Mutex<Option<pm::Active>>,
}

impl SdhcHost {
    pub(crate) fn new(sdhc: Arc<Sdhc>) -> impl PinInit<Self, Error> {
        let watchdog = || {
            let name = CString::try_from_fmt(fmt!("mmc_timer/{}", sdhc.dev.name()))?;
            let data = Watchdog { sdhc: sdhc.clone() };
            Timer::new(&name, Flags::UNBOUND | Flags::MEM_RECLAIM, data)
        };
        let watchdog = watchdog();
        try_pin_init!(Self {
            watchdog: watchdog?,
            sdhc,
            sdio_awake <- new_mutex!(None, "meson_mx_sdhc_rs::sdio_awake"),
        }? Error)
    }

    /// Keeps the controller powered while the card interrupt is enabled (`enable_sdio_irq`).
    pub(crate) fn keep_awake_for_sdio(&self, enable: bool) {
        let mut awake = self.sdio_awake.lock();
        if !enable {
            *awake = None;
        } else if awake.is_none() {
            match pm::Active::get(&self.sdhc.dev) {
                Ok(a) => *awake = Some(a),
                Err(e) => dev_warn!(
                    self.sdhc.dev,
                    "cannot keep the controller powered for SDIO card interrupts: {}\n",
                    e.to_errno()
                ),
            }
        }
    }
}

impl Sdhc {
    /// Switches the gate clocks off if they are on.
    pub(crate) fn gates_off(&self, bus: &mut BusState) {
        if bus.gates_on {
            if !bus.suspended {
                self.clkc.disable();
            }
            bus.gates_on = false;
        }
    }

    /// Switches the gate clocks on if they are off.
    pub(crate) fn gates_on(&self, bus: &mut BusState) -> Result {
        if !bus.gates_on {
            if !bus.suspended {
                self.clkc.enable()?;
            }
            bus.gates_on = true;
        }
        Ok(())
    }
}

/// Runtime PM for when the host is idle.
///
/// The MMC core claims the host, and so resumes the controller, for every request and bus change.
/// The registers keep their contents while the clocks are off (the SoCs have no power domain for
/// the controller); only the clocks change.
impl pm::PmOps for Sdhc {
    fn runtime_suspend(&self) -> Result {
        let mut bus = self.bus.lock();
        if !bus.suspended {
            if bus.gates_on {
                self.clkc.disable();
            }
            self.pclk.gate();
            bus.suspended = true;
        }
        Ok(())
    }

    fn runtime_resume(&self) -> Result {
        let mut bus = self.bus.lock();
        if bus.suspended {
            self.pclk.ungate()?;
            if bus.gates_on {
                self.clkc.enable().inspect_err(|_| self.pclk.gate())?;
            }
            bus.suspended = false;
        }
        Ok(())
    }
}

#[pinned_drop]
impl PinnedDrop for SdhcHost {
    fn drop(self: Pin<&mut Self>) {
        // The host is removed (or was never added): no callback arms the watchdog any more,
        // and its handler may arm it only until this returns.
        self.watchdog.stop();
        self.release_sdio_signal();
        self.sdhc.quiesce_held();
        let mut bus = self.sdhc.bus.lock();
        self.sdhc.gates_off(&mut bus);
    }
}

impl SdhcHost {
    /// Releases the SDIO signal once the host is removed (or was never added) and the watchdog
    /// stopped.
    ///
    /// It is freed next: nothing may signal it any more. The signal waits for the core's SDIO work
    /// when dropped.
    fn release_sdio_signal(&self) {
        drop(self.sdhc.sdio.take_signal(&self.sdhc.regs));
    }

    /// Arms the watchdog for the request deadline `deadline` (`request`).
    pub(crate) fn arm_deadline(&self, deadline: &Deadline) {
        let early_ms = self.sdhc.debugfs.watchdog_early_ms();
        let delay = Self::watch_period(&self.sdhc, deadline.arm_after_ms(early_ms));
        self.watchdog.arm(delay);
    }

    /// Returns `ms` as the watchdog's delay, at most the period at which it looks for a missed SDIO
    /// card interrupt while one is enabled.
    ///
    /// A request's deadline must not keep the watchdog away that long (it arms itself again for the
    /// rest of a deadline not yet due).
    fn watch_period(sdhc: &Sdhc, ms: u32) -> Delta {
        let ms = i64::from(ms);
        if sdhc.sdio.watched() {
            Delta::from_millis(ms.min(RECOVER_PERIOD_MS))
        } else {
            Delta::from_millis(ms)
        }
    }

    /// Handles the watchdog's expiry.
    ///
    /// The deadline passed, or the watchdog fired early.
    fn deadline_expired(timer: &TimerRef<Watchdog>) {
        let sdhc = &timer.data().sdhc;
        match sdhc.take_expired() {
            Due::TimedOut(f) => sdhc.expire(f),
            Due::Later(ms) => {
                sdhc.debugfs.stats().record_deadline_rearm();
                // Unless a later request armed the watchdog meanwhile: its own deadline stands.
                timer.arm_if_idle(Self::watch_period(sdhc, ms));
            }
            Due::Idle => {}
        }
        Self::watch_sdio_irq(timer);
    }

    /// Looks for an SDIO card interrupt no interrupt reported (`SdioIrqs::recover_missed`) when no
    /// request is in flight, and arms the watchdog to look again while the interrupt is
    /// enabled, unless a request's deadline has it armed already.
    pub(crate) fn watch_sdio_irq(timer: &TimerRef<Watchdog>) {
        let sdhc = &timer.data().sdhc;
        {
            // Under the lock no command starts: DAT1 is the card's interrupt, not data.
            let cur = sdhc.cur.lock();
            if cur.is_none() && sdhc.sdio.recover_missed(&sdhc.regs) {
                sdhc.debugfs.stats().record_sdio_irq_recovered();
            }
        }
        if sdhc.sdio.watched() {
            timer.arm_if_idle(Delta::from_millis(RECOVER_PERIOD_MS));
        }
    }
}
