// SPDX-License-Identifier: GPL-2.0

//! Moving and cancelling delayed work items.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h)
//!
//! [`ModDelayed::mod_delayed`] queues a [`DelayedWork`] item to run after a delay, or moves the
//! expiry of a pending one (`mod_delayed_work()`); [`CancelDelayed`] takes a reference-counted
//! item off its queue, and may wait for a running instance. A pending item holds one reference
//! for its queue, as one that [`Queue::enqueue_delayed`] queued: [`ModDelayed::mod_delayed`]
//! hands one over when it queues an idle item and hands it back when the item was pending (the
//! queue keeps the one it holds), and a cancel that takes a pending item off its queue drops
//! the queue's.
//!
//! [`DelayedWork`]: kernel::workqueue::DelayedWork

use kernel::{
    container_of,
    prelude::*,
    sync::Arc,
    time::Jiffies,
    workqueue::{
        HasDelayedWork,
        Queue,
        RawDelayedWorkItem,
        Work,
        WorkItem, //
    }, //
};

use crate::bindings;

/// An extension trait giving [`Queue`] `mod_delayed_work()`.
///
/// # Examples
///
/// A deadline that each new request moves:
///
/// ```
/// use kernel::{
///     impl_has_delayed_work,
///     new_delayed_work,
///     prelude::*,
///     sync::Arc,
///     time::msecs_to_jiffies,
///     workqueue::{
///         self,
///         rearm::{
///             CancelDelayed,
///             ModDelayed, //
///         },
///         DelayedWork,
///         WorkItem, //
///     },
/// };
///
/// #[pin_data]
/// struct Deadline {
///     #[pin]
///     work: DelayedWork<Deadline>,
/// }
///
/// impl_has_delayed_work! {
///     impl HasDelayedWork<Self> for Deadline { self.work }
/// }
///
/// impl WorkItem for Deadline {
///     type Pointer = Arc<Deadline>;
///
///     fn run(_this: Arc<Deadline>) {
///         pr_warn!("a request timed out\n");
///     }
/// }
///
/// let deadline = Arc::pin_init(
///     pin_init!(Deadline { work <- new_delayed_work!("Deadline::work") }),
///     GFP_KERNEL,
/// )?;
/// let queue = workqueue::system_long();
/// // A request: idle, so it is queued.
/// assert!(queue.mod_delayed(deadline.clone(), msecs_to_jiffies(1000)).is_ok());
/// // The next one moves the expiry; the queue keeps the reference it holds.
/// assert!(queue.mod_delayed(deadline.clone(), msecs_to_jiffies(2000)).is_err());
/// // Done: it was pending.
/// assert!(deadline.cancel_delayed_sync());
/// # Ok::<(), Error>(())
/// ```
pub trait ModDelayed {
    /// Queues `w` to run `delay` jiffies from now, or moves the expiry of its pending work.
    ///
    /// The work is queued or moved with `mod_delayed_work()` on `WORK_CPU_UNBOUND`; a delay of
    /// 0 queues it to run now. May be called from any context.
    ///
    /// Returns what [`Queue::enqueue_delayed`] returns when it queues `w` for an item that was
    /// idle: the queue took `w`. For an item that was pending, the queue keeps the reference it
    /// held and `w` comes back (`Err(w)` for an [`Arc`]).
    fn mod_delayed<W, const ID: u64>(&self, w: W, delay: Jiffies) -> W::EnqueueOutput
    where
        W: RawDelayedWorkItem<ID> + Send + 'static;
}

impl ModDelayed for Queue {
    fn mod_delayed<W, const ID: u64>(&self, w: W, delay: Jiffies) -> W::EnqueueOutput
    where
        W: RawDelayedWorkItem<ID> + Send + 'static,
    {
        // CAST: `Queue` is a `#[repr(transparent)]` wrapper of `Opaque<workqueue_struct>`, itself
        // a transparent wrapper of the `struct workqueue_struct` (`Queue::from_raw` casts back).
        let queue_ptr = core::ptr::from_ref(self)
            .cast::<bindings::workqueue_struct>()
            .cast_mut();

        // `mod_delayed_work_on()` dereferences the `delayed_work` around the pointer, which
        // `__enqueue` keeps valid during the closure (`RawDelayedWorkItem` extends this to the
        // whole `delayed_work`). When the closure returns true, the work was idle and is queued
        // now (the work is never disabled: nothing in the kernel crate disables one, see the
        // module's documentation), and `__enqueue` keeps the pointer valid until the work
        // function is called; when it returns false, the queue still holds what it held for the
        // pending work.
        // SAFETY: The closure returns `false` only when `mod_delayed_work_on()` returns true: the
        // work was pending and is pending again with the new expiry, so it is in a workqueue.
        // The other `__enqueue` requirements do not apply: `W` is `Send` and `'static`.
        unsafe {
            w.__enqueue(move |work_ptr| {
                !bindings::mod_delayed_work_on(
                    bindings::wq_misc_consts_WORK_CPU_UNBOUND as c_int,
                    queue_ptr,
                    container_of!(work_ptr, bindings::delayed_work, work),
                    delay,
                )
            })
        }
    }
}

/// An extension trait cancelling the delayed work of a reference-counted work item.
///
/// The [`DelayedWork`](kernel::workqueue::DelayedWork) is field `ID` of the item.
///
/// See [`ModDelayed`] for an example.
pub trait CancelDelayed<const ID: u64 = 0> {
    /// Takes the item off its queue if it is pending (`cancel_delayed_work()`).
    ///
    /// Drops the reference the queue held for it; a running instance goes on. Returns whether
    /// the item was pending. May be called from any context.
    fn cancel_delayed(&self) -> bool;

    /// Cancels the item and waits until it is neither pending nor running.
    ///
    /// Waits for a running instance to return, then takes the item off its queue if it is
    /// pending and waits for a running instance again, until one round finds it neither
    /// pending nor running. Returns whether the item was pending (once or more).
    ///
    /// An instance that was running when this was called is waited for and its queueing undone.
    /// An instance that starts later (the timer of a delayed item fired) may queue the item
    /// again and return between the two steps of the last round, leaving it queued: an item
    /// that queues itself is idle after this only if it stopped doing so before this was called
    /// (a flag its `run` checks, set first).
    ///
    /// May sleep. Must not be called from the item's own [`WorkItem::run`], which it would wait
    /// for (lockdep says so).
    fn cancel_delayed_sync(&self) -> bool;
}

impl<T, const ID: u64> CancelDelayed<ID> for Arc<T>
where
    T: WorkItem<ID, Pointer = Arc<T>> + HasDelayedWork<T, ID>,
{
    fn cancel_delayed(&self) -> bool {
        let ptr = Arc::as_ptr(self).cast_mut();
        let dwork = delayed_work_of(self);
        // SAFETY: `dwork` is an initialised `delayed_work` (see `delayed_work_of`), valid while
        // `self` lives.
        let was_pending = unsafe { bindings::cancel_delayed_work(dwork) };
        if was_pending {
            // SAFETY: A pending `T` of `Pointer = Arc<T>` was queued by `__enqueue` of `Arc<T>`
            // (`Queue::enqueue`, `Queue::enqueue_delayed`, `ModDelayed::mod_delayed`), which
            // handed the queue a reference from `Arc::into_raw`, pointing at `*ptr`, for the
            // work function to take back. The work is off its queue now and its function will not
            // run for this queueing: the reference is the caller's to drop, once.
            drop(unsafe { Arc::from_raw(ptr) });
        }
        was_pending
    }

    fn cancel_delayed_sync(&self) -> bool {
        let dwork = delayed_work_of(self);
        // SAFETY: `dwork` is an initialised `delayed_work`, valid while `self` lives. Waits for
        // the instances that may have queued the item before the caller stopped them.
        unsafe { bindings::flush_work(&raw mut (*dwork).work) };
        let mut was_pending = false;
        loop {
            let taken = self.cancel_delayed();
            was_pending |= taken;
            // SAFETY: `dwork` is an initialised `delayed_work`, valid while `self` lives.
            // `flush_work()` waits for a running instance and for a queued one (a pending timer is
            // neither); it may sleep, as this function may.
            let waited = unsafe { bindings::flush_work(&raw mut (*dwork).work) };
            if !taken && !waited {
                return was_pending;
            }
        }
    }
}

/// Returns the `delayed_work` of field `ID` of the `T` that `this` points at.
///
/// It is initialised: `HasDelayedWork` places the `work_struct` of the `Work<T, ID>` field in
/// the `work` of a `delayed_work`, which is a field of type `DelayedWork<T, ID>`
/// (`impl_has_delayed_work!`), and `DelayedWork::new` is the only way to make one.
fn delayed_work_of<T, const ID: u64>(this: &Arc<T>) -> *mut bindings::delayed_work
where
    T: WorkItem<ID, Pointer = Arc<T>> + HasDelayedWork<T, ID>,
{
    let ptr = Arc::as_ptr(this).cast_mut();
    // SAFETY: `ptr` points at a valid `T`, which `this` keeps alive.
    let work = unsafe { Work::raw_get(T::raw_get_work(ptr)) };
    // SAFETY: By the safety requirements of `HasDelayedWork`, `work` is the `work` field of a
    // `delayed_work`.
    unsafe { container_of!(work, bindings::delayed_work, work) }
}

#[kernel::macros::kunit_tests(rust_kernel_workqueue_rearm)]
mod tests {
    use super::*;
    use crate::kernel_ext::workqueue::alloc::{
        Flags,
        OwnedQueue, //
    };
    use kernel::{
        impl_has_delayed_work,
        new_delayed_work,
        sync::atomic::{
            Atomic,
            Relaxed, //
        },
        time::{
            delay::fsleep,
            msecs_to_jiffies,
            Delta,
            Instant,
            Monotonic, //
        },
        workqueue::{
            system_long,
            DelayedWork, //
        }, //
    };

    /// What a test item does when it runs.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Then {
        /// Counts the run.
        Count,
        /// Counts the run after sleeping 50 ms.
        Sleep,
        /// Counts the run and queues the item again after a jiffy, the first 5 runs.
        Requeue,
    }

    #[pin_data]
    struct Item {
        #[pin]
        work: DelayedWork<Item>,
        runs: Atomic<u32>,
        started: Atomic<u32>,
        then: Then,
    }

    impl_has_delayed_work! {
        impl HasDelayedWork<Self> for Item { self.work }
    }

    impl WorkItem for Item {
        type Pointer = Arc<Item>;

        fn run(this: Arc<Item>) {
            this.started.fetch_add(1, Relaxed);
            if this.then == Then::Sleep {
                fsleep(Delta::from_millis(50));
            }
            let runs = this.runs.fetch_add(1, Relaxed) + 1;
            if this.then == Then::Requeue && runs < 5 {
                let _ = system_long().mod_delayed(this.clone(), 1);
            }
        }
    }

    fn item(then: Then) -> Result<Arc<Item>> {
        Arc::pin_init(
            pin_init!(Item {
                work <- new_delayed_work!("rearm::tests::Item::work"),
                runs: Atomic::new(0),
                started: Atomic::new(0),
                then,
            }),
            GFP_KERNEL,
        )
    }

    /// Waits up to `ms` for `item` to have run `n` times and returns whether it did.
    fn wait_runs(item: &Item, n: u32, ms: i64) -> bool {
        let start = Instant::<Monotonic>::now();
        while item.runs.load(Relaxed) < n {
            if start.elapsed() > Delta::from_millis(ms) {
                return false;
            }
            fsleep(Delta::from_millis(1));
        }
        true
    }

    /// Returns whether `item` is the only reference left, so that nothing queued holds one.
    fn only_reference(item: Arc<Item>) -> bool {
        Arc::into_unique_or_drop(item).is_some()
    }

    #[test]
    fn arm_runs_once_and_gives_the_reference_back() -> Result {
        let it = item(Then::Count)?;
        assert!(system_long().mod_delayed(it.clone(), 0).is_ok());
        assert!(wait_runs(&it, 1, 1000));
        fsleep(Delta::from_millis(20));
        assert_eq!(it.runs.load(Relaxed), 1);
        assert!(!it.cancel_delayed_sync());
        assert!(only_reference(it));
        Ok(())
    }

    #[test]
    fn rearm_moves_the_expiry() -> Result {
        let it = item(Then::Count)?;
        assert!(system_long()
            .mod_delayed(it.clone(), msecs_to_jiffies(10_000))
            .is_ok());
        // Pending: the expiry moves to now and the queue keeps the one reference it holds.
        assert!(system_long().mod_delayed(it.clone(), 1).is_err());
        assert!(wait_runs(&it, 1, 2000));
        assert!(!it.cancel_delayed_sync());
        assert!(only_reference(it));
        Ok(())
    }

    #[test]
    fn arm_if_idle_leaves_the_expiry() -> Result {
        let it = item(Then::Count)?;
        assert!(system_long()
            .mod_delayed(it.clone(), msecs_to_jiffies(10_000))
            .is_ok());
        assert!(system_long().enqueue_delayed(it.clone(), 1).is_err());
        fsleep(Delta::from_millis(100));
        assert_eq!(it.runs.load(Relaxed), 0);
        assert!(it.cancel_delayed());
        assert!(!it.cancel_delayed());
        assert!(only_reference(it));
        Ok(())
    }

    #[test]
    fn cancel_waits_for_a_running_work() -> Result {
        let it = item(Then::Sleep)?;
        assert!(system_long().mod_delayed(it.clone(), 0).is_ok());
        let start = Instant::<Monotonic>::now();
        while it.started.load(Relaxed) == 0 && start.elapsed() < Delta::from_millis(1000) {
            fsleep(Delta::from_millis(1));
        }
        assert_eq!(it.started.load(Relaxed), 1);
        // Running, not pending: nothing to take off, but the run to wait for.
        assert!(!it.cancel_delayed_sync());
        assert_eq!(it.runs.load(Relaxed), 1);
        assert!(only_reference(it));
        Ok(())
    }

    #[test]
    fn cancel_takes_off_what_the_run_queues_again() -> Result {
        let it = item(Then::Requeue)?;
        assert!(system_long().mod_delayed(it.clone(), 0).is_ok());
        assert!(wait_runs(&it, 2, 1000));
        it.cancel_delayed_sync();
        let runs = it.runs.load(Relaxed);
        fsleep(Delta::from_millis(20));
        assert_eq!(it.runs.load(Relaxed), runs);
        assert!(!it.cancel_delayed());
        assert!(only_reference(it));
        Ok(())
    }

    #[test]
    fn an_owned_queue_goes_after_its_work() -> Result {
        let flags = Flags::UNBOUND | Flags::MEM_RECLAIM;
        // SAFETY: The item's work is cancelled or has run before the queue is dropped.
        let queue = unsafe { OwnedQueue::new(c"rearm_test", flags, 1)? };
        let it = item(Then::Count)?;
        assert!(queue
            .mod_delayed(it.clone(), msecs_to_jiffies(10_000))
            .is_ok());
        assert!(it.cancel_delayed_sync());
        assert!(queue.mod_delayed(it.clone(), 0).is_ok());
        assert!(wait_runs(&it, 1, 1000));
        it.cancel_delayed_sync();
        drop(queue);
        assert!(only_reference(it));
        // Both flags or neither: refused.
        // SAFETY: Nothing is queued on it.
        let both = unsafe { OwnedQueue::new(c"rearm_test", Flags::UNBOUND | Flags::PERCPU, 1) };
        assert!(both.is_err());
        Ok(())
    }

    #[test]
    fn a_dropped_item_lives_until_it_ran() -> Result {
        let it = item(Then::Count)?;
        let probe = it.clone();
        assert!(system_long().mod_delayed(it, msecs_to_jiffies(20)).is_ok());
        // The caller's reference is gone; the queue's keeps the item until it runs.
        assert!(wait_runs(&probe, 1, 1000));
        fsleep(Delta::from_millis(20));
        assert!(only_reference(probe));
        Ok(())
    }
}
