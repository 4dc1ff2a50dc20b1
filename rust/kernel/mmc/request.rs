// SPDX-License-Identifier: GPL-2.0

//! MMC requests (`struct mmc_request`), their commands (`struct mmc_command`) and data
//! (`struct mmc_data`).
//!
//! C header: [`include/linux/mmc/core.h`](srctree/include/linux/mmc/core.h)

use core::{
    marker::PhantomData,
    mem::ManuallyDrop,
    ops::Deref,
    ptr::{
        addr_of_mut,
        NonNull, //
    }, //
};

use kernel::{
    device::{
        Bound,
        Device, //
    },
    pr_warn_once,
    prelude::*,
    types::Opaque, //
};

use crate::bindings;

/// A request the MMC core handed to [`HostOps::request`](super::HostOps::request).
///
/// The driver owns it until it is completed, exactly once, from any context: by [`Request::done`]
/// with the errors its driver set, or, dropped without it, as failed (`-EIO` unless an error is
/// set) with a warning. Its command, `sbc`, `stop` and data are reached through [`RequestView`].
///
/// # Invariants
///
/// `mrq` was passed to the `request` callback of `host`, a host of this layer
/// ([`UnregisteredHost`](super::UnregisteredHost)), and is not completed yet; it stays valid until
/// `mmc_request_done()`.
pub struct Request {
    host: NonNull<bindings::mmc_host>,
    mrq: NonNull<bindings::mmc_request>,
}

// SAFETY: A request may be completed from any context and thread; until completion it is only
// accessed through this object and the views borrowed from it.
unsafe impl Send for Request {}

impl Request {
    /// Creates a [`Request`] from a request of `host`.
    ///
    /// # Safety
    ///
    /// `mrq` must be a request the MMC core just passed to the `request` callback of `host`, a
    /// host of this layer (whose private area starts with its bound device).
    pub(super) unsafe fn from_raw(
        host: NonNull<bindings::mmc_host>,
        mrq: NonNull<bindings::mmc_request>,
    ) -> Self {
        // INVARIANT: By the safety requirements.
        Self { host, mrq }
    }

    /// Returns the host the request is in flight on.
    pub(super) fn host_raw(&self) -> NonNull<bindings::mmc_host> {
        self.host
    }

    /// Returns the bound device the request's host belongs to, whose devres holds the host's
    /// registration.
    ///
    /// It is bound while the request is in flight: the host's removal waits for it.
    pub fn bound_device(&self) -> &Device<Bound> {
        // SAFETY: By the type invariant the request is in flight on `host`, a host of this layer,
        // which stays registered until the request is completed, after `self`.
        unsafe { super::host::bound_device(self.host) }
    }

    /// Completes the request (`mmc_request_done()`) with the errors set on it.
    pub fn done(self) {
        let this = ManuallyDrop::new(self);
        // SAFETY: By the type invariant the request is in flight on `host`; `this` is never
        // dropped, so it is completed once.
        unsafe { bindings::mmc_request_done(this.host.as_ptr(), this.mrq.as_ptr()) };
    }

    /// Marks a request completed without [`Request::done`] as failed, unless it already is.
    fn fail_unfinished(&self) {
        let failed =
            self.cmd().error().is_some() || self.data().is_some_and(|d| d.error().is_some());
        if !failed {
            self.cmd().set_error(EIO);
            if let Some(d) = self.data() {
                d.set_error(EIO);
                d.set_bytes_xfered(0);
            }
        }
    }
}

impl Deref for Request {
    type Target = RequestView;

    fn deref(&self) -> &RequestView {
        // SAFETY: By the type invariant `mrq` is valid until the request is dropped, which
        // cannot happen while it is borrowed.
        unsafe { RequestView::from_raw(self.mrq.as_ptr()) }
    }
}

impl Drop for Request {
    /// Completes as failed a request its driver did not complete.
    ///
    /// An early return or a panic's unwinding never completes a request as a success nobody
    /// reported.
    fn drop(&mut self) {
        pr_warn_once!("mmc: a request was dropped without done(): completed as failed\n");
        self.fail_unfinished();
        // SAFETY: By the type invariant the request is in flight on `host`; this consumes it.
        unsafe { bindings::mmc_request_done(self.host.as_ptr(), self.mrq.as_ptr()) };
    }
}

/// A view of a request, in flight ([`Request`]) or in `pre_req`/`post_req`.
///
/// # Invariants
///
/// Wraps a valid request for the lifetime of the reference.
#[repr(transparent)]
pub struct RequestView(Opaque<bindings::mmc_request>);

impl RequestView {
    /// Creates a reference to a [`RequestView`] from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must be a valid request for `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::mmc_request) -> &'a Self {
        // SAFETY: Transparent wrapper of a valid `struct mmc_request` (safety requirements).
        unsafe { &*ptr.cast() }
    }

    fn raw(&self) -> *mut bindings::mmc_request {
        self.0.get()
    }

    /// Returns the request's command (`mrq->cmd`).
    pub fn cmd(&self) -> &Command {
        // SAFETY: By the type invariant the request is valid; the core always sets `mrq->cmd`,
        // which lives as long as the request.
        unsafe { Command::from_raw((*self.raw()).cmd) }
    }

    /// Returns the SET_BLOCK_COUNT (CMD23) to send before the command, if the core asks for one
    /// (`mrq->sbc`, only on a host with [`Cap::Cmd23`](super::Cap::Cmd23)).
    pub fn sbc(&self) -> Option<&Command> {
        // SAFETY: By the type invariant the request is valid.
        let p = unsafe { (*self.raw()).sbc };
        // SAFETY: A non-NULL `sbc` lives as long as the request.
        (!p.is_null()).then(|| unsafe { Command::from_raw(p) })
    }

    /// Returns the STOP_TRANSMISSION (CMD12) to send after the data, if the core asks for one.
    pub fn stop(&self) -> Option<&Command> {
        // SAFETY: By the type invariant the request is valid.
        let p = unsafe { (*self.raw()).stop };
        // SAFETY: A non-NULL `stop` lives as long as the request.
        (!p.is_null()).then(|| unsafe { Command::from_raw(p) })
    }

    /// Returns the request's data (`mrq->data`), if it transfers any.
    pub fn data(&self) -> Option<&Data> {
        // SAFETY: By the type invariant the request is valid.
        let p = unsafe { (*self.raw()).data };
        // SAFETY: A non-NULL `data` lives as long as the request.
        (!p.is_null()).then(|| unsafe { Data::from_raw(p) })
    }

    /// Returns the total length of the request's data, `blksz * blocks`, in bytes (0 without data).
    pub fn data_len(&self) -> u32 {
        self.data().map_or(0, Data::len)
    }

    /// Returns the request's address.
    ///
    /// The same request has the same address from `pre_req` to `post_req` (the core reuses it
    /// for retries), so a driver can recognise it.
    pub fn addr(&self) -> usize {
        self.raw() as usize
    }
}

/// A request the host does not own, in `pre_req` or `post_req`.
///
/// What the two callbacks' requests ([`PreReqRequest`], [`PostReqRequest`]) share.
///
/// Drivers only see it by reference, for the duration of that callback.
///
/// # Invariants
///
/// `mrq` is a valid request that is not in flight on the host of this layer whose `pre_req` or
/// `post_req` callback is running (`host`, when it is kept): the controller is not using its data, so the
/// CPU may copy into or out of its scatterlist.
pub struct IdleRequest {
    /// The host whose callback the request was passed to.
    ///
    /// Its DMA device maps the request in `pre_req`.
    host: NonNull<bindings::mmc_host>,
    mrq: NonNull<bindings::mmc_request>,
}

impl IdleRequest {
    /// Creates an [`IdleRequest`] for `mrq` of `host`.
    ///
    /// # Safety
    ///
    /// `mrq` must be a valid request that is not in flight on `host` while the returned object
    /// lives, which must be within the `pre_req` or `post_req` callback of `host` that passed
    /// it.
    pub(super) unsafe fn new(
        host: NonNull<bindings::mmc_host>,
        mrq: NonNull<bindings::mmc_request>,
    ) -> Self {
        // INVARIANT: By the safety requirements.
        Self { host, mrq }
    }

    /// Returns the host whose callback the request was passed to.
    pub(super) fn host_raw(&self) -> NonNull<bindings::mmc_host> {
        self.host
    }

    /// Returns the bound device the host belongs to, whose devres holds the host's registration.
    ///
    /// It is bound while the host's callback runs.
    pub fn bound_device(&self) -> &Device<Bound> {
        // SAFETY: The `pre_req` or `post_req` callback of `host`, a host of this layer, runs
        // while `self` lives (type invariant), so the host is registered.
        unsafe { super::host::bound_device(self.host) }
    }
}

impl Deref for IdleRequest {
    type Target = RequestView;

    fn deref(&self) -> &RequestView {
        // SAFETY: By the type invariant `mrq` is valid while this object lives.
        unsafe { RequestView::from_raw(self.mrq.as_ptr()) }
    }
}

/// The request handed to `pre_req`, which may map its data for the transfer to come
/// ([`PreReqRequest::pre_map`]).
///
/// Only `pre_req` gets one: a mapping made anywhere else would not be undone by the layer's
/// `post_req`.
pub struct PreReqRequest(IdleRequest);

impl PreReqRequest {
    /// Creates the request of a `pre_req` callback.
    ///
    /// # Safety
    ///
    /// As [`IdleRequest::new`], within the `pre_req` callback of `host` that passed `mrq`.
    pub(super) unsafe fn new(
        host: NonNull<bindings::mmc_host>,
        mrq: NonNull<bindings::mmc_request>,
    ) -> Self {
        // SAFETY: By the safety requirements.
        Self(unsafe { IdleRequest::new(host, mrq) })
    }
}

impl Deref for PreReqRequest {
    type Target = IdleRequest;

    fn deref(&self) -> &IdleRequest {
        &self.0
    }
}

/// The request handed to `post_req`, whose `pre_req` mapping the layer has undone.
///
/// It cannot map the data: nothing would unmap it.
pub struct PostReqRequest(IdleRequest);

impl PostReqRequest {
    /// Creates the request of a `post_req` callback.
    ///
    /// # Safety
    ///
    /// As [`IdleRequest::new`], within the `post_req` callback of `host` that passed `mrq`.
    pub(super) unsafe fn new(
        host: NonNull<bindings::mmc_host>,
        mrq: NonNull<bindings::mmc_request>,
    ) -> Self {
        // SAFETY: By the safety requirements.
        Self(unsafe { IdleRequest::new(host, mrq) })
    }
}

impl Deref for PostReqRequest {
    type Target = IdleRequest;

    fn deref(&self) -> &IdleRequest {
        &self.0
    }
}

/// A command (`struct mmc_command`) of a request.
///
/// # Invariants
///
/// Wraps a valid command for the lifetime of the reference.
#[repr(transparent)]
pub struct Command(Opaque<bindings::mmc_command>);

impl Command {
    /// Creates a reference to a [`Command`] from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must be a valid command for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::mmc_command) -> &'a Self {
        // SAFETY: Transparent wrapper of a valid `struct mmc_command` (safety requirements).
        unsafe { &*ptr.cast() }
    }

    fn raw(&self) -> *mut bindings::mmc_command {
        self.0.get()
    }

    /// Returns the command index.
    pub fn opcode(&self) -> u32 {
        // SAFETY: By the type invariant the command is valid.
        unsafe { (*self.raw()).opcode }
    }

    /// Returns the command argument.
    pub fn arg(&self) -> u32 {
        // SAFETY: By the type invariant the command is valid.
        unsafe { (*self.raw()).arg }
    }

    /// Returns whether the command reads or writes several blocks, CMD18 or CMD25
    /// (`mmc_op_multi()`).
    ///
    /// Without CMD23 before it, it ends with a STOP_TRANSMISSION.
    pub fn is_multi_block(&self) -> bool {
        matches!(
            self.opcode(),
            bindings::MMC_READ_MULTIPLE_BLOCK | bindings::MMC_WRITE_MULTIPLE_BLOCK
        )
    }

    fn flags(&self) -> u32 {
        // SAFETY: By the type invariant the command is valid.
        unsafe { (*self.raw()).flags }
    }

    /// Returns whether the card answers (`MMC_RSP_PRESENT`).
    pub fn resp_present(&self) -> bool {
        self.flags() & bindings::MMC_RSP_PRESENT != 0
    }

    /// Returns whether the answer is 136 bits long (`MMC_RSP_136`).
    pub fn resp_136(&self) -> bool {
        self.flags() & bindings::MMC_RSP_136 != 0
    }

    /// Returns whether the answer carries a valid CRC (`MMC_RSP_CRC`).
    pub fn resp_crc(&self) -> bool {
        self.flags() & bindings::MMC_RSP_CRC != 0
    }

    /// Returns whether the card may signal busy after answering, R1b (`MMC_RSP_BUSY`).
    pub fn resp_busy(&self) -> bool {
        self.flags() & bindings::MMC_RSP_BUSY != 0
    }

    /// Returns the busy timeout the core allows for an R1b command, in milliseconds (0: not set).
    pub fn busy_timeout_ms(&self) -> u32 {
        // SAFETY: By the type invariant the command is valid.
        unsafe { (*self.raw()).busy_timeout }
    }

    /// Returns the command's error, if any.
    pub fn error(&self) -> Option<Error> {
        // SAFETY: By the type invariant the command is valid.
        errno(unsafe { (*self.raw()).error })
    }

    /// Sets the command's error.
    pub fn set_error(&self, e: Error) {
        // SAFETY: By the type invariant the command is valid; the core does not look at it
        // before the request completes.
        unsafe { (*self.raw()).error = e.to_errno() };
    }

    /// Sets `resp[idx]`, ignoring indices other than 0 to 3.
    pub fn set_resp(&self, idx: usize, v: u32) {
        // SAFETY: By the type invariant the command is valid.
        let resp = unsafe { addr_of_mut!((*self.raw()).resp) };
        // SAFETY: `resp` is the command's response array; the write is bounds checked.
        if let Some(r) = unsafe { (*resp).get_mut(idx) } {
            *r = v;
        }
    }
}

/// The data phase (`struct mmc_data`) of a request.
///
/// # Invariants
///
/// Wraps valid data for the lifetime of the reference.
#[repr(transparent)]
pub struct Data(Opaque<bindings::mmc_data>);

impl Data {
    /// Creates a reference to a [`Data`] from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid data for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut bindings::mmc_data) -> &'a Self {
        // SAFETY: Transparent wrapper of a valid `struct mmc_data` (safety requirements).
        unsafe { &*ptr.cast() }
    }

    fn raw(&self) -> *mut bindings::mmc_data {
        self.0.get()
    }

    /// Returns the block size in bytes.
    pub fn blksz(&self) -> u32 {
        // SAFETY: By the type invariant the data is valid.
        unsafe { (*self.raw()).blksz }
    }

    /// Returns the number of blocks.
    pub fn blocks(&self) -> u32 {
        // SAFETY: By the type invariant the data is valid.
        unsafe { (*self.raw()).blocks }
    }

    /// Returns the total length, `blksz * blocks`, in bytes (saturated).
    pub fn len(&self) -> u32 {
        self.blksz().saturating_mul(self.blocks())
    }

    /// Returns whether the transfer has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Returns the card's data timeout for this transfer as `(timeout_ns, timeout_clks)`.
    ///
    /// The timeout is `timeout_ns` plus `timeout_clks` bus clocks.
    pub fn timeout(&self) -> (u32, u32) {
        // SAFETY: By the type invariant the data is valid.
        unsafe { ((*self.raw()).timeout_ns, (*self.raw()).timeout_clks) }
    }

    fn flags(&self) -> u32 {
        // SAFETY: By the type invariant the data is valid.
        unsafe { (*self.raw()).flags }
    }

    /// Returns whether the data goes from host to card (`MMC_DATA_WRITE`).
    pub fn is_write(&self) -> bool {
        self.flags() & bindings::MMC_DATA_WRITE != 0
    }

    /// Returns whether the data goes from card to host (`MMC_DATA_READ`).
    pub fn is_read(&self) -> bool {
        self.flags() & bindings::MMC_DATA_READ != 0
    }

    /// Returns the data error, if any.
    pub fn error(&self) -> Option<Error> {
        // SAFETY: By the type invariant the data is valid.
        errno(unsafe { (*self.raw()).error })
    }

    /// Sets the data error.
    pub fn set_error(&self, e: Error) {
        // SAFETY: By the type invariant the data is valid; the core does not look at it before
        // the request completes.
        unsafe { (*self.raw()).error = e.to_errno() };
    }

    /// Sets the number of bytes transferred.
    pub fn set_bytes_xfered(&self, n: u32) {
        // SAFETY: As for `set_error`.
        unsafe { (*self.raw()).bytes_xfered = n };
    }

    /// Returns the driver's cookie (`data->host_cookie`), kept from `pre_req` to `post_req`.
    pub fn host_cookie(&self) -> i32 {
        // SAFETY: By the type invariant the data is valid.
        unsafe { (*self.raw()).host_cookie }
    }

    /// Sets the driver's cookie, which the core never interprets.
    ///
    /// The value is 0 (nothing kept) or a positive value of the driver's. Negative values are
    /// ignored, and so is any value while the cookie is negative: those belong to the DMA
    /// mapping made in `pre_req` (`kernel::dma::pre_map`), which marks the data with one, so
    /// that only it can say, or unsay, that data is mapped.
    pub fn set_host_cookie(&self, v: i32) {
        // Neither a negative value nor over one: the mapping's mark stays until it is unmapped.
        if v >= 0 && self.host_cookie() >= 0 {
            // SAFETY: By the type invariant the data is valid; the field belongs to the host
            // driver.
            unsafe { (*self.raw()).host_cookie = v };
        }
    }

    /// Returns the address of the cookie, for the `pre_req` mapping's mark (`super::dma`).
    pub(super) fn cookie_ptr(&self) -> NonNull<c_int> {
        // SAFETY: By the type invariant the data is valid, so the address of its field is not
        // NULL.
        unsafe { NonNull::new_unchecked(&raw mut (*self.raw()).host_cookie) }
    }

    /// Returns the number of entries of the data's scatterlist.
    pub fn sg_len(&self) -> u32 {
        self.sg_list().len()
    }

    /// Returns the offset into its page of the scatterlist's first entry (`sg->offset`).
    ///
    /// Returns 0 for an empty list. The offset gives the low bits of the DMA address the entry
    /// maps to, with or without an IOMMU (which maps whole pages).
    pub fn sg_first_offset(&self) -> u32 {
        self.sg_list().first_offset()
    }

    /// Returns the data's scatterlist, for its DMA mapping and copies ([`super::DmaRequest`]).
    pub(super) fn sg_list(&self) -> SgList<'_> {
        // SAFETY: By the type invariant the data is valid.
        let (sg, nents) = unsafe { ((*self.raw()).sg, (*self.raw()).sg_len) };
        // INVARIANT: The data's scatterlist lives as long as the data, i.e. as long as `self`
        // is borrowed.
        SgList {
            sg,
            nents,
            _data: PhantomData,
        }
    }
}

/// The scatterlist of a request's data (`data->sg`, `data->sg_len`).
///
/// # Invariants
///
/// `sg` points to `nents` valid, chained scatterlist entries for `'a`.
#[derive(Clone, Copy)]
pub(super) struct SgList<'a> {
    sg: *mut bindings::scatterlist,
    nents: u32,
    _data: PhantomData<&'a Data>,
}

impl SgList<'_> {
    /// Returns the number of entries.
    pub(super) fn len(&self) -> u32 {
        self.nents
    }

    /// Returns the offset into its page of the first entry's memory (`sg->offset`), 0 for an
    /// empty list.
    fn first_offset(&self) -> u32 {
        if self.nents == 0 {
            return 0;
        }
        // SAFETY: By the type invariant `sg` points to `nents` > 0 valid entries.
        unsafe { (*self.sg).offset }
    }

    /// Returns the first entry, for the DMA mapping of [`super::dma`].
    ///
    /// The entry is valid (by the type invariant) for as long as the list is borrowed.
    pub(super) fn as_raw(&self) -> *mut bindings::scatterlist {
        self.sg
    }
}

fn errno(e: c_int) -> Option<Error> {
    (e != 0).then(|| Error::from_errno(e))
}

#[cfg(CONFIG_RUST_MMC_KUNIT_TEST)]
#[kernel::macros::kunit_tests(rust_kernel_mmc_request)]
mod tests {
    use super::*;
    use crate::kernel_ext::out_of_tree::DeviceAsRaw as _;
    use core::sync::atomic::{
        AtomicI32,
        Ordering::Relaxed, //
    };
    use kernel::{
        c_str,
        device::{
            Bound,
            Device, //
        },
        faux, //
    };

    /// The command error `mrq->done` saw, [`NOT_DONE`] before it ran.
    static SEEN: AtomicI32 = AtomicI32::new(NOT_DONE);
    const NOT_DONE: i32 = i32::MIN;

    /// Records the command error of a completed request in `SEEN`.
    ///
    /// # Safety
    ///
    /// Only `mmc_request_done()` calls this, with a request whose command is valid.
    unsafe extern "C" fn record_done(mrq: *mut bindings::mmc_request) {
        // SAFETY: The core passes the request being completed; its command is valid.
        SEEN.store(unsafe { (*(*mrq).cmd).error }, Relaxed);
    }

    /// Completes a request of one command whose error is `preset` through `complete`.
    ///
    /// The request is one of a real host (of a faux device). Returns the error its `done`
    /// callback saw.
    fn complete_fake(preset: i32, complete: impl FnOnce(Request)) -> Result<i32> {
        let parent = faux::Registration::new(c_str!("rust-mmc-request-test"), None)?;
        let faux_dev: &faux::Device<Bound> = parent.as_ref();
        let dev: &Device<Bound> = faux_dev.as_ref();
        let extra = c_int::try_from(size_of::<*mut bindings::device>())?;
        // SAFETY: `dev` is a valid, bound device, alive until the host is freed below.
        let host =
            NonNull::new(unsafe { bindings::mmc_alloc_host(extra, dev.as_raw()) }).ok_or(ENOMEM)?;
        // SAFETY: The private area has room for the device a host of this layer starts it with.
        unsafe {
            (&raw mut (*host.as_ptr()).private)
                .cast::<*mut bindings::device>()
                .write(dev.as_raw())
        };
        let mut cmd: KBox<bindings::mmc_command> = KBox::new(Default::default(), GFP_KERNEL)?;
        cmd.error = preset;
        let mut mrq: KBox<bindings::mmc_request> = KBox::new(Default::default(), GFP_KERNEL)?;
        mrq.cmd = &raw mut *cmd;
        mrq.done = Some(record_done);
        SEEN.store(NOT_DONE, Relaxed);
        let raw: &mut bindings::mmc_request = &mut mrq;
        // SAFETY: `mrq` is a request of one command, not in flight elsewhere, and outlives the
        // `Request`, which `complete` consumes; `host` is a live host.
        complete(unsafe { Request::from_raw(host, NonNull::from(raw)) });
        // SAFETY: `host` was allocated above, never added, and nothing uses it any more.
        unsafe { bindings::mmc_free_host(host.as_ptr()) };
        Ok(SEEN.load(Relaxed))
    }

    #[test]
    fn done_completes_with_the_errors_set() -> Result {
        assert_eq!(complete_fake(0, Request::done)?, 0);
        assert_eq!(
            complete_fake(ETIMEDOUT.to_errno(), Request::done)?,
            ETIMEDOUT.to_errno()
        );
        Ok(())
    }

    #[test]
    fn a_dropped_request_completes_as_failed() -> Result {
        assert_eq!(complete_fake(0, drop)?, EIO.to_errno());
        assert_eq!(complete_fake(EILSEQ.to_errno(), drop)?, EILSEQ.to_errno());
        Ok(())
    }
}
