// SPDX-License-Identifier: GPL-2.0

//! A debugfs file of counters.
//!
//! It shows them as their `Display` text, and writing anything to it resets them. The SDHC driver's
//! `stats` file (`stats.rs`) and the SD card slot driver's (`sdio/`, which includes this file) are
//! each one.

use core::fmt;
use kernel::{
    debugfs::{
        Reader,
        Writer, //
    },
    new_mutex,
    prelude::*,
    sync::{
        Mutex,
        MutexGuard, //
    },
    uaccess::UserSliceReader, //
};

/// Counters `S`, shown by their text.
///
/// Writing resets them to `S::default()`.
#[pin_data]
pub(crate) struct StatsFile<S> {
    #[pin]
    stats: Mutex<S>,
}

impl<S> StatsFile<S> {
    /// Creates the file's data, starting at `stats`.
    pub(crate) fn new(stats: S) -> impl PinInit<Self> {
        pin_init!(Self {
            stats <- new_mutex!(stats, "stats"),
        })
    }

    /// Locks the counters.
    pub(crate) fn lock(&self) -> MutexGuard<'_, S> {
        self.stats.lock()
    }
}

impl<S: Copy + fmt::Display + Send> Writer for StatsFile<S> {
    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Copy, so that the lock is not held while the text is written.
        let s = *self.stats.lock();
        fmt::Display::fmt(&s, f)
    }
}

impl<S: Default + Send + Unpin> Reader for StatsFile<S> {
    fn read_from_slice(&self, _input: &mut UserSliceReader) -> Result {
        *self.stats.lock() = S::default();
        Ok(())
    }
}
