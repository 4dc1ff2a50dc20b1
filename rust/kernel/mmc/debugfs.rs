// SPDX-License-Identifier: GPL-2.0

//! Driver files in an MMC host's debugfs directory (`/sys/kernel/debug/mmcN/`).
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! The MMC core creates the directory (`host->debugfs_root`) when the host is added and removes
//! it, with everything in it, when the host is removed, before the driver data is dropped.

use kernel::prelude::*;

use super::{
    Host,
    HostOps,
    UnregisteredHost, //
};
use crate::bindings;
use crate::kernel_ext::debugfs::foreign_dir::ScopedDir;

impl<T: HostOps> UnregisteredHost<'_, T> {
    /// Registers the host as [`Self::register`] does, then creates the driver's debugfs files.
    ///
    /// `files` creates them in the host's debugfs directory, given as a [`ScopedDir`]; each
    /// shows data that `files` reaches from the driver data it is given. The files are removed
    /// with the directory when the host is removed, before the driver data is dropped; their
    /// operations belong to the driver's module, which an open file keeps loaded.
    pub(crate) fn register_with_debugfs<F>(self, files: F) -> Result
    where
        T: 'static,
        F: for<'data, 'dir> FnOnce(&'data T, &'dir ScopedDir<'data, 'dir, T::OwnerModule>),
    {
        let host = self.host;
        self.register()?;
        // SAFETY: The host was added with `T`'s callbacks. Its removal belongs to the parent's
        // devres, which cannot release it while this function runs: the host borrowed the
        // bound parent for its lifetime, which this call is within.
        let host = unsafe { Host::<T>::from_raw(host.as_ptr()) };
        // SAFETY: The directory of an added host (or an error pointer, when debugfs has none),
        // which exists until the host is removed; `mmc_remove_host()` removes it with
        // everything in it (`debugfs_remove_recursive()`) before the driver data, which `data`
        // borrows, is dropped (`Registration`).
        let dir = unsafe { ScopedDir::from_raw(host.debugfs_root()) };
        files(host.data().get_ref(), &dir);
        Ok(())
    }
}

impl<T: HostOps> Host<T> {
    /// Returns the host's debugfs directory, which the core creates when the host is added.
    ///
    /// Returns an error pointer or NULL without debugfs.
    fn debugfs_root(&self) -> *mut bindings::dentry {
        // SAFETY: By the type invariant the host is valid.
        unsafe { (*self.raw()).debugfs_root }
    }
}
