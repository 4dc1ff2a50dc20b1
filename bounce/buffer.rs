// SPDX-License-Identifier: GPL-2.0

//! The bounce buffers' memory.
//!
//! One buffer ([`BounceBuffer`]), DMA-coherent or cached, and the buffers the module parameters ask
//! for ([`Buffers`]), with the queue limits they give.
//!
//! A buffer that cannot be allocated is not fatal: without the first the host keeps the C
//! driver's single-segment limits, without the second it bounces through one buffer.

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::{
        attrs::DMA_ATTR_NO_WARN,
        Coherent,
        DataDirection, //
    },
    prelude::*, //
};

use crate::kernel_ext::dma::cpu_copy::{
    self,
    CpuBuffer,
    CpuBufferMut, //
};
use crate::kernel_ext::dma::noncoherent::{
    CpuReadView,
    CpuWriteView,
    MapSync,
    MapTarget,
    Mapping,
    NoncoherentPages, //
};

use crate::logic::{
    self,
    BufferMapping,
    Limits,
    Params,
    SkipCleanReason, //
};

use super::{
    policy,
    Bouncer,
    MAX_BUFFERS, //
};

/// The memory of a bounce buffer.
pub(super) enum Memory {
    /// DMA-coherent memory (`dma_alloc_coherent()`), uncached on a SoC that is not DMA-coherent,
    /// with no cache maintenance.
    Coherent(Coherent<[u8]>),
    /// Cached, mapped with the streaming DMA API for every transfer (as sdhci's bounce
    /// buffer, which syncs instead).
    Cached(NoncoherentPages),
}

/// A bounce buffer's memory as the CPU writes it ([`BounceBuffer::cpu_write`]).
pub(super) enum CpuWrite<'a> {
    /// Coherent memory, the whole buffer.
    Coherent(&'a Coherent<[u8]>),
    /// Cached memory, the range written, noted as dirty.
    ///
    /// Nothing is mapped meanwhile.
    Cached(CpuWriteView<'a>),
}

impl CpuWrite<'_> {
    /// Returns the memory for the CPU copies.
    pub(super) fn buffer(&self) -> &dyn CpuBufferMut {
        match self {
            CpuWrite::Coherent(c) => *c,
            CpuWrite::Cached(v) => v,
        }
    }
}

/// A bounce buffer's memory as the CPU reads it ([`BounceBuffer::cpu_read`]).
pub(super) enum CpuRead<'a> {
    /// Coherent memory.
    Coherent(&'a Coherent<[u8]>),
    /// Cached memory, unmapped (and so invalidated after a read).
    ///
    /// Nothing is mapped meanwhile.
    Cached(CpuReadView<'a>),
}

impl CpuRead<'_> {
    /// Returns the memory for the CPU copies.
    pub(super) fn buffer(&self) -> &dyn CpuBuffer {
        match self {
            CpuRead::Coherent(c) => *c,
            CpuRead::Cached(v) => v,
        }
    }
}

/// A bounce buffer of a power-of-two size from 4 KiB to 4 MiB.
pub(crate) struct BounceBuffer {
    pub(super) mem: Memory,
    /// What the DMA address of cached memory was found to reach when it was allocated.
    mapping: BufferMapping,
}

impl BounceBuffer {
    /// Allocates `size` bytes for `dev`, cached memory or coherent.
    ///
    /// Fails quietly (no allocation warning): the caller falls back to single-segment requests.
    /// Cached memory is cleaned whole once (mapped to the device and unmapped), so that it starts
    /// clean; that mapping tells whether the device is given the buffer's own memory
    /// ([`Self::mapping`]).
    pub(crate) fn new(dev: &Device<Bound>, size: u32, cached: bool) -> Result<Self> {
        let len = usize::try_from(size)?;
        if !cached {
            let mem = Memory::Coherent(Coherent::<u8>::zeroed_slice_with_attrs(
                dev,
                len,
                GFP_KERNEL | __GFP_NOWARN,
                DMA_ATTR_NO_WARN,
            )?);
            return Ok(Self {
                mem,
                mapping: BufferMapping::NoCachedBuffer,
            });
        }
        let pages = NoncoherentPages::alloc(
            dev,
            len,
            DataDirection::Bidirectional,
            GFP_KERNEL | __GFP_NOWARN,
        )?;
        let m = pages.map(dev, 0, len, DataDirection::ToDevice, MapSync::Always)?;
        let target = pages.map_target(dev, &m);
        pages.unmap(m)?;
        let mapping = match target? {
            MapTarget::Pages => BufferMapping::Identity,
            MapTarget::Elsewhere => BufferMapping::Differs,
            MapTarget::Unknown => BufferMapping::Unknown,
        };
        Ok(Self {
            mem: Memory::Cached(pages),
            mapping,
        })
    }

    /// Returns what the DMA address of the buffer reaches.
    ///
    /// Its own memory (a cached buffer the DMA API does not bounce), or not; coherent memory is no
    /// cached buffer.
    pub(crate) fn mapping(&self) -> BufferMapping {
        self.mapping
    }

    /// Returns the size in bytes.
    pub(crate) fn size(&self) -> u32 {
        let size = match &self.mem {
            Memory::Coherent(c) => c.size(),
            Memory::Cached(n) => n.size(),
        };
        u32::try_from(size).unwrap_or(u32::MAX)
    }

    /// Returns whether the memory is cached (streaming DMA) rather than coherent.
    pub(crate) fn cached(&self) -> bool {
        matches!(self.mem, Memory::Cached(_))
    }

    /// Returns the cached memory, if it is.
    pub(super) fn pages(&self) -> Option<&NoncoherentPages> {
        match &self.mem {
            Memory::Cached(n) => Some(n),
            Memory::Coherent(_) => None,
        }
    }

    /// Returns the memory as the CPU copies see it, to read from.
    ///
    /// `EBUSY` while cached memory is mapped. Cached memory cannot be mapped while the view lives.
    pub(super) fn cpu_read(&self) -> Result<CpuRead<'_>> {
        Ok(match &self.mem {
            Memory::Coherent(c) => CpuRead::Coherent(c),
            Memory::Cached(n) => CpuRead::Cached(n.cpu_read()?),
        })
    }

    /// Returns the memory as the CPU copies see it, to write `len` bytes at its start.
    ///
    /// Cached memory notes them as maybe dirty first (also if the copy stops halfway), and cannot
    /// be mapped while the view lives (`EBUSY` while it is).
    pub(super) fn cpu_write(&self, len: u32) -> Result<CpuWrite<'_>> {
        Ok(match &self.mem {
            Memory::Coherent(c) => CpuWrite::Coherent(c),
            Memory::Cached(n) => CpuWrite::Cached(n.cpu_write(0, usize::try_from(len)?)?),
        })
    }

    /// Hands the first `len` bytes to the controller for a transfer in `dir`.
    ///
    /// Cached memory is mapped (`sync`: whether a read may skip its invalidate) and returns its
    /// mapping, which covers the whole DMA units the controller may move ([`policy::device_len`]);
    /// coherent memory has its one address. `EINVAL` if the buffer is shorter.
    pub(super) fn to_device(
        &self,
        dev: &Device<Bound>,
        len: u32,
        dir: DataDirection,
        sync: MapSync,
    ) -> Result<(u64, Option<Mapping>)> {
        #[allow(clippy::useless_conversion)]
        match &self.mem {
            Memory::Cached(n) => {
                let dev_len = policy::device_len(len, self.size());
                let m = n.map(dev, 0, usize::try_from(dev_len)?, dir, sync)?;
                Ok((u64::from(m.dma_address()), Some(m)))
            }
            Memory::Coherent(c) => Ok((u64::from(c.dma_address()), None)),
        }
    }

    /// Writes the marks of read number `seq` of `len` bytes ([`policy::TailMarks`]) and hands them
    /// to memory.
    ///
    /// Cached memory is cleaned over them (a read's mapping only invalidates). The buffer must not
    /// be mapped.
    pub(super) fn arm_tail(&self, dev: &Device<Bound>, len: u32, seq: u32) -> Result {
        let marks = policy::TailMarks::of(len);
        let (first, bytes) = marks.span();
        if bytes == 0 {
            return Ok(());
        }
        let (first, bytes) = (usize::try_from(first)?, usize::try_from(bytes)?);
        // The view of cached memory covers the marks' span alone: its offsets start there.
        let (cpu, base) = match &self.mem {
            Memory::Coherent(c) => (CpuWrite::Coherent(c), 0),
            Memory::Cached(n) => (CpuWrite::Cached(n.cpu_write(first, bytes)?), first),
        };
        for (i, off) in marks.iter() {
            let off = usize::try_from(off)?.checked_sub(base).ok_or(EINVAL)?;
            cpu_copy::write_buffer_word(cpu.buffer(), off, policy::tail_mark(seq, i))?;
        }
        // Mapped next: the view goes first.
        drop(cpu);
        if let Memory::Cached(n) = &self.mem {
            n.unmap(n.map(dev, first, bytes, DataDirection::ToDevice, MapSync::Always)?)?;
        }
        Ok(())
    }

    /// Returns whether the end of read number `seq` of `len` bytes is in memory.
    ///
    /// Each of its marked words changed ([`policy::tail_landed`]). Cached memory is invalidated
    /// over them first, so that a look before they landed is not what the next look sees. The
    /// buffer must not be mapped.
    pub(super) fn tail_landed(&self, dev: &Device<Bound>, len: u32, seq: u32) -> Result<bool> {
        let marks = policy::TailMarks::of(len);
        let (first, bytes) = marks.span();
        if bytes == 0 {
            return Ok(true);
        }
        let (first, bytes) = (usize::try_from(first)?, usize::try_from(bytes)?);
        if let Memory::Cached(n) = &self.mem {
            let m = n.map(
                dev,
                first,
                bytes,
                DataDirection::Bidirectional,
                MapSync::Always,
            )?;
            n.unmap(m)?;
        }
        let mut words = [0u32; policy::TAIL_MARKS_MAX as usize];
        let cpu = self.cpu_read()?;
        for (w, (_, off)) in words.iter_mut().zip(marks.iter()) {
            *w = cpu_copy::read_buffer_word(cpu.buffer(), usize::try_from(off)?)?;
        }
        Ok(policy::tail_landed(
            seq,
            words.iter().copied().take(marks.count() as usize),
        ))
    }

    /// Invalidates the CPU caches over the first `len` bytes once a read's marks showed its last
    /// words in memory ([`Self::tail_landed`]).
    ///
    /// The unmap after the transfer invalidated them before all of the data may have been there,
    /// and a line the CPU fetched since (a prefetch while the marks were polled) may hold what the
    /// buffer held before. Nothing to do for coherent memory. The buffer must not be mapped.
    pub(super) fn invalidate_landed(&self, dev: &Device<Bound>, len: u32) -> Result {
        if let Memory::Cached(n) = &self.mem {
            let len = usize::try_from(len)?;
            if len != 0 {
                // Clean since the unmap: the map skips its own sync, the unmap invalidates
                // (both ways, as for the marks: not counted as a read's invalidate).
                n.unmap(n.map(
                    dev,
                    0,
                    len,
                    DataDirection::Bidirectional,
                    MapSync::SkipIfClean,
                )?)?;
            }
        }
        Ok(())
    }

    /// Takes the buffer back from the controller after a transfer.
    ///
    /// Unmaps `mapping` (a read's range is invalidated). `EINVAL` if it is not this buffer's.
    pub(super) fn to_cpu(&self, mapping: Option<Mapping>) -> Result {
        match (self.pages(), mapping) {
            (Some(n), Some(m)) => n.unmap(m),
            (_, None) => Ok(()),
            (None, Some(_)) => Err(EINVAL),
        }
    }
}

/// The bounce buffers of a new host and the parameters they were allocated for.
pub(crate) struct Buffers {
    /// The module parameters.
    params: Params,
    /// The buffers, none, one, or two with `double_buffer`.
    bufs: [Option<BounceBuffer>; MAX_BUFFERS],
    /// Whether the only buffer is the one for unaligned segments ([`UNALIGNED_BUFFER`]).
    ///
    /// The host keeps the single-segment limits of a host without a bounce buffer.
    unaligned_only: bool,
}

/// The size of the buffer a host without a bounce buffer keeps for the single segments it cannot
/// send in place.
///
/// A host without a bounce buffer is one with `bounce_size=0`, or one whose buffer could not be
/// allocated. The segments it cannot send in place are short, or not aligned to
/// [`policy::DMA_GRANULE`]: the SD card's 8-byte SCR, SDIO function drivers' odd buffers,
/// `mmc_test`'s buffer, which Linux 7.3 puts 52 bytes into a page.
///
/// Its largest request, so that it refuses none the C driver takes. Without it such a segment is
/// refused with an error.
pub(crate) const UNALIGNED_BUFFER: u32 = logic::C_MAX_REQ_SIZE;

impl Buffers {
    /// Allocates the buffers the module parameters ask for, as many as can be had.
    pub(crate) fn allocate(dev: &Device<Bound>) -> Self {
        let params = crate::params();
        let first = first_buffer(dev, &params);
        let second = first.as_ref().and_then(|b| second_buffer(dev, b));
        let unaligned_only = first.is_none();
        let first = first.or_else(|| unaligned_buffer(dev));
        Self {
            params,
            bufs: [first, second],
            unaligned_only,
        }
    }

    /// Returns the size of each bounce buffer in bytes, 0 for none (the buffer for unaligned
    /// segments only is not one).
    pub(crate) fn size(&self) -> u32 {
        if self.unaligned_only {
            return 0;
        }
        self.bufs[0].as_ref().map_or(0, BounceBuffer::size)
    }

    /// Returns whether the buffers are cached memory with streaming syncs.
    pub(crate) fn cached(&self) -> bool {
        self.bufs[0].as_ref().is_some_and(BounceBuffer::cached)
    }

    /// Returns the number of buffers allocated.
    pub(crate) fn count(&self) -> usize {
        if self.unaligned_only {
            return 0;
        }
        self.bufs.iter().filter(|b| b.is_some()).count()
    }

    /// Returns whether a read into a clean cached buffer skips the invalidate before its transfer,
    /// and why.
    ///
    /// `skip_clean_invalidate`, or with -1 the buffers' DMA mapping.
    pub(crate) fn skip_clean(&self) -> (bool, SkipCleanReason) {
        let mapping = self
            .bufs
            .iter()
            .flatten()
            .fold(BufferMapping::NoCachedBuffer, |m, b| m.and(b.mapping()));
        logic::skip_clean(crate::skip_clean_invalidate(), mapping)
    }

    /// Returns the host's queue limits with these buffers.
    pub(crate) fn limits(&self) -> Limits {
        logic::limits(&self.params, self.size())
    }

    /// Turns these buffers into the bounce policy for a controller whose DMA mapping has the merge
    /// boundary `merge_boundary`.
    ///
    /// Transfers longer than `max_dma_size` are bounced too.
    pub(crate) fn into_bouncer(self, merge_boundary: usize) -> impl PinInit<Bouncer> {
        let skip_clean = self.skip_clean();
        Bouncer::new(
            self.bufs,
            merge_boundary,
            self.params.max_dma,
            skip_clean,
            crate::dram_write_check(),
        )
    }
}

/// Allocates the bounce buffer of `bounce_size` bytes, if there is to be one and it can be.
fn first_buffer(dev: &Device<Bound>, params: &Params) -> Option<BounceBuffer> {
    if params.bounce_size == 0 {
        return None;
    }
    BounceBuffer::new(dev, params.bounce_size, crate::bounce_cached())
        .inspect_err(|e| {
            dev_warn!(
                dev,
                "cannot allocate a {} byte bounce buffer (error {}), using single-segment requests\n",
                params.bounce_size,
                e.to_errno()
            )
        })
        .ok()
}

/// Allocates the DMA-coherent buffer for unaligned segments of a host without a bounce buffer
/// ([`UNALIGNED_BUFFER`]).
///
/// Without it such a segment is refused.
fn unaligned_buffer(dev: &Device<Bound>) -> Option<BounceBuffer> {
    BounceBuffer::new(dev, UNALIGNED_BUFFER, false)
        .inspect_err(|e| {
            dev_warn!(
                dev,
                "cannot allocate a {} byte buffer for unaligned segments (error {}): they will fail\n",
                UNALIGNED_BUFFER,
                e.to_errno()
            )
        })
        .ok()
}

/// Allocates the second bounce buffer of `double_buffer`, like the first.
///
/// Without it the host bounces through one buffer.
fn second_buffer(dev: &Device<Bound>, first: &BounceBuffer) -> Option<BounceBuffer> {
    if !crate::double_buffer() {
        return None;
    }
    BounceBuffer::new(dev, first.size(), first.cached())
        .inspect_err(|e| {
            dev_warn!(
                dev,
                "cannot allocate a second {} byte bounce buffer (error {}), using one\n",
                first.size(),
                e.to_errno()
            )
        })
        .ok()
}
