// SPDX-License-Identifier: GPL-2.0

//! The end of a command, by interrupt or by timer, and the completion of a request.
//!
//! The interrupt's handler latches and acknowledges the status, its thread reads the response
//! and starts the next command or completes the request. The timer ends a command the
//! controller never reported. After a request completes, the bus goes to the next slot's
//! waiting request.

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
        Arc,
        MutexGuard, //
    },
    time::{
        Delta,
        Instant,
        Monotonic, //
    }, //
};

use crate::kernel_ext::workqueue::timer::TimerRef;
use crate::mmc::{
    DmaRequest,
    Request, //
};

use crate::{
    host::{
        Bus,
        Cur,
        Path,
        Sdio,
        Stage,
        Watchdog, //
    },
    hw::{
        self,
        Status, //
    },
    logic::{
        stats::{
            ErrorKind,
            Outcome, //
        },
        timeout::{
            on_expiry,
            Expiry, //
        },
        transfer::{
            bytes_xfered,
            copy_back_len, //
        }, //
    },
    regs,
    request::{
        command,
        start,
        start_waiting, //
    }, //
};

/// The controller's interrupt.
pub(crate) struct IrqHandler(pub(crate) Arc<Sdio>);

impl ThreadedHandler for IrqHandler {
    /// Latches `IRQS` for the thread and acknowledges every pending interrupt.
    ///
    /// An interrupt with no command's end in `IRQS` is handled all the same, as
    /// `meson-mx-sdio.c` handles it: its driver notes command interrupts that seem to come twice
    /// on the silicon, and the line serves every slot, which the spurious interrupt detector
    /// would switch off with it.
    fn handle(&self) -> ThreadedIrqReturn {
        let regs = &self.0.regs;
        let irqs = regs.read(regs::IRQS);
        regs.write_reg(irqs);
        if irqs.cmd_int() {
            self.0.irq_seq.store(self.0.started.load(Relaxed), Relaxed);
            self.0.irqs.store(irqs.into_raw(), Release);
            ThreadedIrqReturn::WakeThread
        } else {
            ThreadedIrqReturn::Handled
        }
    }

    fn handle_threaded(&self) -> IrqReturn {
        cmd_done(&self.0);
        IrqReturn::Handled
    }
}

/// Returns whether any command of `mrq` reported an error.
fn cmd_failed(mrq: &Request) -> bool {
    [Stage::Sbc, Stage::Cmd, Stage::Stop]
        .into_iter()
        .filter_map(|s| command(mrq, s))
        .any(|c| c.error().is_some())
}

/// Completes the request in `cur`, taken off the bus `bus`.
///
/// It is ended ([`end`]) while the bus is held, so that no other slot's request reaches the
/// controller or the bounce buffer before, then the next waiting request is started, and the
/// request completed once the lock is released.
fn finish(sdio: &Sdio, mut bus: MutexGuard<'_, Bus>, cur: Cur) {
    let mrq = end(sdio, &mut bus, cur);
    let failed = start_waiting(sdio, &mut bus);
    drop(bus);
    mrq.done();
    failed.complete(sdio);
}

/// Ends the request in `cur`, taken off `bus`, and returns it to complete.
///
/// After an error the controller is soft-reset first. The data counts as transferred, and a read
/// through the bounce buffer is copied into the request, only when nothing reported an error
/// ([`bytes_xfered`], [`copy_back_len`]). The request is counted in the statistics.
fn end(sdio: &Sdio, bus: &mut Bus, cur: Cur) -> DmaRequest {
    let (mut mrq, path) = (cur.mrq, cur.path);
    let (mut cmd_error, mut data_error) = (cur.cmd_error, cur.data_error);
    let cmd_failed = cmd_failed(&mrq);
    let data_failed = mrq.data().is_some_and(|d| d.error().is_some());
    if cmd_failed || data_failed {
        sdio.quiesce_after_error(bus);
    }
    mrq.end_transfer();
    // An error no step of the driver noted: counted as the setup's.
    if cmd_failed {
        cmd_error = cmd_error.or(Some(ErrorKind::Setup));
    }
    let mut outcome = None;
    if let Some(data) = mrq.data() {
        let len = data.len();
        let xfered = bytes_xfered(cmd_failed, data_failed, len);
        data.set_bytes_xfered(xfered);
        let mut copied_back = 0;
        if let (Path::Bounce, Some(bounce)) = (path, sdio.bounce.as_ref()) {
            let copy = copy_back_len(data.is_read(), cmd_failed, data_failed, xfered);
            if copy != 0 {
                copied_back = mrq.copy_from_buffer(bounce, copy);
                if copied_back != copy {
                    data.set_bytes_xfered(0);
                    data.set_error(EIO);
                    data_error = data_error.or(Some(ErrorKind::Setup));
                }
            }
        }
        if data_failed {
            data_error = data_error.or(Some(ErrorKind::Setup));
        }
        outcome = Some(Outcome {
            len,
            write: data.is_write(),
            bounced: path == Path::Bounce,
            cmd_error,
            data_error,
            xfered: if data_error.is_some() { 0 } else { xfered },
            copied_back,
            pre_mapped: mrq.pre_mapped(),
        });
    }
    {
        let mut stats = sdio.stats.lock();
        match &outcome {
            Some(o) => stats.req.record(o),
            None => stats.req.record_command(cmd_error),
        }
    }
    mrq
}

/// Runs the interrupt's thread once the current command ended.
///
/// Reads its response and judges it by the CRC status the handler latched (a command with data
/// by its data's CRC16, one without by its response's CRC7), then starts the next command of
/// the request (the command after SET_BLOCK_COUNT; STOP_TRANSMISSION after a multiple-block
/// transfer without SET_BLOCK_COUNT or with an error), or completes it.
fn cmd_done(sdio: &Sdio) {
    let mut guard = sdio.bus.lock();
    let bus = &mut *guard;
    let timers = &bus.timers;
    // A command the timer ended already.
    let Some(cur) = &mut bus.cur else {
        return;
    };
    let status = Status(sdio.irqs.load(Acquire));
    // The interrupt of a command the timer ended, whose thread ran after the next one started.
    if sdio.irq_seq.load(Relaxed) != cur.seq {
        return;
    }
    let stage = cur.stage;
    let next = match command(&cur.mrq, stage) {
        None => None,
        Some(cmd) => {
            hw::read_response(&sdio.regs, cmd);
            let data = if stage == Stage::Cmd {
                cur.mrq.data()
            } else {
                None
            };
            let ok = status.crc_ok(data.is_some(), cur.without_crc7);
            match (ok, data) {
                (true, Some(d)) => d.set_bytes_xfered(d.len()),
                (false, Some(d)) => {
                    d.set_error(EILSEQ);
                    cur.data_error = cur.data_error.or(Some(ErrorKind::DataCrc));
                }
                (true, None) => {}
                (false, None) => {
                    cmd.set_error(EILSEQ);
                    cur.cmd_error = cur.cmd_error.or(Some(ErrorKind::CmdCrc));
                }
            }
            match stage {
                Stage::Sbc if cmd.error().is_none() => Some(Stage::Cmd),
                Stage::Cmd
                    if cmd.is_multi_block()
                        && (cur.mrq.sbc().is_none()
                            || cmd.error().is_some()
                            || data.is_some_and(|d| d.error().is_some()))
                        && cur.mrq.stop().is_some() =>
                {
                    Some(Stage::Stop)
                }
                _ => None,
            }
        }
    };
    match next {
        Some(stage) => start(sdio, cur, timers, stage),
        None => {
            if let Some(cur) = guard.cur.take() {
                finish(sdio, guard, cur);
            }
        }
    }
}

/// Returns the time left until `deadline`, zero once it passed.
pub(crate) fn remaining(deadline: Instant<Monotonic>) -> Delta {
    let left = deadline - Instant::<Monotonic>::now();
    if left.is_negative() {
        Delta::from_millis(0)
    } else {
        left
    }
}

/// Handles the firing of a slot's timer.
///
/// The command on the bus, whichever slot's, times out if its deadline passed; the slot's own
/// command not yet at its deadline has the timer armed again for the rest ([`on_expiry`]).
pub(crate) fn expired(timer: &TimerRef<Watchdog>) {
    let sdio = &timer.data().sdio;
    let mut guard = sdio.bus.lock();
    let (cur_port, left) = match &guard.cur {
        Some(c) => (Some(c.port), remaining(c.deadline)),
        None => (None, Delta::ZERO),
    };
    match on_expiry(timer.data().port, cur_port, left.is_zero()) {
        Expiry::Ignore => return,
        Expiry::Rearm => {
            // Kept if a command started since has armed it.
            timer.arm_if_idle(left);
            return;
        }
        Expiry::TimeOut => {}
    }
    hw::disable_cmd_irq(&sdio.regs);
    let Some(mut cur) = guard.cur.take() else {
        return;
    };
    if let Some(cmd) = command(&cur.mrq, cur.stage) {
        dev_dbg!(
            sdio.dev,
            "Timeout on CMD{} (IRQS = {:#010x})\n",
            cmd.opcode(),
            sdio.regs.read(regs::IRQS).into_raw()
        );
        cmd.set_error(ETIMEDOUT);
        cur.cmd_error = cur.cmd_error.or(Some(ErrorKind::Deadline));
    }
    finish(sdio, guard, cur);
}
