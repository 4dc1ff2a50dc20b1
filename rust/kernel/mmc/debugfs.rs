// SPDX-License-Identifier: GPL-2.0

//! Files of the driver in the host's debugfs directory (`/sys/kernel/debug/mmcN/`).
//!
//! The MMC core creates the directory when the host is added (`host->debugfs_root`, with its
//! own `ios`, `caps`, `clock`, ... files) and removes it with everything in it when the host is
//! removed. [`kernel::debugfs::Dir`] only holds directories it created, so the host's directory
//! gets its files here: a driver names them on the [`UnregisteredHost`], each showing (and for
//! a writable one, taking) data reached from the host's driver data, and registration creates
//! them once the directory exists. The data is shown with [`Writer`] and written with
//! [`Reader`], as the files of [`kernel::debugfs`].
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)

use core::marker::PhantomData;

use kernel::{
    debugfs::{
        Reader,
        Writer, //
    },
    fmt,
    module::this_module,
    prelude::*,
    seq_file::SeqFile,
    seq_print,
    uaccess::{
        UserPtr,
        UserSlice, //
    },
    ModuleMetadata, //
};

use super::{
    HostOps,
    UnregisteredHost, //
};
use crate::bindings;

/// A file to create in the host's directory when the host is added.
///
/// # Invariants
///
/// `data` points to a value, reached from the host's driver data, that lives as long as the
/// driver data and is of the type `fops` expects.
#[cfg_attr(not(CONFIG_DEBUG_FS), expect(dead_code))]
pub(super) struct PendingFile {
    name: &'static CStr,
    data: *const c_void,
    fops: &'static bindings::file_operations,
}

impl PendingFile {
    /// Creates the file in `dir` (`debugfs_create_file()`); like every debugfs user, ignores a
    /// failure, which only loses the file.
    ///
    /// # Safety
    ///
    /// `dir` is the debugfs directory of a host whose driver data `self.data` was reached from,
    /// removed (`mmc_remove_host()`) before the driver data is dropped.
    #[cfg(CONFIG_DEBUG_FS)]
    unsafe fn create(&self, dir: *mut bindings::dentry) {
        // SAFETY: `name` is a valid C string; `dir` is a debugfs directory (or an error pointer,
        // which debugfs accepts). By the type invariant and the safety requirements `data`
        // outlives the file: removing the directory waits for the file's running operations
        // (the file is created with debugfs's proxy operations) before the data goes; `fops`
        // matches `data`.
        unsafe {
            bindings::debugfs_create_file_full(
                self.name.as_char_ptr(),
                if self.fops.write.is_some() {
                    0o600
                } else {
                    0o400
                },
                dir,
                self.data.cast_mut(),
                core::ptr::null(),
                self.fops,
            )
        };
    }
}

// SAFETY: `data` is only read, through a shared reference to a `Sync` value (`Writer + Sync`).
unsafe impl Send for PendingFile {}

/// Creates `files` in the debugfs directory of `host`.
///
/// # Safety
///
/// `host` was added and its driver data is where `files` were reached from (see
/// [`PendingFile::create`]).
pub(super) unsafe fn create_files(host: *mut bindings::mmc_host, files: &[PendingFile]) {
    #[cfg(CONFIG_DEBUG_FS)]
    for f in files {
        // SAFETY: The directory of an added host, removed by `mmc_remove_host()` before the
        // driver data goes (safety requirements).
        unsafe { f.create((*host).debugfs_root) };
    }
    #[cfg(not(CONFIG_DEBUG_FS))]
    let _ = (host, files);
}

impl<T: HostOps> UnregisteredHost<'_, T> {
    /// Names a file `name` in the host's debugfs directory that shows what `data` reaches from
    /// the driver data, created when the host is registered and removed with the host.
    pub(crate) fn debugfs_file<D: Writer + Sync>(
        &mut self,
        name: &'static CStr,
        data: impl for<'x> FnOnce(&'x T) -> &'x D,
    ) -> Result {
        self.pending_file(name, data, &ReadOnly::<D, T::OwnerModule>::FOPS)
    }

    /// As [`Self::debugfs_file`], for a file that root may also write to, which `data`'s
    /// [`Reader`] takes.
    pub(crate) fn debugfs_rw_file<D: Writer + Reader + Sync>(
        &mut self,
        name: &'static CStr,
        data: impl for<'x> FnOnce(&'x T) -> &'x D,
    ) -> Result {
        self.pending_file(name, data, &ReadWrite::<D, T::OwnerModule>::FOPS)
    }

    fn pending_file<D: Sync>(
        &mut self,
        name: &'static CStr,
        data: impl for<'x> FnOnce(&'x T) -> &'x D,
        fops: &'static bindings::file_operations,
    ) -> Result {
        if !cfg!(CONFIG_DEBUG_FS) {
            return Ok(());
        }
        // The driver data is pinned in the private area until the host is freed and only ever
        // shared, so what `data` reaches through a shared borrow of it lives as long.
        let data = core::ptr::from_ref(data(&self.data())).cast::<c_void>();
        // INVARIANT: `data` was reached from the driver data; `fops` is `D`'s.
        self.files
            .push(PendingFile { name, data, fops }, GFP_KERNEL)?;
        Ok(())
    }
}

/// `open` of a file whose data is a `D`: `single_open()` with [`show`].
///
/// # Safety
///
/// `inode` is the inode of a file created by [`PendingFile::create`] with a `D` as its data.
unsafe extern "C" fn open<D: Writer + Sync>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `i_private` of the file's inode is its data (safety requirements); `show::<D>`
    // receives it as the `seq_file`'s private data.
    unsafe { bindings::single_open(file, Some(show::<D>), (*inode).i_private) }
}

/// Shows the `D` of a file opened by [`open`].
///
/// # Safety
///
/// `seq` is the `seq_file` of a file opened by `open::<D>`.
unsafe extern "C" fn show<D: Writer + Sync>(seq: *mut bindings::seq_file, _: *mut c_void) -> c_int {
    // SAFETY: The private data is the file's `D`, alive while the file's operations run
    // (`PendingFile::create`), and only ever shared.
    let data = unsafe { &*(*seq).private.cast::<D>() };
    // SAFETY: `seq` is the live `seq_file` of this `show` call.
    let seq = unsafe { SeqFile::from_raw(seq) };
    seq_print!(seq, "{}", Shown(data));
    0
}

/// `write` of a file opened by [`open`]: hands what was written to `D`'s [`Reader`].
///
/// # Safety
///
/// `file` is a file opened by `open::<D>`; `buf` is a user pointer valid for `count` bytes.
unsafe extern "C" fn write<D: Writer + Reader + Sync>(
    file: *mut bindings::file,
    buf: *const c_char,
    count: usize,
    _ppos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: `single_open()` made the file's private data its `seq_file`, whose private data
    // is the file's `D`, alive while the file's operations run, and only ever shared.
    let data = unsafe {
        &*(*(*file).private_data.cast::<bindings::seq_file>())
            .private
            .cast::<D>()
    };
    let mut reader = UserSlice::new(UserPtr::from_ptr(buf.cast_mut().cast()), count).reader();
    match data.read_from_slice(&mut reader) {
        Ok(()) => isize::try_from(count).unwrap_or(isize::MAX),
        Err(e) => e.to_errno() as isize,
    }
}

/// Formats a [`Writer`] with `{}`.
struct Shown<'a, D>(&'a D);

impl<D: Writer> fmt::Display for Shown<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write(f)
    }
}

/// The operations of a read-only file of a `D`, in module `M` (the host driver's: an open
/// file holds a reference to it, so the module cannot go while the operations may still run).
struct ReadOnly<D, M>(PhantomData<(D, M)>);

impl<D: Writer + Sync, M: ModuleMetadata> ReadOnly<D, M> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        open: Some(open::<D>),
        read: Some(bindings::seq_read),
        llseek: Some(bindings::seq_lseek),
        release: Some(bindings::single_release),
        owner: this_module::<M>().as_ptr(),
        ..pin_init::zeroed()
    };
}

/// The operations of a file of a `D` that root may write to, in module `M` (as [`ReadOnly`]).
struct ReadWrite<D, M>(PhantomData<(D, M)>);

impl<D: Writer + Reader + Sync, M: ModuleMetadata> ReadWrite<D, M> {
    const FOPS: bindings::file_operations = bindings::file_operations {
        open: Some(open::<D>),
        read: Some(bindings::seq_read),
        write: Some(write::<D>),
        llseek: Some(bindings::seq_lseek),
        release: Some(bindings::single_release),
        owner: this_module::<M>().as_ptr(),
        ..pin_init::zeroed()
    };
}
