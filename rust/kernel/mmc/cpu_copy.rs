// SPDX-License-Identifier: GPL-2.0

//! CPU copies between a request's scatterlist and a host driver's bounce buffer.
//!
//! C header: [`include/linux/scatterlist.h`](srctree/include/linux/scatterlist.h)
//!
//! The buffer is a [`CpuBuffer`], a DMA allocation the device is not using at the time,
//! accessed through its raw address only. A copy refuses a scatterlist that is DMA-mapped, by
//! the request path or by `pre_req`: the CPU must not touch it then.

use kernel::{
    dma::Coherent,
    prelude::*, //
};

use crate::kernel_ext::dma::noncoherent::NoncoherentPages;

use super::{
    dma::is_pre_mapped,
    IdleRequest, //
};
use super::{
    Data,
    DmaRequest, //
};

use crate::bindings;

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

impl DmaRequest {
    /// Copies the first `len` bytes of the data scatterlist into `buf`, for a write.
    ///
    /// Returns the number of bytes copied, at most the size of `buf`: 0 without data or while
    /// the scatterlist is DMA-mapped (the CPU must not touch it then).
    ///
    /// The device must not be using `buf`; it is accessed only through its raw address.
    pub(crate) fn copy_to_buffer(&self, buf: &dyn CpuBuffer, len: u32) -> u32 {
        match self.unmapped_data() {
            // SAFETY: Not DMA-mapped (checked), and the request is ours, not the device's.
            Some(data) => unsafe { sg_to_buffer(data, buf, len) },
            None => 0,
        }
    }

    /// Copies `len` bytes from `buf` into the data scatterlist, for a read.
    ///
    /// Follows the rules of [`Self::copy_to_buffer`].
    pub(crate) fn copy_from_buffer(&self, buf: &dyn CpuBuffer, len: u32) -> u32 {
        match self.unmapped_data() {
            // SAFETY: As in `copy_to_buffer`.
            Some(data) => unsafe { buffer_to_sg(buf, data, len) },
            None => 0,
        }
    }
}

/// Copies the first `len` bytes of the data of a request in `pre_req` into `buf`.
///
/// Follows the rules of [`DmaRequest::copy_to_buffer`].
pub(crate) fn copy_idle_to_buffer(mrq: &IdleRequest, buf: &dyn CpuBuffer, len: u32) -> u32 {
    mrq.data().filter(|d| !is_pre_mapped(d)).map_or(0, |data| {
        // SAFETY: An idle request is not in flight, so no device moves its data, and `pre_map`
        // has not mapped it (checked): nothing else maps a request's data.
        unsafe { sg_to_buffer(data, buf, len) }
    })
}

/// Copies `len` bytes from `buf` into the data of a request in `post_req`.
///
/// Follows the rules of [`DmaRequest::copy_from_buffer`].
pub(crate) fn copy_buffer_to_idle(buf: &dyn CpuBuffer, mrq: &IdleRequest, len: u32) -> u32 {
    mrq.data().filter(|d| !is_pre_mapped(d)).map_or(0, |data| {
        // SAFETY: As in `copy_idle_to_buffer`.
        unsafe { buffer_to_sg(buf, data, len) }
    })
}

/// Copies at most `len` and `buf.size()` bytes of the data into `buf` (`sg_copy_to_buffer()`).
///
/// Returns the number of bytes copied.
///
/// # Safety
///
/// The scatterlist of `data` must not be DMA-mapped or used by a device during the call.
unsafe fn sg_to_buffer(data: &Data, buf: &dyn CpuBuffer, len: u32) -> u32 {
    let sg = data.sg_list();
    let len = usize::try_from(len).map_or(0, |l| l.min(buf.size()));
    let dst = buf.cpu_ptr().cast();
    // SAFETY: The scatterlist of `sg.len()` entries is valid and, by the safety requirements,
    // the CPU's; `dst` (`buf.cpu_ptr()`) is valid for writes of `buf.size()` >= `len` bytes
    // (`CpuBuffer`).
    let n = unsafe { bindings::sg_copy_to_buffer(sg.as_raw(), sg.len(), dst, len) };
    u32::try_from(n).unwrap_or(0)
}

/// Copies at most `len` and `buf.size()` bytes of `buf` into the data (`sg_copy_from_buffer()`).
///
/// Returns the number of bytes copied.
///
/// # Safety
///
/// As for [`sg_to_buffer`].
unsafe fn buffer_to_sg(buf: &dyn CpuBuffer, data: &Data, len: u32) -> u32 {
    let sg = data.sg_list();
    let len = usize::try_from(len).map_or(0, |l| l.min(buf.size()));
    // SAFETY: The scatterlist of `sg.len()` entries is valid and, by the safety requirements,
    // the CPU's; `buf.cpu_ptr()` is valid for reads of `buf.size()` >= `len` bytes
    // (`CpuBuffer`).
    let n = unsafe {
        bindings::sg_copy_from_buffer(
            sg.as_raw(),
            sg.len(),
            buf.cpu_ptr().cast_const().cast(),
            len,
        )
    };
    u32::try_from(n).unwrap_or(0)
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
