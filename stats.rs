// SPDX-License-Identifier: GPL-2.0

//! The driver's debugfs files, one directory per host:
//!
//! - `/sys/kernel/debug/meson-mx-sdhc-rs/<device>/stats`: the counters of
//!   [`logic::Stats`](crate::logic::Stats), one `name: value` per line; writing anything to
//!   the file resets them.
//! - `/sys/kernel/debug/meson-mx-sdhc-rs/<device>/limits`: the queue limits the host was
//!   registered with and the bounce buffer size.
//! - with `CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS`, the knobs of [`TestKnobs`] for tests.
//!
//! The files own their data; the driver reaches them through [`HostDebugfs`].
//! Without `CONFIG_DEBUG_FS` the files do not exist, the counters still work.

use core::fmt;
use kernel::{
    debugfs::{
        Dir,
        File, //
    },
    new_mutex,
    prelude::*,
    sync::{
        Mutex,
        MutexGuard, //
    },
    uaccess::UserSliceReader, //
};

use crate::{
    logic::{
        Limits,
        Stats, //
    },
    test_knobs::TestKnobs, //
};

kernel::sync::global_lock! {
    // SAFETY: `Root::new` initialises the lock in module init, before the driver is
    // registered and therefore before any `probe()` (the only other user) runs.
    unsafe(uninit) static ROOT: Mutex<Option<Dir>> = None;
}

/// Owns the module's debugfs directory, shared by the hosts; a field of the module after the
/// driver registration, so it is set before any `probe()` and cleared after the last remove.
///
/// The kernel crate has no per-module data a driver can reach from `probe()` yet; like
/// nova-core, the directory lives in a global, here behind a global lock.
pub(crate) struct Root;

impl Root {
    /// Creates the directory `name` at the debugfs root. Call once, in module init, before
    /// registering the driver.
    pub(crate) fn new(name: &CStr) -> Self {
        // SAFETY: Called once, from module init, before any other use of `ROOT`.
        unsafe { ROOT.init() };
        *ROOT.lock() = Some(Dir::new(name));
        Self
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        *ROOT.lock() = None;
    }
}

/// The debugfs directory of the host `dev_name`, in the module's directory.
fn host_dir(dev_name: &CStr) -> Dir {
    match ROOT.lock().as_ref() {
        Some(root) => root.subdir(dev_name),
        None => Dir::new(dev_name),
    }
}

/// What the `limits` file shows.
pub(crate) struct LimitsInfo {
    /// The queue limits of the host.
    pub(crate) limits: Limits,
    /// Size of the bounce buffer in bytes, 0 for none.
    pub(crate) bounce_size: u32,
    /// Whether the bounce buffer is cached memory (streaming syncs) instead of coherent.
    pub(crate) bounce_cached: bool,
    /// How many bounce buffers (2: double buffering).
    pub(crate) bounce_buffers: usize,
    /// `dma_get_merge_boundary()` of the controller (0: mappings never merge entries).
    pub(crate) dma_merge_boundary: usize,
}

fn show_stats(stats: &Mutex<Stats>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    // Copy, so that the lock is not held while the text is written.
    let s = *stats.lock();
    fmt::Display::fmt(&s, f)
}

fn reset_stats(stats: &Mutex<Stats>, _input: &mut UserSliceReader) -> Result {
    *stats.lock() = Stats::new();
    Ok(())
}

fn show_limits(l: &LimitsInfo, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "bounce_size: {}", l.bounce_size)?;
    writeln!(
        f,
        "bounce_memory: {}",
        if l.bounce_cached {
            "cached"
        } else {
            "coherent"
        }
    )?;
    writeln!(f, "bounce_buffers: {}", l.bounce_buffers)?;
    writeln!(f, "dma_merge_boundary: {:#x}", l.dma_merge_boundary)?;
    writeln!(f, "max_segs: {}", l.limits.max_segs)?;
    writeln!(f, "max_req_size: {}", l.limits.max_req_size)?;
    writeln!(f, "max_seg_size: {}", l.limits.max_seg_size)?;
    writeln!(f, "max_blk_size: {}", l.limits.max_blk_size)?;
    writeln!(f, "max_blk_count: {}", l.limits.max_blk_count)
}

/// The debugfs files of one host and the data they own.
#[pin_data]
pub(crate) struct HostDebugfs {
    #[pin]
    stats: File<Mutex<Stats>>,
    #[pin]
    knobs: TestKnobs,
    #[pin]
    _limits: File<LimitsInfo>,
    _dir: Dir,
}

impl HostDebugfs {
    /// Zeroed counters, the knobs at their defaults, and the files of the host `dev_name`.
    pub(crate) fn new<'a>(
        dev_name: &'a CStr,
        limits: LimitsInfo,
    ) -> impl PinInit<Self, Error> + 'a {
        let dir = host_dir(dev_name);
        try_pin_init!(Self {
            stats <- dir.read_write_callback_file(
                c"stats",
                new_mutex!(Stats::new(), "meson_mx_sdhc_rs::stats"),
                &show_stats,
                &reset_stats,
            ),
            knobs <- TestKnobs::new(&dir),
            _limits <- dir.read_callback_file(c"limits", limits, &show_limits),
            _dir: dir,
        }? Error)
    }

    /// The counters, locked.
    pub(crate) fn stats(&self) -> MutexGuard<'_, Stats> {
        self.stats.lock()
    }

    /// Whether single-segment requests are to be bounced too.
    pub(crate) fn force_bounce(&self) -> bool {
        self.knobs.force_bounce()
    }

    /// Whether every error quiesces the controller.
    pub(crate) fn quiesce_on_error(&self) -> bool {
        self.knobs.quiesce_on_error()
    }

    /// How long to wait after a quiescing reset for the DMA engine, in microseconds.
    pub(crate) fn reset_drain_us(&self) -> u32 {
        self.knobs.reset_drain_us()
    }

    /// How much earlier than its request is due the watchdog is armed (a fault; 0: none).
    pub(crate) fn watchdog_early_ms(&self) -> u32 {
        self.knobs.watchdog_early_ms()
    }
}
