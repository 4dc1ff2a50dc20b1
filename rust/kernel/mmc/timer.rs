// SPDX-License-Identifier: GPL-2.0

//! A host's software timer: a delayed work that lives with the host and calls
//! [`HostOps::timer_expired`].
//!
//! A host whose controller can lose an interrupt needs a deadline of its own for the request in
//! flight (sdhci's `timer`, meson-gx's `timeout`). The work calls back into the driver data, so
//! it must be cancelled before that data goes; kept in the host's private area, it is: the host
//! cancels it when it is removed or freed, before dropping the data.

use core::{
    marker::PhantomData,
    ptr::NonNull, //
};

use kernel::{
    prelude::*,
    sync::Arc,
    time::Delta, //
};

use super::{
    Host,
    HostOps, //
};
use crate::bindings;
use crate::kernel_ext::workqueue::{
    delayed::{
        OwnedDelayedWork,
        Target, //
    },
    owned::{
        Flags,
        OwnedQueue, //
    }, //
};

/// The timer of a host whose driver data implements [`HostOps::timer_expired`].
pub(super) type Timer<T> = Pin<KBox<OwnedDelayedWork<HostTimer<T>>>>;

/// What the timer's work calls: [`HostOps::timer_expired`] of its host.
///
/// # Invariants
///
/// `host` is a host allocated with `T` as its driver data whose private area holds the timer
/// that calls this, and which is neither freed nor has dropped its data until that timer is
/// cancelled.
pub(super) struct HostTimer<T: HostOps> {
    host: NonNull<bindings::mmc_host>,
    _data: PhantomData<T>,
}

// SAFETY: `HostTimer` only hands `&Host<T>` to `T::timer_expired`; `Host<T>` is `Sync` and `T` is
// `Send + Sync`.
unsafe impl<T: HostOps> Send for HostTimer<T> {}
// SAFETY: As for `Send`.
unsafe impl<T: HostOps> Sync for HostTimer<T> {}

impl<T: HostOps> Target for HostTimer<T> {
    fn run(&self, _work: &OwnedDelayedWork<Self>) {
        // SAFETY: By the type invariant the host and its data are valid while its timer runs.
        // The timer is armed only through `Host<T>`, so only once the host was added; the host
        // cancels it after `mmc_remove_host()` and before dropping the data. The data may see
        // a host that is being removed, which every callback of a driver may too.
        T::timer_expired(unsafe { Host::from_raw(self.host.as_ptr()) });
    }
}

/// The timer of `host`, on a queue of its own, when `T` has a `timer_expired` callback.
///
/// The queue has a rescuer (`WQ_MEM_RECLAIM`): the timer may have to complete a request that
/// memory reclaim waits for.
///
/// # Safety
///
/// `host` is a host allocated with `T` as its driver data, whose private area will hold the
/// returned timer, and which drops it (cancelling it) before it drops the data or is freed.
pub(super) unsafe fn new_timer<T: HostOps>(
    host: NonNull<bindings::mmc_host>,
) -> Result<Option<Timer<T>>> {
    if !T::HAS_TIMER_EXPIRED {
        return Ok(None);
    }
    let queue = OwnedQueue::new(c"mmc_host_timer", Flags::UNBOUND | Flags::MEM_RECLAIM, 1)?;
    let queue = Arc::new(queue, GFP_KERNEL)?;
    // INVARIANT: By the safety requirements the host keeps this timer and cancels it before its
    // data or itself goes.
    let target = Arc::new(
        HostTimer::<T> {
            host,
            _data: PhantomData,
        },
        GFP_KERNEL,
    )?;
    // SAFETY: The work is dropped, and so cancelled, before the host's data, which is what its
    // target reaches (safety requirements); it borrows nothing else.
    let work = unsafe { OwnedDelayedWork::new(target, queue) };
    Ok(Some(KBox::pin_init(work, GFP_KERNEL)?))
}

impl<T: HostOps> Host<T> {
    /// Arms the host's timer to call [`HostOps::timer_expired`] after `delay`, moving an
    /// earlier or later expiry (`mod_delayed_work()`).
    ///
    /// Only for a `T` that implements `timer_expired` (checked at build time).
    pub(crate) fn arm_timer(&self, delay: Delta) {
        if let Some(timer) = self.timer() {
            timer.arm(delay);
        }
    }

    /// Arms the host's timer for `delay` unless it is armed already (`queue_delayed_work()`);
    /// [`HostOps::timer_expired`] may call this to run again later.
    ///
    /// Only for a `T` that implements `timer_expired` (checked at build time).
    pub(crate) fn arm_timer_if_idle(&self, delay: Delta) {
        if let Some(timer) = self.timer() {
            timer.arm_if_idle(delay);
        }
    }

    fn timer(&self) -> Option<&OwnedDelayedWork<HostTimer<T>>> {
        if !T::HAS_TIMER_EXPIRED {
            build_error!("arming the timer of a host without `HostOps::timer_expired`");
        }
        self.private().timer.as_deref()
    }
}
