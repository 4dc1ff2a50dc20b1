// SPDX-License-Identifier: GPL-2.0

//! The driver's debugfs files, in the host's directory (`/sys/kernel/debug/mmcN/`, which the MMC
//! core creates when the host is added and removes with it).
//!
//! There are three:
//!
//! - `stats`: the counters of [`logic::Stats`](crate::logic::Stats), one `name: value` per
//!   line; writing anything to the file resets them.
//! - `limits`: the queue limits the host was registered with and the bounce buffer size.
//! - `bounce`: whether each bounce buffer is clean or maybe dirty (cached memory) and how many
//!   reads invalidated a cached buffer before their transfer or skipped that
//!   (`skip_clean_invalidate`).
//!
//! The data lives in the controller ([`HostDebugfs`]); `kernel::mmc` shows it in the files.
//! Without `CONFIG_DEBUG_FS` the files do not exist, the counters still work.

// The `stats` file: the counters and their reset, as the SD card slot's driver has one too.
mod file;

use core::fmt;
use kernel::{
    debugfs::Writer,
    prelude::*,
    sync::MutexGuard, //
};

#[cfg(not(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS))]
use crate::kernel_ext::debugfs::foreign_dir::ScopedDir;
use crate::mmc::{
    HostOps,
    UnregisteredHost, //
};

use crate::logic::{
    Limits,
    Stats, //
};
#[cfg(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS)]
use crate::test_knobs::TestKnobs;
use file::StatsFile;
#[cfg(not(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS))]
use kernel::ModuleMetadata;

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

impl Writer for LimitsInfo {
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "bounce_size: {}", self.bounce_size)?;
        writeln!(
            f,
            "bounce_memory: {}",
            if self.bounce_cached {
                "cached"
            } else {
                "coherent"
            }
        )?;
        writeln!(f, "bounce_buffers: {}", self.bounce_buffers)?;
        writeln!(f, "dma_merge_boundary: {:#x}", self.dma_merge_boundary)?;
        writeln!(f, "max_segs: {}", self.limits.max_segs)?;
        writeln!(f, "max_req_size: {}", self.limits.max_req_size)?;
        writeln!(f, "max_seg_size: {}", self.limits.max_seg_size)?;
        writeln!(f, "max_blk_size: {}", self.limits.max_blk_size)?;
        writeln!(f, "max_blk_count: {}", self.limits.max_blk_count)
    }
}

/// What the debugfs files of one host show.
#[pin_data]
pub(crate) struct HostDebugfs {
    #[pin]
    pub(crate) stats: StatsFile<Stats>,
    pub(crate) knobs: TestKnobs,
    pub(crate) limits: LimitsInfo,
}

impl HostDebugfs {
    /// Creates zeroed counters, the knobs at their defaults, and the host's queue limits with the
    /// bounce buffers and the DMA mapping they were computed for (`limits`).
    pub(crate) fn new(limits: LimitsInfo) -> impl PinInit<Self> {
        pin_init!(Self {
            stats <- StatsFile::new(Stats::new()),
            knobs: TestKnobs::new(),
            limits,
        })
    }

    /// Registers `host`, then creates its debugfs files, whose data `debugfs` and `bounce` find in
    /// the driver data.
    pub(crate) fn register<T: HostOps + 'static, B: Writer + Send + Sync + 'static>(
        host: UnregisteredHost<'_, T>,
        debugfs: impl for<'x> Fn(&'x T) -> &'x Self,
        bounce: impl for<'x> Fn(&'x T) -> &'x B,
    ) -> Result {
        host.register()?.debugfs_files(|data, dir| {
            let this = debugfs(data);
            dir.read_write_file(c"stats", &this.stats);
            dir.read_only_file(c"limits", &this.limits);
            dir.read_only_file(c"bounce", bounce(data));
            this.knobs.add_files(dir);
        });
        Ok(())
    }

    /// Locks the counters.
    pub(crate) fn stats(&self) -> MutexGuard<'_, Stats> {
        self.stats.lock()
    }

    /// Returns whether single-segment requests are to be bounced too.
    pub(crate) fn force_bounce(&self) -> bool {
        self.knobs.force_bounce()
    }

    /// Returns whether a read's flush is waited for.
    pub(crate) fn read_flush_wait(&self) -> bool {
        self.knobs.read_flush_wait()
    }

    /// Returns how long the next command is to sleep before it is sent (a fault; taken: once).
    pub(crate) fn take_send_stall_ms(&self) -> u32 {
        self.knobs.take_send_stall_ms()
    }

    /// Returns how much earlier than its request is due the watchdog is armed (a fault; 0: none).
    pub(crate) fn watchdog_early_ms(&self) -> u32 {
        self.knobs.watchdog_early_ms()
    }

    /// Returns whether the ack clears a latched DAT1 and does not look at DAT1 (a fault).
    pub(crate) fn sdio_ack_fault(&self) -> bool {
        self.knobs.sdio_ack_fault()
    }

    /// Returns whether this copy of a write into a bounce buffer stops halfway and fails (a fault).
    pub(crate) fn take_copy_in_fault(&self) -> bool {
        self.knobs.take_copy_in_fault()
    }
}

/// The driver's policy as it is, with no fault injected.
///
/// The values of the knobs that tests set in the out-of-tree module, fixed, with no file.
#[cfg(not(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS))]
pub(crate) struct TestKnobs;

#[cfg(not(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS))]
impl TestKnobs {
    /// Returns the defaults.
    pub(crate) fn new() -> Self {
        Self
    }

    /// Adds no file.
    pub(crate) fn add_files<M: ModuleMetadata>(&self, _dir: &ScopedDir<'_, '_, M>) {}

    /// Returns `false`, so requests that map to one segment go direct.
    pub(crate) fn force_bounce(&self) -> bool {
        false
    }

    /// Returns `true`, so a read's flush is waited for.
    pub(crate) fn read_flush_wait(&self) -> bool {
        true
    }

    /// Returns 0, so commands are sent at once.
    pub(crate) fn take_send_stall_ms(&self) -> u32 {
        0
    }

    /// Returns 0, so the watchdog is armed for when the request is due.
    pub(crate) fn watchdog_early_ms(&self) -> u32 {
        0
    }

    /// Returns `false`, so the ack keeps a latched DAT1 and looks at DAT1.
    pub(crate) fn sdio_ack_fault(&self) -> bool {
        false
    }

    /// Returns `false`, so copies into a bounce buffer are whole.
    pub(crate) fn take_copy_in_fault(&self) -> bool {
        false
    }
}
