// SPDX-License-Identifier: GPL-2.0

//! The bounce buffer: one DMA-coherent buffer per host, through which a request whose
//! scatterlist maps to more than one DMA segment is transferred (the controller has a single
//! DMA address register).
//!
//! The buffer is never accessed through Rust references: the scatterlist copies in `mmc.rs`
//! (`sg_copy_to_buffer()`/`sg_copy_from_buffer()`) take its raw CPU address. The driver copies
//! into it only before starting a command and out of it only after the command completed, so
//! the CPU and the controller never use it at the same time; the MMC core has at most one
//! request in flight per host.

use kernel::{
    device::{Bound, Device},
    dma::{attrs::DMA_ATTR_NO_WARN, Coherent},
    prelude::*,
};

/// A DMA-coherent bounce buffer of a power-of-two size from 4 KiB to 4 MiB.
pub(crate) struct BounceBuffer {
    buf: Coherent<[u8]>,
}

impl BounceBuffer {
    /// Allocates `size` bytes of coherent memory for `dev`. Fails quietly (no allocation
    /// warning): the caller falls back to single-segment requests.
    pub(crate) fn new(dev: &Device<Bound>, size: u32) -> Result<Self> {
        let len = usize::try_from(size)?;
        let buf = Coherent::<u8>::zeroed_slice_with_attrs(
            dev,
            len,
            GFP_KERNEL | __GFP_NOWARN,
            DMA_ATTR_NO_WARN,
        )?;
        Ok(Self { buf })
    }

    /// Size in bytes.
    pub(crate) fn size(&self) -> u32 {
        u32::try_from(self.buf.size()).unwrap_or(u32::MAX)
    }

    /// The bus address the controller uses.
    pub(crate) fn dma_address(&self) -> u64 {
        #[allow(clippy::useless_conversion)]
        u64::from(self.buf.dma_address())
    }

    /// The coherent allocation, for the scatterlist copies of `mmc.rs`.
    pub(crate) fn coherent(&self) -> &Coherent<[u8]> {
        &self.buf
    }
}
