// SPDX-License-Identifier: GPL-2.0

//! Workqueues a driver allocates.
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h)
//!
//! [`OwnedQueue`] is a [`Queue`] allocated with `alloc_workqueue()` and destroyed with
//! `destroy_workqueue()` when dropped; work goes on it through [`Queue`]'s methods, which it
//! dereferences to. Unlike the system workqueues, it may have a rescuer thread
//! ([`Flags::MEM_RECLAIM`]).

use core::{
    ops::{
        BitOr,
        Deref, //
    },
    ptr::NonNull, //
};

use kernel::{
    prelude::*,
    workqueue::Queue, //
};

use crate::bindings;

/// Flags of a workqueue (`enum wq_flags`), combined with `|`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flags(u32);

impl Flags {
    /// Work items run on workers not bound to a CPU (`WQ_UNBOUND`).
    pub const UNBOUND: Self = Self(bindings::wq_flags_WQ_UNBOUND);
    /// Work items run on the CPU that queued them (`WQ_PERCPU`).
    pub const PERCPU: Self = Self(bindings::wq_flags_WQ_PERCPU);
    /// The queue has a rescuer thread (`WQ_MEM_RECLAIM`).
    ///
    /// Its work items then make progress when no new worker can be created for lack of memory.
    pub const MEM_RECLAIM: Self = Self(bindings::wq_flags_WQ_MEM_RECLAIM);
}

impl BitOr for Flags {
    type Output = Self;

    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// A [`Queue`] allocated by [`OwnedQueue::new`] and destroyed when dropped.
///
/// Dropping it waits for the work items queued on it.
///
/// # Examples
///
/// ```
/// use kernel::{
///     prelude::*,
///     workqueue::alloc::{
///         Flags,
///         OwnedQueue, //
///     },
/// };
///
/// // SAFETY: Nothing is queued on it but through `try_spawn`, which queues no delayed work.
/// let queue = unsafe { OwnedQueue::new(c"example", Flags::UNBOUND | Flags::MEM_RECLAIM, 1)? };
/// queue.try_spawn(GFP_KERNEL, || pr_info!("on a queue of its own\n"))?;
/// // Dropping `queue` waits for the closure.
/// # Ok::<(), Error>(())
/// ```
///
/// # Invariants
///
/// `ptr` is a workqueue returned by `alloc_workqueue()`, destroyed only in `drop`.
pub struct OwnedQueue {
    ptr: NonNull<Queue>,
}

// SAFETY: A workqueue may be used and destroyed from any thread.
unsafe impl Send for OwnedQueue {}
// SAFETY: `&OwnedQueue` only gives `&Queue`, which is `Sync`.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    /// Allocates a workqueue called `name` with `flags` (`alloc_workqueue()`).
    ///
    /// The queue runs at most `max_active` of its work items at once (0: the default limit).
    /// `alloc_workqueue()` keeps the first 31 bytes
    /// of `name` (and says so once in the kernel log when it cuts it).
    ///
    /// `flags` must hold exactly one of [`Flags::UNBOUND`] and [`Flags::PERCPU`] (`EINVAL`
    /// otherwise): `alloc_workqueue()` warns about a queue that says neither.
    ///
    /// # Safety
    ///
    /// When the queue is dropped, no delayed work item queued on it may be pending: each must
    /// have run or been cancelled (for example by
    /// [`CancelDelayed::cancel_delayed_sync`](kernel::workqueue::rearm::CancelDelayed)).
    /// `destroy_workqueue()` waits for the work items queued on the queue, but not for the
    /// timers of delayed ones, which would queue their work on a freed queue when they fire, and
    /// [`Queue::enqueue_delayed`] takes any `'static` item. Forgetting the queue (`mem::forget`)
    /// is allowed: it is then never destroyed.
    pub unsafe fn new(name: &CStr, flags: Flags, max_active: u32) -> Result<Self> {
        let unbound = flags.0 & Flags::UNBOUND.0 != 0;
        let percpu = flags.0 & Flags::PERCPU.0 != 0;
        if unbound == percpu {
            return Err(EINVAL);
        }
        let max_active = i32::try_from(max_active)?;
        // SAFETY: The format is "%s" and its one argument a NUL-terminated string, which
        // `alloc_workqueue()` copies into the queue.
        let ptr = unsafe {
            bindings::alloc_workqueue_noprof(
                c"%s".as_char_ptr(),
                flags.0,
                max_active,
                name.as_char_ptr(),
            )
        };
        // INVARIANT: Allocated just now, destroyed only in `drop`.
        Ok(Self {
            ptr: NonNull::new(ptr.cast::<Queue>()).ok_or(ENOMEM)?,
        })
    }
}

impl Deref for OwnedQueue {
    type Target = Queue;

    fn deref(&self) -> &Queue {
        // SAFETY: By the type invariant `ptr` is a live workqueue until `self` is dropped.
        unsafe { Queue::from_raw(self.ptr.as_ptr().cast::<bindings::workqueue_struct>()) }
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `ptr` is a live workqueue, and by the safety requirements
        // of `new` no delayed work on it is pending; `destroy_workqueue()` waits for the queued
        // work items.
        unsafe { bindings::destroy_workqueue(self.ptr.as_ptr().cast()) };
    }
}
