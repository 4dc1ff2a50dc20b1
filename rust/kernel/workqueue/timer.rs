// SPDX-License-Identifier: GPL-2.0

//! A software timer whose expiry runs in process context, on a workqueue of its own.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h)
//!
//! A [`Timer`] is the timeout work of many C drivers with the lifetime of its queue checked: a
//! `delayed_work` on a queue the driver allocates (`alloc_workqueue()`, with `WQ_MEM_RECLAIM`
//! when memory reclaim may wait for it), armed with `mod_delayed_work()` or
//! `queue_delayed_work()`, and at removal cancelled (`cancel_delayed_work_sync()`) before the
//! queue is destroyed (`destroy_workqueue()`). Its handler, [`TimerHandler::expired`], is given
//! a [`TimerRef`]: it may arm the timer again, but has no way to stop it, which would wait for
//! the handler itself.
//!
//! The queue holds the timer's work alone: it is reached only through the timer, so it has no
//! pending delayed work once the timer is stopped, and [`Timer::new`] is safe where
//! [`OwnedQueue::new`] is not.
//!
//! # Examples
//!
//! ```
//! use kernel::{
//!     prelude::*,
//!     time::Delta,
//!     workqueue::{
//!         alloc::Flags,
//!         timer::{
//!             Timer,
//!             TimerHandler,
//!             TimerRef, //
//!         }, //
//!     },
//! };
//!
//! struct Watchdog;
//!
//! impl TimerHandler for Watchdog {
//!     fn expired(timer: &TimerRef<Self>) {
//!         pr_warn!("a request timed out\n");
//!         // Look again in a second, unless armed meanwhile.
//!         timer.arm_if_idle(Delta::from_millis(1000));
//!     }
//! }
//!
//! let timer = Timer::new(c"watchdog", Flags::UNBOUND | Flags::MEM_RECLAIM, Watchdog)?;
//! timer.arm(Delta::from_millis(5000));
//! // A new request moves the expiry.
//! timer.arm(Delta::from_millis(5000));
//! // Dropping `timer` stops it, waits for a running handler and destroys its queue.
//! # Ok::<(), Error>(())
//! ```

use core::ops::Deref;

use kernel::{
    c_str,
    impl_has_delayed_work,
    prelude::*,
    static_lock_class,
    sync::{
        Arc,
        LockClassKey,
        SpinLock, //
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

/// What a [`Timer`] does when it expires.
pub trait TimerHandler: Send + Sync + Sized + 'static {
    /// Handles the expiry of `timer`, whose data `Self` is.
    ///
    /// Runs on the timer's queue, in process context, and may sleep; it may arm the timer again.
    /// A [`TimerRef`] cannot stop the timer, which waits for a running handler.
    fn expired(timer: &TimerRef<Self>);
}

/// What a [`Timer`] and its queued work share.
///
/// # Invariants
///
/// `work` is queued only on the queue in `queue`, and only while `queue` holds it or the timer
/// is being stopped: [`Timer::stop`] cancels it before dropping the queue it took.
#[pin_data]
struct Shared<T> {
    #[pin]
    work: DelayedWork<Shared<T>>,
    /// The timer's queue, `None` once the timer is stopped.
    #[pin]
    queue: SpinLock<Option<OwnedQueue>>,
    data: T,
}

impl_has_delayed_work! {
    impl{T} HasDelayedWork<Self> for Shared<T> { self.work }
}

impl<T: TimerHandler> WorkItem for Shared<T> {
    type Pointer = Arc<Shared<T>>;

    fn run(this: Arc<Shared<T>>) {
        T::expired(TimerRef::from_shared(&this));
    }
}

/// A software timer with a workqueue of its own, whose expiry calls [`TimerHandler::expired`].
///
/// Arming moves or keeps the expiry of an armed timer ([`TimerRef::arm`],
/// [`TimerRef::arm_if_idle`], through [`Deref`]). [`Timer::stop`], or dropping the timer, stops
/// it for good: it is disarmed, a running handler is waited for, and arming does nothing from
/// then on; the queue is destroyed.
///
/// The handler is given a [`TimerRef`], which can arm the timer but neither stop nor drop it: a
/// `Timer` is never cloned, and the handler never has one. A [`TimerRef`] may be cloned, to arm
/// the timer from elsewhere; dropping a clone stops nothing.
///
/// A timer that is forgotten ([`core::mem::forget`]) while armed is never stopped: its work stays
/// pending on a queue nobody destroys, and may run after the module that armed it is gone, as
/// a `'static` item queued with [`Queue::enqueue`](kernel::workqueue::Queue::enqueue) may.
pub struct Timer<T: TimerHandler> {
    timer: TimerRef<T>,
}

/// A timer as its handler sees it.
///
/// Its data, and arming.
///
/// [`Timer`] dereferences to it; [`TimerHandler::expired`] gets it by reference alone, so a
/// handler can neither stop the timer nor drop it.
#[repr(transparent)]
pub struct TimerRef<T: TimerHandler> {
    shared: Arc<Shared<T>>,
}

impl<T: TimerHandler> Clone for TimerRef<T> {
    /// Returns another reference to the same timer, which arms it and nothing more.
    ///
    /// It keeps the timer's data alive, not the timer: once the [`Timer`] is stopped or dropped,
    /// arming through a clone does nothing.
    fn clone(&self) -> Self {
        Self {
            shared: self.shared.clone(),
        }
    }
}

/// A lock class and the name lockdep shows for it.
type LockClass = (&'static CStr, Pin<&'static LockClassKey>);

/// Returns the names and lock classes of every timer's work and of its timer (`DelayedWork::new`).
///
/// Given by a function that is not generic (and not inlined), so compiled once, into the crate
/// that defines it: in the generic [`Timer::new`], compiled into every module that uses it, each
/// module would have its own copy of a name for the one `static` key, where lockdep wants one
/// name per key.
#[inline(never)]
fn work_class() -> (LockClass, LockClass) {
    (
        (
            c_str!("workqueue::timer::Shared::work"),
            static_lock_class!(),
        ),
        (
            c_str!("workqueue::timer::Shared::work_timer"),
            static_lock_class!(),
        ),
    )
}

/// Returns the name and lock class of every timer's queue lock, for the same reason as
/// [`work_class`].
#[inline(never)]
fn queue_class() -> LockClass {
    (
        c_str!("workqueue::timer::Shared::queue"),
        static_lock_class!(),
    )
}

impl<T: TimerHandler> Timer<T> {
    /// Creates a disarmed timer with `data`, on a new workqueue called `name` with `flags`.
    ///
    /// The queue (`alloc_workqueue()`, see [`OwnedQueue::new`]) runs one work item at a time.
    pub fn new(name: &CStr, flags: Flags, data: T) -> Result<Self> {
        // SAFETY: The queue goes into the `Shared`, whose only work item is its `work`, queued
        // only on it (type invariant); `stop` takes it out, then cancels that work (and waits for
        // it) before it drops the queue, and nothing queues on a queue taken out.
        let queue = unsafe { OwnedQueue::new(name, flags, 1)? };
        // INVARIANT: `work` is queued only by `Self::arm` and `Self::arm_if_idle`, on the queue
        // `queue` holds, under its lock.
        let ((work, work_key), (work_timer, work_timer_key)) = work_class();
        let (queue_name, queue_key) = queue_class();
        let shared = Arc::pin_init(
            try_pin_init!(Shared {
                work <- DelayedWork::new(work, work_key, work_timer, work_timer_key),
                queue <- SpinLock::new(Some(queue), queue_name, queue_key),
                data,
            }? Error),
            GFP_KERNEL,
        )?;
        Ok(Self {
            timer: TimerRef { shared },
        })
    }

    /// Stops the timer for good and destroys its queue.
    ///
    /// Arming does nothing from here on; the timer is disarmed and a running handler waited
    /// for (one that armed it before this took the queue away has that undone). This holds for
    /// every caller, also for one that runs while another is stopping the timer or after it was
    /// stopped. May sleep.
    pub fn stop(&self) {
        let shared = &self.timer.shared;
        let queue = shared.queue.lock().take();
        // Also when another caller took the queue: that one may still be waiting for the
        // handler. Cancelling a work that is idle returns at once, on a destroyed queue too (an
        // idle work keeps no pointer to its queue).
        shared.cancel_delayed_sync();
        // INVARIANT: The queue is out of `shared`, so nothing queues the work on it any more,
        // and the work is neither pending nor running: dropping it destroys an idle queue.
        drop(queue);
    }
}

impl<T: TimerHandler> Deref for Timer<T> {
    type Target = TimerRef<T>;

    fn deref(&self) -> &TimerRef<T> {
        &self.timer
    }
}

impl<T: TimerHandler> TimerRef<T> {
    /// Returns the timer a reference to its shared part stands for.
    fn from_shared(shared: &Arc<Shared<T>>) -> &Self {
        // SAFETY: `TimerRef<T>` is a `#[repr(transparent)]` wrapper of an `Arc<Shared<T>>`, and
        // has no `Drop` of its own.
        unsafe { &*core::ptr::from_ref(shared).cast::<Self>() }
    }

    /// Returns the timer's data.
    pub fn data(&self) -> &T {
        &self.shared.data
    }

    /// Arms the timer to expire `delay` from now, moving an armed one's expiry
    /// (`mod_delayed_work()`).
    ///
    /// A negative delay is none; the delay is rounded up to whole milliseconds and jiffies. Does
    /// nothing once the timer is stopped ([`Timer::stop`]). Not from hard interrupt context.
    pub fn arm(&self, delay: Delta) {
        let queue = self.shared.queue.lock();
        if let Some(queue) = queue.as_ref() {
            // `Err`: it was armed; the queue holds its reference still, this clone goes.
            let _ = queue.mod_delayed(self.shared.clone(), jiffies(delay));
        }
    }

    /// Arms the timer to expire `delay` from now unless it is armed (`queue_delayed_work()`).
    ///
    /// As [`Self::arm`] otherwise.
    pub fn arm_if_idle(&self, delay: Delta) {
        let queue = self.shared.queue.lock();
        if let Some(queue) = queue.as_ref() {
            // `Err`: it was armed, and stays so; this clone goes.
            let _ = queue.enqueue_delayed(self.shared.clone(), jiffies(delay));
        }
    }
}

impl<T: TimerHandler> Drop for Timer<T> {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Converts `delay` to jiffies, rounded up.
///
/// A negative delay is none.
fn jiffies(delay: Delta) -> Jiffies {
    let ms = delay.as_millis_ceil().max(0);
    msecs_to_jiffies(u32::try_from(ms).unwrap_or(u32::MAX))
}

#[kernel::macros::kunit_tests(rust_kernel_workqueue_timer)]
mod tests {
    use super::*;
    use kernel::{
        sync::atomic::{
            Atomic,
            Relaxed, //
        },
        time::{
            delay::fsleep,
            Instant,
            Monotonic, //
        }, //
    };

    /// Counts its expiries and arms itself again after 1 ms, the first `again` times.
    struct Counter {
        runs: Atomic<u32>,
        again: u32,
    }

    impl TimerHandler for Counter {
        fn expired(timer: &TimerRef<Self>) {
            let runs = timer.data().runs.fetch_add(1, Relaxed) + 1;
            if runs <= timer.data().again {
                timer.arm_if_idle(Delta::from_millis(1));
            }
        }
    }

    fn counter(again: u32) -> Result<Timer<Counter>> {
        Timer::new(
            c"timer_test",
            Flags::UNBOUND | Flags::MEM_RECLAIM,
            Counter {
                runs: Atomic::new(0),
                again,
            },
        )
    }

    /// Waits up to `ms` for `timer` to have expired `n` times and returns whether it did.
    fn wait_runs(timer: &Timer<Counter>, n: u32, ms: i64) -> bool {
        let start = Instant::<Monotonic>::now();
        while timer.data().runs.load(Relaxed) < n {
            if start.elapsed() > Delta::from_millis(ms) {
                return false;
            }
            fsleep(Delta::from_millis(1));
        }
        true
    }

    #[test]
    fn expires_and_arms_itself_again() -> Result {
        let timer = counter(2)?;
        timer.arm(Delta::from_millis(1));
        assert!(wait_runs(&timer, 3, 1000));
        fsleep(Delta::from_millis(20));
        assert_eq!(timer.data().runs.load(Relaxed), 3);
        Ok(())
    }

    #[test]
    fn arm_moves_the_expiry_and_arm_if_idle_keeps_it() -> Result {
        let timer = counter(0)?;
        timer.arm(Delta::from_millis(10_000));
        timer.arm_if_idle(Delta::from_millis(1));
        fsleep(Delta::from_millis(50));
        assert_eq!(timer.data().runs.load(Relaxed), 0);
        timer.arm(Delta::from_millis(1));
        assert!(wait_runs(&timer, 1, 1000));
        Ok(())
    }

    /// Whether a [`Sleeper`]'s handler started, and whether it returned.
    struct Progress {
        started: Atomic<u32>,
        done: Atomic<u32>,
    }

    /// Sleeps 50 ms in its handler, then notes that it returned.
    struct Sleeper(Arc<Progress>);

    impl TimerHandler for Sleeper {
        fn expired(timer: &TimerRef<Self>) {
            let progress = &timer.data().0;
            progress.started.store(1, Relaxed);
            fsleep(Delta::from_millis(50));
            progress.done.store(1, Relaxed);
        }
    }

    /// Waits up to `ms` for `flag` to be set and returns whether it was.
    fn wait_set(flag: &Atomic<u32>, ms: i64) -> bool {
        let start = Instant::<Monotonic>::now();
        while flag.load(Relaxed) == 0 {
            if start.elapsed() > Delta::from_millis(ms) {
                return false;
            }
            fsleep(Delta::from_millis(1));
        }
        true
    }

    /// Returns a [`Sleeper`] timer, armed and with its handler running, and its progress.
    fn sleeping() -> Result<(Timer<Sleeper>, Arc<Progress>)> {
        let progress = Arc::new(
            Progress {
                started: Atomic::new(0),
                done: Atomic::new(0),
            },
            GFP_KERNEL,
        )?;
        let timer = Timer::new(
            c"timer_test",
            Flags::UNBOUND | Flags::MEM_RECLAIM,
            Sleeper(progress.clone()),
        )?;
        timer.arm(Delta::ZERO);
        assert!(wait_set(&progress.started, 1000));
        Ok((timer, progress))
    }

    #[test]
    fn drop_waits_for_a_running_handler() -> Result {
        let (timer, progress) = sleeping()?;
        assert_eq!(progress.done.load(Relaxed), 0);
        drop(timer);
        assert_eq!(progress.done.load(Relaxed), 1);
        Ok(())
    }

    #[test]
    fn two_stoppers_both_wait_for_a_running_handler() -> Result {
        let (timer, progress) = sleeping()?;
        let timer = Arc::new(timer, GFP_KERNEL)?;
        // What the other stopper saw when its stop() returned: 1 done, 2 not done.
        let seen = Arc::new(Atomic::new(0u32), GFP_KERNEL)?;
        let entering = Arc::new(Atomic::new(0u32), GFP_KERNEL)?;
        let (other, other_progress, other_seen, other_entering) = (
            timer.clone(),
            progress.clone(),
            seen.clone(),
            entering.clone(),
        );
        kernel::workqueue::system_long().try_spawn(GFP_KERNEL, move || {
            other_entering.store(1, Relaxed);
            other.stop();
            let done = other_progress.done.load(Relaxed);
            other_seen.store(if done == 1 { 1 } else { 2 }, Relaxed);
        })?;
        assert!(wait_set(&entering, 1000));
        fsleep(Delta::from_millis(1));
        // Both stoppers run while the handler sleeps.
        assert_eq!(progress.done.load(Relaxed), 0);
        timer.stop();
        assert_eq!(progress.done.load(Relaxed), 1);
        assert!(wait_set(&seen, 1000));
        assert_eq!(seen.load(Relaxed), 1);
        Ok(())
    }

    #[test]
    fn a_clone_arms_the_timer_until_it_is_stopped() -> Result {
        let timer = counter(0)?;
        let clone = TimerRef::clone(&timer);
        clone.arm(Delta::from_millis(1));
        assert!(wait_runs(&timer, 1, 1000));
        timer.stop();
        clone.arm(Delta::ZERO);
        fsleep(Delta::from_millis(20));
        assert_eq!(clone.data().runs.load(Relaxed), 1);
        Ok(())
    }

    #[test]
    fn a_stopped_timer_stays_idle() -> Result {
        let timer = counter(u32::MAX)?;
        timer.arm(Delta::ZERO);
        assert!(wait_runs(&timer, 2, 1000));
        timer.stop();
        let runs = timer.data().runs.load(Relaxed);
        timer.arm(Delta::ZERO);
        timer.arm_if_idle(Delta::ZERO);
        fsleep(Delta::from_millis(20));
        assert_eq!(timer.data().runs.load(Relaxed), runs);
        // Dropping a stopped timer stops nothing more.
        drop(timer);
        Ok(())
    }
}
