// SPDX-License-Identifier: GPL-2.0

//! Files of the driver in the host's debugfs directory (`/sys/kernel/debug/mmcN/`).
//!
//! The MMC core creates the directory when the host is added (`host->debugfs_root`, with its
//! own `ios`, `caps`, `clock`, ... files) and removes it with everything in it when the host is
//! removed, before the host drops its driver data. A driver that shows data of its own there
//! registers its host with [`UnregisteredHost::register_with_debugfs`], which hands it the
//! directory as a [`ScopedDir`] whose files may show (and take) data reached from the driver
//! data.

use kernel::prelude::*;

use super::{
    Host,
    HostOps,
    UnregisteredHost, //
};
use crate::bindings;
use crate::kernel_ext::debugfs::foreign_dir::ScopedDir;

impl<T: HostOps> UnregisteredHost<'_, T> {
    /// Registers the host, as [`Self::register`] does, then has `files` create the driver's
    /// files in the host's debugfs directory, each showing data that `files` reaches from the
    /// driver data it is given. The files are removed with the directory when the host is
    /// removed, before the driver data is dropped; their operations belong to the driver's
    /// module, which an open file keeps loaded.
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
    /// The host's debugfs directory, which the core creates when the host is added (an error
    /// pointer or NULL without debugfs).
    fn debugfs_root(&self) -> *mut bindings::dentry {
        // SAFETY: By the type invariant the host is valid.
        unsafe { (*self.raw()).debugfs_root }
    }
}
