// SPDX-License-Identifier: GPL-2.0

//! The controller's reset after an error, and the memory its DMA engine may still write.
//!
//! A failed command can leave the DMA engine moving blocks (a response CRC error is reported
//! while the data phase goes on), and nothing documents when a reset stops it or a bit that
//! shows it idle. The driver resets the controller, waits [`crate::hw::RESET_DRAIN_US`], then
//! polls `STAT` for the same time until it shows neither a busy command path nor words in the
//! FIFOs ([`crate::hw::Hw::quiesce`]). If the controller still shows activity then, the
//! request's memory is not handed to anyone who could use it while the engine may write it:
//!
//! - a bounce buffer is held back: the request fails (nothing is copied back), and the buffer
//!   is freed only when a later request finds the controller idle ([`Sdhc::release_held`]), or
//!   after another reset once [`logic::HELD_MAX_TRIES`] requests in a row have not;
//! - the pages of a direct request are handed back only when the controller shows idle, for
//!   at most [`DIRECT_HOLD_MS`] more; the request fails.
//!
//! A drain that `STAT` does not show cannot be seen by any driver: the bound is all there is.

use kernel::{
    prelude::*,
    sync::atomic::Relaxed,
    time::Delta, //
};

use crate::{
    bounce::Slot,
    controller::Sdhc,
    logic::{
        self,
        HeldRelease, //
    }, //
};

/// How long a direct request's pages wait, at most, for a controller that still shows activity
/// after the quiescing wait.
pub(crate) const DIRECT_HOLD_MS: i64 = 100;

/// How long a request waits, at most, for the controller to show idle before a bounce buffer
/// held back after an error is freed.
const RELEASE_WAIT_MS: i64 = 100;

impl Sdhc {
    /// Waits, at most [`WAIT_CMD_READY_TIMEOUT`](crate::hw::WAIT_CMD_READY_TIMEOUT), for the
    /// controller to finish the failed command `opcode` before its response is read and it is
    /// reset.
    ///
    /// Finished is `STAT.CMD_BUSY` clear and `ESTA[13:11]` 0. Amlogic's driver waits so on each of
    /// its error paths (`aml_sdhc_wait_ready()` before `aml_sdhc_host_reset()`), the C driver in
    /// its interrupt thread (`meson_mx_sdhc_wait_cmd_ready()`).
    ///
    /// An error can latch while the DMA engine still finishes the transfer, and a reset then may
    /// leave it hung. A controller still busy after the bound is reset anyway (the warning says
    /// so).
    pub(crate) fn settle_before_reset(&self, opcode: u32) {
        let _ = self
            .hw()
            .wait_cmd_ready(opcode, crate::hw::WAIT_CMD_READY_TIMEOUT);
    }

    /// Resets the controller after an error and waits for its DMA engine to drain (`Hw::quiesce`),
    /// before any page is unmapped or any bounce buffer used again.
    ///
    /// Returns whether the controller showed idle afterwards.
    pub(crate) fn quiesce(&self) -> bool {
        let (waited, idle) = self.hw().quiesce(crate::hw::RESET_DRAIN_US);
        self.debugfs.stats().record_quiesce(waited, idle);
        idle
    }

    /// Waits, at most [`DIRECT_HOLD_MS`], for the controller to show idle before a direct request's
    /// pages are handed back.
    ///
    /// Called when the controller did not show idle after quiescing for the request whose pages
    /// were mapped direct.
    pub(crate) fn hold_direct(&self) {
        if !self.hw().wait_idle(Delta::from_millis(DIRECT_HOLD_MS)) {
            dev_err!(
                self.dev,
                "controller still busy {} ms after its reset: the DMA engine may write into the pages of a failed request\n",
                DIRECT_HOLD_MS
            );
        }
    }

    /// Keeps bounce buffer `slot` from every later request until the controller shows idle.
    ///
    /// Called when the controller did not show idle after quiescing for the request on that buffer.
    pub(crate) fn hold_back(&self, slot: Slot) {
        // Holding back (completing a request) and releasing (starting the next) never run at
        // the same time: the MMC core starts a request only after the last one completed.
        let held = self.held_slots.load(Relaxed);
        self.held_slots.store(held | slot.bit(), Relaxed);
        self.debugfs.stats().record_held_back();
        dev_warn!(
            self.dev,
            "controller still busy after its reset: bounce buffer {} held back\n",
            slot.index()
        );
    }

    /// Frees the bounce buffers held back after an error once the controller shows idle, waiting
    /// for that at most [`RELEASE_WAIT_MS`].
    ///
    /// A buffer stays held while it does not, for at most [`logic::HELD_MAX_TRIES`] requests in a
    /// row, after which the controller is reset once more and the buffers freed.
    pub(crate) fn release_held(&self) {
        if self.held_slots.load(Relaxed) == 0 {
            return;
        }
        let idle = self.hw().wait_idle(Delta::from_millis(RELEASE_WAIT_MS));
        match logic::held_release(idle, self.held_tries.load(Relaxed)) {
            HeldRelease::Keep(tries) => {
                self.held_tries.store(tries, Relaxed);
                return;
            }
            HeldRelease::Force => self.force_release(),
            HeldRelease::Free => {}
        }
        self.held_tries.store(0, Relaxed);
        let held = self.held_slots.xchg(0, Relaxed);
        for slot in Slot::in_mask(held) {
            self.bounce.release(slot);
        }
    }

    /// Resets the controller once more when the host is removed, so that its DMA engine is done
    /// with the bounce buffers still held back before they are freed.
    ///
    /// The host is removed and the controller goes with its last reference, and with it the bounce
    /// buffers: any still held back are freed then. This waits for the controller to show idle, at
    /// most [`RELEASE_WAIT_MS`], and says so if it is not.
    pub(crate) fn quiesce_held(&self) {
        if self.held_slots.load(Relaxed) == 0 {
            return;
        }
        let idle = self.quiesce() || self.hw().wait_idle(Delta::from_millis(RELEASE_WAIT_MS));
        if !idle {
            dev_err!(
                self.dev,
                "controller still busy at removal: held bounce buffers freed with it\n"
            );
        }
    }

    /// Resets the controller once more before the held buffers are freed, and says so.
    ///
    /// Called when the controller has shown activity through [`logic::HELD_MAX_TRIES`] requests
    /// since buffers were held back: a `STAT` that never reads idle, not a DMA engine writing for a
    /// second.
    fn force_release(&self) {
        let idle = self.quiesce();
        self.debugfs.stats().record_held_forced();
        dev_err!(
            self.dev,
            "controller shows activity through {} requests (STAT 0x{:08x}, idle after another reset: {}): held bounce buffers freed\n",
            logic::HELD_MAX_TRIES,
            self.regs.read(crate::regs::STAT).into_raw(),
            idle
        );
    }
}
