// SPDX-License-Identifier: GPL-2.0

//! CPU copies between a scatterlist's pages and a DMA buffer (a bounce buffer).
//!
//! C header: [`include/linux/scatterlist.h`](srctree/include/linux/scatterlist.h)
//!
//! A device that takes one DMA address per transfer can still move a scatterlist of many
//! entries through a buffer of the driver's: the CPU copies the entries into the buffer before
//! a write and out of it after a read (`sg_copy_to_buffer()`, `sg_copy_from_buffer()`). The
//! buffer is a DMA allocation of the kernel crate, or a view of one, accessed through its raw
//! address only: a [`CpuBufferMut`] to copy into, a [`CpuBuffer`] to copy out of. Cached pages
//! ([`NoncoherentPages`]) are neither: the CPU writes them through the view
//! [`NoncoherentPages::cpu_write`] returns, which notes the range as dirty for the next
//! mapping, and reads them through [`NoncoherentPages::cpu_read`]'s, which exists only while
//! the device has no mapping of them. The scatterlist is a [`CpuSgList`], which its owner hands
//! out only while no device uses it and nothing maps it for DMA.
//!
//! [`NoncoherentPages`]: super::noncoherent::NoncoherentPages
//! [`NoncoherentPages::cpu_write`]: super::noncoherent::NoncoherentPages::cpu_write
//! [`NoncoherentPages::cpu_read`]: super::noncoherent::NoncoherentPages::cpu_read

use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    dma::Coherent,
    prelude::*, //
};

use crate::bindings;
use crate::kernel_ext::dma::noncoherent::{
    CpuReadView,
    CpuWriteView, //
};

/// Memory the CPU copies a scatterlist out of (a bounce buffer after a read).
///
/// Implemented here for the kernel crate's DMA allocations and their views, so that a driver
/// never needs an `unsafe impl`.
///
/// # Safety
///
/// `cpu_ptr()` must be valid for reads of `size()` bytes for as long as `&self` lives, and never
/// be accessed through Rust references.
pub unsafe trait CpuBuffer {
    /// Returns the CPU address.
    fn cpu_ptr(&self) -> *const u8;
    /// Returns the size in bytes.
    fn size(&self) -> usize;
}

/// Memory the CPU copies a scatterlist into (a bounce buffer before a write).
///
/// # Safety
///
/// As [`CpuBuffer`], and `cpu_mut_ptr()` must be `cpu_ptr()` and valid for writes too.
pub unsafe trait CpuBufferMut: CpuBuffer {
    /// Returns the CPU address.
    fn cpu_mut_ptr(&self) -> *mut u8;
}

// SAFETY: A coherent allocation is valid for `size()` bytes at `as_mut_ptr()` while it lives.
unsafe impl CpuBuffer for Coherent<[u8]> {
    fn cpu_ptr(&self) -> *const u8 {
        self.cpu_mut_ptr().cast_const()
    }

    fn size(&self) -> usize {
        Coherent::size(self)
    }
}

// SAFETY: As for `CpuBuffer`: the same address, valid for writes too.
unsafe impl CpuBufferMut for Coherent<[u8]> {
    fn cpu_mut_ptr(&self) -> *mut u8 {
        self.as_mut_ptr().cast()
    }
}

// SAFETY: The view's range is valid for reads and writes of `size()` bytes at `as_mut_ptr()`
// while the view lives.
unsafe impl CpuBuffer for CpuWriteView<'_> {
    fn cpu_ptr(&self) -> *const u8 {
        self.as_mut_ptr().cast_const()
    }

    fn size(&self) -> usize {
        CpuWriteView::size(self)
    }
}

// SAFETY: As for `CpuBuffer`: the same address, valid for writes, which the view noted.
unsafe impl CpuBufferMut for CpuWriteView<'_> {
    fn cpu_mut_ptr(&self) -> *mut u8 {
        self.as_mut_ptr()
    }
}

// SAFETY: The pages are valid for reads of `size()` bytes at `as_ptr()` while the view lives.
unsafe impl CpuBuffer for CpuReadView<'_> {
    fn cpu_ptr(&self) -> *const u8 {
        self.as_ptr()
    }

    fn size(&self) -> usize {
        CpuReadView::size(self)
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
pub struct CpuSgList<'a> {
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
    pub unsafe fn from_raw<'a>(sg: NonNull<bindings::scatterlist>, nents: u32) -> CpuSgList<'a> {
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
    /// Returns the number of bytes copied. `buf` is accessed only through its raw address; what
    /// a device does with it meanwhile is the caller's concern, not a safety one: the caller
    /// hands it to the device only after the copy.
    pub fn copy_to_buffer(&self, buf: &dyn CpuBufferMut, len: u32) -> u32 {
        let len = usize::try_from(len).map_or(0, |l| l.min(buf.size()));
        let dst = buf.cpu_mut_ptr().cast();
        // SAFETY: By the type invariant the list of `nents` entries is valid and the CPU's;
        // `dst` is valid for writes of `buf.size()` >= `len` bytes (`CpuBufferMut`).
        let n = unsafe { bindings::sg_copy_to_buffer(self.sg.as_ptr(), self.nents, dst, len) };
        u32::try_from(n).unwrap_or(0)
    }

    /// Copies at most `len` and `buf.size()` bytes of `buf` into the list
    /// (`sg_copy_from_buffer()`), for a read.
    ///
    /// Follows the rules of [`Self::copy_to_buffer`].
    pub fn copy_from_buffer(&self, buf: &dyn CpuBuffer, len: u32) -> u32 {
        let len = usize::try_from(len).map_or(0, |l| l.min(buf.size()));
        let src = buf.cpu_ptr().cast();
        // SAFETY: By the type invariant the list of `nents` entries is valid and the CPU's;
        // `src` is valid for reads of `buf.size()` >= `len` bytes (`CpuBuffer`).
        let n = unsafe { bindings::sg_copy_from_buffer(self.sg.as_ptr(), self.nents, src, len) };
        u32::try_from(n).unwrap_or(0)
    }
}

/// Returns the offset of the 32-bit word at byte `offset` of `buf`'s `size` bytes at `ptr`.
///
/// Fails unless the word lies inside the buffer and is aligned.
fn buffer_word(ptr: *const u8, size: usize, offset: usize) -> Result<usize> {
    match offset.checked_add(4) {
        Some(end) if end <= size => {}
        _ => return Err(EINVAL),
    }
    if !ptr.wrapping_add(offset).cast::<u32>().is_aligned() {
        return Err(EINVAL);
    }
    Ok(offset)
}

/// Stores `val` in the 32-bit word at byte `offset` of `buf` with a volatile store.
///
/// The store (as `dma_write!`) is a mark a device overwrites when it writes there. Cached pages
/// are written through their write view ([`NoncoherentPages::cpu_write`]), which notes the
/// range for the clean the device needs to see it. Returns `EINVAL` if the word is not inside
/// `buf` or not aligned.
///
/// [`NoncoherentPages::cpu_write`]: super::noncoherent::NoncoherentPages::cpu_write
pub fn write_buffer_word(buf: &dyn CpuBufferMut, offset: usize, val: u32) -> Result {
    let ptr = buf.cpu_mut_ptr();
    let offset = buffer_word(ptr, buf.size(), offset)?;
    // SAFETY: The word at `offset` is aligned and inside `buf` (checked), which is valid for
    // writes while it lives (`CpuBufferMut`'s contract) and never accessed through a Rust
    // reference; a device writing it at the same time is not a Rust access.
    unsafe { ptr.add(offset).cast::<u32>().write_volatile(val) };
    Ok(())
}

/// Loads the 32-bit word at byte `offset` of `buf` with a volatile load.
///
/// The load (as `dma_read!`) reads what a device may have written. Cached pages are read
/// through their read view ([`NoncoherentPages::cpu_read`]), which exists only after the
/// unmapping that invalidated them. Returns `EINVAL` as [`write_buffer_word`] does.
///
/// [`NoncoherentPages::cpu_read`]: super::noncoherent::NoncoherentPages::cpu_read
pub fn read_buffer_word(buf: &dyn CpuBuffer, offset: usize) -> Result<u32> {
    let ptr = buf.cpu_ptr();
    let offset = buffer_word(ptr, buf.size(), offset)?;
    // SAFETY: As in `write_buffer_word`, for reads (`CpuBuffer`'s contract).
    Ok(unsafe { ptr.add(offset).cast::<u32>().read_volatile() })
}

#[kernel::macros::kunit_tests(rust_kernel_dma_cpu_copy)]
mod tests {
    use super::*;
    use crate::kernel_ext::dma::noncoherent::{
        MapSync,
        NoncoherentPages, //
    };
    use kernel::{
        c_str,
        device::{
            Bound,
            Device, //
        },
        dma::DataDirection,
        faux, //
    };

    #[test]
    fn noncoherent_pages_are_reached_through_one_view_at_a_time() -> Result {
        let parent = faux::Registration::new(c_str!("rust-dma-cpu-copy-test"), None)?;
        let faux_dev: &faux::Device<Bound> = parent.as_ref();
        let dev: &Device<Bound> = faux_dev.as_ref();
        let pages = NoncoherentPages::alloc(dev, 4096, DataDirection::Bidirectional, GFP_KERNEL)?;
        let write = pages.cpu_write(16, 8)?;
        // The view is its range: its offsets start there, and words outside it are refused.
        assert_eq!(CpuBuffer::size(&write), 8);
        write_buffer_word(&write, 4, 0x1234_5678)?;
        assert!(write_buffer_word(&write, 8, 0).is_err());
        // While it lives, no other view and no mapping (refused before the DMA API is called).
        assert!(pages.cpu_read().is_err());
        assert!(pages.cpu_write(0, 4).is_err());
        let mapped = pages.map(dev, 0, 8, DataDirection::ToDevice, MapSync::Always);
        assert!(matches!(mapped, Err(e) if e == EBUSY));
        drop(write);
        let read = pages.cpu_read()?;
        assert_eq!(read_buffer_word(&read, 20)?, 0x1234_5678);
        assert_eq!(CpuBuffer::size(&read), 4096);
        assert!(pages.cpu_write(0, 4).is_err());
        drop(read);
        // A write view lies inside the pages.
        assert!(pages.cpu_write(4092, 8).is_err());
        assert!(pages.cpu_write(4088, 8).is_ok());
        Ok(())
    }
}
