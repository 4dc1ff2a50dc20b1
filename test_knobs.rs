// SPDX-License-Identifier: GPL-2.0

//! Knobs for tests and measurements, in the host's debugfs directory, built only with
//! `CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS`.
//!
//! Without it the driver always does what the knobs do by default, and the files do not exist
//! (`stats.rs`). Only the out-of-tree module has them: the upstream series is the driver without
//! them (test policy and fault injection, which `scripts/make-series` leaves out).
//!
//! - `force_bounce`: write 1 to send every request that fits through the bounce buffer, also
//!   those mapped to a single DMA segment (which otherwise go direct); 0 (default) restores the
//!   normal choice. Whether a user buffer maps to one segment depends on where its pages happen
//!   to be; tests need the choice fixed.
//! - `read_flush_wait`: 1 (default) waits after a read's RX FIFO flush until the FIFO is
//!   empty (`hw::Hw::flush_rx_fifo`); 0 does not wait, as the C driver, to show what a flush
//!   still on its way loses.
//! - `send_stall_ms`: a fault, 0 by default: the next command sleeps this long before it is
//!   written to `SEND` (once; the file reads 0 again afterwards), as a thread preempted there
//!   would, so that its deadline passes before it is sent.
//! - `watchdog_early_ms`: a fault, 0 by default: the deadline's watchdog is armed this much
//!   before the request is due, so that it fires early and must arm itself again.
//! - `bounce_copy_in_faults`: a fault, 0 by default: the next this many copies of a write's
//!   data into a bounce buffer stop halfway and fail (counted down per copy-in), as a copy
//!   from a user page that faults would, so that the buffer is left written but not cleaned.
//! - the SDIO card interrupt's knob, [`SdioKnob`].
//!
//! No knob changes what the driver does with memory after an error: the controller is always
//! reset and waited for before a request's pages or bounce buffer are handed back (`drain.rs`).

use kernel::{
    sync::atomic::{
        Atomic,
        Relaxed, //
    },
    ModuleMetadata, //
};

use crate::kernel_ext::debugfs::foreign_dir::ScopedDir;

/// The knobs' values, shown and set in the host's debugfs directory.
pub(crate) struct TestKnobs {
    force_bounce: Atomic<u32>,
    read_flush_wait: Atomic<u32>,
    send_stall_ms: Atomic<u32>,
    watchdog_early_ms: Atomic<u32>,
    bounce_copy_in_faults: Atomic<u32>,
    sdio: SdioKnob,
}

impl TestKnobs {
    /// Returns the knobs at their defaults.
    pub(crate) fn new() -> Self {
        Self {
            force_bounce: Atomic::new(0),
            read_flush_wait: Atomic::new(1),
            send_stall_ms: Atomic::new(0),
            watchdog_early_ms: Atomic::new(0),
            bounce_copy_in_faults: Atomic::new(0),
            sdio: SdioKnob::new(),
        }
    }

    /// Creates the knobs' files in the host's debugfs directory `dir`.
    pub(crate) fn add_files<'data, M: ModuleMetadata>(&'data self, dir: &ScopedDir<'data, '_, M>) {
        dir.read_write_file(c"force_bounce", &self.force_bounce);
        dir.read_write_file(c"read_flush_wait", &self.read_flush_wait);
        dir.read_write_file(c"send_stall_ms", &self.send_stall_ms);
        dir.read_write_file(c"watchdog_early_ms", &self.watchdog_early_ms);
        dir.read_write_file(c"bounce_copy_in_faults", &self.bounce_copy_in_faults);
        self.sdio.add_file(dir);
    }

    /// Returns whether single-segment requests are to be bounced too.
    pub(crate) fn force_bounce(&self) -> bool {
        self.force_bounce.load(Relaxed) != 0
    }

    /// Returns whether a read's flush is waited for.
    pub(crate) fn read_flush_wait(&self) -> bool {
        self.read_flush_wait.load(Relaxed) != 0
    }

    /// Returns how long the next command is to sleep before it is sent (taken: once).
    pub(crate) fn take_send_stall_ms(&self) -> u32 {
        self.send_stall_ms.xchg(0, Relaxed)
    }

    /// Returns how much earlier than its request is due the watchdog is armed (a fault; 0: none).
    pub(crate) fn watchdog_early_ms(&self) -> u32 {
        self.watchdog_early_ms.load(Relaxed)
    }

    /// Returns whether the ack clears a latched DAT1 and does not look at DAT1 (a fault).
    pub(crate) fn sdio_ack_fault(&self) -> bool {
        self.sdio.ack_fault.load(Relaxed) != 0
    }

    /// Returns whether this copy of a write's data into a bounce buffer is to stop halfway and fail
    /// (a fault; counted down per call).
    pub(crate) fn take_copy_in_fault(&self) -> bool {
        let mut n = self.bounce_copy_in_faults.load(Relaxed);
        while n != 0 {
            match self
                .bounce_copy_in_faults
                .cmpxchg(n, n - 1, kernel::sync::atomic::Full)
            {
                Ok(_) => return true,
                Err(cur) => n = cur,
            }
        }
        false
    }
}

/// The knob of the SDIO card interrupt, `sdio_ack_fault`.
///
/// A fault, 0 by default: 1 makes `ack_sdio_irq` clear a DAT1 latched meanwhile and enable the
/// interrupt without looking at DAT1, the way that loses a card interrupt raised between the
/// service and the ack if DAT1 latches on its edge.
struct SdioKnob {
    ack_fault: Atomic<u32>,
}

impl SdioKnob {
    /// Returns no fault (0).
    fn new() -> Self {
        Self {
            ack_fault: Atomic::new(0),
        }
    }

    /// Creates the knob's file in the host's debugfs directory `dir`.
    fn add_file<'data, M: ModuleMetadata>(&'data self, dir: &ScopedDir<'data, '_, M>) {
        dir.read_write_file(c"sdio_ack_fault", &self.ack_fault);
    }
}
