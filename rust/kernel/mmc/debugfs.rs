// SPDX-License-Identifier: GPL-2.0

//! An MMC host's debugfs directory (`host->debugfs_root`, `/sys/kernel/debug/mmcN/`).
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! The MMC core creates the directory when the host is added and removes it, with everything
//! in it, when the host is removed, before the driver data is dropped. Which files a driver
//! puts there, and when, is the driver's.

use super::{
    HostOps,
    RegisteredHost, //
};
use crate::kernel_ext::debugfs::foreign_dir::ScopedDir;

impl<T: HostOps> RegisteredHost<'_, T> {
    /// Creates files in the host's debugfs directory.
    ///
    /// `files` creates them in the directory, given as a [`ScopedDir`]; each shows data that
    /// `files` reaches from the driver data it is given. The files are removed with the
    /// directory when the host is removed, before the driver data is dropped; their operations
    /// belong to the driver's module, which an open file keeps loaded. Without debugfs nothing
    /// is created.
    pub fn debugfs_files<F>(&self, files: F)
    where
        T: 'static,
        F: for<'data, 'dir> FnOnce(&'data T, &'dir ScopedDir<'data, 'dir, T::OwnerModule>),
    {
        // SAFETY: By the type invariant the host is added and not being removed, so its
        // directory (or an error pointer, or NULL, without debugfs) exists.
        let root = unsafe { (*self.host.as_ptr()).debugfs_root };
        // SAFETY: The directory exists until the host is removed; `mmc_remove_host()` removes it
        // with everything in it (`debugfs_remove_recursive()`) before the driver data, which
        // `data` borrows, is dropped (`Registration`).
        let dir = unsafe { ScopedDir::from_raw(root) };
        files(self.host().data().get_ref(), &dir);
    }
}
