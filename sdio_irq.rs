// SPDX-License-Identifier: GPL-2.0

//! SDIO card interrupts through DAT1.
//!
//! With `CTRL.SDIO_IRQ_MODE` the controller samples DAT1: low while the bus is idle latches
//! `ISTA.DAT1_IRQ`, low in the interrupt period between two blocks of a 4-bit transfer
//! (`ENHC.SDIO_IRQ_PERIOD`, set by `soc.rs`) `ISTA.ADDI_DAT1_IRQ`. Like every `ISTA` bit they
//! stay until written 1. Whether they latch again while the card still holds DAT1 low (level)
//! or only on DAT1's next falling edge is not documented, and no other driver for this
//! controller uses them; the driver is written for both readings: it never clears a DAT1 it
//! has not signalled ([`SdioIrqs::enable`]), and while the interrupt is enabled and no command
//! is in flight the driver's timer looks at DAT1 itself every [`RECOVER_PERIOD_MS`]
//! ([`SdioIrqs::recover_missed`]), for an edge that was missed (a reset in between, an edge the
//! interrupt controller did not see).
//!
//! The interrupt stays enabled in `ICTL` across requests, from `enable_sdio_irq` until the core
//! disables it: every `ICTL` write of a command goes through [`SdioIrqs`], which adds the DAT1
//! enables, and a command's status handling only clears the command's own bits
//! (`logic::CMD_IRQS`). When the card interrupts, the hard IRQ handler wakes the IRQ thread
//! (the line stays masked meanwhile) and [`SdioIrqs::service`] there masks DAT1 in `ICTL`,
//! clears it in `ISTA` and signals the MMC core, which runs the functions' handlers in its
//! work and re-enables it with `ack_sdio_irq`.
//!
//! The driver assumes the controller's interrupt line is `ICTL & ISTA` (nothing documents
//! whether it is a level or a pulse per latch) and the SoC's interrupt is a rising edge
//! (`meson.dtsi`): a DAT1 latched while a command's bit holds the line high would raise no
//! edge. So after clearing a command's bits the driver looks at DAT1 itself
//! ([`SdioIrqs::end_cmd`]); under a pulse per latch that costs nothing.
//!
//! How the silicon latches is found out on the first [`DAT1_PROBES`] interrupts serviced while
//! the card holds DAT1 low, off the interrupt path: [`SdioIrqs::service`] only notes the
//! interrupt, and the next request, before its command is sent, clears the DAT1 bits and
//! sleeps for the window the controller needs to latch DAT1 again
//! ([`SdioIrqs::probe_latch`]); no lock is held with interrupts off while it waits.

use kernel::{
    new_spinlock_irq,
    prelude::*,
    sync::SpinLockIrq,
    time::{
        delay::fsleep,
        Delta, //
    }, //
};

use crate::mmc::SdioIrqSignal;

use crate::{
    logic::{
        self,
        dat1_stuck_bits,
        ictl_enables,
        ADDI_DAT1_IRQ,
        CMD_IRQS,
        DAT1_IRQS, //
    },
    regs::{
        self,
        Regs, //
    }, //
};

/// How often the driver's timer looks for an SDIO card interrupt that no interrupt reported,
/// while the interrupt is enabled and the bus idle.
pub(crate) const RECOVER_PERIOD_MS: i64 = 250;

/// How many interrupts find out how the silicon latches DAT1 ([`SdioIrqs::probe_latch`]).
const DAT1_PROBES: u32 = 16;

/// An interrupt [`SdioIrqs::service`] signalled with the card holding DAT1 low, for the probe
/// of the DAT1 latch to use.
#[derive(Clone, Copy)]
struct ProbeFor {
    /// The DAT1 bits that were latched.
    bits: u32,
    /// [`State::gen`] after the service.
    ///
    /// The probe is void if it changed since.
    gen: u32,
    /// [`State::cmds`] at the service.
    ///
    /// The probe is void if a command started or ended since.
    cmds: u32,
}

/// The state of the SDIO card interrupt.
struct State {
    /// Whether the core wants the interrupt (`enable_sdio_irq`, `ack_sdio_irq`).
    ///
    /// False while a signalled one waits for its `ack_sdio_irq`.
    enabled: bool,
    /// Whether DAT1 sampling (`CTRL.SDIO_IRQ_MODE`) has been turned on.
    sampling: bool,
    /// How the interrupt reaches the MMC core.
    ///
    /// `None` without SDIO interrupts (`sdio_irq=0`) and once the host is gone.
    signal: Option<SdioIrqSignal>,
    /// Interrupts still to probe the silicon's DAT1 latch with.
    probes_left: u32,
    /// The interrupt left to the probe of the next request.
    probe: Option<ProbeFor>,
    /// Changes with every change of the interrupt's enable, service and reset.
    ///
    /// A probe that finds it changed (the core acked the interrupt, the controller was reset) is
    /// void.
    gen: u32,
    /// Changes with every command's start and end.
    cmds: u32,
    /// The DAT1 bits enabled and serviced.
    ///
    /// Both, less each one seen not to clear when written 1 (Amlogic's header marks only bit 10
    /// write-1-to-clear; a fault may keep either).
    dat1: u32,
    /// [`State::gen`] when the driver's timer last found DAT1 latched, enabled.
    ///
    /// The interrupt of that latch may be on its way to the handler; the timer takes it as missed
    /// only if it finds it latched again with no change since.
    seen_latched: Option<u32>,
}

/// The SDIO card interrupt and every write of `ICTL`, serialized with the threaded IRQ handler.
#[pin_data]
pub(crate) struct SdioIrqs {
    #[pin]
    state: SpinLockIrq<State>,
}

impl SdioIrqs {
    /// Creates the state disabled, with no way to signal.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            state <- new_spinlock_irq!(
                State {
                    enabled: false,
                    sampling: false,
                    signal: None,
                    probes_left: DAT1_PROBES,
                    probe: None,
                    gen: 0,
                    cmds: 0,
                    dat1: DAT1_IRQS,
                    seen_latched: None,
                },
                "meson_mx_sdhc_rs::sdio_irq"
            ),
        })
    }

    /// Gives the interrupt its way to the MMC core (probe, before the host is registered).
    pub(crate) fn set_signal(&self, signal: SdioIrqSignal) {
        let old = self.state.lock().signal.replace(signal);
        // Dropped outside the lock: dropping may sleep.
        drop(old);
    }

    /// Takes the signal away (the host is going), disabling the interrupt.
    ///
    /// Nothing signals the core afterwards.
    pub(crate) fn take_signal(&self, regs: &Regs) -> Option<SdioIrqSignal> {
        let mut st = self.state.lock();
        st.enabled = false;
        st.gen = st.gen.wrapping_add(1);
        Self::write_enables(&st, regs, regs.read(regs::ICTL).into_raw());
        st.signal.take()
    }

    /// Turns DAT1 sampling on or off.
    ///
    /// `CTRL.SDIO_IRQ_MODE`, and with it `CLKC.CLK_JIC`, which keeps the controller's clock running
    /// between commands. Amlogic's register header says the mode "need[s] turn off clock gating"
    /// and `CLK_JIC` "1: will turn off clock gating": with the clock gated while the bus is idle,
    /// DAT1 would be sampled only during the next command. `CLKC`'s other fields belong to the
    /// clock tree (`clkc.rs`), whose changes come from `set_ios` with the host claimed and no
    /// request in flight; the callers here run with the host claimed or a request in flight: the
    /// two read-modify-write sequences never overlap.
    fn write_sampling(regs: &Regs, on: bool) {
        regs.update(regs::CLKC, |r| r.with_clk_jic(on));
        regs.update(regs::CTRL, |r| r.with_sdio_irq_mode(on));
    }

    /// Writes `ICTL` with the command interrupts of `cmd` and DAT1's as `st` has them.
    fn write_enables(st: &State, regs: &Regs, cmd: u32) {
        let dat1 = if st.enabled && st.signal.is_some() {
            st.dat1
        } else {
            0
        };
        regs.write_reg(regs::ICTL::from_raw(ictl_enables(cmd, dat1)));
    }

    /// Enables the interrupt, turning DAT1 sampling on (`CTRL.SDIO_IRQ_MODE`) if it is off, or
    /// disables it and turns sampling off.
    ///
    /// Called for `enable_sdio_irq` and `ack_sdio_irq`.
    ///
    /// Enabling leaves a DAT1 latched meanwhile as it is: it raises the interrupt as soon as it
    /// is enabled. Whether the silicon latches DAT1 again while the card holds it low (level)
    /// or once per falling edge is not known; cleared here, an interrupt the card raised after
    /// [`Self::service`] would be lost for good under the second reading. Under the first, the
    /// latch of the interrupt already serviced costs one signal the core finds nothing for.
    /// Nor is it known whether `ISTA` latches DAT1 while `ICTL` masks it: a card that holds
    /// DAT1 low when the interrupt is enabled (it asserted again, or never let go) is signalled
    /// at once. The callers (`enable_sdio_irq`, `ack_sdio_irq`) run with the host claimed, so
    /// no transfer uses DAT1 as data.
    pub(crate) fn enable(&self, regs: &Regs, enable: bool) {
        let mut st = self.state.lock();
        st.enabled = enable;
        st.gen = st.gen.wrapping_add(1);
        if enable != st.sampling {
            st.sampling = enable;
            Self::write_sampling(regs, enable);
            if !enable {
                // Nobody wants the interrupt: what latched before sampling stopped is stale.
                regs.write_reg(regs::ISTA::from_raw(DAT1_IRQS));
            }
        }
        // DAT1 is looked at before the enable is written: a card that holds it low is
        // signalled with DAT1 left masked, rather than raising an interrupt whose handler finds
        // the latch cleared.
        if enable && st.signal.is_some() && Self::dat1_low(regs) {
            Self::mask_and_signal(&mut st, regs);
            return;
        }
        Self::write_enables(&st, regs, regs.read(regs::ICTL).into_raw());
        // And again after: a card that pulled DAT1 low between that look and the enable did so
        // while DAT1 was masked, which an edge latch may not have seen. DAT1 low with nothing
        // latched now is such an interrupt (STAT is read first: an edge after the enable would
        // show latched); DAT1 low and latched raises the interrupt by itself.
        let held_low = enable && st.signal.is_some() && Self::dat1_low(regs);
        if held_low && !Self::dat1_latched(&st, regs) {
            Self::mask_and_signal(&mut st, regs);
        }
    }

    /// Returns whether `ISTA` holds one of the DAT1 bits in use latched.
    fn dat1_latched(st: &State, regs: &Regs) -> bool {
        regs.read(regs::ISTA).into_raw() & st.dat1 != 0
    }

    /// Acks the interrupt as the test knob `sdio_ack_fault` has it.
    ///
    /// Clears a DAT1 latched since the service and enables the interrupt without looking at DAT1.
    /// Under the edge reading an interrupt the card raised in between is lost until the driver's
    /// timer finds DAT1 low; the knob shows that [`Self::enable`]'s way is what keeps it.
    pub(crate) fn ack_faulty(&self, regs: &Regs) {
        let mut st = self.state.lock();
        st.enabled = true;
        st.gen = st.gen.wrapping_add(1);
        regs.write_reg(regs::ISTA::from_raw(DAT1_IRQS));
        Self::write_enables(&st, regs, regs.read(regs::ICTL).into_raw());
    }

    /// Programs DAT1 sampling and its enables again after a controller reset (`SRST`), which may
    /// return them to their reset values on the silicon.
    ///
    /// The interrupt is not lost: a card that still holds DAT1 low latches it again.
    pub(crate) fn restore(&self, regs: &Regs) {
        let mut st = self.state.lock();
        st.gen = st.gen.wrapping_add(1);
        if st.sampling {
            Self::write_sampling(regs, true);
        }
        Self::write_enables(&st, regs, regs.read(regs::ICTL).into_raw());
    }

    /// Writes the `ICTL` enables of a command's interrupts `cmd`, DAT1's kept as they are.
    pub(crate) fn write_cmd_ictl(&self, regs: &Regs, cmd: regs::ICTL) {
        let mut st = self.state.lock();
        st.cmds = st.cmds.wrapping_add(1);
        Self::write_enables(&st, regs, cmd.into_raw());
    }

    /// Disables and acknowledges the interrupts of the command just finished, DAT1's kept as they
    /// are, then signals a card interrupt DAT1 latched while the command ran, or one the card holds
    /// on DAT1 that no edge latched ([`Self::recover`]).
    ///
    /// With requests back to back the driver's timer may never find the bus idle, and a missed edge
    /// would wait as long as the traffic lasts. The command is done, so DAT1 is not data now; a
    /// card that drives it low for another reason (an aborted transfer) costs one signal the core
    /// finds nothing for.
    pub(crate) fn end_cmd(&self, regs: &Regs) {
        {
            let mut st = self.state.lock();
            st.cmds = st.cmds.wrapping_add(1);
            Self::write_enables(&st, regs, 0);
            regs.write_reg(regs::ISTA::from_raw(CMD_IRQS));
        }
        self.recover(regs);
    }

    /// Signals an SDIO card interrupt that no interrupt reported.
    ///
    /// One latched in `ISTA` whose edge the interrupt controller missed, or DAT1 held low by a card
    /// whose falling edge the controller did not latch (during a reset, or before sampling was on).
    /// Returns whether there was one. The caller guarantees that no command is in flight: DAT1 is
    /// data during a transfer.
    pub(crate) fn recover(&self, regs: &Regs) -> bool {
        let mut st = self.state.lock();
        if !st.enabled || st.signal.is_none() {
            return false;
        }
        if !Self::dat1_latched(&st, regs) && !Self::dat1_low(regs) {
            return false;
        }
        Self::mask_and_signal(&mut st, regs);
        true
    }

    /// Signals an SDIO card interrupt whose report went missing, for the driver's timer.
    ///
    /// DAT1 held low with nothing latched is signalled at once: the controller did not latch its
    /// edge. A DAT1 latched in `ISTA` is signalled only when the previous look found it latched
    /// too, with no service, ack or reset since: until then its interrupt may be on its way to
    /// the handler, which would find it cleared. Returns whether it signalled one. The caller
    /// guarantees that no command is in flight: DAT1 is data during a transfer.
    pub(crate) fn recover_missed(&self, regs: &Regs) -> bool {
        let mut st = self.state.lock();
        if !st.enabled || st.signal.is_none() {
            st.seen_latched = None;
            return false;
        }
        // STAT first: a fall after this read shows latched below, not low and unlatched.
        let low = Self::dat1_low(regs);
        let latched = Self::dat1_latched(&st, regs);
        if latched && st.seen_latched != Some(st.gen) {
            st.seen_latched = Some(st.gen);
            return false;
        }
        st.seen_latched = None;
        if !latched && !low {
            return false;
        }
        Self::mask_and_signal(&mut st, regs);
        true
    }

    /// Returns whether the interrupt is enabled and can be signalled.
    ///
    /// The driver's timer keeps looking for a missed one.
    pub(crate) fn watched(&self) -> bool {
        let st = self.state.lock();
        st.enabled && st.signal.is_some()
    }

    /// Masks DAT1 in `ICTL` and clears it in `ISTA`, for an interrupt to signal.
    fn mask_and_clear(st: &mut State, regs: &Regs) {
        st.enabled = false;
        st.gen = st.gen.wrapping_add(1);
        Self::write_enables(st, regs, regs.read(regs::ICTL).into_raw());
        regs.write_reg(regs::ISTA::from_raw(DAT1_IRQS));
        Self::check_dat1_cleared(st, regs);
    }

    /// Masks and clears DAT1 ([`Self::mask_and_clear`]) and signals the interrupt to the core.
    fn mask_and_signal(st: &mut State, regs: &Regs) {
        Self::mask_and_clear(st, regs);
        Self::signal(st);
    }

    /// Signals the MMC core.
    fn signal(st: &State) {
        if let Some(signal) = st.signal.as_ref() {
            signal.signal();
        }
    }

    /// Stops using a DAT1 bit that writing 1 did not clear while the card does not hold DAT1 low
    /// (nothing can have latched it again, [`dat1_stuck_bits`]).
    ///
    /// Enabled, it would raise the interrupt again after every ack, for good. What it costs is
    /// bounded: one call of the function's handler with nothing pending per bit, and one warning.
    /// Without `ADDI_DAT1_IRQ`, `DAT1_IRQ` and the look at DAT1 after each command (`end_cmd`)
    /// still find a card interrupt raised between blocks; without `DAT1_IRQ` too, that look and the
    /// driver's timer (DAT1's level while the bus is idle) find every one, later.
    fn check_dat1_cleared(st: &mut State, regs: &Regs) {
        let ista = regs.read(regs::ISTA).into_raw();
        let stuck = dat1_stuck_bits(st.dat1, ista, Self::dat1_low(regs));
        if stuck == 0 {
            return;
        }
        st.dat1 &= !stuck;
        if stuck & ADDI_DAT1_IRQ != 0 {
            pr_warn!("ISTA.ADDI_DAT1_IRQ does not clear when written: SDIO interrupts between blocks are found after the transfer\n");
        }
        if stuck & !ADDI_DAT1_IRQ != 0 {
            pr_warn!("ISTA.DAT1_IRQ does not clear when written: SDIO interrupts are found by looking at DAT1 after each command and every 250 ms\n");
        }
    }

    /// Signals a latched, enabled SDIO card interrupt to the MMC core, masked in `ICTL` and cleared
    /// in `ISTA` until `ack_sdio_irq`.
    ///
    /// Returns whether it signalled one. While the silicon's DAT1 latch is still to be probed and
    /// the card holds DAT1 low, it leaves the interrupt to the probe of the next request
    /// ([`Self::probe_latch`]). Runs in the threaded IRQ handler: the lock is a `spinlock_t`, which
    /// sleeps on PREEMPT_RT and must not be taken in the hard IRQ handler.
    pub(crate) fn service(&self, regs: &Regs) -> bool {
        let mut st = self.state.lock();
        let bits = regs.read(regs::ISTA).into_raw() & st.dat1;
        if !st.enabled || bits == 0 || st.signal.is_none() {
            return false;
        }
        let probe = st.probes_left != 0 && Self::dat1_low(regs);
        Self::mask_and_clear(&mut st, regs);
        st.probe = probe.then_some(ProbeFor {
            bits,
            gen: st.gen,
            cmds: st.cmds,
        });
        Self::signal(&st);
        true
    }

    /// Starts the probe of the DAT1 latch for the interrupt [`Self::service`] left to it, once.
    ///
    /// Clears its DAT1 bits again while the card still holds DAT1 low, DAT1 still masked and not
    /// acknowledged. Returns what [`Self::end_probe`] needs, or `None` when there is nothing to
    /// probe (no interrupt left to it, probed enough, the core acked the interrupt or the card let
    /// DAT1 go meanwhile, or a command started or ended since the service). The caller guarantees
    /// that no command is in flight or starts until [`Self::end_probe`]: only a command can make
    /// the card let DAT1 go and assert it again.
    fn start_probe(&self, regs: &Regs) -> Option<ProbeFor> {
        let mut st = self.state.lock();
        let p = st.probe.take()?;
        if st.probes_left == 0
            || st.enabled
            || st.signal.is_none()
            || st.gen != p.gen
            || st.cmds != p.cmds
            || !Self::dat1_low(regs)
        {
            return None;
        }
        // What latched since the service is no evidence: commands may have run meanwhile.
        regs.write_reg(regs::ISTA::from_raw(p.bits));
        Some(p)
    }

    /// Ends the probe `p` of [`Self::start_probe`] once the controller has had the time to latch
    /// DAT1 again.
    ///
    /// Whether it did (level) or not (edge); `None` (no evidence) if the interrupt was acknowledged
    /// or the controller reset meanwhile, or the card let DAT1 go without it latching
    /// ([`logic::relatch_reading`]).
    fn end_probe(&self, regs: &Regs, p: ProbeFor) -> Option<bool> {
        let mut st = self.state.lock();
        if st.gen != p.gen || st.probes_left == 0 {
            return None;
        }
        let latched = regs.read(regs::ISTA).into_raw() & p.bits != 0;
        let relatched = logic::relatch_reading(latched, Self::dat1_low(regs))?;
        if relatched {
            // Signalled already: the latch is the interrupt being serviced.
            regs.write_reg(regs::ISTA::from_raw(p.bits));
        }
        st.probes_left -= 1;
        Some(relatched)
    }

    /// Returns whether `STAT` shows the card holding DAT1 low.
    fn dat1_low(regs: &Regs) -> bool {
        regs.read(regs::STAT).dat3_0().get() & 0b10 == 0
    }
}

impl SdioIrqs {
    /// Finds out how the silicon latches DAT1, on the first [`DAT1_PROBES`] interrupts that are
    /// still held when probed.
    ///
    /// The DAT1 bits that latched are cleared while `STAT` shows the card holding DAT1 low; if they
    /// latch again within `logic::relatch_window_us` (the controller samples DAT1 every
    /// `ENHC.SDIO_IRQ_PERIOD` bus clocks, here at `bus_hz`), DAT1 latches on its level, else on its
    /// falling edge. Returns which (`true`: level), or `None`: nothing to do for a request that no
    /// serviced interrupt waits to probe, or no evidence.
    ///
    /// The caller runs it for the first command after the interrupt was serviced, with no
    /// command in flight and none starting until it returns, before the command is sent: the
    /// card lets DAT1 go only when a command clears its interrupt, and could then assert it
    /// again, a falling edge that would latch under either reading. It sleeps through the
    /// window (20 us at 50 MHz, at most 200 us), in process context with no spinlock held: the
    /// first [`DAT1_PROBES`] interrupts delay their function's first command by that much, not
    /// the call of its handler.
    pub(crate) fn probe_latch(&self, regs: &Regs, bus_hz: u32) -> Option<bool> {
        let p = self.start_probe(regs)?;
        let window_us = logic::relatch_window_us(bus_hz);
        fsleep(Delta::from_micros(i64::from(window_us)));
        self.end_probe(regs, p)
    }

    /// Enables the card interrupt again for `ack_sdio_irq` ([`Self::enable`]), or, `faulty`, acks
    /// it the faulty way ([`Self::ack_faulty`]).
    ///
    /// `faulty` is the test knob `sdio_ack_fault`.
    pub(crate) fn ack(&self, regs: &Regs, faulty: bool) {
        if faulty {
            self.ack_faulty(regs);
        } else {
            self.enable(regs, true);
        }
    }
}
