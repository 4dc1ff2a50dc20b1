// SPDX-License-Identifier: GPL-2.0

//! Workqueues a driver allocates and owns.
//!
//! Adds [`OwnedQueue`], a workqueue allocated with the given [`Flags`] (`alloc_workqueue()`) and
//! destroyed when dropped (`destroy_workqueue()`). Only the system workqueues are reachable so
//! far ([`workqueue::system()`](kernel::workqueue::system) and the like), but some work must
//! not share them: work that moves I/O forward under memory pressure needs a queue with its own
//! rescuer thread (`WQ_MEM_RECLAIM`), since on a system queue it may have to wait for a new
//! worker, and so for memory.
//!
//! An [`OwnedQueue`] is not a [`Queue`](kernel::workqueue::Queue):
//! [`Queue::enqueue_delayed`](kernel::workqueue::Queue::enqueue_delayed) would let a delayed
//! work item outlive it, as `destroy_workqueue()` waits for the queued work items but not for
//! the timers of delayed ones. Work goes on it through work items that keep it alive and cancel
//! themselves before they let it go
//! ([`OwnedDelayedWork`](kernel::workqueue::delayed::OwnedDelayedWork)).
//!
//! C header: [`include/linux/workqueue.h`](srctree/include/linux/workqueue.h)

use core::{
    ops::BitOr,
    ptr::NonNull, //
};

use kernel::prelude::*;

use crate::bindings;

/// Flags of a workqueue (`enum wq_flags`), combined with `|`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Flags(u32);

impl Flags {
    /// Work items run on workers not bound to a CPU (`WQ_UNBOUND`).
    pub(crate) const UNBOUND: Self = Self(bindings::wq_flags_WQ_UNBOUND);
    /// Work items run on the CPU that queued them (`WQ_PERCPU`).
    pub(crate) const PERCPU: Self = Self(bindings::wq_flags_WQ_PERCPU);
    /// The queue has a rescuer thread, so that its work items make progress when no new worker
    /// can be created for lack of memory (`WQ_MEM_RECLAIM`).
    pub(crate) const MEM_RECLAIM: Self = Self(bindings::wq_flags_WQ_MEM_RECLAIM);
}

impl BitOr for Flags {
    type Output = Self;

    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// A workqueue allocated by [`OwnedQueue::new`] and destroyed when dropped (which waits for
/// the work items queued on it).
///
/// See [`OwnedDelayedWork`](kernel::workqueue::delayed::OwnedDelayedWork) for an example.
///
/// # Invariants
///
/// `ptr` is a workqueue returned by `alloc_workqueue()`, destroyed only in `drop`.
pub(crate) struct OwnedQueue {
    ptr: NonNull<bindings::workqueue_struct>,
}

// SAFETY: A workqueue may be used and destroyed from any thread.
unsafe impl Send for OwnedQueue {}
// SAFETY: `&OwnedQueue` only gives the raw pointer; the workqueue API synchronises itself.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    /// Allocates a workqueue called `name` with `flags` that runs at most `max_active` of its
    /// work items at once (0: the default limit).
    ///
    /// `flags` must hold exactly one of [`Flags::UNBOUND`] and [`Flags::PERCPU`] (`EINVAL`
    /// otherwise): `alloc_workqueue()` warns about a queue that says neither.
    pub(crate) fn new(name: &CStr, flags: Flags, max_active: u32) -> Result<Self> {
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
            ptr: NonNull::new(ptr).ok_or(ENOMEM)?,
        })
    }

    /// The `struct workqueue_struct`, valid for as long as `self` lives. Whoever queues work on
    /// it keeps `self` alive until that work is done or cancelled: dropping `self` waits for
    /// queued work, not for the timers of delayed work.
    pub(crate) fn as_raw(&self) -> *mut bindings::workqueue_struct {
        self.ptr.as_ptr()
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `ptr` is a live workqueue. No delayed work armed on it
        // through `as_raw` is pending any more (see there), and `destroy_workqueue()` waits for
        // the queued work.
        unsafe { bindings::destroy_workqueue(self.ptr.as_ptr()) };
    }
}
