// SPDX-License-Identifier: GPL-2.0

//! Knobs for tests and measurements, in the host's debugfs directory, built only with
//! `CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS`; without it the driver always does what the
//! knobs do by default, and the files do not exist:
//!
//! - `force_bounce`: write 1 to send every request that fits through the bounce buffer, also
//!   those mapped to a single DMA segment (which otherwise go direct); 0 (default) restores the
//!   normal choice. Whether a user buffer maps to one segment depends on where its pages happen
//!   to be; tests need the choice fixed.
//! - `quiesce_on_error`: 1 (default) resets the controller after any command or data error
//!   before the request's memory is handed back; 0 restores the C driver's rule (reset only for
//!   EIO/ETIMEDOUT on the command), to show what that rule lets the DMA engine do.
//! - `reset_drain_us`: how long to wait after a quiescing reset before memory is handed back
//!   (default `hw::RESET_DRAIN_US`); 0 shows what a DMA engine still draining does without it.
//! - `watchdog_early_ms`: a fault, 0 by default: the deadline's watchdog is armed this much
//!   before the request is due, so that it fires early and must arm itself again.

use kernel::prelude::*;
#[cfg(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS)]
use kernel::{
    debugfs::{
        Dir,
        File, //
    },
    sync::atomic::{
        Atomic,
        Relaxed, //
    }, //
};

/// The knobs' files and values.
#[cfg(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS)]
#[pin_data]
pub(crate) struct TestKnobs {
    #[pin]
    force_bounce: File<Atomic<u32>>,
    #[pin]
    quiesce_on_error: File<Atomic<u32>>,
    #[pin]
    reset_drain_us: File<Atomic<u32>>,
    #[pin]
    watchdog_early_ms: File<Atomic<u32>>,
}

#[cfg(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS)]
impl TestKnobs {
    /// The knobs at their defaults, as files in `dir`.
    pub(crate) fn new(dir: &Dir) -> impl PinInit<Self, Error> + '_ {
        try_pin_init!(Self {
            force_bounce <- dir.read_write_file(c"force_bounce", Atomic::new(0u32)),
            quiesce_on_error <- dir.read_write_file(c"quiesce_on_error", Atomic::new(1u32)),
            reset_drain_us <- dir.read_write_file(
                c"reset_drain_us",
                Atomic::new(crate::hw::RESET_DRAIN_US),
            ),
            watchdog_early_ms <- dir.read_write_file(c"watchdog_early_ms", Atomic::new(0u32)),
        }? Error)
    }

    /// Whether single-segment requests are to be bounced too.
    pub(crate) fn force_bounce(&self) -> bool {
        self.force_bounce.load(Relaxed) != 0
    }

    /// Whether every error quiesces the controller.
    pub(crate) fn quiesce_on_error(&self) -> bool {
        self.quiesce_on_error.load(Relaxed) != 0
    }

    /// How long to wait after a quiescing reset for the DMA engine, in microseconds.
    pub(crate) fn reset_drain_us(&self) -> u32 {
        self.reset_drain_us.load(Relaxed)
    }

    /// How much earlier than its request is due the watchdog is armed (a fault; 0: none).
    pub(crate) fn watchdog_early_ms(&self) -> u32 {
        self.watchdog_early_ms.load(Relaxed)
    }
}

/// Without the option: the defaults, fixed.
#[cfg(not(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS))]
pub(crate) struct TestKnobs;

#[cfg(not(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS))]
impl TestKnobs {
    /// The defaults; no file.
    pub(crate) fn new(_dir: &kernel::debugfs::Dir) -> impl PinInit<Self, Error> + '_ {
        Ok::<_, Error>(Self)
    }

    /// Requests that map to one segment go direct.
    pub(crate) fn force_bounce(&self) -> bool {
        false
    }

    /// Every error quiesces the controller.
    pub(crate) fn quiesce_on_error(&self) -> bool {
        true
    }

    /// `hw::RESET_DRAIN_US` after a quiescing reset.
    pub(crate) fn reset_drain_us(&self) -> u32 {
        crate::hw::RESET_DRAIN_US
    }

    /// The watchdog is armed for when the request is due.
    pub(crate) fn watchdog_early_ms(&self) -> u32 {
        0
    }
}
