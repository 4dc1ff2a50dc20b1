// SPDX-License-Identifier: GPL-2.0

//! The request counters both drivers keep in their debugfs `stats` file.
//!
//! Requests direct and bounced, bytes, errors by kind, sizes, and the text of those lines.
//!
//! Shared by the SDHC driver (`logic.rs`, whose `Stats` adds its own counters) and the SD card
//! slot's (`sdio/logic.rs`). Plain `core` Rust only: no allocation, no kernel types.

use core::fmt;

/// What went wrong with a command, as the statistics count it.
///
/// Each driver counts the kinds its controller can report; the SD card slot's shows only those
/// ([`Requests::fmt_errors`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// The response failed its CRC check (`EILSEQ` on the command).
    CmdCrc,
    /// No response in time (`ETIMEDOUT` on the command).
    CmdTimeout,
    /// A data block failed its CRC check (`EILSEQ` on the data).
    DataCrc,
    /// The data phase timed out (`ETIMEDOUT` on the data).
    DataTimeout,
    /// The controller's FIFO overran or ran dry (`RXFIFO_FULL`/`TXFIFO_EMPTY`, `EIO`).
    Fifo,
    /// The controller stayed busy (`STAT.CMD_BUSY` or `ESTA[13:11]`) 100 ms after the command
    /// completed (`ETIMEDOUT`).
    ///
    /// It was reset.
    NotReady,
    /// The last words of a read did not leave the RX FIFO after its flush (`EIO` on the data).
    Flush,
    /// The request's data could not be set up or handed over.
    ///
    /// A mapping, a bounce copy, a read whose last words were not seen in memory in time (the
    /// `bounce` file's `tail_late`), a failed `set_ios`.
    Setup,
    /// No interrupt before the software deadline (`ETIMEDOUT` on the command).
    ///
    /// A lost interrupt or a frozen controller, which was reset.
    Deadline,
}

impl ErrorKind {
    /// Every kind, in the order of [`Requests::errors`].
    pub(crate) const ALL: [ErrorKind; 9] = [
        Self::CmdCrc,
        Self::CmdTimeout,
        Self::DataCrc,
        Self::DataTimeout,
        Self::Fifo,
        Self::NotReady,
        Self::Flush,
        Self::Setup,
        Self::Deadline,
    ];

    /// Returns the name in the statistics file.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::CmdCrc => "cmd_crc",
            Self::CmdTimeout => "cmd_timeout",
            Self::DataCrc => "data_crc",
            Self::DataTimeout => "data_timeout",
            Self::Fifo => "fifo",
            Self::NotReady => "not_ready",
            Self::Flush => "flush",
            Self::Setup => "setup",
            Self::Deadline => "deadline",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// Smallest bucket of the request size histogram.
///
/// Requests up to 512 bytes.
pub(crate) const HIST_MIN: u32 = 512;
/// Buckets of the histogram.
///
/// 512 bytes, 1 KiB, ... up to 4 MiB (the largest bounce buffer).
pub(crate) const HIST_BUCKETS: usize = 14;

/// Returns the histogram bucket of a request of `len` bytes.
///
/// Bucket `i` holds the requests of more than `HIST_MIN << (i - 1)` and at most `HIST_MIN << i`
/// bytes; bigger ones go to the last.
pub(crate) fn hist_bucket(len: u32) -> usize {
    match len.max(HIST_MIN).checked_next_power_of_two() {
        Some(rounded) => {
            let i = (rounded.trailing_zeros() - HIST_MIN.trailing_zeros()) as usize;
            i.min(HIST_BUCKETS - 1)
        }
        None => HIST_BUCKETS - 1,
    }
}

/// Returns the upper bound, in bytes, of histogram bucket `i`.
pub(crate) const fn hist_bound(i: usize) -> u32 {
    HIST_MIN << i
}

/// How a data request ended, for [`Requests::record`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// Bytes of the request (`blksz * blocks`).
    pub(crate) len: u32,
    /// A write (else a read).
    pub(crate) write: bool,
    /// Through the bounce buffer (else straight to the single DMA segment).
    pub(crate) bounced: bool,
    /// The command's error, if any.
    pub(crate) cmd_error: Option<ErrorKind>,
    /// The data phase's error, if any.
    pub(crate) data_error: Option<ErrorKind>,
    /// `bytes_xfered` as reported to the MMC core.
    pub(crate) xfered: u32,
    /// Bytes copied from the bounce buffer into the request (reads only).
    pub(crate) copied_back: u32,
    /// Its data was still mapped by `pre_req` when it completed (a write sent direct; the
    /// mapping is `post_req`'s to undo).
    pub(crate) pre_mapped: bool,
}

impl Outcome {
    /// Returns whether this is a bounced read whose copy-back was skipped because an error was set.
    pub(crate) fn copy_back_skipped(&self) -> bool {
        self.bounced
            && !self.write
            && self.copied_back == 0
            && (self.cmd_error.is_some() || self.data_error.is_some())
    }
}

/// The counters of requests both drivers keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Requests {
    /// Commands completed, with or without data.
    pub(crate) commands: u64,
    /// Commands with a data phase.
    pub(crate) data_requests: u64,
    /// Data requests sent straight to their single DMA segment.
    pub(crate) direct: u64,
    /// Data requests that went through the bounce buffer.
    pub(crate) bounced: u64,
    /// Bytes read (`bytes_xfered` of successful reads).
    pub(crate) bytes_read: u64,
    /// Bytes written (`bytes_xfered` of successful writes).
    pub(crate) bytes_written: u64,
    /// Errors by kind, in the order of [`ErrorKind::ALL`].
    ///
    /// A request counts once per error it carries (command and data).
    pub(crate) errors: [u64; ErrorKind::ALL.len()],
    /// Bounced reads whose data was not copied back because an error was set.
    pub(crate) copy_back_skipped: u64,
    /// Data requests by size, see [`hist_bucket`].
    pub(crate) sizes: [u64; HIST_BUCKETS],
    /// Writes whose data `pre_req` mapped for the controller, to go direct.
    pub(crate) pre_mapped: u64,
    /// Data requests that completed with an error while the mapping `pre_req` made of their
    /// data stood.
    pub(crate) pre_mapped_errors: u64,
}

impl Requests {
    /// Returns all zero.
    pub(crate) const fn new() -> Self {
        Self {
            commands: 0,
            data_requests: 0,
            direct: 0,
            bounced: 0,
            bytes_read: 0,
            bytes_written: 0,
            errors: [0; ErrorKind::ALL.len()],
            copy_back_skipped: 0,
            sizes: [0; HIST_BUCKETS],
            pre_mapped: 0,
            pre_mapped_errors: 0,
        }
    }

    /// Returns the count of errors of `kind`.
    pub(crate) fn error_count(&self, kind: ErrorKind) -> u64 {
        self.errors[kind.index()]
    }

    fn count_error(&mut self, kind: Option<ErrorKind>) {
        if let Some(k) = kind {
            self.errors[k.index()] = self.errors[k.index()].wrapping_add(1);
        }
    }

    /// Counts a command without data that completed, maybe with an error.
    pub(crate) fn record_command(&mut self, error: Option<ErrorKind>) {
        self.commands = self.commands.wrapping_add(1);
        self.count_error(error);
    }

    /// Counts a completed data request.
    pub(crate) fn record(&mut self, o: &Outcome) {
        self.commands = self.commands.wrapping_add(1);
        self.data_requests = self.data_requests.wrapping_add(1);
        if o.bounced {
            self.bounced = self.bounced.wrapping_add(1);
        } else {
            self.direct = self.direct.wrapping_add(1);
        }
        let bytes = if o.write {
            &mut self.bytes_written
        } else {
            &mut self.bytes_read
        };
        *bytes = bytes.wrapping_add(u64::from(o.xfered));
        self.count_error(o.cmd_error);
        self.count_error(o.data_error);
        if o.copy_back_skipped() {
            self.copy_back_skipped = self.copy_back_skipped.wrapping_add(1);
        }
        if o.pre_mapped && (o.cmd_error.is_some() || o.data_error.is_some()) {
            self.pre_mapped_errors = self.pre_mapped_errors.wrapping_add(1);
        }
        let b = hist_bucket(o.len);
        self.sizes[b] = self.sizes[b].wrapping_add(1);
    }

    /// Counts a write whose data `pre_req` mapped.
    pub(crate) fn record_pre_mapped(&mut self) {
        self.pre_mapped = self.pre_mapped.wrapping_add(1);
    }

    /// Counts a request that failed before it reached the controller.
    pub(crate) fn record_setup_error(&mut self) {
        self.commands = self.commands.wrapping_add(1);
        self.count_error(Some(ErrorKind::Setup));
    }

    /// Writes the lines of the errors of `kinds`, `error_<name>: <count>`.
    pub(crate) fn fmt_errors(
        &self,
        f: &mut fmt::Formatter<'_>,
        kinds: &[ErrorKind],
    ) -> fmt::Result {
        for k in kinds {
            writeln!(f, "error_{}: {}", k.name(), Dec(self.error_count(*k)))?;
        }
        Ok(())
    }

    /// Writes the lines of the size histogram, `size_<bytes>: <count>`.
    ///
    /// Each counts the requests of at most that many bytes and more than half of it.
    pub(crate) fn fmt_sizes(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, n) in self.sizes.iter().enumerate() {
            writeln!(f, "size_{}: {}", hist_bound(i), Dec(*n))?;
        }
        Ok(())
    }
}

/// The counters' lines, one `name: value` each, without the errors and the sizes
/// ([`Requests::fmt_errors`], [`Requests::fmt_sizes`]), which the files show last.
impl fmt::Display for Requests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "commands: {}", Dec(self.commands))?;
        writeln!(f, "data_requests: {}", Dec(self.data_requests))?;
        writeln!(f, "direct: {}", Dec(self.direct))?;
        writeln!(f, "bounced: {}", Dec(self.bounced))?;
        writeln!(f, "bytes_read: {}", Dec(self.bytes_read))?;
        writeln!(f, "bytes_written: {}", Dec(self.bytes_written))?;
        writeln!(f, "copy_back_skipped: {}", Dec(self.copy_back_skipped))?;
        writeln!(f, "pre_mapped: {}", Dec(self.pre_mapped))?;
        writeln!(f, "pre_mapped_errors: {}", Dec(self.pre_mapped_errors))
    }
}

/// A `u64` printed in decimal without 64-bit division.
///
/// On 32-bit ARM the kernel provides no 64-bit division to Rust code (`__aeabi_uldivmod`
/// panics), and `core`'s `Display for u64` divides; this splits the number into 16-bit limbs
/// and divides by 10000, so every step fits in 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dec(pub(crate) u64);

impl fmt::Display for Dec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // u64::MAX has 20 digits: at most five groups of four.
        let mut limbs = [
            (self.0 >> 48) as u32,
            ((self.0 >> 32) & 0xffff) as u32,
            ((self.0 >> 16) & 0xffff) as u32,
            (self.0 & 0xffff) as u32,
        ];
        let mut groups = [0u32; 5];
        let mut n = 0;
        loop {
            let mut rem = 0u32;
            for limb in limbs.iter_mut() {
                // rem < 10000, so (rem << 16 | limb) < 10000 * 65536 < 2^32.
                let cur = (rem << 16) | *limb;
                *limb = cur / 10000;
                rem = cur % 10000;
            }
            groups[n] = rem;
            n += 1;
            if limbs.iter().all(|&l| l == 0) || n == groups.len() {
                break;
            }
        }
        write!(f, "{}", groups[n - 1])?;
        for g in groups[..n - 1].iter().rev() {
            write!(f, "{:04}", g)?;
        }
        Ok(())
    }
}
