// SPDX-License-Identifier: GPL-2.0

//! A read's last words in memory before its data is used (`dram_write_check`).
//!
//! Where a read ends nothing the controller signals is known to wait for DRAM's write
//! acknowledgements: the RX FIFO's count reaches 0 when the words have left it, maybe before
//! they are in memory (`ENHC` bit 17, "No Write DMA Response Check", set as the C driver and
//! Amlogic's driver program it; Amlogic's driver polls the DDR controller's channel status
//! afterwards, which this driver cannot reach). So the driver looks at memory itself: before a
//! read into a bounce buffer it writes marks into the read's last words and into one word of
//! each of the 64 bursts before them ([`TailMarks`](super::policy::TailMarks): the bursts may
//! reach memory in any order), after it waits until each of them changed
//! ([`tail_landed`](super::policy::tail_landed)), polling for at most [`TAIL_WAIT`], and fails
//! the read with `EIO` if they did not (the core retries it). A buffer whose read failed so is not used again until
//! its last words landed, for at most [`LATE_TAIL_WAIT`], so that a write arriving late cannot
//! land in the next request's data.
//!
//! This needs the data in a buffer the driver owns: with the check every read is bounced.

use kernel::{
    device::{
        Bound,
        Device, //
    },
    io::poll::read_poll_timeout,
    prelude::*,
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
    time::Delta, //
};

use super::{
    buffer::BounceBuffer,
    Bouncer,
    Slot, //
};

/// How long a read's last words may take to reach memory before the read fails.
pub(super) const TAIL_WAIT: Delta = Delta::from_millis(1);
/// How long a buffer whose read failed so waits for those words before it is used again.
pub(super) const LATE_TAIL_WAIT: Delta = Delta::from_millis(100);
/// The pause between two looks.
const TAIL_POLL: Delta = Delta::from_micros(10);

/// The marks of one read in a bounce buffer.
#[derive(Clone, Copy)]
pub(super) struct TailMark {
    len: u32,
    seq: u32,
}

/// The marks of one bounce buffer.
#[derive(Clone, Copy, Default)]
pub(super) struct TailState {
    /// The read the buffer was last handed over for.
    armed: Option<TailMark>,
    /// A read whose last words had not landed when it failed.
    late: Option<TailMark>,
}

/// The counts of the `bounce` debugfs file (wrapping).
pub(super) struct TailCounts {
    /// Reads whose last words were looked for.
    pub(super) checked: Atomic<u32>,
    /// Of them, those whose last words were not in memory at the first look.
    pub(super) waited: Atomic<u32>,
    /// Of them, those failed because it was not within [`TAIL_WAIT`].
    pub(super) late: Atomic<u32>,
}

impl TailCounts {
    /// Returns all 0.
    pub(super) fn new() -> Self {
        Self {
            checked: Atomic::new(0),
            waited: Atomic::new(0),
            late: Atomic::new(0),
        }
    }
}

/// Waits up to `timeout` for the last words of `mark` to land in `buf`.
fn wait_landed(dev: &Device<Bound>, buf: &BounceBuffer, mark: TailMark, timeout: Delta) -> Result {
    read_poll_timeout(
        || buf.tail_landed(dev, mark.len, mark.seq),
        |landed| *landed,
        TAIL_POLL,
        timeout,
    )
    .map(|_| ())
}

impl Bouncer {
    /// Waits, before buffer `slot` takes a request, for late last words of an earlier read.
    ///
    /// If they never come the request fails; the buffer is free for the next one.
    pub(super) fn settle_tail(
        &self,
        dev: &Device<Bound>,
        buf: &BounceBuffer,
        slot: Slot,
    ) -> Result {
        let late = self
            .tails
            .lock()
            .get_mut(slot.index())
            .and_then(|t| t.late.take());
        let Some(mark) = late else {
            return Ok(());
        };
        wait_landed(dev, buf, mark, LATE_TAIL_WAIT).inspect_err(|_| {
            dev_err!(
                dev,
                "bounce buffer {}: the last words of a {} byte read did not reach memory in {} ms\n",
                slot.index(),
                mark.len,
                LATE_TAIL_WAIT.as_millis()
            )
        })
    }

    /// Marks the last words of a read of `len` bytes into buffer `slot`, which is not mapped.
    pub(super) fn arm_tail(
        &self,
        dev: &Device<Bound>,
        buf: &BounceBuffer,
        slot: Slot,
        len: u32,
    ) -> Result {
        if !self.check_tail {
            return Ok(());
        }
        let mark = TailMark {
            len,
            seq: self.tail_seq.fetch_add(1, Relaxed),
        };
        buf.arm_tail(dev, mark.len, mark.seq)?;
        if let Some(t) = self.tails.lock().get_mut(slot.index()) {
            t.armed = Some(mark);
        }
        Ok(())
    }

    /// Forgets the marks of buffer `slot`.
    ///
    /// Its read failed or never ran, nothing of it is used.
    pub(super) fn disarm_tail(&self, slot: Slot) {
        if let Some(t) = self.tails.lock().get_mut(slot.index()) {
            t.armed = None;
        }
    }

    /// Waits until the last words of the read on buffer `slot` are in memory, after it completed
    /// without error and the buffer was unmapped.
    ///
    /// `EIO` if they are not within [`TAIL_WAIT`]; the buffer then waits for them before its next
    /// use ([`Self::settle_tail`]).
    pub(super) fn check_tail(&self, dev: &Device<Bound>, buf: &BounceBuffer, slot: Slot) -> Result {
        let armed = self
            .tails
            .lock()
            .get_mut(slot.index())
            .and_then(|t| t.armed.take());
        let Some(mark) = armed else {
            return Ok(());
        };
        self.tail_counts.checked.add(1, Relaxed);
        if buf.tail_landed(dev, mark.len, mark.seq)? {
            return Ok(());
        }
        self.tail_counts.waited.add(1, Relaxed);
        wait_landed(dev, buf, mark, TAIL_WAIT).map_err(|_| {
            self.tail_counts.late.add(1, Relaxed);
            dev_err!(
                dev,
                "read of {} bytes: its last words were not in memory {} ms after the transfer\n",
                mark.len,
                TAIL_WAIT.as_millis()
            );
            if let Some(t) = self.tails.lock().get_mut(slot.index()) {
                t.late = Some(mark);
            }
            EIO
        })
    }
}
