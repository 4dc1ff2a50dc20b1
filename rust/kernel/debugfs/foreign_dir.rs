// SPDX-License-Identifier: GPL-2.0

//! A [`kernel::debugfs`] `ScopedDir` over a directory another subsystem owns.
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! The [`ScopedDir`] has the methods of Linux 7.3's that the MMC host abstractions use, with the
//! same signatures, and [`ScopedDir::from_raw`]. Its files are shown with [`Writer`] and written
//! with [`Reader`]; their operations name the module `M` as their owner.

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

use crate::bindings;

/// A debugfs directory of another owner, in which a module creates files.
///
/// The directory lives at most `'dir` and its files show data that lives at least `'data`; the
/// files' operations belong to module `M`. Dropping it removes nothing: the directory's owner
/// removes it with everything in it.
///
/// # Invariants
///
/// `dentry` is a debugfs directory that exists for `'dir` and that its owner removes, with its
/// files, before `'data` ends, or an error pointer (no directory: debugfs creates nothing in
/// one).
pub struct ScopedDir<'data, 'dir, M> {
    #[cfg_attr(not(CONFIG_DEBUG_FS), expect(dead_code))]
    dentry: *mut bindings::dentry,
    _phantom: PhantomData<fn(&'data ()) -> &'dir ()>,
    _module: PhantomData<M>,
}

impl<'data, 'dir, M: ModuleMetadata> ScopedDir<'data, 'dir, M> {
    /// Creates a [`ScopedDir`] over `dentry`, a directory another subsystem created and removes.
    ///
    /// An error pointer or NULL (a directory that was not created) gives one in which nothing is
    /// created: debugfs would create files in its root for a NULL parent, where nothing removes
    /// them.
    ///
    /// # Safety
    ///
    /// `dentry` is an error pointer, NULL, or a debugfs directory that exists for `'dir` and
    /// that its owner removes with everything in it (`debugfs_remove_recursive()`) before
    /// `'data` ends.
    pub unsafe fn from_raw(dentry: *mut bindings::dentry) -> Self {
        let dentry = if dentry.is_null() {
            kernel::error::code::ENOENT.to_ptr()
        } else {
            dentry
        };
        // INVARIANT: The safety requirements; NULL became an error pointer.
        Self {
            dentry,
            _phantom: PhantomData,
            _module: PhantomData,
        }
    }

    /// Creates a read-only file in this directory, showing `data` with [`Writer::write`].
    ///
    /// The file is removed with the directory.
    pub fn read_only_file<T: Writer + Send + Sync + 'static>(&self, name: &CStr, data: &'data T) {
        self.create_file(name, data, &ReadOnly::<T, M>::FOPS)
    }

    /// Creates a file in this directory that shows `data` and takes what root writes to it.
    ///
    /// The file shows `data` with [`Writer::write`] and hands what is written to
    /// [`Reader::read_from_slice`]; it is removed with the directory.
    pub fn read_write_file<T: Writer + Reader + Send + Sync + 'static>(
        &self,
        name: &CStr,
        data: &'data T,
    ) {
        self.create_file(name, data, &ReadWrite::<T, M>::FOPS)
    }

    /// Creates file `name` of `data` with the operations `fops` (`debugfs_create_file()`).
    ///
    /// Like every debugfs user, it ignores a failure, which only loses the file.
    fn create_file<T: Sync>(
        &self,
        name: &CStr,
        data: &'data T,
        fops: &'static bindings::file_operations,
    ) {
        #[cfg(CONFIG_DEBUG_FS)]
        // SAFETY: `name` is a valid C string, copied by debugfs; `dentry` is a debugfs
        // directory, NULL or an error pointer (type invariant), which debugfs takes. By the
        // type invariant the directory, and the file with it, is removed before `'data` ends,
        // and removing a file waits for its running operations (debugfs's proxy operations),
        // so `data` outlives every use; `fops` are those of a `T`.
        unsafe {
            bindings::debugfs_create_file_full(
                name.as_char_ptr(),
                if fops.write.is_some() { 0o600 } else { 0o400 },
                self.dentry,
                core::ptr::from_ref(data).cast_mut().cast(),
                core::ptr::null(),
                fops,
            );
        }
        #[cfg(not(CONFIG_DEBUG_FS))]
        let _ = (name, data, fops);
    }
}

/// Opens a file whose data is a `D` (`single_open()` with [`show`]).
///
/// # Safety
///
/// `inode` is the inode of a file created by [`ScopedDir::create_file`] with a `D` as its data.
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
    // (`ScopedDir::create_file`), and only ever shared.
    let data = unsafe { &*(*seq).private.cast::<D>() };
    // SAFETY: `seq` is the live `seq_file` of this `show` call.
    let seq = unsafe { SeqFile::from_raw(seq) };
    seq_print!(seq, "{}", Shown(data));
    0
}

/// Hands what was written to a file opened by [`open`] to `D`'s [`Reader`].
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

/// A [`Writer`] to format with `{}`.
struct Shown<'a, D>(&'a D);

impl<D: Writer> fmt::Display for Shown<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write(f)
    }
}

/// The operations of a read-only file of a `D`, in module `M`.
///
/// `M` is the module that creates the file: an open file holds a reference to it, so the module
/// cannot go while the operations may still run.
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

#[cfg(CONFIG_DEBUG_FS)]
#[kernel::macros::kunit_tests(meson_mx_sdhc_rs_debugfs_foreign_dir)]
mod tests {
    use super::*;
    use core::ptr::null_mut;
    use kernel::error::from_err_ptr;

    static VALUE: u32 = 42;

    #[test]
    fn scoped_dir_from_raw() -> Result {
        // SAFETY: The name is a C string; a `NULL` parent is the root of debugfs.
        let dir = unsafe {
            bindings::debugfs_create_dir(c"meson_mx_sdhc_rs_foreign_dir".as_char_ptr(), null_mut())
        };
        let dir = from_err_ptr(dir)?;
        {
            // SAFETY: `dir` is a debugfs directory, removed below with everything in it, and
            // `VALUE` is static.
            let scoped = unsafe { ScopedDir::<'static, '_, crate::LocalModule>::from_raw(dir) };
            scoped.read_only_file(c"value", &VALUE);
        }
        // SAFETY: The name is a C string and `dir` a debugfs directory.
        let file = unsafe { bindings::debugfs_lookup(c"value".as_char_ptr(), dir) };
        let data = if file.is_null() {
            null_mut()
        } else {
            // SAFETY: `debugfs_lookup` returned a positive `dentry`, with a reference to it.
            let data = unsafe { (*(*file).d_inode).i_private };
            // SAFETY: `file` holds the reference that `debugfs_lookup` took.
            unsafe { bindings::dput(file) };
            data
        };
        // `debugfs_remove_recursive()` is `debugfs_remove()`.
        // SAFETY: `dir` is the debugfs directory created above; nothing refers to it any more.
        unsafe { bindings::debugfs_remove(dir) };
        assert!(!file.is_null());
        assert_eq!(data.cast_const(), core::ptr::from_ref(&VALUE).cast());
        Ok(())
    }

    #[test]
    fn scoped_dir_from_raw_null() {
        // SAFETY: `NULL` is accepted, and `VALUE` is static.
        let scoped = unsafe { ScopedDir::<'static, '_, crate::LocalModule>::from_raw(null_mut()) };
        scoped.read_only_file(c"meson_mx_sdhc_rs_foreign_dir_null", &VALUE);
        // Not in the root of debugfs, where a `NULL` parent would have put it.
        // SAFETY: The name is a C string; a `NULL` parent is the root of debugfs.
        let file = unsafe {
            bindings::debugfs_lookup(
                c"meson_mx_sdhc_rs_foreign_dir_null".as_char_ptr(),
                null_mut(),
            )
        };
        if !file.is_null() {
            // SAFETY: `file` holds the reference that `debugfs_lookup` took.
            unsafe { bindings::dput(file) };
        }
        assert!(file.is_null());
    }
}
