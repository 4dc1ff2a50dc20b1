// SPDX-License-Identifier: GPL-2.0

//! What an SDIO card needs of a host beyond what memory cards do: a way to signal the card's
//! interrupts (`sdio_signal_irq()`).

use core::ptr::NonNull;

use kernel::{
    device::Device,
    sync::aref::ARef, //
};

use crate::bindings;

/// Wakes the MMC core's SDIO interrupt work of a host (`sdio_signal_irq()`), from any context,
/// a hard IRQ handler included. The core runs the functions' interrupt handlers in its work and
/// then calls [`HostOps::ack_sdio_irq`](super::HostOps::ack_sdio_irq).
///
/// The handle keeps the host's memory (not its registration) alive, and the host's parent
/// device, which freeing the host reads (`mmc_host_classdev_release()`). Dropping it may sleep:
/// it waits for the work it may have queued.
///
/// # Invariants
///
/// `host` was allocated with `mmc_alloc_host()` with `parent` as its parent; this object holds
/// a reference to its class device, so the `struct mmc_host` stays allocated until it is
/// dropped, and one to `parent` (dropped after the one to the host).
pub(crate) struct SdioIrqSignal {
    host: NonNull<bindings::mmc_host>,
    _parent: ARef<Device>,
}

// SAFETY: `sdio_signal_irq()` may be called from any thread and any context; the reference to
// the class device may be dropped on any thread.
unsafe impl Send for SdioIrqSignal {}
// SAFETY: `signal` only calls `sdio_signal_irq()`, which is safe to call concurrently.
unsafe impl Sync for SdioIrqSignal {}

impl SdioIrqSignal {
    /// A handle for `host`.
    ///
    /// # Safety
    ///
    /// `host` must be a valid host allocated with `mmc_alloc_host()` with `parent` as parent.
    pub(super) unsafe fn new(host: NonNull<bindings::mmc_host>, parent: &Device) -> Self {
        // SAFETY: The host is valid (safety requirements) and its class device was initialised
        // by `mmc_alloc_host()`; the reference is dropped in `drop`.
        unsafe { bindings::get_device(&raw mut (*host.as_ptr()).class_dev) };
        // INVARIANT: A reference to the class device and one to the parent are held.
        Self {
            host,
            _parent: parent.into(),
        }
    }

    /// Tells the MMC core that the card interrupts (`sdio_signal_irq()`).
    pub(crate) fn signal(&self) {
        // SAFETY: By the type invariant the host is allocated; its `sdio_irq_work` was set up by
        // `mmc_alloc_host()`, and `drop` waits for it before the host can be freed.
        unsafe { bindings::sdio_signal_irq(self.host.as_ptr()) };
    }
}

impl Drop for SdioIrqSignal {
    fn drop(&mut self) {
        let h = self.host.as_ptr();
        // SAFETY: By the type invariant the host is allocated. No `signal` can run any more (it
        // borrows `self`), so once the work is cancelled nothing queues it through this handle;
        // `mmc_free_host()` cancels it too. Then the reference taken in `new` is dropped; the
        // parent's, which a release of the host reads, goes after it (field drop).
        unsafe {
            bindings::cancel_work_sync(&raw mut (*h).sdio_irq_work);
            bindings::put_device(&raw mut (*h).class_dev);
        }
    }
}
