// SPDX-License-Identifier: GPL-2.0

//! A software deadline that runs in process context: a `struct delayed_work` on a workqueue the
//! watchdog shares the ownership of ([`OwnedQueue`], `WQ_MEM_RECLAIM` for the driver's), which
//! calls [`Expiry::expired`] of its target when it fires.
//!
//! The kernel crate's `DelayedWork` only takes `'static` work items and cannot be re-armed or
//! cancelled; a host's target borrows its bound device, so this small binding does the things
//! needed: arm or move (`mod_delayed_work()`), arm again unless armed meanwhile
//! (`queue_delayed_work()`, for an expiry that came early), and cancel and wait on drop
//! (`cancel_delayed_work_sync()`). A stale expiry is the target's to ignore: the driver does
//! not cancel when a request completes, it checks whether the request in flight is due.

use kernel::{
    container_of,
    prelude::*,
    sync::Arc,
    time::{
        msecs_to_jiffies,
        Delta, //
    },
    types::Opaque, //
};

use crate::{
    bindings as b,
    owned_queue::OwnedQueue, //
};

/// What a [`Watchdog`] calls when it fires.
pub(crate) trait Expiry: Send + Sync {
    /// The deadline passed, or the watchdog fired early. Runs on the watchdog's workqueue:
    /// may sleep. Returns when to fire again, unless the watchdog was armed meanwhile.
    fn expired(&self) -> Option<Delta>;
}

/// A re-armable deadline calling `T::expired`.
///
/// # Invariants
///
/// `dwork` was initialised with [`Watchdog::run`] as its function and is only queued by
/// [`Watchdog::arm`]; it is idle once `drop` returns.
#[pin_data(PinnedDrop)]
pub(crate) struct Watchdog<T: Expiry> {
    #[pin]
    dwork: Opaque<b::delayed_work>,
    target: Arc<T>,
    queue: Arc<OwnedQueue>,
}

// SAFETY: The `delayed_work` is only touched through the workqueue API, which synchronises
// itself; `T` is `Send + Sync`.
unsafe impl<T: Expiry> Send for Watchdog<T> {}
// SAFETY: See `Send`.
unsafe impl<T: Expiry> Sync for Watchdog<T> {}

impl<T: Expiry> Watchdog<T> {
    /// A disarmed watchdog calling `target` when it fires.
    ///
    /// # Safety
    ///
    /// The watchdog must be dropped, never forgotten, before anything `T` borrows goes away: an
    /// armed watchdog calls `T::expired` until it is dropped (the contract of
    /// `irq::ThreadedRegistration::new`).
    pub(crate) unsafe fn new(target: Arc<T>, queue: Arc<OwnedQueue>) -> impl PinInit<Self> {
        pin_init!(Self {
            // INVARIANT: Initialised with `run`, not queued.
            dwork <- Opaque::ffi_init(|slot: *mut b::delayed_work| {
                // SAFETY: `slot` is valid for writes; `run` matches the work function type and
                // only runs for a `delayed_work` embedded in a `Watchdog<T>`.
                unsafe {
                    b::init_work_with_key(
                        core::ptr::addr_of_mut!((*slot).work),
                        Some(Self::run),
                        false,
                        c"meson_mx_sdhc_rs::watchdog".as_char_ptr(),
                        kernel::static_lock_class!().as_ptr(),
                    );
                    b::timer_init_key(
                        core::ptr::addr_of_mut!((*slot).timer),
                        Some(b::delayed_work_timer_fn),
                        b::TIMER_IRQSAFE,
                        c"meson_mx_sdhc_rs::watchdog_timer".as_char_ptr(),
                        kernel::static_lock_class!().as_ptr(),
                    );
                }
            }),
            target,
            queue,
        })
    }

    /// The raw pointer of the watchdog's workqueue.
    fn queue_ptr(&self) -> *mut b::workqueue_struct {
        // `Queue` is a transparent wrapper of `struct workqueue_struct`.
        core::ptr::from_ref::<kernel::workqueue::Queue>(&self.queue)
            .cast::<b::workqueue_struct>()
            .cast_mut()
    }

    /// Arms the watchdog to fire `after` from now, or moves an armed one to that time.
    pub(crate) fn arm(&self, after: Delta) {
        // SAFETY: By the type invariant `dwork` is an initialised delayed work of a pinned
        // watchdog (it is `!Unpin` and only made in place); the queue lives as long as the
        // watchdog holds its `Arc`, and `drop` cancels the work before that `Arc` goes.
        unsafe {
            b::mod_delayed_work_on(
                b::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
                self.queue_ptr(),
                self.dwork.get(),
                jiffies(after),
            )
        };
    }

    /// Arms the watchdog to fire `after` from now unless it is armed already (by a later
    /// request, whose own deadline then stands).
    fn arm_unless_armed(&self, after: Delta) {
        // SAFETY: As in `arm`.
        unsafe {
            b::queue_delayed_work_on(
                b::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
                self.queue_ptr(),
                self.dwork.get(),
                jiffies(after),
            )
        };
    }

    /// The work function.
    ///
    /// # Safety
    ///
    /// `work` must be the `work` of the `delayed_work` of a live `Watchdog<T>`.
    unsafe extern "C" fn run(work: *mut b::work_struct) {
        // SAFETY: By the safety requirements `work` is embedded in a `delayed_work`, itself the
        // `dwork` field of a `Watchdog<T>`, which `drop` keeps alive until the work is done.
        let this = unsafe {
            let dwork = container_of!(work, b::delayed_work, work);
            &*container_of!(Opaque::cast_from(dwork).cast_mut(), Self, dwork)
        };
        if let Some(after) = this.target.expired() {
            this.arm_unless_armed(after);
        }
    }
}

/// `after` in jiffies, rounded up.
fn jiffies(after: Delta) -> kernel::time::Jiffies {
    msecs_to_jiffies(u32::try_from(after.as_millis_ceil()).unwrap_or(u32::MAX))
}

#[pinned_drop]
impl<T: Expiry> PinnedDrop for Watchdog<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: `dwork` is initialised (type invariant); after this returns it is neither
        // queued nor running, so `run` never sees this watchdog again.
        unsafe { b::cancel_delayed_work_sync(self.dwork.get()) };
    }
}
