// SPDX-License-Identifier: GPL-2.0

//! The bounce buffer and the whole bounce policy: which requests go through it, copying a
//! write's data in before the command and a read's data out after it, and only what the card
//! delivered.
//!
//! The controller has a single DMA address register. A request whose scatterlist maps to one
//! DMA segment is transferred in place ("direct"); one of more segments goes through one
//! DMA-coherent buffer per host ("bounced"). The buffer is never accessed through Rust
//! references: the scatterlist copies of `sg_dma.rs` take its raw address. The driver copies
//! into it only before starting a command and out of it only after the command completed and
//! the controller was quiesced, so the CPU and the controller never use it at the same time;
//! the MMC core has at most one request in flight per host.

use kernel::{
    device::{Bound, Device},
    dma::{attrs::DMA_ATTR_NO_WARN, Coherent, DataDirection},
    prelude::*,
    time::{delay::udelay, Delta},
};

use crate::{
    logic::{self, DataPath, PathError},
    noncoherent::NoncoherentBuffer,
    sg_dma::{CpuBuffer, DmaMapError, DmaRequest},
};

/// The memory of a bounce buffer.
enum Memory<'a> {
    /// DMA-coherent (`dma_alloc_coherent()`): uncached on a SoC that is not DMA-coherent, no
    /// cache maintenance.
    Coherent(Coherent<[u8]>),
    /// Cached, with streaming syncs around every transfer (as sdhci's bounce buffer).
    Cached(NoncoherentBuffer<'a>),
}

/// A bounce buffer of a power-of-two size from 4 KiB to 4 MiB.
pub(crate) struct BounceBuffer<'a> {
    mem: Memory<'a>,
}

impl<'a> BounceBuffer<'a> {
    /// Allocates `size` bytes for `dev`, cached memory or coherent. Fails quietly (no
    /// allocation warning): the caller falls back to single-segment requests.
    pub(crate) fn new(dev: &'a Device<Bound>, size: u32, cached: bool) -> Result<Self> {
        let len = usize::try_from(size)?;
        let mem = if cached {
            Memory::Cached(NoncoherentBuffer::new(dev, len)?)
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

    /// Whether the memory is cached (streaming syncs) rather than coherent.
    pub(crate) fn cached(&self) -> bool {
        matches!(self.mem, Memory::Cached(_))
    }

    /// The bus address the controller uses.
    fn dma_address(&self) -> u64 {
        #[allow(clippy::useless_conversion)]
        match &self.mem {
            Memory::Coherent(c) => u64::from(c.dma_address()),
            Memory::Cached(n) => u64::from(n.dma_address()),
        }
    }

    /// The memory as the CPU copies see it.
    fn cpu(&self) -> &dyn CpuBuffer {
        match &self.mem {
            Memory::Coherent(c) => c,
            Memory::Cached(n) => n,
        }
    }

    /// Hands the first `len` bytes to the controller for a transfer in `dir`.
    fn to_device(&self, len: u32, dir: DataDirection) {
        if let Memory::Cached(n) = &self.mem {
            n.for_device(len as usize, dir);
        }
    }

    /// Takes the first `len` bytes back from the controller after a read.
    fn to_cpu(&self, len: u32) {
        if let Memory::Cached(n) = &self.mem {
            n.for_cpu(len as usize, DataDirection::FromDevice);
        }
    }
}

/// Largest simulated copy cost, in ns per KiB (10 MB/s).
const COPY_COST_MAX_NS_PER_KIB: u32 = 100_000;

/// Busy-waits what copying `len` bytes costs at `ns_per_kib` beyond what it took: a debug
/// knob (debugfs `copy_cost_ns_per_kib`, 0 by default) that lets the emulated board, whose
/// copies cost the host's speed, show a board's copy rates.
fn charge_copy(len: u32, ns_per_kib: u32) {
    let us = (len / 1024).saturating_mul(ns_per_kib.min(COPY_COST_MAX_NS_PER_KIB)) / 1000;
    let mut left = us;
    while left > 0 {
        let step = left.min(1000);
        udelay(Delta::from_micros(i64::from(step)));
        left -= step;
    }
}

/// Where the controller finds a request's data.
pub(crate) struct DataSetup {
    /// The DMA address to program.
    pub(crate) dma_addr: u64,
    /// Whether it is the bounce buffer.
    pub(crate) bounced: bool,
}

/// The bounce policy of one host.
pub(crate) struct Bouncer<'a> {
    buf: Option<BounceBuffer<'a>>,
    /// `dma_get_merge_boundary()` of the controller: 0 when a DMA mapping never merges
    /// scatterlist entries (see `logic::segments_without_mapping`).
    merge_boundary: usize,
}

impl<'a> Bouncer<'a> {
    /// The policy with the buffer `buf` (none: every request must map to one segment).
    pub(crate) fn new(buf: Option<BounceBuffer<'a>>, merge_boundary: usize) -> Self {
        Self {
            buf,
            merge_boundary,
        }
    }

    /// Size of the bounce buffer in bytes, 0 for none.
    pub(crate) fn size(&self) -> u32 {
        self.buf.as_ref().map_or(0, BounceBuffer::size)
    }

    /// The number of DMA segments of the request's data. Without an IOMMU a list of more than
    /// one entry is not mapped at all: its segment count is its length. Otherwise it is mapped
    /// to count its segments.
    fn segments(&self, dev: &Device<Bound>, mrq: &mut DmaRequest<'_>) -> Result<u32> {
        let sg_len = mrq.data().map_or(0, |d| d.sg_list().len());
        if let Some(n) = logic::segments_without_mapping(sg_len, self.merge_boundary) {
            return Ok(n);
        }
        Ok(mrq.map_count().inspect_err(|e| match e {
            DmaMapError::MapFailed => dev_err!(dev, "dma_map_sg failed\n"),
            e => dev_err!(dev, "cannot map the request's data: {:?}\n", e),
        })?)
    }

    /// Chooses the data path of the request and sets it up: a single DMA segment stays mapped
    /// for the controller; a scatterlist of more segments goes through the bounce buffer (a
    /// write is copied into it here). `force` bounces whatever fits (debugfs); `copy_cost` is
    /// the simulated copy cost in ns per KiB (debugfs, 0: none).
    pub(crate) fn set_up(
        &self,
        dev: &Device<Bound>,
        mrq: &mut DmaRequest<'_>,
        force: bool,
        copy_cost: u32,
    ) -> Result<DataSetup> {
        let segments = self.segments(dev, mrq)?;
        let len = mrq.data_len();
        let buf = match (
            logic::data_path(segments, len, self.size(), force),
            &self.buf,
        ) {
            (Ok(DataPath::Direct), _) => {
                // The controller uses the request's memory itself: hand it over.
                let dma_addr = mrq.dma_for_device().ok_or(EIO)?;
                return Ok(DataSetup {
                    dma_addr,
                    bounced: false,
                });
            }
            (Ok(DataPath::Bounce), Some(buf)) => buf,
            (Ok(DataPath::Bounce), None) | (Err(PathError::NoSegments), _) => {
                mrq.unmap();
                return Err(EINVAL);
            }
            (
                Err(PathError::TooBig {
                    segments,
                    len,
                    bounce,
                }),
                _,
            ) => {
                dev_err!(
                    dev,
                    "request of {} bytes mapped to {} DMA segments, bounce buffer: {} bytes\n",
                    len,
                    segments,
                    bounce
                );
                mrq.unmap();
                return Err(EINVAL);
            }
        };
        // The CPU copies the data now: no mapping may be left on the scatterlist.
        mrq.unmap();
        if mrq.data().is_some_and(|d| d.is_write()) {
            let copied = mrq.copy_to_buffer(buf.cpu(), len);
            charge_copy(copied, copy_cost);
            if copied != len {
                dev_err!(
                    dev,
                    "copied {} of {} bytes into the bounce buffer\n",
                    copied,
                    len
                );
                return Err(EIO);
            }
            buf.to_device(len, DataDirection::ToDevice);
        } else {
            // No dirty cache line may be written back over what the controller stores.
            buf.to_device(len, DataDirection::FromDevice);
        }
        Ok(DataSetup {
            dma_addr: buf.dma_address(),
            bounced: true,
        })
    }

    /// Copies `len` bytes of read data out of the bounce buffer into the request, once the
    /// controller is quiesced. Fails (the caller fails the request) if not all was copied.
    pub(crate) fn copy_back(
        &self,
        dev: &Device<Bound>,
        mrq: &DmaRequest<'_>,
        len: u32,
        copy_cost: u32,
    ) -> Result {
        let Some(buf) = &self.buf else {
            return Err(EIO);
        };
        buf.to_cpu(len);
        let copied = mrq.copy_from_buffer(buf.cpu(), len);
        charge_copy(copied, copy_cost);
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
