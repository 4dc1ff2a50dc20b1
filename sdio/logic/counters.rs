// SPDX-License-Identifier: GPL-2.0

//! The statistics (the debugfs file `stats`).
//!
//! The request counters both drivers keep, and the controller's soft resets.

use core::fmt;

use super::stats::{
    Dec,
    ErrorKind,
    Requests, //
};

/// The kinds of error this controller reports, in the order the file shows them.
///
/// A response or data CRC error (the controller's only error bits), a request that could not be set
/// up, and a command the timer ended (no response, a lost interrupt, a card that stalls).
pub(crate) const SLOT_ERRORS: [ErrorKind; 4] = [
    ErrorKind::CmdCrc,
    ErrorKind::DataCrc,
    ErrorKind::Setup,
    ErrorKind::Deadline,
];

/// The host's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SlotStats {
    /// The requests.
    pub(crate) req: Requests,
    /// Soft resets of the controller after an error.
    pub(crate) resets: u64,
    /// Requests that waited for the bus while another slot's request ran.
    pub(crate) waited: u64,
    /// Writes of a slot's bus settings (bus width and card clock) to the controller.
    pub(crate) settings_writes: u64,
}

impl SlotStats {
    /// Returns all zero.
    pub(crate) const fn new() -> Self {
        Self {
            req: Requests::new(),
            resets: 0,
            waited: 0,
            settings_writes: 0,
        }
    }

    /// Counts a soft reset after an error.
    pub(crate) fn record_reset(&mut self) {
        self.resets = self.resets.wrapping_add(1);
    }

    /// Counts a request that waited for another slot's.
    pub(crate) fn record_waited(&mut self) {
        self.waited = self.waited.wrapping_add(1);
    }

    /// Counts a write of a slot's bus settings.
    pub(crate) fn record_settings_write(&mut self) {
        self.settings_writes = self.settings_writes.wrapping_add(1);
    }
}

/// The text of the file.
///
/// One `name: value` per line, the errors of [`SLOT_ERRORS`] and the request sizes last.
impl fmt::Display for SlotStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.req, f)?;
        writeln!(f, "resets: {}", Dec(self.resets))?;
        writeln!(f, "waited: {}", Dec(self.waited))?;
        writeln!(f, "settings_writes: {}", Dec(self.settings_writes))?;
        self.req.fmt_errors(f, &SLOT_ERRORS)?;
        self.req.fmt_sizes(f)
    }
}
