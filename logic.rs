// SPDX-License-Identifier: GPL-2.0

//! Pure decisions of the driver, free of kernel types so that they can also be unit tested outside
//! the kernel.
//!
//! The queue limits, what a finished transfer reports and copies back, which interrupt sources are
//! enabled, and so on, for the driver and each of its features (the bounce buffer's choice of a
//! data path is `bounce/policy.rs`).
//!
//! Plain `core` Rust only: no allocation, no kernel types.

use core::fmt;

// The rules the SD card slot's driver shares (`sdio/logic.rs` includes the same files).
#[path = "logic/data_path.rs"]
pub(crate) mod data_path;
#[path = "logic/params.rs"]
pub(crate) mod params;
#[path = "logic/stats.rs"]
mod stats;
#[path = "logic/transfer.rs"]
mod transfer;

pub(crate) use params::{
    BOUNCE_MIN,
    MAX_SEGS_DEFAULT, //
};
pub(crate) use stats::*;
pub(crate) use transfer::*;

/// Largest bounce buffer, in bytes.
pub(crate) const BOUNCE_MAX: u32 = 4 * 1024 * 1024;
/// Default `max_dma_size`, the largest transfer to one DMA address known to work on the silicon.
///
/// The C driver never sends more than 128 KiB, the Odroid-C1's vendor device tree caps every SDHC
/// port at `max_req_size = <0x20000>`, and the one measurement on an S805 used 128 KiB; larger
/// transfers are unproven on the silicon.
pub(crate) const MAX_DMA_DEFAULT: u32 = 128 * 1024;
/// Default `bounce_size`, -1, as large as `max_dma_size` (the largest buffer a transfer may fill).
///
/// So `max_dma_size` alone sets both limits.
pub(crate) const BOUNCE_FOLLOWS_MAX_DMA: i32 = params::BOUNCE_SIZE_DEFAULT;
/// Largest block the controller transfers (`MESON_SDHC_MAX_BLK_SIZE`).
pub(crate) const MAX_BLK_SIZE: u32 = 512;
/// Most blocks of one command.
///
/// `TOTAL_PACK` is 16 bits and holds `blocks - 1`.
pub(crate) const MAX_BLK_COUNT_HW: u32 = 65536;
/// The C driver's largest request (and segment), used without a bounce buffer.
pub(crate) const C_MAX_REQ_SIZE: u32 = 128 * 1024;
/// The C driver's block count limit (`FIELD_GET(MESON_SDHC_SEND_TOTAL_PACK, ~0)`).
pub(crate) const C_MAX_BLK_COUNT: u32 = 0xffff;

/// A module parameter that is out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamError {
    /// `bounce_size` is neither 0 nor a power of two from [`BOUNCE_MIN`] to [`BOUNCE_MAX`].
    BounceSize(u32),
    /// `bounce_size` is negative and not -1 ([`BOUNCE_FOLLOWS_MAX_DMA`]).
    BounceNegative(i32),
    /// `max_segs` is not in `1..=`[`params::MAX_SEGS_LIMIT`].
    MaxSegs(u32),
    /// `max_dma_size` is not a power of two from [`BOUNCE_MIN`] to [`BOUNCE_MAX`].
    MaxDmaSize(u32),
    /// `bounce_size` is larger than `max_dma_size`.
    ///
    /// One transfer would fill it.
    BounceAboveMaxDma {
        /// `bounce_size`.
        bounce: u32,
        /// `max_dma_size`.
        max_dma: u32,
    },
    /// `skip_clean_invalidate` is not -1 ([`SKIP_CLEAN_AUTO`]), 0 or 1.
    SkipCleanInvalidate(i32),
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::BounceSize(v) => bounce_size_msg(v, f),
            Self::BounceNegative(v) => bounce_size_msg(v, f),
            Self::MaxSegs(v) => fmt::Display::fmt(&params::MaxSegsMsg(v), f),
            Self::MaxDmaSize(v) => write!(
                f,
                "invalid max_dma_size={}: must be a power of two from {} to {}",
                v, BOUNCE_MIN, BOUNCE_MAX
            ),
            Self::BounceAboveMaxDma { bounce, max_dma } => write!(
                f,
                "invalid bounce_size={}: above max_dma_size={}, the largest transfer to one DMA address (sizes above {} are unproven on the silicon)",
                bounce, max_dma, MAX_DMA_DEFAULT
            ),
            Self::SkipCleanInvalidate(v) => write!(
                f,
                "invalid skip_clean_invalidate={}: must be -1 (on if the bounce buffers' DMA mapping is their own memory, decided at probe; the default), 0 (off) or 1 (on)",
                v
            ),
        }
    }
}

/// Writes the message of a `bounce_size` of `value` out of range.
fn bounce_size_msg(value: impl fmt::Display, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let msg = params::BounceSizeMsg {
        value,
        default: "as large as max_dma_size",
        max: BOUNCE_MAX,
    };
    fmt::Display::fmt(&msg, f)
}

/// Returns whether `v` bytes may be a bounce buffer's size or `max_dma_size`.
///
/// A power of two from [`BOUNCE_MIN`] to [`BOUNCE_MAX`].
fn dma_size_ok(v: u32) -> bool {
    params::pow2_size_ok(v, BOUNCE_MAX)
}

/// Validated module parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    /// Size of the bounce buffer in bytes.
    ///
    /// 0 for none.
    pub(crate) bounce_size: u32,
    /// Most DMA segments per request when bouncing.
    pub(crate) max_segs: u16,
    /// The largest transfer to one DMA address, in bytes.
    pub(crate) max_dma: u32,
}

impl Params {
    /// Checks the module parameters as given.
    ///
    /// `bounce_size` -1 ([`BOUNCE_FOLLOWS_MAX_DMA`], the default) is `max_dma_size`, checked as
    /// that.
    pub(crate) fn from_module(
        bounce_size: i32,
        max_segs: u32,
        max_dma: u32,
    ) -> Result<Self, ParamError> {
        let bounce = if bounce_size == BOUNCE_FOLLOWS_MAX_DMA {
            if !dma_size_ok(max_dma) {
                return Err(ParamError::MaxDmaSize(max_dma));
            }
            max_dma
        } else {
            u32::try_from(bounce_size).map_err(|_| ParamError::BounceNegative(bounce_size))?
        };
        Self::new(bounce, max_segs, max_dma)
    }

    /// Checks the raw parameter values.
    ///
    /// `bounce_size` is checked first, its limit `max_dma_size` last.
    pub(crate) fn new(bounce_size: u32, max_segs: u32, max_dma: u32) -> Result<Self, ParamError> {
        let size_ok = dma_size_ok;
        if bounce_size != 0 && !size_ok(bounce_size) {
            return Err(ParamError::BounceSize(bounce_size));
        }
        let max_segs = params::max_segs(max_segs).ok_or(ParamError::MaxSegs(max_segs))?;
        if !size_ok(max_dma) {
            return Err(ParamError::MaxDmaSize(max_dma));
        }
        if bounce_size > max_dma {
            return Err(ParamError::BounceAboveMaxDma {
                bounce: bounce_size,
                max_dma,
            });
        }
        Ok(Self {
            bounce_size,
            max_segs,
            max_dma,
        })
    }
}

/// Default `skip_clean_invalidate`, -1, decided at probe by the bounce buffers' DMA mapping
/// ([`skip_clean`]).
pub(crate) const SKIP_CLEAN_AUTO: i32 = -1;

/// What `skip_clean_invalidate` asks for.
///
/// Whether a read into a clean cached bounce buffer skips the invalidate before its transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SkipClean {
    /// On (-1) when the DMA mapping of the cached bounce buffers is their own memory.
    Auto,
    /// Never (0).
    Off,
    /// Always (1).
    On,
}

impl SkipClean {
    /// Checks the module parameter.
    ///
    /// -1, 0 or 1.
    pub(crate) fn from_module(v: i32) -> Result<Self, ParamError> {
        match v {
            SKIP_CLEAN_AUTO => Ok(Self::Auto),
            0 => Ok(Self::Off),
            1 => Ok(Self::On),
            _ => Err(ParamError::SkipCleanInvalidate(v)),
        }
    }
}

/// What the DMA mapping of a host's bounce buffers was found to be at probe.
///
/// Skipping the invalidate of a clean buffer is right when the device reads and writes the
/// buffer itself: the only bytes the invalidate would protect are dirty lines the CPU left,
/// and there are none. When the DMA API moves the data through memory of its own (SWIOTLB
/// bouncing, which 32-bit ARM selects only with `ARM_LPAE` or `XEN`), the mapping's copy from
/// that memory into the buffer on unmap is what the read depends on, and the mapping with
/// `DMA_ATTR_SKIP_CPU_SYNC` is not the DMA API's promise any more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BufferMapping {
    /// No cached bounce buffer (coherent buffers, or none).
    ///
    /// There is nothing to skip.
    NoCachedBuffer,
    /// Every cached buffer's DMA address is its own memory's.
    Identity,
    /// A cached buffer's DMA address is other memory's (a bounce buffer of the DMA API, an
    /// IOMMU's address space).
    Differs,
    /// Not known, as the device has DMA ranges, which the check does not translate.
    Unknown,
}

impl BufferMapping {
    /// Returns the mapping of a host with these buffers and a further one that maps as `other`.
    ///
    /// Any buffer that does not map to itself decides.
    pub(crate) fn and(self, other: Self) -> Self {
        use BufferMapping::*;
        match (self, other) {
            (Differs, _) | (_, Differs) => Differs,
            (Unknown, _) | (_, Unknown) => Unknown,
            (Identity, _) | (_, Identity) => Identity,
            (NoCachedBuffer, NoCachedBuffer) => NoCachedBuffer,
        }
    }
}

/// Why a host skips the invalidate of a clean buffer or not.
///
/// `skip_clean_invalidate` forced it, or it was left at -1 and the mapping decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SkipCleanReason {
    /// `skip_clean_invalidate` is 0 or 1.
    Forced,
    /// Decided (-1) by the buffers' mapping.
    Auto(BufferMapping),
}

impl SkipCleanReason {
    /// Returns the reason in words, as the `bounce` debugfs file and the probe's message give it.
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            Self::Forced => "forced by parameter",
            Self::Auto(BufferMapping::Identity) => "auto: identity mapping",
            Self::Auto(BufferMapping::Differs) => "auto: mapping differs",
            Self::Auto(BufferMapping::Unknown) => "auto: mapping unknown, DMA ranges",
            Self::Auto(BufferMapping::NoCachedBuffer) => "auto: no cached buffer",
        }
    }
}

/// Returns whether a read into a clean cached bounce buffer skips the invalidate before its
/// transfer, and why.
///
/// As `param` says, or with -1 only when every cached buffer maps to its own memory.
pub(crate) fn skip_clean(param: SkipClean, mapping: BufferMapping) -> (bool, SkipCleanReason) {
    match param {
        SkipClean::Off => (false, SkipCleanReason::Forced),
        SkipClean::On => (true, SkipCleanReason::Forced),
        SkipClean::Auto => (
            mapping == BufferMapping::Identity,
            SkipCleanReason::Auto(mapping),
        ),
    }
}

/// The queue limits of the host (`struct mmc_host`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Most DMA segments per request.
    pub(crate) max_segs: u16,
    /// Largest request, in bytes.
    pub(crate) max_req_size: u32,
    /// Largest DMA segment, in bytes.
    pub(crate) max_seg_size: u32,
    /// Largest block, in bytes.
    pub(crate) max_blk_size: u32,
    /// Most blocks per request.
    pub(crate) max_blk_count: u32,
}

impl Limits {
    /// Returns the limits of a host that bounces through buffers of `buffer` bytes.
    ///
    /// A request of up to `max_segs` segments fills at most one buffer (so does one segment), in
    /// blocks of up to `max_blk_size` bytes, and at most `max_blk_count` blocks (the controller's
    /// own limit).
    pub(crate) fn bounced(
        buffer: u32,
        max_segs: u16,
        max_blk_size: u32,
        max_blk_count: u32,
    ) -> Self {
        Self {
            max_segs,
            max_req_size: buffer,
            max_seg_size: buffer,
            max_blk_size,
            max_blk_count: buffer
                .checked_div(max_blk_size)
                .unwrap_or(0)
                .min(max_blk_count),
        }
    }
}

/// Returns the C driver's queue limits, those of a host without a bounce buffer.
///
/// One segment, 128 KiB.
pub(crate) fn c_driver_limits() -> Limits {
    Limits {
        max_segs: 1,
        max_req_size: C_MAX_REQ_SIZE,
        max_seg_size: C_MAX_REQ_SIZE,
        max_blk_size: MAX_BLK_SIZE,
        max_blk_count: C_MAX_BLK_COUNT,
    }
}

/// Returns the queue limits for `params`, given the size of the bounce buffer actually allocated.
///
/// With no buffer (0) they are the C driver's limits, no larger than `max_dma_size`.
pub(crate) fn limits(params: &Params, bounce_buffer: u32) -> Limits {
    if bounce_buffer == 0 {
        let c = c_driver_limits();
        let size = c.max_req_size.min(params.max_dma);
        return Limits {
            max_req_size: size,
            max_seg_size: size,
            ..c
        };
    }
    Limits::bounced(
        bounce_buffer,
        params.max_segs,
        MAX_BLK_SIZE,
        MAX_BLK_COUNT_HW,
    )
}

/// The controller's longest busy wait (R1b), in milliseconds (`max_busy_timeout`).
pub(crate) const MAX_BUSY_TIMEOUT_MS: u32 = 30 * 1000;
/// How long the controller may stay busy after a command's completion interrupt, in milliseconds,
/// when the command leaves the card nothing to do.
///
/// The C driver's 100 ms.
pub(crate) const READY_WAIT_MS: u32 = 100;
/// The longest the card's own waits may add to a deadline, in milliseconds.
///
/// The per-block data timeouts of every block and the R1b busy wait together. A 1024-block SD write
/// allows 3 s per block (51 minutes in all); the controller's busy limit bounds it instead.
pub(crate) const MAX_CARD_WAIT_MS: u32 = MAX_BUSY_TIMEOUT_MS;
/// Added to every software deadline, in milliseconds.
///
/// Scheduling of the interrupt thread and of the deadline's work, and the command and data phases'
/// own slack.
pub(crate) const DEADLINE_MARGIN_MS: u32 = 500;
/// The shortest software deadline, in milliseconds.
///
/// Sdhci's flat software timer. A healthy card never takes this long for a request the sizing below
/// would give less.
pub(crate) const DEADLINE_MIN_MS: u32 = 10 * 1000;
/// Bus clocks per block besides its data.
///
/// Start and end bits, CRC16, and the card's Nac/Ncrc gaps, counted generously.
const BLOCK_OVERHEAD_CLKS: u32 = 64;
/// Bus clocks of a command and its response (48 + 136 bits and the Ncr/Ncc gaps, generously).
const COMMAND_CLKS: u32 = 512;

/// What the software deadline of a request depends on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct DeadlineInput {
    /// The bus clock in Hz (0 or tiny: counted as 100 kHz).
    pub(crate) bus_hz: u32,
    /// Data lines (1, 4 or 8).
    pub(crate) bus_width: u32,
    /// Bytes of data (0: none).
    pub(crate) data_len: u32,
    /// Blocks of data.
    pub(crate) blocks: u32,
    /// The card's data timeout per block (`data->timeout_ns`, `mmc_set_data_timeout()`).
    pub(crate) data_timeout_ns: u32,
    /// The card's data timeout per block in bus clocks (`data->timeout_clks`).
    pub(crate) data_timeout_clks: u32,
    /// Whether the card may hold DAT0 busy after the response (R1b).
    pub(crate) busy: bool,
    /// The busy timeout the core gave the command (`cmd->busy_timeout`), 0 when not set.
    pub(crate) busy_timeout_ms: u32,
}

/// Converts `clks` bus clocks at `khz` kHz to milliseconds, rounded up, in 32-bit arithmetic.
///
/// 32-bit ARM has no 64-bit division in the kernel.
fn clks_to_ms(clks: u32, khz: u32) -> u32 {
    clks.div_ceil(khz.max(1))
}

/// Returns the card's data timeout for one block in milliseconds, rounded up.
///
/// `timeout_ns` and `timeout_clks` of `struct mmc_data` (`mmc_set_data_timeout()`) at a bus clock
/// of `bus_hz` (below 100 kHz counted as 100 kHz).
pub(crate) fn block_timeout_ms(timeout_ns: u32, timeout_clks: u32, bus_hz: u32) -> u32 {
    timeout_ns
        .div_ceil(1_000_000)
        .saturating_add(clks_to_ms(timeout_clks, (bus_hz / 1000).max(100)))
}

/// Returns the R1b busy wait the core allows a command, and a quarter more.
///
/// A card that takes all of it must not meet a limit the scheduling alone can pass.
///
/// The controller's [`MAX_BUSY_TIMEOUT_MS`] if the core gave none.
fn busy_wait_ms(busy_timeout_ms: u32) -> u32 {
    match busy_timeout_ms {
        0 => MAX_BUSY_TIMEOUT_MS,
        t => t.saturating_add(t / 4),
    }
}

/// Returns how long the controller may stay busy (`STAT.CMD_BUSY`, `ESTA[13:11]`) after a command's
/// completion interrupt before the command counts as stuck, in milliseconds.
///
/// Nothing says whether `CMD_BUSY` covers the card's own busy time on DAT0, so the wait allows for
/// it: a write's programming after its last block (`write_block_ms`, the data timeout of one block,
/// 0 for anything but a write) and an R1b command's busy phase (`busy`, with the core's
/// `busy_timeout_ms`); never less than [`READY_WAIT_MS`], never more than [`MAX_BUSY_TIMEOUT_MS`].
pub(crate) fn ready_wait_ms(write_block_ms: u32, busy: bool, busy_timeout_ms: u32) -> u32 {
    let card = if busy {
        busy_wait_ms(busy_timeout_ms)
    } else {
        0
    };
    card.max(write_block_ms)
        .clamp(READY_WAIT_MS, MAX_BUSY_TIMEOUT_MS)
}

/// Returns how long the card itself may make the request wait, in milliseconds.
///
/// The per-block data timeout for every block (the core's `timeout_ns` is per block: a card may
/// stall between any two blocks and stay within it) and the R1b busy wait (the core's busy timeout
/// and a quarter, the controller's 30 s if unset), together at most [`MAX_CARD_WAIT_MS`].
fn card_wait_ms(r: &DeadlineInput) -> u32 {
    let mut ms = 0u32;
    if r.data_len != 0 {
        let per_block = block_timeout_ms(r.data_timeout_ns, r.data_timeout_clks, r.bus_hz);
        ms = per_block.saturating_mul(r.blocks.max(1));
    }
    if r.busy {
        ms = ms.saturating_add(busy_wait_ms(r.busy_timeout_ms));
    }
    ms.min(MAX_CARD_WAIT_MS)
}

/// Returns the software deadline of a request, in milliseconds.
///
/// The command and its data on the bus at the current clock and width, plus a quarter; the card's
/// own waits ([`card_wait_ms`], at most [`MAX_CARD_WAIT_MS`]); plus [`DEADLINE_MARGIN_MS`]; never
/// less than [`DEADLINE_MIN_MS`].
pub(crate) fn request_deadline_ms(r: &DeadlineInput) -> u32 {
    let khz = (r.bus_hz / 1000).max(100);
    let width = match r.bus_width {
        4 | 8 => r.bus_width,
        _ => 1,
    };
    let mut bus = clks_to_ms(COMMAND_CLKS, khz);
    if r.data_len != 0 {
        let data_clks = (r.data_len / width)
            .saturating_mul(8)
            .saturating_add(r.blocks.saturating_mul(BLOCK_OVERHEAD_CLKS));
        bus = bus.saturating_add(clks_to_ms(data_clks, khz));
    }
    bus.saturating_add(bus / 4)
        .saturating_add(card_wait_ms(r))
        .saturating_add(DEADLINE_MARGIN_MS)
        .max(DEADLINE_MIN_MS)
}

/// The bus clocks the controller takes to see DAT1 again.
///
/// `ENHC.SDIO_IRQ_PERIOD` (12, `soc.rs`) and a few more for the latch.
const RELATCH_CLKS: u32 = 12 + 4;

/// Returns how long the DAT1 latch probe waits for DAT1 to latch again, in microseconds, at a bus
/// clock of `bus_hz`.
///
/// [`RELATCH_CLKS`] bus clocks, at least 20 us, at most 200 us (100 kHz and below, or no clock).
pub(crate) fn relatch_window_us(bus_hz: u32) -> u32 {
    let khz = (bus_hz / 1000).max(1);
    (RELATCH_CLKS * 1000).div_ceil(khz).clamp(20, 200)
}

/// Returns what a probe of the DAT1 latch found.
///
/// The DAT1 bits were cleared while the card held DAT1 low, and after [`relatch_window_us`], with
/// no command in between (nothing let DAT1 go and fall again), they had `latched` again and the
/// card held DAT1 low or not (`dat1_low`). `Some(true)`: DAT1 latches on its level; `Some(false)`:
/// on its falling edge (or on its level on a controller that latches nothing while DAT1 is masked,
/// which the probe cannot tell apart); `None`: the card let DAT1 go before anything latched, no
/// evidence either way.
pub(crate) fn relatch_reading(latched: bool, dat1_low: bool) -> Option<bool> {
    match (latched, dat1_low) {
        // Latched again with no falling edge in between: its level.
        (true, _) => Some(true),
        (false, true) => Some(false),
        (false, false) => None,
    }
}

/// The RX phases tuning tried, in order from 0, and the window it settles in.
///
/// The RX phase counts input clocks within one SD clock period (`CLK2.RX_CLK_PHASE`, 0 to the
/// divider's register value), so the last phase neighbours phase 0: a run of working phases
/// that reaches the last phase goes on at phase 0. As Amlogic's own driver does
/// (`aml_sdhc_execute_tuning_()` in `aml_sdhc_m8.c`), the run that ends at the last phase is
/// merged with the one that starts at phase 0; the longest run wins, the first of equal ones
/// (the run starting at phase 0 counts from where it starts once merged: the last run's start).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PhaseScan {
    /// Phases tried so far.
    tried: u32,
    /// The length of the run starting at phase 0, once it has ended (0: none yet).
    first_len: u32,
    /// The run still open.
    ///
    /// Its start and length (0: none).
    cur_start: u32,
    cur_len: u32,
    /// The longest run that has ended.
    best_start: u32,
    best_len: u32,
}

/// The window [`PhaseScan`] settled in.
///
/// `len` phases from `start`, wrapping after the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PhaseWindow {
    /// Its first phase.
    pub(crate) start: u32,
    /// How many phases it holds (at least 1).
    pub(crate) len: u32,
    /// The phase to settle on.
    ///
    /// The middle, `start + len / 2` modulo the phases tried.
    pub(crate) middle: u32,
}

impl PhaseScan {
    /// Records whether the next phase worked (the first call: phase 0).
    pub(crate) fn push(&mut self, ok: bool) {
        let phase = self.tried;
        self.tried = self.tried.saturating_add(1);
        if ok {
            if self.cur_len == 0 {
                self.cur_start = phase;
            }
            self.cur_len += 1;
            return;
        }
        if self.cur_len == 0 {
            return;
        }
        if self.cur_start == 0 {
            self.first_len = self.cur_len;
        }
        if self.cur_len > self.best_len {
            self.best_start = self.cur_start;
            self.best_len = self.cur_len;
        }
        self.cur_len = 0;
    }

    /// Returns the window to settle in, once every phase has been tried.
    ///
    /// `None` if no phase worked.
    pub(crate) fn window(&self) -> Option<PhaseWindow> {
        let (mut start, mut len) = (self.best_start, self.best_len);
        // The last run, merged with the one from phase 0 if that one ended before it (a last
        // run that starts at 0 is every phase).
        let last = if self.cur_len > 0 && self.cur_start > 0 {
            self.cur_len + self.first_len
        } else {
            self.cur_len
        };
        if last > len {
            (start, len) = (self.cur_start, last);
        }
        if len == 0 {
            return None;
        }
        let middle = (start + len / 2) % self.tried;
        Some(PhaseWindow { start, len, middle })
    }
}

/// How many data requests in a row may find the controller still showing activity, with bounce
/// buffers held back after a reset, before those buffers are freed after one more reset anyway.
///
/// A `STAT` whose FIFO counts stick (the C driver's "Failed to clear FIFOs" warning) must not keep
/// them held for good. Each request waits up to 100 ms for idle first (`drain.rs`), so this is
/// about a second: far longer than the FIFO and burst the engine can still hold would take to write
/// (a guess: that time is not measured on the silicon).
pub(crate) const HELD_MAX_TRIES: u32 = 10;

/// What a starting data request does with bounce buffers held back after a reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeldRelease {
    /// The controller shows idle.
    ///
    /// Free them.
    Free,
    /// It does not.
    ///
    /// Keep them; this many requests in a row have found it so.
    Keep(u32),
    /// It has not for [`HELD_MAX_TRIES`] requests in a row.
    ///
    /// Reset it once more and free them.
    Force,
}

/// Decides what to do with held bounce buffers when the controller shows `idle` or not, after
/// `tries` requests in a row found it busy.
pub(crate) fn held_release(idle: bool, tries: u32) -> HeldRelease {
    match (idle, tries.saturating_add(1)) {
        (true, _) => HeldRelease::Free,
        (false, n) if n >= HELD_MAX_TRIES => HeldRelease::Force,
        (false, n) => HeldRelease::Keep(n),
    }
}

/// What the deadline's work does when it runs and finds a request in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// The request is past its deadline.
    ///
    /// Time it out.
    TimeOut,
    /// The work ran early (the timer's granularity, an earlier request's arming, or the
    /// `watchdog_early_ms` fault).
    ///
    /// Arm again for the rest, in milliseconds (at least 1).
    Rearm(u32),
}

/// Returns the decision of the deadline's work for a request due in `left_ns` nanoseconds (due when
/// zero or less).
pub(crate) fn expiry(left_ns: i64) -> Expiry {
    if left_ns <= 0 {
        return Expiry::TimeOut;
    }
    // In 32-bit arithmetic (no 64-bit division on 32-bit ARM): units of 1024 ns rounded up,
    // then 976 of them (999,424 ns) per millisecond, so the rest is never underestimated.
    let units = u32::try_from(left_ns.saturating_add(1023) >> 10).unwrap_or(u32::MAX);
    Expiry::Rearm(units.div_ceil(976).max(1))
}

/// Returns how long after its start the watchdog is armed for a request whose deadline is
/// `deadline_ms`.
///
/// The deadline, or `early_ms` less (a fault injected through debugfs that makes the work run
/// before its request is due, which must then re-arm), at least 1 ms.
pub(crate) fn arm_after_ms(deadline_ms: u32, early_ms: u32) -> u32 {
    deadline_ms.saturating_sub(early_ms).max(1)
}

/// Every interrupt source of `ICTL`/`ISTA`, bits 14:0.
pub(crate) const ALL_IRQS: u32 = 0x7fff;
/// The SDIO card interrupts of `ICTL`/`ISTA`, `DAT1_IRQ` and `ADDI_DAT1_IRQ`.
///
/// `DAT1_IRQ` (bit 10) is DAT1 low while the bus is idle, `ADDI_DAT1_IRQ` (bit 14) DAT1 low in the
/// interrupt period between two blocks of a 4-bit transfer.
pub(crate) const DAT1_IRQS: u32 = (1 << 10) | (1 << 14);
/// The interrupts of `ICTL`/`ISTA` of a command and its data, all but the SDIO card's.
pub(crate) const CMD_IRQS: u32 = ALL_IRQS & !DAT1_IRQS;

/// The error bits of `ICTL`/`ISTA` of a command and its data.
///
/// `RESP_TIMEOUT`, `RESP_ERR_CRC`, `DATA_TIMEOUT`, `DATA_ERR_CRC`, `RXFIFO_FULL`, `TXFIFO_EMPTY`.
pub(crate) const ERROR_IRQS: u32 =
    (1 << 1) | (1 << 2) | (1 << 5) | (1 << 6) | (1 << 12) | (1 << 13);
/// The error bits the second `ISTA` read after a completion counts (`irq.rs`, `final_status`).
///
/// A data phase's CRC error and timeout, and the response errors of an automatic CMD12. Not the
/// FIFO bits: `TXFIFO_EMPTY` ("TxFIFO Empty" in Amlogic's header, at a threshold every driver
/// leaves at 0) may latch as the FIFO drains after a write's `DMA_DONE`, which would fail every
/// write. The first read, in the interrupt handler, does count it (as the C driver does): there it
/// may be an underrun during the transfer, and if it is only the FIFO drained after `DMA_DONE` of a
/// handler that ran late, the write fails and the core retries it; the other way round a write the
/// card got wrong would be reported written.
pub(crate) const LATE_ERROR_IRQS: u32 = (1 << 1) | (1 << 2) | (1 << 5) | (1 << 6);

/// What an interrupt of the controller is for.
///
/// The enabled sources that are pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IrqSources {
    /// The SDIO card interrupts (`DAT1_IRQS`).
    pub(crate) sdio: bool,
    /// The command in flight (`CMD_IRQS`).
    pub(crate) cmd: bool,
}

impl IrqSources {
    /// Creates the sources `ICTL` enables and `ISTA` has latched.
    pub(crate) fn new(ictl: u32, ista: u32) -> Self {
        let pending = ictl & ista;
        Self {
            sdio: pending & DAT1_IRQS != 0,
            cmd: pending & CMD_IRQS != 0,
        }
    }
}

/// The `ISTA.ADDI_DAT1_IRQ` bit, DAT1 low between two blocks of a transfer.
pub(crate) const ADDI_DAT1_IRQ: u32 = 1 << 14;

/// Returns the DAT1 bits of `enabled` to stop using after a write of 1 to them in `ISTA` left
/// `ista` (read back right after).
///
/// Those still set while DAT1 is high (`dat1_low` false), so that nothing can have latched them
/// again. A bit that does not clear, enabled, would raise the interrupt again at every ack, for
/// good: an interrupt storm of calls that find nothing pending. While DAT1 is low nothing is
/// decided (0): the card may have latched it again.
pub(crate) fn dat1_stuck_bits(enabled: u32, ista: u32, dat1_low: bool) -> u32 {
    if dat1_low {
        return 0;
    }
    enabled & ista & DAT1_IRQS
}

/// Returns the `ICTL` interrupt enables for a command's interrupts `cmd` with the SDIO card
/// interrupts `dat1`.
///
/// Only [`CMD_IRQS`] of `cmd` and [`DAT1_IRQS`] of `dat1` count; `dat1` 0 is off.
///
/// The other bits of `ICTL` (the DAT1 interrupt delay) are 0: two bus clocks of DAT1 low.
pub(crate) fn ictl_enables(cmd: u32, dat1: u32) -> u32 {
    (cmd & CMD_IRQS) | (dat1 & DAT1_IRQS)
}

/// The bits of `ISTA` that end a command without data (`RESP_OK`, `RESP_TIMEOUT`, `RESP_ERR_CRC`).
pub(crate) const RESP_DONE_IRQS: u32 = (1 << 0) | (1 << 1) | (1 << 2);

/// Returns whether a request with a stop command (a multi-block transfer) whose command failed as
/// `cmd` and whose data failed as `data` may have left the card in its sending-data or
/// receiving-data state, which only that stop (CMD12) ends.
///
/// The card took the command and its data phase ended early. After a successful transfer the
/// controller sends CMD12 itself; after a failed one nothing says it does (FreeBSD's driver: only
/// after a successful one). So: a data CRC error or timeout (a write's CRC status included), a FIFO
/// error of the DMA during the data phase, a response that failed its CRC check (the card answered,
/// so it took the command), or no interrupt before the deadline (the controller froze
/// mid-transfer). Not a response timeout alone, after which the card may never have taken the
/// command; not a controller that only stayed busy afterwards ([`ErrorKind::NotReady`], its
/// transfer reported complete) nor a read whose last words did not leave the FIFO
/// ([`ErrorKind::Flush`]): the controller's own CMD12 ended those.
pub(crate) fn stop_after_error(cmd: Option<ErrorKind>, data: Option<ErrorKind>) -> bool {
    matches!(data, Some(ErrorKind::DataCrc | ErrorKind::DataTimeout))
        || cmd.is_some_and(ErrorKind::card_took_command)
}

impl ErrorKind {
    /// Returns whether a command that failed so reached the card, which may have started its data
    /// phase.
    ///
    /// A FIFO error or a response CRC error (the card answered), or the deadline.
    const fn card_took_command(self) -> bool {
        matches!(self, Self::Fifo | Self::CmdCrc) || self.is_deadline()
    }

    /// Returns whether it is [`ErrorKind::Deadline`].
    const fn is_deadline(self) -> bool {
        matches!(self, Self::Deadline)
    }
}

/// Per-host statistics (the driver's debugfs file `stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    /// The counters of requests, as the SD card slot's driver keeps them too.
    pub(crate) req: Requests,
    /// Interrupts that came for a request already finished (its deadline fired first).
    ///
    /// They were ignored.
    pub(crate) late_interrupts: u64,
    /// Requests given a bounce buffer in `pre_req` (double buffering; a write copied then).
    pub(crate) prepared: u64,
    /// Reads copied out of their bounce buffer in `post_req` (double buffering).
    pub(crate) post_req_copies: u64,
    /// Times the deadline's work ran before its request was due and armed itself again.
    pub(crate) deadline_rearms: u64,
    /// Commands whose error bits latched after their completion bit, found by reading `ISTA`
    /// again once the controller was idle.
    pub(crate) late_status: u64,
    /// Requests the deadline found completed in `ISTA` (an interrupt that did not arrive).
    ///
    /// Completed as the interrupt would have.
    pub(crate) deadline_completed: u64,
    /// The SDIO card interrupt's counters.
    pub(crate) sdio: SdioIrqStats,
    /// Controller resets after an error or a deadline, before memory was handed back.
    pub(crate) quiesce_resets: u64,
    /// Microseconds spent after those resets waiting for the DMA engine to drain.
    pub(crate) quiesce_wait_us: u64,
    /// Of those resets, the ones after which the controller still showed activity.
    pub(crate) quiesce_busy: u64,
    /// Bounce buffers held back after such a reset until the controller showed idle.
    pub(crate) held_back: u64,
    /// Times held buffers were freed after another reset without the controller showing idle.
    pub(crate) held_forced: u64,
    /// Stop commands (CMD12) the driver sent after a failed multi-block transfer.
    pub(crate) error_stops: u64,
    /// Of those, the ones that failed (no response, a CRC error, a controller or card still busy).
    ///
    /// The core's recovery has the card to bring back.
    pub(crate) error_stops_failed: u64,
}

impl Stats {
    /// Returns all zero.
    pub(crate) const fn new() -> Self {
        Self {
            req: Requests::new(),
            late_interrupts: 0,
            prepared: 0,
            post_req_copies: 0,
            deadline_rearms: 0,
            late_status: 0,
            deadline_completed: 0,
            sdio: SdioIrqStats::new(),
            quiesce_resets: 0,
            quiesce_wait_us: 0,
            quiesce_busy: 0,
            held_back: 0,
            held_forced: 0,
            error_stops: 0,
            error_stops_failed: 0,
        }
    }

    /// Returns the count of errors of `kind`.
    pub(crate) fn error_count(&self, kind: ErrorKind) -> u64 {
        self.req.error_count(kind)
    }

    /// Counts a command without data that completed, maybe with an error.
    pub(crate) fn record_command(&mut self, error: Option<ErrorKind>) {
        self.req.record_command(error);
    }

    /// Counts a completed data request.
    pub(crate) fn record(&mut self, o: &Outcome) {
        self.req.record(o);
    }

    /// Counts an interrupt for a request that is no longer in flight.
    pub(crate) fn record_late_interrupt(&mut self) {
        self.late_interrupts = self.late_interrupts.wrapping_add(1);
    }

    /// Counts a request given a bounce buffer in `pre_req`.
    pub(crate) fn record_prepared(&mut self) {
        self.prepared = self.prepared.wrapping_add(1);
    }

    /// Counts a read copied out of its bounce buffer in `post_req`.
    pub(crate) fn record_post_req_copy(&mut self) {
        self.post_req_copies = self.post_req_copies.wrapping_add(1);
    }

    /// Counts a write whose data `pre_req` mapped.
    pub(crate) fn record_pre_mapped(&mut self) {
        self.req.record_pre_mapped();
    }

    /// Counts a deadline's work that ran early and armed itself again.
    pub(crate) fn record_deadline_rearm(&mut self) {
        self.deadline_rearms = self.deadline_rearms.wrapping_add(1);
    }

    /// Counts a command whose error bits latched after its completion bit.
    pub(crate) fn record_late_status(&mut self) {
        self.late_status = self.late_status.wrapping_add(1);
    }

    /// Counts a request the deadline found completed.
    pub(crate) fn record_deadline_completed(&mut self) {
        self.deadline_completed = self.deadline_completed.wrapping_add(1);
    }

    /// Counts an SDIO card interrupt found by the driver's timer.
    pub(crate) fn record_sdio_irq_recovered(&mut self) {
        self.sdio.irq_recovered = self.sdio.irq_recovered.wrapping_add(1);
    }

    /// Counts a probe of the silicon's DAT1 latch.
    ///
    /// Whether DAT1 latched again.
    pub(crate) fn record_dat1_probe(&mut self, relatched: bool) {
        let n = if relatched {
            &mut self.sdio.dat1_relatched
        } else {
            &mut self.sdio.dat1_not_relatched
        };
        *n = n.wrapping_add(1);
    }

    /// Counts a bounce buffer held back after a reset.
    pub(crate) fn record_held_back(&mut self) {
        self.held_back = self.held_back.wrapping_add(1);
    }

    /// Counts held buffers freed without the controller showing idle.
    pub(crate) fn record_held_forced(&mut self) {
        self.held_forced = self.held_forced.wrapping_add(1);
    }

    /// Counts a stop command sent after a failed transfer, and whether it succeeded.
    pub(crate) fn record_error_stop(&mut self, ok: bool) {
        self.error_stops = self.error_stops.wrapping_add(1);
        if !ok {
            self.error_stops_failed = self.error_stops_failed.wrapping_add(1);
        }
    }

    /// Counts a quiescing reset, the time waited after it for the DMA engine and whether the
    /// controller showed idle then.
    pub(crate) fn record_quiesce(&mut self, waited_us: u32, idle: bool) {
        self.quiesce_resets = self.quiesce_resets.wrapping_add(1);
        self.quiesce_wait_us = self.quiesce_wait_us.wrapping_add(u64::from(waited_us));
        if !idle {
            self.quiesce_busy = self.quiesce_busy.wrapping_add(1);
        }
    }

    /// Counts a request that failed before it reached the controller.
    pub(crate) fn record_setup_error(&mut self) {
        self.req.record_setup_error();
    }
}

/// The SDIO card interrupt's counters, in the statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SdioIrqStats {
    /// SDIO card interrupts the driver's timer found that no interrupt had reported.
    pub(crate) irq_recovered: u64,
    /// Probes of the silicon's DAT1 latch (the first 16 SDIO card interrupts still held when
    /// serviced).
    ///
    /// DAT1 latched again after it was cleared while held low (level) ...
    pub(crate) dat1_relatched: u64,
    /// ... or not (edge).
    pub(crate) dat1_not_relatched: u64,
}

impl SdioIrqStats {
    /// Returns all zero.
    const fn new() -> Self {
        Self {
            irq_recovered: 0,
            dat1_relatched: 0,
            dat1_not_relatched: 0,
        }
    }
}

/// The counters' lines in the statistics file.
impl fmt::Display for SdioIrqStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "sdio_irq_recovered: {}", Dec(self.irq_recovered))?;
        writeln!(f, "dat1_relatched: {}", Dec(self.dat1_relatched))?;
        writeln!(f, "dat1_not_relatched: {}", Dec(self.dat1_not_relatched))
    }
}

/// The text of the statistics file.
///
/// One `name: value` per line, the errors and the request sizes last ([`Requests`]).
impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.req, f)?;
        writeln!(f, "late_interrupts: {}", Dec(self.late_interrupts))?;
        writeln!(f, "prepared: {}", Dec(self.prepared))?;
        writeln!(f, "post_req_copies: {}", Dec(self.post_req_copies))?;
        writeln!(f, "deadline_rearms: {}", Dec(self.deadline_rearms))?;
        writeln!(f, "late_status: {}", Dec(self.late_status))?;
        writeln!(f, "deadline_completed: {}", Dec(self.deadline_completed))?;
        fmt::Display::fmt(&self.sdio, f)?;
        writeln!(f, "quiesce_resets: {}", Dec(self.quiesce_resets))?;
        writeln!(f, "quiesce_wait_us: {}", Dec(self.quiesce_wait_us))?;
        writeln!(f, "quiesce_busy: {}", Dec(self.quiesce_busy))?;
        writeln!(f, "held_back: {}", Dec(self.held_back))?;
        writeln!(f, "held_forced: {}", Dec(self.held_forced))?;
        writeln!(f, "error_stops: {}", Dec(self.error_stops))?;
        writeln!(f, "error_stops_failed: {}", Dec(self.error_stops_failed))?;
        self.req.fmt_errors(f, &ErrorKind::ALL)?;
        self.req.fmt_sizes(f)
    }
}

#[cfg(any(test, CONFIG_KUNIT))]
#[path = "logic/tests.rs"]
pub(crate) mod tests;
