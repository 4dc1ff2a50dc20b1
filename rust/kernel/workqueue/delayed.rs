// SPDX-License-Identifier: GPL-2.0

//! Delayed work items that their owner re-arms and cancels.
//!
//! Adds [`OwnedDelayedWork`], a `struct delayed_work` that stays with its owner rather than
//! being handed over to a queue: the owner arms it for a delay from now, moving an earlier or
//! later expiry (`mod_delayed_work()`), or arms it only if it is idle (`queue_delayed_work()`),
//! and cancels it (`cancel_delayed_work_sync()`); dropping it cancels it and waits for its
//! function. When it fires it calls [`Target::run`] of the object it was made for, which it
//! holds an [`Arc`] of, on an [`OwnedQueue`] it keeps alive.
//!
//! [`DelayedWork`](kernel::workqueue::DelayedWork) is enqueued by handing a reference-counted
//! work item over to [`Queue::enqueue_delayed`](kernel::workqueue::Queue::enqueue_delayed),
//! which can neither move the expiry of a pending item nor cancel it, and takes only `'static`
//! items. A software deadline of a device's requests needs both: each request moves it, and
//! unbinding the device must stop it; and what it calls back borrows the bound device.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h)

use kernel::{
    container_of,
    prelude::*,
    sync::Arc,
    time::{
        msecs_to_jiffies,
        Delta,
        Jiffies, //
    },
    types::Opaque, //
};

use crate::bindings;
use crate::kernel_ext::workqueue::owned::OwnedQueue;

/// What an [`OwnedDelayedWork`] calls when it fires.
pub(crate) trait Target: Send + Sync + Sized {
    /// The work fired. Runs on the work's queue, in process context: may sleep. `work` is the
    /// work that fired, which may be armed again from here (but not cancelled: that would wait
    /// for this very call).
    fn run(&self, work: &OwnedDelayedWork<Self>);
}

/// A delayed work that calls [`T::run`](Target::run) on a queue it holds, re-armed and cancelled
/// by its owner; dropping it cancels it and waits for a running `T::run`.
///
/// All of them share one lockdep class.
///
/// # Examples
///
/// A deadline that each new request moves, and that checks when it fires whether a request is
/// still due:
///
/// ```
/// use kernel::{
///     new_mutex,
///     prelude::*,
///     sync::{
///         Arc,
///         Mutex, //
///     },
///     time::Delta,
///     workqueue::{
///         delayed::{
///             OwnedDelayedWork,
///             Target, //
///         },
///         owned::{
///             Flags,
///             OwnedQueue, //
///         },
///     }, //
/// };
///
/// #[pin_data]
/// struct Requests {
///     #[pin]
///     in_flight: Mutex<u32>,
/// }
///
/// impl Target for Requests {
///     fn run(&self, _work: &OwnedDelayedWork<Self>) {
///         let mut in_flight = self.in_flight.lock();
///         if *in_flight > 0 {
///             pr_warn!("{} requests timed out\n", *in_flight);
///             *in_flight = 0;
///         }
///     }
/// }
///
/// let requests = Arc::pin_init(pin_init!(Requests { in_flight <- new_mutex!(0) }), GFP_KERNEL)?;
/// let flags = Flags::UNBOUND | Flags::MEM_RECLAIM;
/// let queue = Arc::new(OwnedQueue::new(c"deadlines", flags, 1)?, GFP_KERNEL)?;
/// // SAFETY: `Requests` borrows nothing.
/// let work = unsafe { OwnedDelayedWork::new(requests.clone(), queue) };
/// let deadline = KBox::pin_init(work, GFP_KERNEL)?;
/// *requests.in_flight.lock() += 1;
/// deadline.arm(Delta::from_millis(100));
/// // Dropping `deadline` cancels it.
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `dwork` was initialised with `Self::run` as its function; it is only queued on `queue` and
/// is idle once `drop` returns.
#[pin_data(PinnedDrop)]
pub(crate) struct OwnedDelayedWork<T: Target> {
    #[pin]
    dwork: Opaque<bindings::delayed_work>,
    target: Arc<T>,
    queue: Arc<OwnedQueue>,
}

// SAFETY: The `delayed_work` is only used through the workqueue API, which may be called from
// any thread; `T` is `Send + Sync`, and so is the queue.
unsafe impl<T: Target> Send for OwnedDelayedWork<T> {}
// SAFETY: The workqueue API synchronises concurrent calls on a `delayed_work` itself; `T` is
// `Sync`.
unsafe impl<T: Target> Sync for OwnedDelayedWork<T> {}

impl<T: Target> OwnedDelayedWork<T> {
    /// An idle work that calls `target` on `queue` when it fires.
    ///
    /// # Safety
    ///
    /// The work must be dropped, not forgotten (`mem::forget`, a leaked `Arc` cycle, ...),
    /// before anything `T` borrows goes away: once armed, it may call `T::run` until it is
    /// dropped. A `T: 'static` meets this by itself. This is the contract of
    /// `irq::ThreadedRegistration::new`.
    pub(crate) unsafe fn new(target: Arc<T>, queue: Arc<OwnedQueue>) -> impl PinInit<Self> {
        pin_init!(Self {
            // INVARIANT: Initialised with `run`, not queued.
            dwork <- Opaque::ffi_init(|slot: *mut bindings::delayed_work| {
                // SAFETY: `slot` is valid for writes. `run` matches the type of a work function
                // and is only called for this work, embedded in an `OwnedDelayedWork<T>`. The
                // timer is the one of a `delayed_work`, only armed by the workqueue code, with
                // `delayed_work_timer_fn` as its function, which needs `TIMER_IRQSAFE`.
                unsafe {
                    bindings::init_work_with_key(
                        &raw mut (*slot).work,
                        Some(Self::run),
                        false,
                        c"OwnedDelayedWork::dwork".as_char_ptr(),
                        kernel::static_lock_class!().as_ptr(),
                    );
                    bindings::timer_init_key(
                        &raw mut (*slot).timer,
                        Some(bindings::delayed_work_timer_fn),
                        bindings::TIMER_IRQSAFE,
                        c"OwnedDelayedWork::dwork_timer".as_char_ptr(),
                        kernel::static_lock_class!().as_ptr(),
                    );
                }
            }),
            target,
            queue,
        })
    }

    /// Arms the work to fire `delay` from now (rounded up to jiffies), or moves the expiry of
    /// an armed one to then (`mod_delayed_work()`). May be called from any context.
    pub(crate) fn arm(&self, delay: Delta) {
        // SAFETY: By the type invariant `dwork` is an initialised delayed work, only queued on
        // `self.queue`, which lives as long as `self`. `self` is pinned (only made in place, and
        // `!Unpin`), and `drop` cancels the work before its memory or the queue goes.
        unsafe {
            bindings::mod_delayed_work_on(
                bindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
                self.queue.as_raw(),
                self.dwork.get(),
                jiffies(delay),
            )
        };
    }

    /// Arms the work to fire `delay` from now (rounded up to jiffies) unless it is armed or
    /// queued already, whose expiry then stands (`queue_delayed_work()`). From
    /// [`Target::run`], the work is idle unless it was armed again meanwhile. May be called from
    /// any context.
    pub(crate) fn arm_if_idle(&self, delay: Delta) {
        // SAFETY: As in `arm`.
        unsafe {
            bindings::queue_delayed_work_on(
                bindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
                self.queue.as_raw(),
                self.dwork.get(),
                jiffies(delay),
            )
        };
    }

    /// Disarms the work and waits for a running [`Target::run`] to return
    /// (`cancel_delayed_work_sync()`). The work stays idle unless it is armed again after this
    /// returns. May sleep; must not be called from `T::run`, which it would wait for.
    pub(crate) fn cancel(&self) {
        // SAFETY: `dwork` is an initialised delayed work (type invariant).
        unsafe { bindings::cancel_delayed_work_sync(self.dwork.get()) };
    }

    /// The work function.
    ///
    /// # Safety
    ///
    /// `work` must be the `work` of the `delayed_work` of a live `OwnedDelayedWork<T>`.
    unsafe extern "C" fn run(work: *mut bindings::work_struct) {
        // SAFETY: By the safety requirements `work` is the `work` of a `delayed_work`, itself the
        // `dwork` field of an `OwnedDelayedWork<T>`, which `drop` keeps alive until this returns.
        let this = unsafe {
            let dwork = container_of!(work, bindings::delayed_work, work);
            &*container_of!(Opaque::cast_from(dwork).cast_mut(), Self, dwork)
        };
        this.target.run(this);
    }
}

/// `delay` in jiffies, rounded up; a negative one is none.
fn jiffies(delay: Delta) -> Jiffies {
    let ms = delay.as_millis_ceil().max(0);
    msecs_to_jiffies(u32::try_from(ms).unwrap_or(u32::MAX))
}

#[pinned_drop]
impl<T: Target> PinnedDrop for OwnedDelayedWork<T> {
    fn drop(self: Pin<&mut Self>) {
        // Nothing can arm the work concurrently but a running `T::run`, whose arming fails while
        // the cancel waits. Then nothing calls `run` for this work any more, and the target and
        // the queue can go.
        self.cancel();
    }
}
