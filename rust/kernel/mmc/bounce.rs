// SPDX-License-Identifier: GPL-2.0

//! A bounce buffer for MMC hosts that move a request's data with one DMA address per transfer.
//!
//! Such a host can only take a request whose scatterlist maps to a single DMA segment, which
//! usually limits it to one segment (`max_segs` 1) and to requests of a page or a few. With a
//! [`Bouncer`] it advertises up to `max_segs` segments per request ([`policy::Limits::bounced`]):
//! a request whose data maps to one DMA segment still goes to the controller in place
//! ("direct"), one of more segments is copied through a physically contiguous buffer
//! ("bounced"). The buffer is DMA-coherent memory, or cached memory mapped with the streaming
//! DMA API for every transfer ([`BounceBuffer::new`]); it is never accessed through Rust
//! references, the scatterlist copies of [`super::CpuBuffer`] take its raw address.
//!
//! A cached buffer is mapped for the device before a transfer (a write's data cleaned, a
//! read's range invalidated) and unmapped after it (a read's range invalidated again), by the
//! same request's code that took the buffer; every path that frees a buffer unmaps it. With
//! `skip_clean` ([`Bouncer::new`]) a read's mapping skips its invalidate when no byte of the
//! buffer can be in a dirty cache line ([`NoncoherentPages`], [`MapSync::SkipIfClean`]): the
//! CPU only writes the buffer when it copies a write in, which is noted before the copy starts
//! and cleaned by the write's mapping.
//!
//! With one buffer a write is copied into it before its command starts and a read copied out
//! after the controller completed it, and only if neither the command nor the data phase
//! reported an error ([`policy::copy_back_len`]): a failed read never overwrites the caller's
//! memory. With two buffers a write may be copied into a free buffer in `pre_req`
//! ([`Bouncer::prepare`]) and a read copied out of its buffer in `post_req`
//! ([`Bouncer::clean_up`]), while the controller moves the other buffer; [`slots`] decides who
//! holds which buffer, so that the CPU and the controller never use the same one at the same
//! time (the MMC core has at most one request in flight per host).
//!
//! The host calls [`Bouncer::set_up`] in `request` for the DMA address to program,
//! [`Bouncer::complete`] once the controller is quiesced after the transfer, and the `pre_req`
//! and `post_req` halves from its own callbacks. The pure decisions are in [`policy`].

pub(crate) mod policy;
pub(crate) mod slots;

use kernel::{
    debugfs::Writer,
    device::{
        Bound,
        Device, //
    },
    dma::{
        attrs::DMA_ATTR_NO_WARN,
        Coherent,
        DataDirection, //
    },
    new_mutex,
    prelude::*,
    sync::Mutex, //
};

use super::super::dma::noncoherent::{
    MapSync,
    Mapping,
    NoncoherentPages,
    SyncCounts, //
};

use super::{
    copy_buffer_to_idle,
    copy_idle_to_buffer,
    CpuBuffer,
    DmaMapError,
    DmaRequest,
    IdleRequest, //
};

use policy::{
    DataPath,
    PathError, //
};

use slots::{
    Post,
    Slots,
    Start, //
};

pub(crate) use slots::MAX_BUFFERS;

/// The memory of a bounce buffer.
enum Memory {
    /// DMA-coherent (`dma_alloc_coherent()`): uncached on a SoC that is not DMA-coherent, no
    /// cache maintenance.
    Coherent(Coherent<[u8]>),
    /// Cached, mapped with the streaming DMA API for every transfer (as sdhci's bounce
    /// buffer, which syncs instead).
    Cached(NoncoherentPages),
}

/// A bounce buffer of a power-of-two size from 4 KiB to 4 MiB.
pub(crate) struct BounceBuffer {
    mem: Memory,
}

impl BounceBuffer {
    /// Allocates `size` bytes for `dev`, cached memory or coherent. Fails quietly (no
    /// allocation warning): the caller falls back to single-segment requests. Cached memory is
    /// cleaned whole once (mapped to the device and unmapped), so that it starts clean.
    pub(crate) fn new(dev: &Device<Bound>, size: u32, cached: bool) -> Result<Self> {
        let len = usize::try_from(size)?;
        let mem = if cached {
            let pages = NoncoherentPages::alloc(
                dev,
                len,
                DataDirection::Bidirectional,
                GFP_KERNEL | __GFP_NOWARN,
            )?;
            pages.unmap(pages.map(0, len, DataDirection::ToDevice, MapSync::Always)?)?;
            Memory::Cached(pages)
        } else {
            Memory::Coherent(Coherent::<u8>::zeroed_slice_with_attrs(
                dev,
                len,
                GFP_KERNEL | __GFP_NOWARN,
                DMA_ATTR_NO_WARN,
            )?)
        };
        Ok(Self { mem })
    }

    /// Size in bytes.
    pub(crate) fn size(&self) -> u32 {
        u32::try_from(self.cpu().size()).unwrap_or(u32::MAX)
    }

    /// Whether the memory is cached (streaming DMA) rather than coherent.
    pub(crate) fn cached(&self) -> bool {
        matches!(self.mem, Memory::Cached(_))
    }

    /// The cached memory, if it is.
    fn pages(&self) -> Option<&NoncoherentPages> {
        match &self.mem {
            Memory::Cached(n) => Some(n),
            Memory::Coherent(_) => None,
        }
    }

    /// The memory as the CPU copies see it, to read from.
    fn cpu(&self) -> &dyn CpuBuffer {
        match &self.mem {
            Memory::Coherent(c) => c,
            Memory::Cached(n) => n,
        }
    }

    /// The memory as the CPU copies see it, to write `len` bytes at its start: cached memory
    /// notes them as maybe dirty first (also if the copy stops halfway).
    fn cpu_write(&self, len: u32) -> Result<&dyn CpuBuffer> {
        if let Memory::Cached(n) = &self.mem {
            n.cpu_write(0, usize::try_from(len)?)?;
        }
        Ok(self.cpu())
    }

    /// Hands the first `len` bytes to the controller for a transfer in `dir`: cached memory is
    /// mapped (`sync`: whether a read may skip its invalidate) and returns its mapping;
    /// coherent memory has its one address. `EINVAL` if the buffer is shorter.
    fn to_device(
        &self,
        len: u32,
        dir: DataDirection,
        sync: MapSync,
    ) -> Result<(u64, Option<Mapping>)> {
        #[allow(clippy::useless_conversion)]
        match &self.mem {
            Memory::Cached(n) => {
                let m = n.map(0, usize::try_from(len)?, dir, sync)?;
                Ok((u64::from(m.dma_address()), Some(m)))
            }
            Memory::Coherent(c) => Ok((u64::from(c.dma_address()), None)),
        }
    }

    /// Takes the buffer back from the controller after a transfer: unmaps `mapping` (a read's
    /// range is invalidated). `EINVAL` if it is not this buffer's.
    fn to_cpu(&self, mapping: Option<Mapping>) -> Result {
        match (self.pages(), mapping) {
            (Some(n), Some(m)) => n.unmap(m),
            (_, None) => Ok(()),
            (None, Some(_)) => Err(EINVAL),
        }
    }
}

/// Where the controller finds a request's data.
pub(crate) struct DataSetup {
    /// The DMA address to program.
    pub(crate) dma_addr: u64,
    /// The bounce buffer it is in, if bounced.
    pub(crate) slot: Option<usize>,
}

/// What became of a bounced request's read data at completion.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum CopyBack {
    /// Nothing to copy (a write, or an error was set).
    None,
    /// Copied into the request now.
    Done,
    /// Left in the buffer for `post_req` (double buffering).
    Deferred,
}

/// The cache state of one bounce buffer, for its debugfs file.
#[derive(Clone, Copy)]
pub(crate) enum BufferCache {
    /// Coherent memory: no cache maintenance.
    Coherent,
    /// Cached memory: whether no byte can be in a dirty cache line, and how many reads
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
    /// Per buffer, `None` if it does not exist.
    pub(crate) bufs: [Option<BufferCache>; MAX_BUFFERS],
}

/// The bounce policy of one host.
#[pin_data]
pub(crate) struct Bouncer {
    /// One buffer, or two for double buffering (`bufs[0]` exists if any does).
    bufs: [Option<BounceBuffer>; MAX_BUFFERS],
    /// Who holds which buffer (see [`slots`]).
    #[pin]
    slots: Mutex<Slots>,
    /// `dma_get_merge_boundary()` of the controller: 0 when a DMA mapping never merges
    /// scatterlist entries (see [`policy::segments_without_mapping`]).
    merge_boundary: usize,
    /// The longest transfer the controller is given to one DMA address.
    max_direct: u32,
    /// The mapping of each cached buffer while the controller may use it.
    #[pin]
    maps: Mutex<[Option<Mapping>; MAX_BUFFERS]>,
    /// Whether a read's mapping skips its invalidate when its buffer is clean.
    skip_clean: bool,
}

impl Bouncer {
    /// The policy with the buffers `bufs` (none: every request must map to one segment; two:
    /// copies in `pre_req` and `post_req`), for a controller whose DMA mapping has the merge
    /// boundary `merge_boundary` ([`super::dma_merge_boundary`]) and which is given at most
    /// `max_direct` bytes to one DMA address (longer single segments are bounced). With
    /// `skip_clean` a read into a cached buffer with no dirty cache line skips the invalidate
    /// before the transfer ([`MapSync::SkipIfClean`]).
    pub(crate) fn new(
        bufs: [Option<BounceBuffer>; MAX_BUFFERS],
        merge_boundary: usize,
        max_direct: u32,
        skip_clean: bool,
    ) -> impl PinInit<Self> {
        let count = bufs.iter().take_while(|b| b.is_some()).count();
        pin_init!(Self {
            bufs,
            slots <- new_mutex!(Slots::new(count), "mmc::bounce::slots"),
            merge_boundary,
            max_direct,
            maps <- new_mutex!([None, None], "mmc::bounce::maps"),
            skip_clean,
        })
    }

    /// The clean or dirty state of the buffers and the counts of reads' first invalidates.
    pub(crate) fn cache_state(&self) -> CacheState {
        let mut st = CacheState {
            skip_clean: self.skip_clean,
            bufs: [None; MAX_BUFFERS],
        };
        for (i, out) in st.bufs.iter_mut().enumerate() {
            *out = self.buf(i).map(|buf| match buf.pages() {
                None => BufferCache::Coherent,
                Some(p) => BufferCache::Cached {
                    clean: p.is_clean(),
                    counts: p.counts(),
                },
            });
        }
        st
    }

    /// How a read's mapping treats its first invalidate.
    fn read_sync(&self) -> MapSync {
        if self.skip_clean {
            MapSync::SkipIfClean
        } else {
            MapSync::Always
        }
    }

    /// Hands the first `len` bytes of buffer `slot` to the controller for a transfer in `dir`
    /// and keeps its mapping; a mapping left from an earlier user of the buffer is undone
    /// first. Returns the DMA address.
    fn map_slot(
        &self,
        buf: &BounceBuffer,
        slot: usize,
        len: u32,
        dir: DataDirection,
    ) -> Result<u64> {
        self.unmap_slot(slot);
        let sync = if dir == DataDirection::FromDevice {
            self.read_sync()
        } else {
            MapSync::Always
        };
        let (addr, mapping) = buf.to_device(len, dir, sync)?;
        if let Some(s) = self.maps.lock().get_mut(slot) {
            *s = mapping;
        }
        Ok(addr)
    }

    /// The DMA address of buffer `slot`, which `pre_req` handed to the controller.
    fn prepared_address(&self, buf: &BounceBuffer, slot: usize) -> Result<u64> {
        #[allow(clippy::useless_conversion)]
        match &buf.mem {
            Memory::Coherent(c) => Ok(u64::from(c.dma_address())),
            Memory::Cached(_) => self
                .maps
                .lock()
                .get(slot)
                .and_then(Option::as_ref)
                .map(|m| u64::from(m.dma_address()))
                .ok_or(EIO),
        }
    }

    /// Takes buffer `slot` back from the controller: unmaps it if it is mapped. Returns
    /// whether that went right (nothing mapped is right).
    fn unmap_slot(&self, slot: usize) -> bool {
        let mapping = self.maps.lock().get_mut(slot).and_then(Option::take);
        match (self.buf(slot), mapping) {
            (Some(buf), m) => buf.to_cpu(m).is_ok(),
            (None, m) => m.is_none(),
        }
    }

    fn buf(&self, slot: usize) -> Option<&BounceBuffer> {
        self.bufs.get(slot)?.as_ref()
    }

    /// Size of each bounce buffer in bytes, 0 for none.
    pub(crate) fn size(&self) -> u32 {
        self.buf(0).map_or(0, BounceBuffer::size)
    }

    /// Whether there are two buffers (copies hidden in `pre_req`/`post_req`).
    pub(crate) fn double(&self) -> bool {
        self.buf(1).is_some()
    }

    /// The number of DMA segments of the request's data. Without an IOMMU a list of more than
    /// one entry is not mapped at all: its segment count is its length. Otherwise it is mapped
    /// to count its segments.
    fn segments(&self, dev: &Device, mrq: &mut DmaRequest) -> Result<u32> {
        if let Some(n) = mrq.pre_mapped_segments() {
            return Ok(n);
        }
        let sg_len = mrq.data().map_or(0, |d| d.sg_list().len());
        if let Some(n) = policy::segments_without_mapping(sg_len, self.merge_boundary) {
            return Ok(n);
        }
        Ok(mrq.map_count().inspect_err(|e| match e {
            DmaMapError::MapFailed => dev_err!(dev, "dma_map_sg failed\n"),
            e => dev_err!(dev, "cannot map the request's data: {:?}\n", e),
        })?)
    }

    /// Chooses the data path of the request and sets it up: a single DMA segment stays mapped
    /// for the controller; a scatterlist of more segments goes through a bounce buffer (a
    /// write is copied into it here unless `pre_req` did). `force` bounces whatever fits
    /// (for tests and measurements); when `copy_in_fault` (a fault for tests, asked once per
    /// copy of a write into a buffer) returns true, the copy stops halfway and fails.
    pub(crate) fn set_up(
        &self,
        dev: &Device,
        mrq: &mut DmaRequest,
        force: bool,
        copy_in_fault: &dyn Fn() -> bool,
    ) -> Result<DataSetup> {
        let segments = self.segments(dev, mrq)?;
        let len = mrq.data_len();
        match policy::data_path(segments, len, self.size(), self.max_direct, force) {
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

    /// Gives the bounced request a buffer: the one `pre_req` filled, or one taken now (a write
    /// is copied into it).
    fn set_up_bounce(
        &self,
        dev: &Device,
        mrq: &DmaRequest,
        copy_in_fault: &dyn Fn() -> bool,
    ) -> Result<DataSetup> {
        let cookie = mrq.data().map_or(0, |d| d.host_cookie());
        let (slot, prepared) = match self.slots.lock().start(mrq.addr(), cookie) {
            Start::Prepared(i) => (i, true),
            Start::Claimed(i) => (i, false),
            Start::None => {
                dev_err!(dev, "no bounce buffer free for the request\n");
                return Err(EBUSY);
            }
        };
        let Some(buf) = self.buf(slot) else {
            self.release(slot);
            return Err(EIO);
        };
        let len = mrq.data_len();
        let synced = if prepared {
            self.prepared_address(buf, slot)
        } else if !mrq.data().is_some_and(|d| d.is_write()) {
            // No dirty cache line may be written back over what the controller stores.
            self.map_slot(buf, slot, len, DataDirection::FromDevice)
        } else {
            // A mapping left by a request this buffer was prepared for goes before the CPU
            // writes.
            self.unmap_slot(slot);
            let copied = match buf.cpu_write(len) {
                Ok(cpu) if copy_in_fault() => mrq.copy_to_buffer(cpu, len / 2),
                Ok(cpu) => mrq.copy_to_buffer(cpu, len),
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
            self.map_slot(buf, slot, len, DataDirection::ToDevice)
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

    /// Frees buffer `slot` of a request that failed or needs nothing copied (the controller is
    /// done with it): it is unmapped first.
    pub(crate) fn release(&self, slot: usize) {
        self.unmap_slot(slot);
        self.slots.lock().finish(slot, None);
    }

    /// The controller is quiesced after the request on buffer `slot`: `len` bytes of read data
    /// (0: none, or an error was set) go into the request now, or wait in the buffer for
    /// `post_req` if the request was prepared for that. Fails (the caller fails the request)
    /// if not all was copied.
    pub(crate) fn complete(
        &self,
        dev: &Device,
        mrq: &DmaRequest,
        slot: usize,
        len: u32,
    ) -> Result<CopyBack> {
        if len == 0 {
            self.release(slot);
            return Ok(CopyBack::None);
        }
        {
            let mut slots = self.slots.lock();
            if slots.defers_copy_out(slot) {
                slots.finish(slot, Some(len));
                return Ok(CopyBack::Deferred);
            }
        }
        let unmapped = self.unmap_slot(slot);
        let copied = self.buf(slot).map_or(0, |buf| {
            if unmapped {
                mrq.copy_from_buffer(buf.cpu(), len)
            } else {
                0
            }
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
        Ok(CopyBack::Done)
    }

    /// `pre_req` for a write that will go direct: maps its data for the controller now, while
    /// the controller moves the previous request ([`super::pre_map`]). Returns whether it did.
    pub(crate) fn pre_map(&self, mrq: &IdleRequest, force: bool) -> bool {
        let Some(data) = mrq.data() else {
            return false;
        };
        let (sg_len, len, write) = (data.sg_list().len(), data.len(), data.is_write());
        policy::pre_map(sg_len, len, self.size(), self.max_direct, force, write)
            && super::pre_map(mrq)
    }

    /// `pre_req`: with two buffers, takes a free one for a request that will be bounced and
    /// hands it over now, while the controller moves the other: a write's data is copied in
    /// and cleaned, a read's range invalidated. Returns whether the request was prepared.
    /// `copy_in_fault` as for [`Self::set_up`].
    pub(crate) fn prepare(
        &self,
        dev: &Device,
        mrq: &IdleRequest,
        force: bool,
        copy_in_fault: &dyn Fn() -> bool,
    ) -> bool {
        let Some(data) = mrq.data().filter(|_| self.double()) else {
            return false;
        };
        let len = data.len();
        let bounced = policy::segments_without_mapping(data.sg_list().len(), self.merge_boundary)
            .is_some_and(|n| {
                policy::data_path(n, len, self.size(), self.max_direct, force)
                    == Ok(DataPath::Bounce)
            });
        if !bounced {
            return false;
        }
        let owner = mrq.addr();
        let Some((slot, token)) = self.slots.lock().prepare(owner) else {
            return false;
        };
        let Some(buf) = self.buf(slot) else {
            self.slots.lock().free(slot);
            return false;
        };
        if data.is_write() {
            // A mapping left from an earlier user goes before the CPU writes.
            self.unmap_slot(slot);
            let copied = match buf.cpu_write(len) {
                Ok(cpu) if copy_in_fault() => copy_idle_to_buffer(mrq, cpu, len / 2),
                Ok(cpu) => copy_idle_to_buffer(mrq, cpu, len),
                Err(_) => 0,
            };
            if copied != len {
                dev_dbg!(dev, "pre_req copied {} of {} bytes\n", copied, len);
                self.slots.lock().free(slot);
                return false;
            }
        }
        let dir = if data.is_write() {
            DataDirection::ToDevice
        } else {
            // As in `set_up_bounce`; the buffer stays untouched until the request starts.
            DataDirection::FromDevice
        };
        if self.map_slot(buf, slot, len, dir).is_err() {
            self.slots.lock().free(slot);
            return false;
        }
        data.set_host_cookie(token);
        self.slots.lock().prepared(slot, owner, token);
        true
    }

    /// `post_req`: copies a prepared read's data out of its buffer and frees it; frees what
    /// the request held otherwise. Returns whether data was copied; a short copy fails the
    /// request (`EIO`, nothing transferred: the core retries it).
    pub(crate) fn clean_up(&self, dev: &Device, mrq: &IdleRequest) -> bool {
        let Some(data) = mrq.data().filter(|_| self.double()) else {
            return false;
        };
        let post = self.slots.lock().post(mrq.addr(), data.host_cookie());
        data.set_host_cookie(0);
        let Post::CopyOut { slot, len } = post else {
            return false;
        };
        let unmapped = self.unmap_slot(slot);
        let copied = self.buf(slot).map_or(0, |buf| {
            if unmapped {
                copy_buffer_to_idle(buf.cpu(), mrq, len)
            } else {
                0
            }
        });
        self.slots.lock().free(slot);
        if copied != len {
            dev_err!(
                dev,
                "post_req copied {} of {} bytes out of the bounce buffer\n",
                copied,
                len
            );
            data.set_error(EIO);
            data.set_bytes_xfered(0);
            return false;
        }
        true
    }
}

/// The `bounce` file: `skip_clean_invalidate`, then per buffer `bufferN: coherent`, or
/// `bufferN: clean` or `dirty` (maybe dirty) with the reads that invalidated it before their
/// transfer (`bufferN_read_invalidates_done`) and those that skipped that (`..._skipped`).
impl Writer for Bouncer {
    fn write(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let st = self.cache_state();
        writeln!(f, "skip_clean_invalidate: {}", u8::from(st.skip_clean))?;
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
