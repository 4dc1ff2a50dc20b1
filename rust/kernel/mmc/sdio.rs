// SPDX-License-Identifier: GPL-2.0

//! SDIO card interrupt signalling of MMC hosts (`sdio_signal_irq()`).
//!
//! C header: [`include/linux/mmc/host.h`](srctree/include/linux/mmc/host.h)
//!
//! [`UnregisteredHost::set_sdio_irq`] chooses between the host's interrupt (signalled with an
//! [`SdioIrqSignal`], acknowledged by [`HostOps::ack_sdio_irq`]) and the core's polling. A host
//! has both SDIO interrupt callbacks or neither: a signal for a host without them does not
//! build, and registration clears `MMC_CAP_SDIO_IRQ` of a host without them.

use core::ptr::NonNull;

use kernel::{
    build_error,
    device::Device,
    ffi::c_int,
    sync::aref::{
        ARef,
        AlwaysRefCounted, //
    },
    types::Opaque, //
};

use super::{
    host::Adapter,
    HostOps,
    UnregisteredHost, //
};
use crate::bindings;

/// The memory of an allocated host, counted by its class device's references.
///
/// The last reference (`put_device()` on `class_dev`) frees the `struct mmc_host`
/// (`mmc_host_classdev_release()`), not its registration, which its owner removes.
///
/// # Invariants
///
/// Wraps a `struct mmc_host` allocated with `mmc_alloc_host()`, whose class device was
/// initialised there; it is never accessed mutably through this type.
#[repr(transparent)]
struct HostMemory(Opaque<bindings::mmc_host>);

impl HostMemory {
    /// Creates a reference to a [`HostMemory`] from a raw pointer.
    ///
    /// # Safety
    ///
    /// `host` must be a host allocated with `mmc_alloc_host()`, valid for `'a`.
    unsafe fn from_raw<'a>(host: NonNull<bindings::mmc_host>) -> &'a Self {
        // SAFETY: Transparent wrapper of a valid `struct mmc_host` (safety requirements).
        unsafe { host.cast::<Self>().as_ref() }
    }

    fn as_raw(&self) -> *mut bindings::mmc_host {
        self.0.get()
    }
}

// SAFETY: A reference to the class device keeps the `struct mmc_host` allocated: it is freed by
// the class device's release, after the last `put_device()`. `get_device()` and `put_device()`
// may be called from any thread.
unsafe impl AlwaysRefCounted for HostMemory {
    fn inc_ref(&self) {
        // SAFETY: The class device of a valid host was initialised by `mmc_alloc_host()`.
        unsafe { bindings::get_device(&raw mut (*self.as_raw()).class_dev) };
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        let host = obj.as_ptr().cast::<bindings::mmc_host>();
        // SAFETY: The caller gives up a reference it owns, so the host is still allocated.
        unsafe { bindings::put_device(&raw mut (*host).class_dev) };
    }
}

// SAFETY: `HostMemory` gives no access to the host's fields; its references may be taken and
// dropped on any thread.
unsafe impl Send for HostMemory {}
// SAFETY: As for `Send`.
unsafe impl Sync for HostMemory {}

/// A handle that wakes the MMC core's SDIO interrupt work of a host (`sdio_signal_irq()`).
///
/// It may signal from any context, a hard IRQ handler included. The core runs the functions'
/// interrupt handlers in its work and then calls
/// [`HostOps::ack_sdio_irq`](super::HostOps::ack_sdio_irq).
///
/// The handle keeps the host's memory (not its registration) alive, and the host's parent
/// device, which freeing the host reads (`mmc_host_classdev_release()`). Dropping it may sleep:
/// it waits for the work it may have queued (`cancel_work_sync()`), so it must not be dropped
/// from that work, i.e. from [`HostOps::ack_sdio_irq`](super::HostOps::ack_sdio_irq) or an
/// SDIO function's interrupt handler, which would wait for itself.
///
/// # Invariants
///
/// `host` was allocated with `mmc_alloc_host()` with `_parent` as its parent. Fields drop in
/// declaration order: the reference to the host before the one to its parent.
pub struct SdioIrqSignal {
    host: ARef<HostMemory>,
    _parent: ARef<Device>,
}

// SAFETY: `signal` only calls `sdio_signal_irq()`, which is safe to call from any thread and
// concurrently; `ARef<HostMemory>` and `ARef<Device>` may be dropped on any thread.
unsafe impl Send for SdioIrqSignal {}
// SAFETY: As for `Send`.
unsafe impl Sync for SdioIrqSignal {}

impl SdioIrqSignal {
    /// Creates a handle for `host`.
    ///
    /// # Safety
    ///
    /// `host` must be a valid host allocated with `mmc_alloc_host()` with `parent` as parent.
    pub(super) unsafe fn new(host: NonNull<bindings::mmc_host>, parent: &Device) -> Self {
        // SAFETY: The host is valid for this call (safety requirements); the `ARef` takes a
        // reference of its own, which keeps it allocated from here on.
        let host = ARef::from(unsafe { HostMemory::from_raw(host) });
        // INVARIANT: `parent` is the host's parent (safety requirements).
        Self {
            host,
            _parent: parent.into(),
        }
    }

    /// Signals a card interrupt to the MMC core (`sdio_signal_irq()`).
    pub fn signal(&self) {
        // The handle may outlive the host's registration (leaked, or held by an interrupt
        // handler freed after the host is removed): the work it queues then runs
        // `sdio_run_irqs()` on a removed host, which claims the host (its memory, kept here) and
        // calls the functions' handlers and `ack_sdio_irq` only while `host->sdio_irqs` counts
        // claimed function interrupts. Removing the host removes its card, and
        // `sdio_bus_remove()` releases every function interrupt still claimed, so the count is 0
        // by then: no callback reaches the driver data that `Registration` drops after
        // `mmc_remove_host()`.
        // SAFETY: The `ARef` keeps the host allocated; its `sdio_irq_work` was set up by
        // `mmc_alloc_host()`, and `drop` waits for it before the host can be freed; after
        // removal the work reaches no driver data (above).
        unsafe { bindings::sdio_signal_irq(self.host.as_raw()) };
    }
}

impl Drop for SdioIrqSignal {
    fn drop(&mut self) {
        // SAFETY: The `ARef` keeps the host allocated. No `signal` can run any more (it borrows
        // `self`), so once the work is cancelled nothing queues it through this handle;
        // `mmc_free_host()` cancels it too. The references go after this, the host's first.
        unsafe { bindings::cancel_work_sync(&raw mut (*self.host.as_raw()).sdio_irq_work) };
    }
}

impl<T: HostOps> UnregisteredHost<'_, T> {
    /// Sets whether the host signals SDIO card interrupts itself.
    ///
    /// On sets `MMC_CAP_SDIO_IRQ` with `MMC_CAP2_SDIO_IRQ_NOTHREAD`: the core calls
    /// [`HostOps::enable_sdio_irq`], the driver masks the interrupt and signals it
    /// ([`SdioIrqSignal`]), the core runs the functions' handlers in its work and calls
    /// [`HostOps::ack_sdio_irq`]. Off clears both, also when the device tree says
    /// `cap-sdio-irq`; the core polls the card from its thread. On needs both callbacks and is
    /// off without them. Must be called after [`Self::of_parse`].
    pub fn set_sdio_irq(&mut self, on: bool) {
        let on = on && Self::HAS_SDIO_IRQ_OPS;
        let h = self.raw();
        let cap = bindings::MMC_CAP_SDIO_IRQ;
        let nothread = bindings::MMC_CAP2_SDIO_IRQ_NOTHREAD;
        // SAFETY: As in `configure`: the host is valid and not added, and the two fields are
        // written through the raw pointer, without a `&mut` to the host.
        unsafe {
            if on {
                (*h).caps |= cap;
                (*h).caps2 |= nothread;
            } else {
                (*h).caps &= !cap;
                (*h).caps2 &= !nothread;
            }
        }
    }

    /// Whether `T` has both SDIO interrupt callbacks.
    ///
    /// The core calls them without checking once `MMC_CAP_SDIO_IRQ` is set (`sdio_run_irqs()`,
    /// `mmc_host_set_sdio_irq()`, ...).
    const HAS_SDIO_IRQ_OPS: bool = T::HAS_ENABLE_SDIO_IRQ && T::HAS_ACK_SDIO_IRQ;

    /// Returns a handle that signals the host's SDIO card interrupts to the core.
    ///
    /// Only for a host whose [`HostOps`] has `enable_sdio_irq` and `ack_sdio_irq`: the core
    /// acknowledges a signalled interrupt through the latter, so without it this does not
    /// build.
    pub fn sdio_irq_signal(&self) -> SdioIrqSignal {
        if !Self::HAS_SDIO_IRQ_OPS {
            build_error!(concat!(
                "an SDIO interrupt signal for a host without `HostOps::enable_sdio_irq` ",
                "and `HostOps::ack_sdio_irq`"
            ));
        }
        // SAFETY: By the type invariant the host was allocated with `mmc_alloc_host()` with
        // `self.host_parent()` as parent (the child of a `new_for_child` host, the bound device
        // otherwise).
        unsafe { SdioIrqSignal::new(self.host, self.host_parent()) }
    }

    /// Makes the SDIO interrupt capabilities consistent before the host is added.
    ///
    /// Applies [`Self::set_sdio_irq`] with `MMC_CAP_SDIO_IRQ` as it is, which a device tree's
    /// `cap-sdio-irq` may have set alone (`mmc_of_parse()`): on only with both callbacks, and
    /// then with `MMC_CAP2_SDIO_IRQ_NOTHREAD`.
    pub(super) fn settle_sdio_irq_caps(&mut self) {
        // SAFETY: By the type invariant the host is valid and not added; a plain read of a
        // field nothing else writes.
        let on = unsafe { (*self.raw()).caps } & bindings::MMC_CAP_SDIO_IRQ != 0;
        self.set_sdio_irq(on);
    }
}

impl<T: HostOps> Adapter<T> {
    /// Calls [`HostOps::enable_sdio_irq`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T`.
    pub(super) unsafe extern "C" fn enable_sdio_irq(host: *mut bindings::mmc_host, enable: c_int) {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        T::enable_sdio_irq(unsafe { Self::host(host) }, enable != 0);
    }

    /// Calls [`HostOps::ack_sdio_irq`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T`.
    pub(super) unsafe extern "C" fn ack_sdio_irq(host: *mut bindings::mmc_host) {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        T::ack_sdio_irq(unsafe { Self::host(host) });
    }
}
