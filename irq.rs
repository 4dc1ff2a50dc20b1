// SPDX-License-Identifier: GPL-2.0

//! The interrupt and the completion of a request the watchdog found past its deadline
//! (`deadline.rs`).
//!
//! The hard handler claims the interrupt, the threaded handler finishes the request
//! (`meson_mx_sdhc_irq()`, `meson_mx_sdhc_irq_thread()`).

use kernel::{
    irq::{
        IrqReturn,
        ThreadedHandler,
        ThreadedIrqReturn, //
    },
    prelude::*,
    sync::{
        atomic::{
            Acquire,
            Relaxed,
            Release, //
        },
        Arc, //
    },
    time::Delta, //
};

use crate::mmc::{
    DmaRequest,
    Request, //
};

use crate::{
    bounce::Slot,
    controller::{
        InFlight,
        Sdhc, //
    },
    deadline::{
        self,
        Overdue, //
    },
    logic::{
        self,
        ErrorKind,
        IrqSources,
        ERROR_IRQS,
        LATE_ERROR_IRQS, //
    },
    regs, //
};

/// The IRQ handlers' view of the controller.
pub(crate) struct IrqHandler(pub(crate) Arc<Sdhc>);

impl ThreadedHandler for IrqHandler {
    fn handle(&self) -> ThreadedIrqReturn {
        self.0.irq()
    }

    fn handle_threaded(&self) -> IrqReturn {
        self.0.irq_thread()
    }
}

/// The errors `ISTA` reported on a command and its data.
#[derive(Clone, Copy)]
pub(crate) struct Errors {
    pub(crate) cmd: Option<ErrorKind>,
    pub(crate) data: Option<ErrorKind>,
}

impl Errors {
    /// Returns whether the command or its data failed.
    pub(crate) fn any(&self) -> bool {
        self.cmd.is_some() || self.data.is_some()
    }

    /// Fails the request with `ETIMEDOUT` when the controller stayed busy after the command
    /// completed.
    ///
    /// The error goes on its data if it has any, else on the command, unless the request failed
    /// already.
    fn set_not_ready(&mut self, mrq: &Request) {
        match mrq.data() {
            Some(d) if d.error().is_none() => {
                d.set_error(ETIMEDOUT);
                self.data = Some(ErrorKind::NotReady);
            }
            None if mrq.cmd().error().is_none() => {
                mrq.cmd().set_error(ETIMEDOUT);
                self.cmd = Some(ErrorKind::NotReady);
            }
            _ => {}
        }
    }
}

/// What became of a request's data.
#[derive(Clone, Copy, Default)]
pub(crate) struct DataResult {
    /// Bytes reported as transferred.
    xfered: u32,
    /// Bytes to copy from the bounce buffer into the request once the controller is done.
    copy_back: u32,
    /// A flush that did not finish quiesced the controller, and it still showed activity.
    busy: bool,
}

impl DataResult {
    /// Creates the result with `xfered` bytes reported as transferred, `copy_back` to copy back,
    /// `busy` as above.
    fn new(xfered: u32, copy_back: u32, busy: bool) -> Self {
        Self {
            xfered,
            copy_back,
            busy,
        }
    }
}

/// Records the errors `ISTA` reports on the command and its data.
///
/// Returns their kinds.
fn set_errors(mrq: &Request, ista: regs::ISTA) -> Errors {
    let cmd = mrq.cmd();

    let cmd_error = if ista.rxfifo_full() || ista.txfifo_empty() {
        Some((EIO, ErrorKind::Fifo))
    } else if ista.resp_err_crc() {
        Some((EILSEQ, ErrorKind::CmdCrc))
    } else if ista.resp_timeout() {
        Some((ETIMEDOUT, ErrorKind::CmdTimeout))
    } else {
        None
    };
    if let Some((e, _)) = cmd_error {
        cmd.set_error(e);
    }

    let data_error = match mrq.data() {
        Some(data) if ista.data_err_crc() => {
            data.set_error(EILSEQ);
            Some(ErrorKind::DataCrc)
        }
        Some(data) if ista.data_timeout() => {
            data.set_error(ETIMEDOUT);
            Some(ErrorKind::DataTimeout)
        }
        _ => None,
    };

    Errors {
        cmd: cmd_error.map(|(_, k)| k),
        data: data_error,
    }
}

impl Sdhc {
    /// Handles the hard IRQ.
    ///
    /// Claims a command's interrupt and hands `ISTA` to the thread.
    ///
    /// Unlike the C driver it does not write the command's error here: the request is only
    /// reachable under a sleeping lock, so the thread applies the errors (first thing, before
    /// anything looks at them).
    fn irq(&self) -> ThreadedIrqReturn {
        let ictl = self.regs.read(regs::ICTL).into_raw();
        let ista = self.regs.read(regs::ISTA).into_raw();
        let sources = IrqSources::new(ictl, ista);

        if sources.cmd {
            self.irq_seq.store(self.started_seq.load(Relaxed), Relaxed);
            self.irq_ista.store(ista, Release);
            return ThreadedIrqReturn::WakeThread;
        }
        self.irq_without_cmd(sources)
    }

    /// Returns the hard IRQ handler's answer to an interrupt that no command's source raised.
    ///
    /// The SDIO card's interrupt alone wakes the thread too (`irq_ista` 0: no command), which
    /// signals it to the MMC core (`sdio_irq.rs`): its state is behind a sleeping lock on
    /// PREEMPT_RT, and the line stays masked until the thread has masked DAT1.
    fn irq_without_cmd(&self, sources: IrqSources) -> ThreadedIrqReturn {
        if !sources.sdio {
            return ThreadedIrqReturn::None;
        }
        self.irq_ista.store(0, Release);
        ThreadedIrqReturn::WakeThread
    }

    /// Returns `ISTA` if a command's interrupt latched while DAT1 held the line high, else 0.
    ///
    /// The SoC's interrupt is a rising edge: such a command raised none, and clearing DAT1 leaves
    /// the line high, so the thread that serviced DAT1 takes the command too.
    fn cmd_behind_dat1(&self) -> u32 {
        let ictl = self.regs.read(regs::ICTL).into_raw();
        let ista = self.regs.read(regs::ISTA).into_raw();
        if !IrqSources::new(ictl, ista).cmd {
            return 0;
        }
        self.irq_seq.store(self.started_seq.load(Relaxed), Relaxed);
        ista
    }

    /// Takes the request the interrupt is for out of `cur`.
    ///
    /// `None` when it is no longer in flight (something else completed it first).
    ///
    /// The command's interrupts are then disabled, unless a later request is in flight (whose
    /// own they are): left latched and enabled, a level-triggered line would raise the
    /// interrupt again at once.
    fn take_for_irq(&self, seq: u32) -> Option<InFlight> {
        let mut cur = self.cur.lock();
        if cur.as_ref().is_some_and(|f| f.seq == seq) {
            return cur.take();
        }
        if cur.is_none() {
            // Under the lock: no command can start meanwhile (`request` sends under it). Only
            // the enables: `ISTA` may be what a completion running outside the lock (the
            // deadline's) still reads; the next command clears it before it enables anything.
            self.hw().mask_cmd_irqs();
        }
        drop(cur);
        self.debugfs.stats().record_late_interrupt();
        dev_dbg!(
            self.dev,
            "interrupt for request {} that is no longer in flight\n",
            seq
        );
        None
    }

    /// Handles the threaded IRQ.
    ///
    /// Finishes the request the interrupt is for.
    fn irq_thread(&self) -> IrqReturn {
        let ista = self.irq_ista.load(Acquire);
        // First signals a latched SDIO card interrupt.
        let ista = self.service_sdio(ista);
        if ista == 0 {
            return IrqReturn::Handled;
        }
        if let Some(f) = self.take_for_irq(self.irq_seq.load(Relaxed)) {
            self.complete(f, ista);
        }
        IrqReturn::Handled
    }

    /// Signals a latched SDIO card interrupt (`SdioIrqs::service`, which leaves the probe of the
    /// silicon's DAT1 latch to the next request), and returns the command's `ISTA`.
    ///
    /// `ista` as the hard handler saw it, or, for an interrupt of DAT1 alone, a command's status
    /// that latched behind it.
    fn service_sdio(&self, ista: u32) -> u32 {
        let signalled = self.sdio.service(&self.regs);
        if signalled && ista == 0 {
            return self.cmd_behind_dat1();
        }
        ista
    }

    /// Returns the status of the command in flight once the controller is done with it.
    ///
    /// `ista` as its interrupt showed it, with the error bits that latched since. The silicon may
    /// latch a command's error bits after its completion bit (a write's CRC status after
    /// `DMA_DONE`): unless `ista` has an error already, this waits until the controller is idle and
    /// reads `ISTA` again. `Err` if the controller stays busy longer than the command allows
    /// ([`Self::ready_wait`]).
    ///
    /// A write that failed may still have left the card programming the blocks it took before
    /// the error (DAT0 low): that is waited for too, within the same bound, so that the core's
    /// next command (CMD12, CMD13) finds the controller ready rather than reset under a busy
    /// card; the request fails with its error either way.
    fn final_status(&self, mrq: &Request, ista: u32) -> (u32, Result) {
        let (hw, opcode, wait) = (self.hw(), mrq.cmd().opcode(), self.ready_wait(mrq));
        if ista & ERROR_IRQS != 0 {
            if mrq.data().is_some_and(|d| d.is_write()) {
                // A card still busy after the bound is the next command's to handle
                // (`ready_for_cmd` resets the controller); the warning says so.
                let _ = hw.wait_card_released(opcode, wait);
            }
            return (ista, Ok(()));
        }
        let ready = hw.wait_cmd_ready(opcode, wait).and_then(|()| {
            if mrq.cmd().resp_busy() {
                hw.wait_card_released(opcode, wait)
            } else {
                Ok(())
            }
        });
        let late = self.regs.read(regs::ISTA).into_raw() & LATE_ERROR_IRQS;
        if late != 0 {
            self.debugfs.stats().record_late_status();
        }
        (ista | late, ready)
    }

    /// Returns how long the controller may stay busy after `mrq`'s completion interrupt.
    ///
    /// The C driver's 100 ms, or the card's own busy time after a write or an R1b command if that
    /// is longer (`CMD_BUSY` may cover it: [`logic::ready_wait_ms`]).
    pub(crate) fn ready_wait(&self, mrq: &Request) -> Delta {
        let cmd = mrq.cmd();
        let write_block_ms = mrq.data().filter(|d| d.is_write()).map_or(0, |d| {
            let (ns, clks) = d.timeout();
            logic::block_timeout_ms(ns, clks, self.bus_hz.load(Relaxed))
        });
        let ms = logic::ready_wait_ms(write_block_ms, cmd.resp_busy(), cmd.busy_timeout_ms());
        Delta::from_millis(i64::from(ms))
    }

    /// Finishes the transfer of `f`, whose interrupt showed `ista`, reads the response and
    /// completes the request.
    pub(crate) fn complete(&self, f: InFlight, ista: u32) {
        let InFlight { mut mrq, slot, .. } = f;
        let (ista, ready) = self.final_status(&mrq, ista);
        let mut errors = set_errors(&mrq, regs::ISTA::from_raw(ista));
        if ready.is_err() {
            errors.set_not_ready(&mrq);
        }
        if errors.any() {
            dev_dbg!(
                self.dev,
                "CMD{} error, ISTA: 0x{:08x}\n",
                mrq.cmd().opcode(),
                ista
            );
        }
        let hw = self.hw();
        // After any error the controller's DMA may still be moving blocks (a response CRC
        // error is reported while the data phase goes on): stop it before the request's
        // pages are unmapped or the bounce buffer is used again (`drain.rs`). The C driver
        // resets only for EIO/ETIMEDOUT on the command.
        let quiesce = errors.any();
        let idle = !quiesce || {
            self.settle_before_reset(mrq.cmd().opcode());
            hw.read_response_into(mrq.cmd());
            self.quiesce()
        };
        let bounced = slot.is_some();
        if !idle && !bounced {
            self.hold_direct();
        }
        let result = self.finish_data(&mut mrq, bounced, quiesce, &mut errors);
        let idle = idle && !result.busy;
        if quiesce {
            // The card may be left in its data state: the request's stop ends it (`stop.rs`).
            self.stop_after_error(&mrq, &errors);
        } else {
            hw.read_response_into(mrq.cmd());
            if mrq.data().is_some() {
                // Clear the FIFOs after completing data transfers to prevent corrupting data on
                // write access. It's not clear why this is needed (for reads and writes), but it
                // mimics what the BSP kernel did.
                hw.clear_fifo();
            }
        }

        // The controller is done with the bounce buffer: hand the read data over, unless the
        // controller may still write it.
        let handed_over = match slot {
            Some(slot) if idle => self.hand_over(&mrq, slot, result.copy_back),
            Some(slot) => {
                // Failed already (it was quiesced): nothing to copy back.
                self.hold_back(slot);
                true
            }
            None => true,
        };
        self.record(&mrq, bounced, errors, result, handed_over);
        hw.disable_irqs();
        mrq.done();
    }

    /// Hands the data of `mrq` over once the controller is done with its bounce buffer `slot`.
    ///
    /// A read's `copy_back` bytes are copied back (now, or in `post_req` with two buffers). If that
    /// fails, so does the data, with nothing transferred. Returns whether it succeeded.
    fn hand_over(&self, mrq: &DmaRequest, slot: Slot, copy_back: u32) -> bool {
        let Err(e) = self.bounce.complete(&self.dev, mrq, slot, copy_back) else {
            return true;
        };
        if let Some(d) = mrq.data() {
            d.set_error(e);
            d.set_bytes_xfered(0);
        }
        false
    }

    /// Ends the data phase of `mrq`.
    ///
    /// Flushes the read FIFO and waits for its last words (not after a quiescing reset, which
    /// emptied it; a flush that does not finish fails the data with `EIO`, counted in `errors`),
    /// unmaps the data and reports what was transferred and what is to be copied back.
    fn finish_data(
        &self,
        mrq: &mut DmaRequest,
        bounced: bool,
        quiesced: bool,
        errors: &mut Errors,
    ) -> DataResult {
        let Some(is_read) = mrq.data().map(|d| d.is_read()) else {
            return DataResult::default();
        };
        let failed = mrq.data().is_some_and(|d| d.error().is_some());
        let mut busy = false;
        if !quiesced && !failed && !self.soc.hardware_flush_all_cmds && is_read {
            let wait = self.debugfs.read_flush_wait();
            if let Err(e) = self.hw().flush_rx_fifo(mrq.cmd().opcode(), wait) {
                if let Some(d) = mrq.data() {
                    d.set_error(e);
                }
                errors.data = Some(ErrorKind::Flush);
                // The engine may still be moving the words: stop it before the pages are
                // unmapped or the buffer freed (a bounce buffer is held back by the caller).
                busy = !self.quiesce();
                if busy && !bounced {
                    self.hold_direct();
                }
            }
        }
        let data_error = mrq.data().is_some_and(|d| d.error().is_some());

        // Data that failed is unmapped too; data `pre_req` mapped is unmapped by `post_req`.
        mrq.end_transfer();

        // Unlike the C driver, nothing counts as transferred when the command itself failed:
        // after a response timeout the card never sent (or took) the data, and the MMC core
        // would complete the request with whatever the buffer held.
        let cmd_error = mrq.cmd().error().is_some();
        let xfered = logic::bytes_xfered(cmd_error, data_error, mrq.data_len());
        if let Some(d) = mrq.data() {
            d.set_bytes_xfered(xfered);
        }
        let copy_back = if bounced {
            logic::copy_back_len(is_read, cmd_error, data_error, xfered)
        } else {
            0
        };
        DataResult::new(xfered, copy_back, busy)
    }

    /// Counts the request's outcome in the statistics.
    ///
    /// A request whose data could not be handed over (`handed_over` false) counts as failed in its
    /// setup, with nothing transferred.
    pub(crate) fn record(
        &self,
        mrq: &DmaRequest,
        bounced: bool,
        mut errors: Errors,
        mut result: DataResult,
        handed_over: bool,
    ) {
        if !handed_over {
            errors.data = Some(ErrorKind::Setup);
            result = DataResult::default();
        }
        let mut stats = self.debugfs.stats();
        match mrq.data() {
            Some(d) => stats.record(&crate::logic::Outcome {
                len: mrq.data_len(),
                write: !d.is_read(),
                bounced,
                cmd_error: errors.cmd,
                data_error: errors.data,
                xfered: result.xfered,
                copied_back: result.copy_back,
                pre_mapped: mrq.pre_mapped(),
            }),
            None => stats.record_command(errors.cmd),
        }
    }
}

impl Sdhc {
    /// Completes `f`, past its deadline without an interrupt.
    ///
    /// As its interrupt would have if `ISTA` shows it completed ([`deadline::overdue`]), else with
    /// `ETIMEDOUT`.
    pub(crate) fn expire(&self, f: InFlight) {
        let ista = match deadline::overdue(&self.hw(), &f.mrq) {
            Overdue::Completed(ista) => ista,
            Overdue::Hung => {
                self.time_out(f);
                return;
            }
        };
        dev_warn!(
            self.dev,
            "CMD{} completed without its interrupt (ISTA 0x{:08x}): completed at its {} ms deadline\n",
            f.mrq.cmd().opcode(),
            ista,
            f.deadline.ms()
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
            deadline.ms(),
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
