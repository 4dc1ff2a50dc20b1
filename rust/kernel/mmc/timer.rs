// SPDX-License-Identifier: GPL-2.0

//! The software timer of an MMC host, which calls [`HostOps::timer_expired`].
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h)
//!
//! The timer is a [`DelayedWork`] of a reference-counted [`HostTimer`] (made with
//! [`new_delayed_work!`]) on a `WQ_MEM_RECLAIM` workqueue of the host's own,
//! `mmc_timer/<device>`. The host keeps it in its private area and cancels it
//! ([`CancelDelayed::cancel_delayed_sync`]) when it is removed or freed, before dropping the
//! driver data.

use core::ptr::NonNull;

use kernel::{
    device::Device,
    impl_has_delayed_work,
    new_delayed_work,
    prelude::*,
    str::CString,
    sync::{
        atomic::{
            Acquire,
            Atomic,
            Release, //
        },
        Arc, //
    },
    time::{
        msecs_to_jiffies,
        Delta,
        Jiffies, //
    },
    workqueue::{
        DelayedWork,
        WorkItem, //
    }, //
};

use super::{
    Host,
    HostOps, //
};
use crate::bindings;
use crate::kernel_ext::workqueue::{
    alloc::{
        Flags,
        OwnedQueue, //
    },
    rearm::{
        CancelDelayed,
        ModDelayed, //
    }, //
};

/// The work item of a host's timer, which calls [`HostOps::timer_expired`] of its host.
///
/// # Invariants
///
/// `host` is a host allocated with a driver data type `T` whose private area holds the
/// [`Timer`] that holds this, and which is neither freed nor has dropped its data until that
/// timer is cancelled; `expired` is `expired::<T>`.
#[pin_data]
pub(super) struct HostTimer {
    #[pin]
    work: DelayedWork<HostTimer>,
    host: NonNull<bindings::mmc_host>,
    expired: unsafe fn(NonNull<bindings::mmc_host>),
}

// SAFETY: `HostTimer` only hands `host` to `expired`, which gives `&Host<T>` to
// `T::timer_expired` on the thread the work runs on; `Host<T>` is `Sync` and `T` is
// `Send + Sync`.
unsafe impl Send for HostTimer {}
// SAFETY: As for `Send`: `&HostTimer` gives nothing else.
unsafe impl Sync for HostTimer {}

impl_has_delayed_work! {
    impl HasDelayedWork<Self> for HostTimer { self.work }
}

impl WorkItem for HostTimer {
    type Pointer = Arc<HostTimer>;

    fn run(this: Arc<HostTimer>) {
        // SAFETY: By the type invariant the host and its data are valid while its timer runs
        // (the host cancels the timer, waiting for this, before it drops its data), and
        // `expired` is the function of its data type.
        unsafe { (this.expired)(this.host) };
    }
}

/// Calls `T::timer_expired` of `host`.
///
/// # Safety
///
/// `host` must be a host added with `T`'s callbacks (possibly being removed) whose private area
/// holds its `Private<T>` until this returns.
unsafe fn expired<T: HostOps>(host: NonNull<bindings::mmc_host>) {
    // SAFETY: The timer is armed only through `Host<T>`, so only once the host was added; the
    // host cancels it after `mmc_remove_host()` and before dropping the data (safety
    // requirements). The data may see a host that is being removed, which every callback of a
    // driver may too.
    T::timer_expired(unsafe { Host::<T>::from_raw(host.as_ptr()) });
}

/// The timer of a host whose driver data implements [`HostOps::timer_expired`].
///
/// It holds its work item and the host's workqueue. Dropping it cancels the work (and waits for
/// it), then destroys the queue.
///
/// # Invariants
///
/// `work`'s delayed work is only queued on `queue`.
pub(super) struct Timer {
    work: Arc<HostTimer>,
    queue: OwnedQueue,
    /// Set by [`Timer::stop`]: arming does nothing any more.
    stopped: Atomic<bool>,
}

impl Timer {
    /// Arms the timer to fire `delay` from now, moving an armed one's expiry.
    fn arm(&self, delay: Delta) {
        if self.stopped.load(Acquire) {
            return;
        }
        // `Err`: it was armed; the queue holds its reference still, this clone goes.
        let _ = self.queue.mod_delayed(self.work.clone(), jiffies(delay));
    }

    /// Arms the timer to fire `delay` from now unless it is armed.
    fn arm_if_idle(&self, delay: Delta) {
        if self.stopped.load(Acquire) {
            return;
        }
        // `Err`: it was armed, and stays so; this clone goes.
        let _ = self
            .queue
            .enqueue_delayed(self.work.clone(), jiffies(delay));
    }

    /// Stops the timer for good.
    ///
    /// Arming does nothing from here on, the timer is disarmed and its work waited for. A
    /// `timer_expired` that saw the timer running arms it before the cancel's
    /// first wait returns (which undoes it); one that starts later cannot arm it, so the timer is
    /// idle when this returns and stays so.
    pub(super) fn stop(&self) {
        self.stopped.store(true, Release);
        self.work.cancel_delayed_sync();
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.stop();
        // INVARIANT: Then `queue` (by the type invariant the only queue of the work) has no
        // delayed work pending and may be destroyed, as `OwnedQueue::new` requires.
    }
}

/// Converts `delay` to jiffies, rounded up; a negative delay is none.
fn jiffies(delay: Delta) -> Jiffies {
    let ms = delay.as_millis_ceil().max(0);
    msecs_to_jiffies(u32::try_from(ms).unwrap_or(u32::MAX))
}

/// Creates the timer of `host`, whose parent is `dev`, when `T` has a `timer_expired` callback.
///
/// # Safety
///
/// `host` is a host allocated with `T` as its driver data, whose private area will hold the
/// returned timer, and which drops it (cancelling it) before it drops the data or is freed.
pub(super) unsafe fn new_timer<T: HostOps>(
    host: NonNull<bindings::mmc_host>,
    dev: &Device,
) -> Result<Option<Timer>> {
    if !T::HAS_TIMER_EXPIRED {
        return Ok(None);
    }
    let name = CString::try_from_fmt(fmt!("mmc_timer/{}", dev.name()))?;
    let flags = Flags::UNBOUND | Flags::MEM_RECLAIM;
    // SAFETY: The queue goes with the `Timer`, which cancels its work, the only one queued on
    // it, before (`Timer::drop`).
    let queue = unsafe { OwnedQueue::new(&name, flags, 1)? };
    // INVARIANT: By the safety requirements the host keeps this timer and cancels it before its
    // data or itself goes; `expired` is of `T`.
    let work = Arc::pin_init(
        pin_init!(HostTimer {
            work <- new_delayed_work!("mmc::timer::HostTimer::work"),
            host,
            expired: expired::<T>,
        }),
        GFP_KERNEL,
    )?;
    // INVARIANT: `work` is queued only on `queue` (`Timer::arm`, `Timer::arm_if_idle`).
    Ok(Some(Timer {
        work,
        queue,
        stopped: Atomic::new(false),
    }))
}

impl<T: HostOps> Host<T> {
    /// Arms the host's timer to call [`HostOps::timer_expired`] after `delay`.
    ///
    /// An earlier or later expiry is moved (`mod_delayed_work()`). Only for a `T` that implements
    /// `timer_expired` (checked at build time).
    pub(crate) fn arm_timer(&self, delay: Delta) {
        if let Some(timer) = self.timer() {
            timer.arm(delay);
        }
    }

    /// Arms the host's timer for `delay` unless it is armed already (`queue_delayed_work()`).
    ///
    /// [`HostOps::timer_expired`] may call this to run again later. Only for a `T` that implements
    /// `timer_expired` (checked at build time).
    pub(crate) fn arm_timer_if_idle(&self, delay: Delta) {
        if let Some(timer) = self.timer() {
            timer.arm_if_idle(delay);
        }
    }

    fn timer(&self) -> Option<&Timer> {
        if !T::HAS_TIMER_EXPIRED {
            build_error!("arming the timer of a host without `HostOps::timer_expired`");
        }
        self.private().timer.as_ref()
    }
}
