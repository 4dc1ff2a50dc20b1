// SPDX-License-Identifier: GPL-2.0

//! A DMA buffer in cached memory, handed between the CPU and the device with explicit syncs
//! (`dma_alloc_pages()`, `dma_sync_single_for_{device,cpu}()`), like sdhci's bounce buffer.
//!
//! On a SoC that is not DMA-coherent (the Meson8b's Cortex-A5/A9) coherent memory is mapped
//! uncached, and the CPU copies out of it several times slower than out of cached memory; a
//! cached buffer pays for cache maintenance instead. The kernel crate only offers coherent
//! allocations, so this binding wraps the page allocator of the DMA API.

use core::ptr::NonNull;

use kernel::{
    device::{
        Bound,
        Device, //
    },
    dma::DataDirection,
    prelude::*, //
};

use crate::{
    bindings as b,
    sg_dma::{
        raw_dev,
        CpuBuffer, //
    }, //
};

/// `size` bytes of cached memory mapped for `dev` in both directions.
///
/// # Invariants
///
/// `page` was returned by `dma_alloc_pages(dev, size, &dma, DMA_BIDIRECTIONAL, ..)` and is
/// owned by this object; `cpu` is its kernel address (lowmem: `GFP_KERNEL`).
pub(crate) struct NoncoherentBuffer<'a> {
    dev: &'a Device<Bound>,
    page: NonNull<b::page>,
    cpu: NonNull<u8>,
    dma: b::dma_addr_t,
    size: usize,
}

// SAFETY: The buffer is plain memory owned by this object; the DMA API calls may be made from
// any thread.
unsafe impl Send for NoncoherentBuffer<'_> {}
// SAFETY: `&self` methods only sync caches or hand out raw addresses.
unsafe impl Sync for NoncoherentBuffer<'_> {}

impl<'a> NoncoherentBuffer<'a> {
    /// Allocates `size` bytes (quietly: the caller falls back).
    pub(crate) fn new(dev: &'a Device<Bound>, size: usize) -> Result<Self> {
        let mut dma: b::dma_addr_t = 0;
        let gfp = b::GFP_KERNEL | b::__GFP_NOWARN;
        // SAFETY: `dev` is a bound device; `dma` is valid for writes.
        let page = unsafe {
            b::dma_alloc_pages(
                raw_dev(dev),
                size,
                &mut dma,
                DataDirection::Bidirectional.into(),
                gfp,
            )
        };
        let page = NonNull::new(page).ok_or(ENOMEM)?;
        // SAFETY: `page` is a valid lowmem page just allocated.
        let cpu = unsafe { b::page_address(page.as_ptr()) }.cast::<u8>();
        let Some(cpu) = NonNull::new(cpu) else {
            // SAFETY: Allocated above with these arguments and not used.
            unsafe {
                b::dma_free_pages(
                    raw_dev(dev),
                    size,
                    page.as_ptr(),
                    dma,
                    DataDirection::Bidirectional.into(),
                )
            };
            return Err(ENOMEM);
        };
        // INVARIANT: Allocated above, owned now.
        Ok(Self {
            dev,
            page,
            cpu,
            dma,
            size,
        })
    }

    /// The bus address.
    pub(crate) fn dma_address(&self) -> b::dma_addr_t {
        self.dma
    }

    /// Hands the first `len` bytes to the device for a transfer in `dir`: written back from
    /// the CPU caches (to the device) or invalidated (from the device).
    pub(crate) fn for_device(&self, len: usize, dir: DataDirection) {
        // SAFETY: By the type invariant `dma` maps `size` bytes for `dev`; `len` is clamped.
        unsafe {
            b::__dma_sync_single_for_device(
                raw_dev(self.dev),
                self.dma,
                len.min(self.size),
                dir.into(),
            )
        };
    }

    /// Hands the first `len` bytes back to the CPU after a transfer in `dir`.
    pub(crate) fn for_cpu(&self, len: usize, dir: DataDirection) {
        // SAFETY: As in `for_device`.
        unsafe {
            b::__dma_sync_single_for_cpu(
                raw_dev(self.dev),
                self.dma,
                len.min(self.size),
                dir.into(),
            )
        };
    }
}

impl Drop for NoncoherentBuffer<'_> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the pages were allocated with these arguments and are
        // owned by this object, which goes now.
        unsafe {
            b::dma_free_pages(
                raw_dev(self.dev),
                self.size,
                self.page.as_ptr(),
                self.dma,
                DataDirection::Bidirectional.into(),
            )
        };
    }
}

// SAFETY: By the type invariant `cpu` is valid for `size` bytes while the buffer lives.
unsafe impl CpuBuffer for NoncoherentBuffer<'_> {
    fn cpu_ptr(&self) -> *mut u8 {
        self.cpu.as_ptr()
    }

    fn size(&self) -> usize {
        self.size
    }
}
