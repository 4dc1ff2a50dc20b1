// SPDX-License-Identifier: GPL-2.0

//! Non-coherent DMA pages: cached memory handed between the CPU and a device with explicit syncs.
//!
//! [`NoncoherentPages`] wraps `dma_alloc_pages()`: memory in the CPU's cached linear mapping,
//! mapped for one device, whose ownership the driver passes to the device
//! ([`NoncoherentPages::sync_for_device`], `dma_sync_single_for_device()`) and back
//! ([`NoncoherentPages::sync_for_cpu`], `dma_sync_single_for_cpu()`) around every transfer. On a
//! system that is not DMA-coherent, [`Coherent`](kernel::dma::Coherent) memory is mapped
//! uncached and the CPU reads it several times slower; a buffer the CPU copies through (a bounce
//! buffer) is faster in cached memory, paying for cache maintenance instead. The kernel crate
//! only offers coherent allocations.
//!
//! C header: [`include/linux/dma-mapping.h`](srctree/include/linux/dma-mapping.h)

use core::ptr::NonNull;

use kernel::{
    alloc::Flags,
    device::{
        Bound,
        Device, //
    },
    dma::{
        DataDirection,
        DmaAddress, //
    },
    prelude::*, //
};

use crate::bindings;

/// `dev.as_raw()`, which is private to the kernel crate: this module is built outside it.
/// (In the kernel crate, `scripts/make-series` writes `dev.as_raw()` for each call.)
fn raw_dev(dev: &Device<Bound>) -> *mut bindings::device {
    // CAST: `Device<Ctx>` is a `#[repr(transparent)]` wrapper of `Opaque<struct device>` (and a
    // zero-sized marker), which itself is a transparent wrapper of `struct device`.
    core::ptr::from_ref(dev)
        .cast::<bindings::device>()
        .cast_mut()
}

/// `flags.as_raw()`, which is private to the kernel crate: this module is built outside it.
/// (In the kernel crate, `flags.as_raw()` is written for each call.) Out of it, the value is
/// the union of the kernel crate's allocation flags that `flags` contains.
fn raw_gfp(flags: Flags) -> bindings::gfp_t {
    use kernel::alloc::flags::*;
    [
        (GFP_KERNEL_ACCOUNT, bindings::GFP_KERNEL_ACCOUNT),
        (GFP_KERNEL, bindings::GFP_KERNEL),
        (GFP_ATOMIC, bindings::GFP_ATOMIC),
        (GFP_NOWAIT, bindings::GFP_NOWAIT),
        (__GFP_ZERO, bindings::__GFP_ZERO),
        (__GFP_HIGHMEM, bindings::__GFP_HIGHMEM),
        (__GFP_NOWARN, bindings::__GFP_NOWARN),
    ]
    .iter()
    .filter(|(f, _)| flags.contains(*f))
    .fold(0, |raw, (_, r)| raw | r)
}

/// Pages of cached memory mapped for DMA by a bound device (`dma_alloc_pages()`), freed
/// (`dma_free_pages()`) when dropped.
///
/// The buffer borrows the bound device: it cannot outlive the binding, and if it is leaked the
/// pages stay allocated. Between [`sync_for_device`](Self::sync_for_device) and
/// [`sync_for_cpu`](Self::sync_for_cpu) the device owns the synced bytes and the CPU must not
/// touch them; the memory is only handed out as a raw pointer ([`as_mut_ptr`](Self::as_mut_ptr)),
/// whose users keep to that.
///
/// # Invariants
///
/// - `page` was returned by `dma_alloc_pages(dev, size, &dma_addr, dir, ..)`, with `size` not
///   zero, and is owned by this object.
/// - `cpu_addr` is the kernel virtual address of `page` (`page_address()`), valid for `size`
///   bytes while this object lives.
pub(crate) struct NoncoherentPages<'a> {
    dev: &'a Device<Bound>,
    page: NonNull<bindings::page>,
    cpu_addr: NonNull<u8>,
    dma_addr: DmaAddress,
    size: usize,
    dir: DataDirection,
}

// SAFETY: The pages are plain memory owned by this object; the DMA API may be called on them from
// any thread.
unsafe impl Send for NoncoherentPages<'_> {}

// SAFETY: The `&self` methods only sync caches through the DMA API, which may be called
// concurrently, or return addresses and sizes.
unsafe impl Sync for NoncoherentPages<'_> {}

impl<'a> NoncoherentPages<'a> {
    /// Allocates `size` bytes of pages for `dev`, mapped for transfers in `dir`.
    ///
    /// `gfp_flags` must not ask for high memory (`dma_alloc_pages()` refuses it). Returns
    /// `EINVAL` if `size` is zero, `ENOMEM` if the allocation fails.
    pub(crate) fn alloc(
        dev: &'a Device<Bound>,
        size: usize,
        dir: DataDirection,
        gfp_flags: Flags,
    ) -> Result<Self> {
        if size == 0 {
            return Err(EINVAL);
        }
        let mut dma_addr: DmaAddress = 0;
        // SAFETY: `raw_dev(dev)` is a valid bound device; `dma_addr` is valid for writes.
        let page = unsafe {
            bindings::dma_alloc_pages(
                raw_dev(dev),
                size,
                &mut dma_addr,
                dir.into(),
                raw_gfp(gfp_flags),
            )
        };
        let page = NonNull::new(page).ok_or(ENOMEM)?;
        // SAFETY: `page` is a valid page just allocated.
        let cpu_addr = unsafe { bindings::page_address(page.as_ptr()) }.cast::<u8>();
        let Some(cpu_addr) = NonNull::new(cpu_addr) else {
            // SAFETY: `page` was allocated above with these arguments and is not used again.
            unsafe {
                bindings::dma_free_pages(raw_dev(dev), size, page.as_ptr(), dma_addr, dir.into())
            };
            return Err(ENOMEM);
        };
        // INVARIANT: Allocated above with `size` not zero, owned now; `cpu_addr` is its address.
        Ok(Self {
            dev,
            page,
            cpu_addr,
            dma_addr,
            size,
            dir,
        })
    }

    /// Returns the size in bytes.
    #[inline]
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Returns the DMA address which may be given to the device as the base of the buffer.
    #[inline]
    pub(crate) fn dma_address(&self) -> DmaAddress {
        self.dma_addr
    }

    /// Returns the CPU address of the buffer, valid for reads and writes of [`Self::size`]
    /// bytes while `self` lives and the CPU owns them.
    #[inline]
    pub(crate) fn as_mut_ptr(&self) -> *mut u8 {
        self.cpu_addr.as_ptr()
    }

    /// Checks that `len` bytes at `offset` lie inside the buffer and returns their DMA address.
    fn range(&self, offset: usize, len: usize) -> Result<DmaAddress> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => {
                Ok(self.dma_addr + DmaAddress::try_from(offset).map_err(|_| EINVAL)?)
            }
            _ => Err(EINVAL),
        }
    }

    /// Hands `len` bytes at `offset` to the device for a transfer in `dir`
    /// (`dma_sync_single_for_device()`): the CPU caches are written back (to the device) or
    /// invalidated (from the device). `dir` must be the direction of the allocation, or that
    /// must be [`DataDirection::Bidirectional`].
    ///
    /// Returns `EINVAL` if the range is not inside the buffer.
    pub(crate) fn sync_for_device(&self, offset: usize, len: usize, dir: DataDirection) -> Result {
        let addr = self.range(offset, len)?;
        // SAFETY: By the type invariants `dma_addr` maps `size` bytes for `dev`, and the range is
        // inside them.
        unsafe { bindings::__dma_sync_single_for_device(raw_dev(self.dev), addr, len, dir.into()) };
        Ok(())
    }

    /// Hands `len` bytes at `offset` back to the CPU after a transfer in `dir`
    /// (`dma_sync_single_for_cpu()`), as for [`Self::sync_for_device`].
    ///
    /// Returns `EINVAL` if the range is not inside the buffer.
    pub(crate) fn sync_for_cpu(&self, offset: usize, len: usize, dir: DataDirection) -> Result {
        let addr = self.range(offset, len)?;
        // SAFETY: As in `sync_for_device`.
        unsafe { bindings::__dma_sync_single_for_cpu(raw_dev(self.dev), addr, len, dir.into()) };
        Ok(())
    }
}

/// Note that the device must be done with the buffer before it is dropped.
impl Drop for NoncoherentPages<'_> {
    fn drop(&mut self) {
        // SAFETY: By the type invariants the pages were allocated with these arguments and are
        // owned by this object, which goes now; `self.dev` is still bound (it is borrowed).
        unsafe {
            bindings::dma_free_pages(
                raw_dev(self.dev),
                self.size,
                self.page.as_ptr(),
                self.dma_addr,
                self.dir.into(),
            )
        };
    }
}
