// SPDX-License-Identifier: GPL-2.0

//! CPU copies between a scatterlist's pages and a DMA buffer (a bounce buffer).
//!
//! C header: [`include/linux/scatterlist.h`](srctree/include/linux/scatterlist.h)
//!
//! A device that takes one DMA address per transfer can still move a scatterlist of many
//! entries through a buffer of the driver's: the CPU copies the entries into the buffer before
//! a write and out of it after a read (`sg_copy_to_buffer()`, `sg_copy_from_buffer()`). The
//! buffer is a [`CpuBuffer`], a DMA allocation of the kernel crate accessed through its raw
//! address only; the scatterlist a [`CpuSgList`], which its owner hands out only while no
//! device uses it and nothing maps it for DMA.

use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    dma::Coherent,
    prelude::*, //
};

use crate::bindings;
use crate::kernel_ext::dma::noncoherent::NoncoherentPages;

/// Memory the CPU copies a scatterlist into or out of (a bounce buffer).
///
/// Implemented here for the kernel crate's DMA allocations, so that a driver never needs an
/// `unsafe impl`.
///
/// # Safety
///
/// `cpu_ptr()` must be valid for reads and writes of `size()` bytes for as long as `&self`
/// lives, and never be accessed through Rust references.
pub(crate) unsafe trait CpuBuffer {
    /// Returns the CPU address.
    fn cpu_ptr(&self) -> *mut u8;
    /// Returns the size in bytes.
    fn size(&self) -> usize;
}

// SAFETY: A coherent allocation is valid for `size()` bytes at `as_mut_ptr()` while it lives.
unsafe impl CpuBuffer for Coherent<[u8]> {
    fn cpu_ptr(&self) -> *mut u8 {
        self.as_mut_ptr().cast()
    }

    fn size(&self) -> usize {
        Coherent::size(self)
    }
}

// SAFETY: Non-coherent DMA pages are valid for `size()` bytes at `as_mut_ptr()` while they live.
unsafe impl CpuBuffer for NoncoherentPages {
    fn cpu_ptr(&self) -> *mut u8 {
        self.as_mut_ptr()
    }

    fn size(&self) -> usize {
        NoncoherentPages::size(self)
    }
}

/// A scatterlist whose pages the CPU may copy into and out of.
///
/// A subsystem whose structures hold scatterlists (an MMC request's data, ...) hands one out
/// while no device uses the pages and the list is not mapped for DMA.
///
/// # Invariants
///
/// `sg` points to `nents` valid, chained scatterlist entries for `'a`, which no device uses and
/// which are not DMA-mapped during `'a`.
#[derive(Clone, Copy)]
pub(crate) struct CpuSgList<'a> {
    sg: NonNull<bindings::scatterlist>,
    nents: u32,
    _list: PhantomData<&'a bindings::scatterlist>,
}

impl CpuSgList<'_> {
    /// Creates a [`CpuSgList`] of the `nents` entries at `sg`.
    ///
    /// # Safety
    ///
    /// `sg` must point to `nents` valid, chained scatterlist entries for `'a`, which no device
    /// uses and which are not DMA-mapped during `'a`.
    pub(crate) unsafe fn from_raw<'a>(
        sg: NonNull<bindings::scatterlist>,
        nents: u32,
    ) -> CpuSgList<'a> {
        // INVARIANT: By the safety requirements.
        CpuSgList {
            sg,
            nents,
            _list: PhantomData,
        }
    }

    /// Copies at most `len` and `buf.size()` bytes of the list into `buf`
    /// (`sg_copy_to_buffer()`), for a write.
    ///
    /// Returns the number of bytes copied. The device must not be using `buf`; it is accessed
    /// only through its raw address.
    pub(crate) fn copy_to_buffer(&self, buf: &dyn CpuBuffer, len: u32) -> u32 {
        let len = usize::try_from(len).map_or(0, |l| l.min(buf.size()));
        let dst = buf.cpu_ptr().cast();
        // SAFETY: By the type invariant the list of `nents` entries is valid and the CPU's;
        // `dst` is valid for writes of `buf.size()` >= `len` bytes (`CpuBuffer`).
        let n = unsafe { bindings::sg_copy_to_buffer(self.sg.as_ptr(), self.nents, dst, len) };
        u32::try_from(n).unwrap_or(0)
    }

    /// Copies at most `len` and `buf.size()` bytes of `buf` into the list
    /// (`sg_copy_from_buffer()`), for a read.
    ///
    /// Follows the rules of [`Self::copy_to_buffer`].
    pub(crate) fn copy_from_buffer(&self, buf: &dyn CpuBuffer, len: u32) -> u32 {
        let len = usize::try_from(len).map_or(0, |l| l.min(buf.size()));
        let src = buf.cpu_ptr().cast_const().cast();
        // SAFETY: By the type invariant the list of `nents` entries is valid and the CPU's;
        // `src` is valid for reads of `buf.size()` >= `len` bytes (`CpuBuffer`).
        let n = unsafe { bindings::sg_copy_from_buffer(self.sg.as_ptr(), self.nents, src, len) };
        u32::try_from(n).unwrap_or(0)
    }
}

/// Returns the address of the 32-bit word at byte `offset` of `buf`.
///
/// Fails unless the word lies inside `buf` and is aligned.
fn buffer_word(buf: &dyn CpuBuffer, offset: usize) -> Result<*mut u32> {
    match offset.checked_add(4) {
        Some(end) if end <= buf.size() => {}
        _ => return Err(EINVAL),
    }
    let ptr = buf.cpu_ptr().wrapping_add(offset);
    if !ptr.cast::<u32>().is_aligned() {
        return Err(EINVAL);
    }
    Ok(ptr.cast())
}

/// Stores `val` in the 32-bit word at byte `offset` of `buf` with a volatile store.
///
/// The store (as `dma_write!`) is a mark a device overwrites when it writes there. A cached
/// buffer must be told of the write (`NoncoherentPages::cpu_write`) and cleaned before the
/// device may see it. Returns `EINVAL` if the word is not inside `buf` or not aligned.
pub(crate) fn write_buffer_word(buf: &dyn CpuBuffer, offset: usize, val: u32) -> Result {
    let ptr = buffer_word(buf, offset)?;
    // SAFETY: `ptr` is an aligned word inside `buf`, valid for writes while `buf` lives
    // (`CpuBuffer`'s contract), and never accessed through a Rust reference; a device writing it
    // at the same time is not a Rust access.
    unsafe { ptr.write_volatile(val) };
    Ok(())
}

/// Loads the 32-bit word at byte `offset` of `buf` with a volatile load.
///
/// The load (as `dma_read!`) reads what a device may have written. A cached buffer must have
/// been invalidated over the word after the device wrote it. Returns `EINVAL` as
/// [`write_buffer_word`] does.
pub(crate) fn read_buffer_word(buf: &dyn CpuBuffer, offset: usize) -> Result<u32> {
    let ptr = buffer_word(buf, offset)?;
    // SAFETY: As in `write_buffer_word`, for reads.
    Ok(unsafe { ptr.read_volatile() })
}
