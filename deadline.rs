// SPDX-License-Identifier: GPL-2.0

//! The software deadline of a request: what happens when no interrupt came in time.
//!
//! The MMC core never times a request out for a host without a command queue engine, and the
//! controller can freeze without raising an interrupt (upstream c82efcaad2a4); an edge that
//! the interrupt controller missed is lost for good. `request` arms the host's watchdog with
//! a deadline sized from the request (`logic::request_deadline_ms`); when it fires and the
//! request that armed it is still in flight past its deadline, the controller is reset (which
//! stops its DMA) and the request completes with `ETIMEDOUT`, which the core retries. An
//! interrupt raised before the reset finds the request gone and is counted, nothing else.

use kernel::{
    io::Io,
    prelude::*,
    time::{Instant, Monotonic},
};

use crate::{
    controller::{InFlight, Sdhc},
    hw,
    irq::{DataResult, Errors},
    logic::ErrorKind,
    regs,
    watchdog::Expiry,
};

impl Expiry for Sdhc<'_> {
    fn expired(&self) {
        if let Some(f) = self.take_expired() {
            self.time_out(f);
        }
    }
}

impl<'a> Sdhc<'a> {
    /// The request in flight, taken out of `cur`, if its deadline has passed. An expiry armed
    /// for an earlier request (completed since) finds a later one before its time, or none.
    fn take_expired(&self) -> Option<InFlight<'a>> {
        let mut cur = self.cur.lock();
        let f = cur.as_ref()?;
        let now = Instant::<Monotonic>::now();
        if now - f.started < f.deadline {
            return None;
        }
        cur.take()
    }

    /// Quiesces the controller and completes `f` with `ETIMEDOUT`.
    fn time_out(&self, f: InFlight<'a>) {
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
            u32::try_from(deadline.as_millis()).unwrap_or(u32::MAX),
            ista,
            stat
        );
        // Stop the controller and its DMA before the request's memory is handed back.
        hw::reset(&self.regs);
        self.hw().disable_irqs();

        mrq.cmd().set_error(ETIMEDOUT);
        if let Some(d) = mrq.data() {
            d.set_bytes_xfered(0);
        }
        let errors = Errors {
            cmd: Some(ErrorKind::Deadline),
            data: None,
        };
        if let Some(slot) = slot {
            // Nothing is copied back: the buffer is free again.
            self.bounce.release(slot);
        }
        self.record(&mrq, slot.is_some(), errors, DataResult::default());
        // Unmapped, then completed.
        mrq.done();
    }
}
