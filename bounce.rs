// SPDX-License-Identifier: GPL-2.0

//! The bounce buffer.
//!
//! One request carries many scatterlist segments although the controller has a single DMA address
//! register.
//!
//! Without it the host takes a request only if its scatterlist maps to a single DMA segment,
//! which limits it to one segment (`max_segs` 1, as the C driver). With a [`Bouncer`] it
//! advertises up to `max_segs` segments per request
//! ([`Limits::bounced`](crate::logic::Limits::bounced)): a request whose data
//! maps to one DMA segment still goes to the controller in place ("direct"), one of more
//! segments is copied through a physically contiguous buffer ("bounced"). The buffer is
//! DMA-coherent memory, or cached memory mapped with the streaming DMA API for every transfer
//! ([`buffer`]); it is never accessed through Rust references, the scatterlist copies of
//! `kernel::dma::cpu_copy` (`CpuBuffer`) take its raw address.
//!
//! A cached buffer is mapped for the device before a transfer (a write's data cleaned, a
//! read's range invalidated) and unmapped after it (a read's range invalidated again), by the
//! same request's code that took the buffer; every path that frees a buffer unmaps it. With
//! `skip_clean_invalidate` a read's mapping skips its invalidate when no byte of the buffer can
//! be in a dirty cache line ([`MapSync::SkipIfClean`]): the CPU only writes the buffer when it
//! copies a write in, which is noted before the copy starts and cleaned by the write's mapping.
//! That rests on the device being given the buffer's own memory: with the default (-1) it is on
//! only when the first mapping of every cached buffer, made at probe, reaches the buffer itself
//! and not a copy the DMA API bounces the data through (SWIOTLB), see
//! [`Buffers::skip_clean`].
//!
//! With one buffer a write is copied into it before its command starts and a read copied out
//! after the controller completed it, and only if neither the command nor the data phase
//! reported an error ([`logic::copy_back_len`](crate::logic::copy_back_len)): a failed read
//! never overwrites the caller's memory. With two buffers (`double_buffer`) a write may be
//! copied into a free buffer in `pre_req` and a read copied out of its buffer in `post_req`,
//! while the controller moves the other buffer; the buffers' state machine (`slots`) decides
//! who holds which buffer, so that the CPU and the controller never use the same one at the
//! same time (the MMC core has at most one request in flight per host).
//!
//! The policy is this driver's: which requests it bounces, how many buffers of which memory,
//! when a read is copied back. The MMC core keeps no bounce buffer for its hosts, and sdhci
//! keeps its own in `sdhci.c`; what a host needs from the kernel crate is the DMA mapping of a
//! request and the CPU copies between its scatterlist and a buffer (`kernel::mmc`), and cached
//! DMA memory (`kernel::dma::noncoherent`).

mod buffer;
mod policy;
// `pre_req` and `post_req`: a buffer prepared while the previous request runs.
mod prepare;
// Who holds which of the buffers.
mod slots;
// A read's last words in memory before its data is used.
mod tail;

use kernel::{
    debugfs::Writer,
    device::{
        Bound,
        Device, //
    },
    dma::DataDirection,
    new_mutex,
    prelude::*,
    sync::{
        atomic::{
            Atomic,
            Relaxed, //
        },
        Mutex, //
    }, //
};

use crate::kernel_ext::dma::noncoherent::{
    MapSync,
    Mapping,
    SyncCounts, //
};
use crate::logic::SkipCleanReason;
use crate::mmc::{
    DmaMapError,
    DmaRequest, //
};

use buffer::{
    BounceBuffer,
    Memory, //
};

use policy::{
    DataPath,
    PathError, //
};

use slots::Slots;

use tail::{
    TailCounts,
    TailState, //
};

pub(crate) use buffer::Buffers;
pub(crate) use slots::Slot;

/// The most bounce buffers of a host.
///
/// Two for double buffering.
pub(crate) const MAX_BUFFERS: usize = 2;

/// Where the controller finds a request's data.
pub(crate) struct DataSetup {
    /// The DMA address to program.
    pub(crate) dma_addr: u64,
    /// The bounce buffer it is in, if bounced.
    pub(crate) slot: Option<Slot>,
}

/// The cache state of one bounce buffer, for its debugfs file.
#[derive(Clone, Copy)]
pub(crate) enum BufferCache {
    /// Coherent memory, with no cache maintenance.
    Coherent,
    /// Cached memory, with whether no byte can be in a dirty cache line and how many reads
    /// invalidated it before the transfer or skipped that.
    Cached {
        /// Whether it is clean.
        clean: bool,
        /// The counts.
        counts: SyncCounts,
    },
}

/// What the bounce buffers' debugfs file shows.
#[derive(Clone, Copy)]
pub(crate) struct CacheState {
    /// Whether a read skips its first invalidate when the buffer is clean.
    pub(crate) skip_clean: bool,
    /// Why.
    pub(crate) skip_reason: SkipCleanReason,
    /// Per buffer, `None` if it does not exist.
    pub(crate) bufs: [Option<BufferCache>; MAX_BUFFERS],
}

/// The bounce policy of the host, with its buffers.
#[pin_data]
pub(crate) struct Bouncer {
    /// One buffer, or two for double buffering (`bufs[0]` exists if any does).
    bufs: [Option<BounceBuffer>; MAX_BUFFERS],
    /// Who holds which buffer.
    #[pin]
    slots: Mutex<Slots>,
    /// `dma_get_merge_boundary()` of the controller.
    ///
    /// 0 when a DMA mapping never merges scatterlist entries (see
    /// [`policy::segments_without_mapping`]).
    merge_boundary: usize,
    /// The longest transfer the controller is given to one DMA address.
    max_direct: u32,
    /// The mapping of each cached buffer while the controller may use it.
    #[pin]
    maps: Mutex<[Option<Mapping>; MAX_BUFFERS]>,
    /// Whether a read's mapping skips its invalidate when its buffer is clean.
    skip_clean: bool,
    /// The reason, `skip_clean_invalidate` or the buffers' DMA mapping.
    skip_reason: SkipCleanReason,
    /// Whether every read is bounced and its last words are seen in memory before its data is
    /// used (`dram_write_check`, [`tail`]).
    check_tail: bool,
    /// The number of the next read whose last burst is marked.
    tail_seq: Atomic<u32>,
    /// What the checks saw.
    tail_counts: TailCounts,
    /// The marks of each buffer.
    #[pin]
    tails: Mutex<[TailState; MAX_BUFFERS]>,
}

impl Bouncer {
    /// Creates the policy with the buffers `bufs` for a controller whose DMA mapping has the merge
    /// boundary `merge_boundary` and which is given at most `max_direct` bytes to one DMA address.
    ///
    /// With no buffer every request must map to one segment; with two, data is copied in `pre_req`
    /// and `post_req`. The merge boundary is `kernel::mmc::dma_merge_boundary`; longer single
    /// segments than `max_direct` are bounced.
    ///
    /// With `skip_clean` (given with its reason, which the `bounce` file shows) a read into a
    /// cached buffer with no dirty cache line skips the invalidate before the transfer
    /// ([`MapSync::SkipIfClean`]). With `check_tail` every read is bounced and its data used only
    /// once its last words are in memory ([`tail`]).
    pub(crate) fn new(
        bufs: [Option<BounceBuffer>; MAX_BUFFERS],
        merge_boundary: usize,
        max_direct: u32,
        (skip_clean, skip_reason): (bool, SkipCleanReason),
        check_tail: bool,
    ) -> impl PinInit<Self> {
        let count = bufs.iter().take_while(|b| b.is_some()).count();
        pin_init!(Self {
            bufs,
            slots <- new_mutex!(Slots::new(count), "meson_mx_sdhc_rs::bounce::slots"),
            merge_boundary,
            max_direct,
            maps <- new_mutex!([None, None], "meson_mx_sdhc_rs::bounce::maps"),
            skip_clean,
            skip_reason,
            check_tail,
            tail_seq: Atomic::new(0),
            tail_counts: TailCounts::new(),
            tails <- new_mutex!(
                [TailState::default(); MAX_BUFFERS],
                "meson_mx_sdhc_rs::bounce::tails"
            ),
        })
    }

    /// Returns the clean or dirty state of the buffers and the counts of reads' first invalidates.
    pub(crate) fn cache_state(&self) -> CacheState {
        let mut st = CacheState {
            skip_clean: self.skip_clean,
            skip_reason: self.skip_reason,
            bufs: [None; MAX_BUFFERS],
        };
        for (buf, out) in self.bufs.iter().zip(st.bufs.iter_mut()) {
            *out = buf.as_ref().map(|buf| match buf.pages() {
                None => BufferCache::Coherent,
                Some(p) => BufferCache::Cached {
                    clean: p.is_clean(),
                    counts: p.counts(),
                },
            });
        }
        st
    }

    /// Returns how a read's mapping treats its first invalidate.
    fn read_sync(&self) -> MapSync {
        if self.skip_clean {
            MapSync::SkipIfClean
        } else {
            MapSync::Always
        }
    }

    /// Hands the first `len` bytes of buffer `slot` to the controller for a transfer in `dir` and
    /// keeps its mapping.
    ///
    /// A mapping left from an earlier user of the buffer is undone first. Returns the DMA address.
    fn map_slot(
        &self,
        dev: &Device<Bound>,
        buf: &BounceBuffer,
        slot: Slot,
        len: u32,
        dir: DataDirection,
    ) -> Result<u64> {
        self.unmap_slot(slot);
        let sync = if dir == DataDirection::FromDevice {
            self.arm_tail(dev, buf, slot, len)?;
            self.read_sync()
        } else {
            self.disarm_tail(slot);
            MapSync::Always
        };
        let (addr, mapping) = buf.to_device(dev, len, dir, sync)?;
        if let Some(s) = self.maps.lock().get_mut(slot.index()) {
            *s = mapping;
        }
        Ok(addr)
    }

    /// Returns the DMA address of buffer `slot`, which `pre_req` handed to the controller.
    fn prepared_address(&self, buf: &BounceBuffer, slot: Slot) -> Result<u64> {
        #[allow(clippy::useless_conversion)]
        match &buf.mem {
            Memory::Coherent(c) => Ok(u64::from(c.dma_address())),
            Memory::Cached(_) => self
                .maps
                .lock()
                .get(slot.index())
                .and_then(Option::as_ref)
                .map(|m| u64::from(m.dma_address()))
                .ok_or(EIO),
        }
    }

    /// Returns whether a request that fits a buffer is bounced even when its data could go to the
    /// controller in place.
    ///
    /// `force` (the `force_bounce` test knob), or a read whose last words are checked in memory
    /// ([`tail`]).
    fn bounce_all(&self, force: bool, write: bool) -> bool {
        force || (self.check_tail && !write)
    }

    /// Takes buffer `slot` back from the controller.
    ///
    /// Unmaps it if it is mapped. Returns whether that went right (nothing mapped is right).
    fn unmap_slot(&self, slot: Slot) -> bool {
        let mapping = self
            .maps
            .lock()
            .get_mut(slot.index())
            .and_then(Option::take);
        match (self.buf(slot), mapping) {
            (Some(buf), m) => buf.to_cpu(m).is_ok(),
            (None, m) => m.is_none(),
        }
    }

    fn buf(&self, slot: Slot) -> Option<&BounceBuffer> {
        self.bufs.get(slot.index())?.as_ref()
    }

    /// Returns the size of each bounce buffer in bytes, 0 for none.
    pub(crate) fn size(&self) -> u32 {
        self.bufs[0].as_ref().map_or(0, BounceBuffer::size)
    }

    /// Returns the number of DMA segments of the request's data.
    ///
    /// Without an IOMMU a list of more than one entry is not mapped at all: its segment count is
    /// its length. Otherwise it is mapped to count its segments.
    fn segments(&self, dev: &Device, mrq: &mut DmaRequest) -> Result<u32> {
        if let Some(n) = mrq.pre_mapped_segments() {
            return Ok(n);
        }
        let sg_len = mrq.data().map_or(0, |d| d.sg_len());
        if let Some(n) = policy::segments_without_mapping(sg_len, self.merge_boundary) {
            return Ok(n);
        }
        Ok(mrq.map_count().inspect_err(|e| match e {
            DmaMapError::MapFailed => dev_err!(dev, "dma_map_sg failed\n"),
            e => dev_err!(dev, "cannot map the request's data: {:?}\n", e),
        })?)
    }

    /// Chooses the data path of the request and sets it up.
    ///
    /// A single DMA segment stays mapped for the controller; a scatterlist of more segments goes
    /// through a bounce buffer (a write is copied into it here unless `pre_req` did). `force`
    /// bounces whatever fits (the `force_bounce` test knob); when `copy_in_fault` (the
    /// `bounce_copy_in_faults` test knob, asked once per copy of a write into a buffer) returns
    /// true, the copy stops halfway and fails.
    ///
    /// Called from `request` (process context, the host claimed): it takes the buffers' mutex
    /// and copies a write's data, so it may sleep.
    pub(crate) fn set_up(
        &self,
        dev: &Device,
        mrq: &mut DmaRequest,
        force: bool,
        copy_in_fault: &dyn Fn() -> bool,
    ) -> Result<DataSetup> {
        let segments = self.segments(dev, mrq)?;
        let len = mrq.data_len();
        let offset = mrq.data().map_or(0, |d| d.sg_first_offset());
        let force = self.bounce_all(force, mrq.data().is_some_and(|d| d.is_write()));
        match policy::data_path(segments, offset, len, self.size(), self.max_direct, force) {
            Ok(DataPath::Direct) => {
                if mrq.data().is_some_and(|d| d.host_cookie() > 0) {
                    // Prepared for the bounce buffer, then sent direct: drop what it held.
                    self.slots.lock().drop_stale(mrq.addr());
                }
                // The controller uses the request's memory itself: hand it over, one segment
                // of the whole length.
                let (dma_addr, len) = mrq.dma_for_device().ok_or(EIO)?;
                if len != mrq.data_len() {
                    mrq.unmap();
                    return Err(EIO);
                }
                Ok(DataSetup {
                    dma_addr,
                    slot: None,
                })
            }
            Ok(DataPath::Bounce) if self.size() != 0 => {
                // The CPU copies the data: no mapping may be left on the scatterlist.
                mrq.unmap();
                self.set_up_bounce(dev, mrq, copy_in_fault)
            }
            Ok(DataPath::Bounce) | Err(PathError::NoSegments) => {
                mrq.unmap();
                Err(EINVAL)
            }
            Err(PathError::Unaligned {
                offset,
                len,
                bounce,
            }) => {
                dev_err!(
                    dev,
                    "request of {} bytes at offset {:#x}: not a multiple of the {}-byte DMA unit, bounce buffer: {} bytes\n",
                    len,
                    offset,
                    policy::DMA_GRANULE,
                    bounce
                );
                mrq.unmap();
                Err(EINVAL)
            }
            Err(PathError::TooBig {
                segments,
                len,
                bounce,
            }) => {
                dev_err!(
                    dev,
                    "request of {} bytes mapped to {} DMA segments, bounce buffer: {} bytes\n",
                    len,
                    segments,
                    bounce
                );
                mrq.unmap();
                Err(EINVAL)
            }
        }
    }

    /// Gives the bounced request a buffer.
    ///
    /// The one `pre_req` filled, or one taken now (a write is copied into it).
    fn set_up_bounce(
        &self,
        dev: &Device,
        mrq: &DmaRequest,
        copy_in_fault: &dyn Fn() -> bool,
    ) -> Result<DataSetup> {
        let cookie = mrq.data().map_or(0, |d| d.host_cookie());
        let Some((slot, prepared)) = self.slots.lock().start(mrq.addr(), cookie).taken() else {
            dev_err!(dev, "no bounce buffer free for the request\n");
            return Err(EBUSY);
        };
        let Some(buf) = self.buf(slot) else {
            self.release(slot);
            return Err(EIO);
        };
        // The host's bound device, which maps the buffer while the request is in flight.
        let bound = mrq.bound_device();
        if let Err(e) = self.settle_tail(bound, buf, slot) {
            self.release(slot);
            return Err(e);
        }
        let len = mrq.data_len();
        let synced = if prepared {
            self.prepared_address(buf, slot)
        } else if !mrq.data().is_some_and(|d| d.is_write()) {
            // No dirty cache line may be written back over what the controller stores.
            self.map_slot(bound, buf, slot, len, DataDirection::FromDevice)
        } else {
            // A mapping left by a request this buffer was prepared for goes before the CPU
            // writes.
            self.unmap_slot(slot);
            let copied = match buf.cpu_write(len) {
                Ok(cpu) if copy_in_fault() => mrq.copy_to_buffer(cpu.buffer(), len / 2),
                Ok(cpu) => mrq.copy_to_buffer(cpu.buffer(), len),
                Err(_) => 0,
            };
            if copied != len {
                dev_err!(
                    dev,
                    "copied {} of {} bytes into the bounce buffer\n",
                    copied,
                    len
                );
                self.release(slot);
                return Err(EIO);
            }
            self.map_slot(bound, buf, slot, len, DataDirection::ToDevice)
        };
        let dma_addr = match synced {
            Ok(a) => a,
            Err(e) => {
                dev_err!(dev, "cannot hand {} bytes of the bounce buffer over\n", len);
                self.release(slot);
                return Err(e);
            }
        };
        Ok(DataSetup {
            dma_addr,
            slot: Some(slot),
        })
    }

    /// Frees buffer `slot` of a request that failed or needs nothing copied (the controller is done
    /// with it).
    ///
    /// It is unmapped first. Process context (it takes the buffers' mutex).
    pub(crate) fn release(&self, slot: Slot) {
        self.disarm_tail(slot);
        self.unmap_slot(slot);
        self.slots.lock().finish(slot, None);
    }

    /// Completes the request on buffer `slot` once the controller is quiesced.
    ///
    /// `len` bytes of read data (0: none, or an error was set) go into the request now, or wait in
    /// the buffer for `post_req` if the request was prepared for that. Fails (the caller fails the
    /// request) if not all was copied.
    ///
    /// Process context only: it takes the buffers' mutex and copies the data, so it may
    /// sleep. The driver calls it when it completes a request (`Sdhc::complete`), from its
    /// threaded interrupt handler or from the watchdog's work item (the deadline's expiry),
    /// never from the hard interrupt handler.
    pub(crate) fn complete(&self, dev: &Device, mrq: &DmaRequest, slot: Slot, len: u32) -> Result {
        if len == 0 {
            self.release(slot);
            return Ok(());
        }
        if self.check_tail {
            let unmapped = self.unmap_slot(slot);
            let checked = match self.buf(slot) {
                Some(buf) if unmapped => {
                    let bound = mrq.bound_device();
                    self.check_tail(bound, buf, slot)
                        .and_then(|()| buf.invalidate_landed(bound, len))
                }
                _ => Err(EIO),
            };
            if let Err(e) = checked {
                self.release(slot);
                return Err(e);
            }
        }
        {
            let mut slots = self.slots.lock();
            if slots.defers_copy_out(slot) {
                slots.finish(slot, Some(len));
                return Ok(());
            }
        }
        let unmapped = self.unmap_slot(slot);
        let copied = self.buf(slot).map_or(0, |buf| match buf.cpu_read() {
            Ok(cpu) if unmapped => mrq.copy_from_buffer(cpu.buffer(), len),
            _ => 0,
        });
        self.release(slot);
        if copied != len {
            dev_err!(
                dev,
                "copied {} of {} bytes out of the bounce buffer\n",
                copied,
                len
            );
            return Err(EIO);
        }
        Ok(())
    }
}

/// The `bounce` file.
///
/// `skip_clean_invalidate` with why (`forced by parameter`, or `auto:` and what the buffers' DMA
/// mapping was found to be); `dram_write_check` with the reads whose last words were looked for in
/// memory (`tail_checks`), not there at the first look (`tail_waits`) and failed for it
/// (`tail_late`); then per buffer `bufferN: coherent`, or `bufferN: clean` or `dirty` (maybe dirty)
/// with the reads that invalidated it before their transfer (`bufferN_read_invalidates_done`) and
/// those that skipped that (`..._skipped`).
impl Writer for Bouncer {
    fn write(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let st = self.cache_state();
        writeln!(
            f,
            "skip_clean_invalidate: {} ({})",
            u8::from(st.skip_clean),
            st.skip_reason.as_str()
        )?;
        writeln!(f, "dram_write_check: {}", u8::from(self.check_tail))?;
        let t = &self.tail_counts;
        writeln!(f, "tail_checks: {}", t.checked.load(Relaxed))?;
        writeln!(f, "tail_waits: {}", t.waited.load(Relaxed))?;
        writeln!(f, "tail_late: {}", t.late.load(Relaxed))?;
        for (i, b) in st.bufs.iter().enumerate() {
            match b {
                None => {}
                Some(BufferCache::Coherent) => writeln!(f, "buffer{}: coherent", i)?,
                Some(BufferCache::Cached { clean, counts }) => {
                    writeln!(f, "buffer{}: {}", i, if *clean { "clean" } else { "dirty" })?;
                    writeln!(
                        f,
                        "buffer{}_read_invalidates_done: {}",
                        i, counts.invalidates_done
                    )?;
                    writeln!(
                        f,
                        "buffer{}_read_invalidates_skipped: {}",
                        i, counts.invalidates_skipped
                    )?;
                }
            }
        }
        Ok(())
    }
}
