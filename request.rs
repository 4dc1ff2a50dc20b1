// SPDX-License-Identifier: GPL-2.0

//! Starting a request.
//!
//! Its data path, then its command.

use kernel::{
    prelude::*,
    sync::atomic::{
        Relaxed,
        Release, //
    }, //
};

use crate::mmc::{
    DmaRequest,
    Host,
    Request, //
};

use crate::{
    bounce::Slot,
    controller::{
        InFlight,
        Sdhc,
        SdhcHost, //
    },
    deadline::Deadline,
    hw::CmdInfo, //
};

/// A request ready to start.
struct Prepared {
    /// What the controller needs of its command.
    cmd: CmdInfo,
    /// The bounce buffer its data goes through, if any.
    slot: Option<Slot>,
}

impl SdhcHost {
    /// Handles the `request` callback.
    ///
    /// Sets up the data and starts the command, or fails the request with the last `set_ios` error
    /// or the setup error.
    pub(crate) fn start_request(host: &Host<Self>, mrq: Request) {
        let sdhc = &host.data().sdhc;
        let set_ios_error = host.data().sdhc.bus.lock().set_ios_error;
        let mut mrq = DmaRequest::new(mrq);
        let prepared = match set_ios_error {
            Some(e) => Err(e),
            None => sdhc.prepare(&mut mrq),
        };
        match prepared {
            Err(e) => {
                sdhc.debugfs.stats().record_setup_error();
                mrq.cmd().set_error(e);
                mrq.done();
            }
            Ok(prepared) => Self::send(host, mrq, prepared),
        }
    }

    /// Hands `mrq`, set up as `prepared`, to the controller.
    ///
    /// In flight from now on, its deadline armed, its command sent.
    fn send(host: &Host<Self>, mrq: DmaRequest, prepared: Prepared) {
        let sdhc = &host.data().sdhc;
        let Prepared { cmd, slot } = prepared;
        let deadline = Deadline::new(&mrq, sdhc.bus_hz.load(Relaxed), &sdhc.bus_lines);
        let seq = sdhc.started_seq.load(Relaxed).wrapping_add(1);
        let mut cur = sdhc.cur.lock();
        if cur.is_none() {
            // The probe of the DAT1 latch, if an SDIO card interrupt serviced since the last
            // command left it one (nothing to do otherwise): no command is in flight, and none
            // starts until it is done.
            sdhc.probe_dat1_latch();
        }
        // Armed before the request can complete; an expiry that finds a later request in
        // flight, or this one before it is due, arms again for the rest
        // (`SdhcHost::deadline_expired`).
        host.data().arm_deadline(&deadline);
        *cur = Some(InFlight {
            mrq,
            slot,
            seq,
            deadline,
        });
        sdhc.started_seq.store(seq, Release);
        // Sent under the lock: neither the deadline nor an interrupt for an earlier request can
        // complete this one, and free its memory, before its command is written (`start_cmd`
        // may sleep first).
        sdhc.stall_before_send();
        let sent = sdhc.hw().start_cmd(&cmd);
        let unsent = match sent {
            Ok(()) => {
                if let Some(f) = &mut *cur {
                    f.deadline.restart();
                }
                None
            }
            Err(e) => cur.take().map(|f| (f, e)),
        };
        drop(cur);
        if let Some((f, e)) = unsent {
            sdhc.fail_unsent(f, e);
        }
    }
}

impl Sdhc {
    /// Completes `f`, whose command could not be sent, with `error`.
    ///
    /// Nothing reached the controller's DMA engine, its bounce buffer is free again and its data
    /// unmapped.
    fn fail_unsent(&self, f: InFlight, error: Error) {
        let InFlight { mrq, slot, .. } = f;
        mrq.cmd().set_error(error);
        if let Some(d) = mrq.data() {
            d.set_bytes_xfered(0);
        }
        if let Some(slot) = slot {
            self.bounce.release(slot);
        }
        self.debugfs.stats().record_setup_error();
        mrq.done();
    }

    /// Injects the `send_stall_ms` fault.
    ///
    /// Sleeps before the command is sent, as a preempted thread would.
    fn stall_before_send(&self) {
        let ms = self.debugfs.take_send_stall_ms();
        if ms != 0 {
            kernel::time::delay::fsleep(kernel::time::Delta::from_millis(i64::from(ms)));
        }
    }

    /// Sets up the request's data and collects what `start_cmd` needs.
    fn prepare(&self, mrq: &mut DmaRequest) -> Result<Prepared> {
        let (dma_addr, slot) = if mrq.data().is_some() {
            self.release_held();
            let force = self.debugfs.force_bounce();
            let setup = self
                .bounce
                .set_up(&self.dev, mrq, force, &|| self.debugfs.take_copy_in_fault())?;
            let addr = u32::try_from(setup.dma_addr).map_err(|_| {
                dev_err!(
                    self.dev,
                    "DMA address {:#x} beyond 32 bits\n",
                    setup.dma_addr
                );
                mrq.unmap();
                if let Some(slot) = setup.slot {
                    self.bounce.release(slot);
                }
                EIO
            })?;
            (Some(addr), setup.slot)
        } else {
            (None, None)
        };
        Ok(Prepared {
            cmd: CmdInfo::new(mrq.cmd(), mrq.data(), dma_addr),
            slot,
        })
    }
}
