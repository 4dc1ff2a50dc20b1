// SPDX-License-Identifier: GPL-2.0

//! A workqueue the driver allocates and owns (`alloc_workqueue()`/`destroy_workqueue()`).
//!
//! The kernel crate reaches only the system workqueues (`workqueue::system()` and the like).
//! Work that moves I/O forward when memory is short needs a queue with a rescuer thread
//! (`WQ_MEM_RECLAIM`): with swap or writeback on the card, a request whose interrupt was lost
//! is only completed by its deadline's work, and a system queue may need a new worker, which
//! may need memory, for it to run. Written in the crate's shape (a `Deref` to
//! [`workqueue::Queue`]) so that it can become `kernel::workqueue::OwnedQueue`.

use core::{
    ops::Deref,
    ptr::NonNull, //
};

use kernel::{
    bindings,
    prelude::*,
    workqueue, //
};

/// Flags of a workqueue (`enum wq_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Flags(u32);

impl Flags {
    /// Work items run on unbound workers (`WQ_UNBOUND`).
    pub(crate) const UNBOUND: Self = Self(bindings::wq_flags_WQ_UNBOUND);
    /// The queue has a rescuer thread, so that its work makes progress under memory pressure
    /// (`WQ_MEM_RECLAIM`).
    pub(crate) const MEM_RECLAIM: Self = Self(bindings::wq_flags_WQ_MEM_RECLAIM);
}

impl core::ops::BitOr for Flags {
    type Output = Self;

    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// A workqueue allocated by [`OwnedQueue::new`] and destroyed when dropped.
///
/// # Invariants
///
/// `ptr` is a workqueue returned by `alloc_workqueue()` and not destroyed before `drop`.
pub(crate) struct OwnedQueue {
    ptr: NonNull<bindings::workqueue_struct>,
}

// SAFETY: A workqueue may be used and destroyed from any thread.
unsafe impl Send for OwnedQueue {}
// SAFETY: The workqueue API synchronises itself.
unsafe impl Sync for OwnedQueue {}

impl OwnedQueue {
    /// Allocates a workqueue called `name` with `flags` and at most `max_active` work items
    /// running at once (0: the default).
    pub(crate) fn new(name: &CStr, flags: Flags, max_active: u32) -> Result<Self> {
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
        // INVARIANT: Allocated just now.
        Ok(Self {
            ptr: NonNull::new(ptr).ok_or(ENOMEM)?,
        })
    }
}

impl Deref for OwnedQueue {
    type Target = workqueue::Queue;

    fn deref(&self) -> &workqueue::Queue {
        // SAFETY: By the type invariant `ptr` is a live workqueue until `self` is dropped,
        // which the borrow of `self` prevents.
        unsafe { workqueue::Queue::from_raw(self.ptr.as_ptr()) }
    }
}

impl Drop for OwnedQueue {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `ptr` is a live workqueue; nothing can queue on it any
        // more (no borrow outlives `self`); `destroy_workqueue()` drains what is queued.
        unsafe { bindings::destroy_workqueue(self.ptr.as_ptr()) };
    }
}
