// SPDX-License-Identifier: GPL-2.0

//! MMC host allocation, registration and callbacks (`struct mmc_host`, `struct mmc_host_ops`).
//!
//! C header: [`include/linux/mmc/host.h`](srctree/include/linux/mmc/host.h)

use core::{
    marker::PhantomData,
    mem::ManuallyDrop,
    ptr::NonNull, //
};

use kernel::{
    device::{
        Bound,
        Device, //
    },
    devres,
    error::{
        from_result,
        to_result,
        VTABLE_DEFAULT_ERROR, //
    },
    prelude::*,
    sync::aref::ARef,
    types::Opaque, //
};

use super::{
    Caps,
    Ios,
    PostReqRequest,
    PreReqRequest,
    Request, //
};
use crate::bindings;
use crate::kernel_ext::out_of_tree::DeviceAsRaw as _;
#[cfg(CONFIG_OF_ADDRESS)]
use crate::kernel_ext::platform::of_child;

/// The callbacks of an MMC host controller (`struct mmc_host_ops`).
///
/// They are implemented by the driver data, which lives in the host's private area. Every
/// callback runs in process context and may sleep: `post_req` too, since [`Caps`] has no
/// `MMC_CAP_DONE_COMPLETE` (with it the core would call `post_req` from the context that
/// completes a request). What may run at the same time:
///
/// - Every callback but `pre_req`, `post_req`, `get_cd` and `get_ro` is called with the host
///   claimed (`mmc_claim_host()`), so never two of them at once; but a request started by `request`
///   is still in flight after `request` returns, so the driver's own completion path (its
///   interrupt handlers, a timeout work) runs concurrently with all of them.
/// - `pre_req` prepares the next request while the previous one is in flight, and `post_req`
///   cleans up a request after it completed, possibly while the next one is in flight: both
///   run concurrently with the completion path of another request.
/// - `get_cd` and `get_ro` may be called without the host claimed (card detection, sysfs),
///   concurrently with any other callback.
///
/// The data is therefore `Send + Sync`. Only the callbacks an implementation overrides are
/// installed, except `get_cd`/`get_ro`, which default to the slot-gpio helpers
/// (`mmc_gpio_get_cd()`/`mmc_gpio_get_ro()`).
#[vtable]
pub trait HostOps: Send + Sync + Sized {
    /// Starts `mrq`, which the driver completes with [`Request::done`].
    fn request(host: &Host<Self>, mrq: Request);

    /// Applies bus settings.
    fn set_ios(host: &Host<Self>, ios: &Ios);

    /// Prepares `mrq` while the previous request is still in flight.
    fn pre_req(_host: &Host<Self>, _mrq: &PreReqRequest) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Cleans up after `mrq` once the core has taken its result.
    ///
    /// `error` is the request's. A mapping of its data made by
    /// [`PreReqRequest::pre_map`] in `pre_req` is undone before this runs, whether or not a
    /// driver implements it; the request given here cannot map it again.
    fn post_req(_host: &Host<Self>, _mrq: &PostReqRequest, _error: Option<Error>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Returns whether the card holds DAT0 low.
    fn card_busy(_host: &Host<Self>) -> bool {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Runs the tuning procedure for the tuning command `opcode`.
    fn execute_tuning(_host: &Host<Self>, _tuning: &Tuning<'_>, _opcode: u32) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Switches the signalling voltage to the one in `ios`.
    fn start_signal_voltage_switch(_host: &Host<Self>, _ios: &Ios) -> Result {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Resets the card through its reset line.
    fn card_hw_reset(_host: &Host<Self>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Returns whether a card is present, or `None` if that is unknown.
    fn get_cd(_host: &Host<Self>) -> Option<bool> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Returns whether the card is write protected, or `None` if that is unknown.
    fn get_ro(_host: &Host<Self>) -> Option<bool> {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Enables or disables the SDIO card interrupt.
    ///
    /// Called with the host claimed: the core enables the interrupt when a function claims it
    /// and disables it when the last one releases it; it stays enabled across requests.
    fn enable_sdio_irq(_host: &Host<Self>, _enable: bool) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }

    /// Re-enables the SDIO card interrupt after the core has handled a signalled one.
    ///
    /// Called with the host claimed, once the core has run the functions' handlers for the
    /// interrupt the host signalled ([`super::SdioIrqSignal`]) and masked.
    fn ack_sdio_irq(_host: &Host<Self>) {
        build_error!(VTABLE_DEFAULT_ERROR)
    }
}

/// Limits and capabilities of a host, written to `struct mmc_host` before registration.
pub struct HostConfig {
    /// Lowest bus clock, in Hz.
    pub f_min: u32,
    /// Highest bus clock, in Hz.
    pub f_max: u32,
    /// Largest request, in bytes.
    pub max_req_size: u32,
    /// Largest DMA segment, in bytes.
    pub max_seg_size: u32,
    /// Most DMA segments in a request.
    pub max_segs: u16,
    /// Most blocks in a request.
    pub max_blk_count: u32,
    /// Largest block, in bytes.
    pub max_blk_size: u32,
    /// Longest busy wait the host can do in hardware, in milliseconds.
    pub max_busy_timeout: u32,
    /// Maximum current at 1.8V, in mA.
    pub max_current_180: u32,
    /// Maximum current at 3.3V, in mA.
    pub max_current_330: u32,
    /// Capabilities added to those already set (e.g. by the device tree).
    pub caps: Caps,
}

/// The private area of a host of this layer: the bound device it belongs to, then the driver data.
///
/// `repr(C)`: the device is at the start whatever `T`, so that [`bound_device`] finds it from the
/// host alone.
#[repr(C)]
struct Private<T> {
    /// The bound device whose devres holds the host's registration ([`UnregisteredHost::new`]'s
    /// `dev`).
    bound: *mut bindings::device,
    data: T,
}

/// Returns a pointer to the private area of `host`.
///
/// # Safety
///
/// `host` must be a valid host allocated with room for a `Private<T>` in its private area.
unsafe fn private_ptr<T: HostOps>(host: *mut bindings::mmc_host) -> *mut Private<T> {
    // SAFETY: `private` is the trailing flexible array of a valid host (safety requirements).
    unsafe { &raw mut (*host).private }.cast::<Private<T>>()
}

/// Returns a pointer to the driver data in the private area of `host`.
///
/// # Safety
///
/// `host` must be a valid host allocated with room for a `Private<T>` in its private area.
unsafe fn priv_ptr<T: HostOps>(host: *mut bindings::mmc_host) -> *mut T {
    // SAFETY: The private area holds a `Private<T>` (safety requirements).
    unsafe { &raw mut (*private_ptr::<T>(host)).data }
}

/// Returns the bound device a host of this layer belongs to, whose devres holds its registration.
///
/// It is bound while the host is registered: the devres of the device removes the host (which
/// waits for its callbacks and requests) before the device's unbinding goes past it, as the
/// handler of an interrupt requested through devres is given the device bound.
///
/// # Safety
///
/// `host` must be a host allocated by [`UnregisteredHost`] and registered for `'a`: a callback of
/// it runs, or a request of it is in flight, during `'a`.
pub(super) unsafe fn bound_device<'a>(host: NonNull<bindings::mmc_host>) -> &'a Device<Bound> {
    // SAFETY: The private area of a host of this layer starts with its bound device (`Private`,
    // `repr(C)`), written before the host was added and never changed.
    let dev = unsafe {
        (&raw const (*host.as_ptr()).private)
            .cast::<*mut bindings::device>()
            .read()
    };
    // SAFETY: The device is valid and bound while the host is registered, during `'a` (safety
    // requirements, and the devres of the device holds the registration).
    unsafe { Device::<Bound>::from_raw(dev) }
}

/// An allocated host with its driver data initialised, not registered yet.
///
/// The host borrows the bound device `'a` it belongs to: `mmc_alloc_host()` records the host's
/// parent without taking a reference to it, and freeing the host reads it
/// (`mmc_host_classdev_release()`), so the host must be freed while the parent is there. The
/// parent is that device ([`UnregisteredHost::new`]), or a device of its own the host holds a
/// reference of ([`UnregisteredHost::new_for_child`]).
///
/// # Invariants
///
/// `host` was returned by `mmc_alloc_host()` with `child` as its parent, or `parent` when
/// `child` is `None`, is owned by this object and not added; its private area holds a
/// `Private<T>` whose device is `parent` and whose `T` is initialised and pinned.
pub struct UnregisteredHost<'a, T: HostOps> {
    pub(super) host: NonNull<bindings::mmc_host>,
    pub(super) parent: &'a Device<Bound>,
    child: Option<ARef<Device>>,
    _data: PhantomData<T>,
}

impl<'a, T: HostOps> UnregisteredHost<'a, T> {
    /// Returns the host's parent device: the child it was allocated for, or else the bound
    /// device.
    pub(super) fn host_parent(&self) -> &Device {
        self.child.as_deref().unwrap_or(self.parent)
    }

    /// Allocates a host for `dev` (`mmc_alloc_host()`) with `data` in its private area.
    ///
    /// `dev` becomes the host's parent; the driver data stays pinned until the host is freed.
    pub fn new(dev: &'a Device<Bound>, data: impl PinInit<T, Error>) -> Result<Self> {
        Self::alloc(dev, None, data)
    }

    /// Allocates a host whose parent is `child`'s device, a device that belongs to the bound
    /// device `child.parent()` (the slot of a controller, `kernel::platform::of_child::create()`),
    /// with `data` in its private area.
    ///
    /// The child's device is the host's device for the MMC core (`mmc_dev()`): its device tree
    /// node is the one [`Self::of_parse`] reads, its supplies [`Self::regulator_get_supply`] gets,
    /// and the data of requests is mapped for its DMA. The host holds a reference of it until it
    /// is freed; as with [`Self::new`], its registration belongs to the devres of the bound
    /// device.
    ///
    /// `child` proves that the child's device stays registered while the bound device is: the
    /// bound device's devres destroys it when it is unbound, after removing the host, whose
    /// registration it got later. Where the layer requires a host's parent to be there (the DMA
    /// mappings of [`DmaRequest`](super::DmaRequest)), a child parent is registered.
    #[cfg(CONFIG_OF_ADDRESS)]
    pub fn new_for_child(
        child: &of_child::Child<'a>,
        data: impl PinInit<T, Error>,
    ) -> Result<Self> {
        Self::alloc(child.parent(), Some(child.device().into()), data)
    }

    fn alloc(
        dev: &'a Device<Bound>,
        child: Option<ARef<Device>>,
        data: impl PinInit<T, Error>,
    ) -> Result<Self> {
        let extra = c_int::try_from(size_of::<Private<T>>())?;
        let parent = child.as_ref().map_or(dev.as_raw(), |c| c.as_raw());
        // SAFETY: `parent` is a valid device: `dev`, bound, or `child`, a reference of which is
        // held. `mmc_alloc_host()` stores it as the host's parent without taking a reference;
        // the returned object borrows `dev` for `'a` and holds `child`, and frees the host (which
        // reads the parent) on drop, within `'a`, before `child` is put.
        let raw = unsafe { bindings::mmc_alloc_host(extra, parent) };
        let host = NonNull::new(raw).ok_or(ENOMEM)?;
        // SAFETY: `host` was allocated with `size_of::<Private<T>>()` bytes of private area.
        let private = unsafe { private_ptr::<T>(host.as_ptr()) };
        // The private area is `____cacheline_aligned`; check rather than assume.
        let aligned = private.cast::<u8>().align_offset(align_of::<Private<T>>()) == 0;
        let init = aligned.then(|| {
            // SAFETY: `private` is valid for writes of a `Private<T>` and aligned; the host is not
            // shared, so the data never moves before `Registration` (or `Self::drop`) drops it in
            // place, before freeing the host.
            unsafe {
                (&raw mut (*private).bound).write(dev.as_raw());
                pin_init::raw_try_init(&raw mut (*private).data, data)
            }
        });
        if !matches!(init, Some(Ok(()))) {
            // SAFETY: The host was allocated above and never added; no `T` lives in it.
            unsafe { bindings::mmc_free_host(host.as_ptr()) };
            return Err(init.map_or(EINVAL, |r| r.err().unwrap_or(EINVAL)));
        }
        // INVARIANT: Allocated with `child`, or else `dev`, as parent, initialised with `dev` as
        // its bound device, not added.
        Ok(Self {
            host,
            parent: dev,
            child,
            _data: PhantomData,
        })
    }

    pub(super) fn raw(&self) -> *mut bindings::mmc_host {
        self.host.as_ptr()
    }

    /// Writes the host's limits and capabilities.
    pub fn configure(&mut self, cfg: &HostConfig) {
        let h = self.raw();
        // SAFETY: By the type invariant the host is valid and not added, so the core reads none
        // of these fields yet. Each is written through the raw pointer: no `&mut` to the host is
        // made, as handles of it given to other threads may read it.
        unsafe {
            (*h).f_min = cfg.f_min;
            (*h).f_max = cfg.f_max;
            (*h).max_req_size = cfg.max_req_size;
            (*h).max_seg_size = cfg.max_seg_size;
            (*h).max_segs = cfg.max_segs;
            (*h).max_blk_count = cfg.max_blk_count;
            (*h).max_blk_size = cfg.max_blk_size;
            (*h).max_busy_timeout = cfg.max_busy_timeout;
            (*h).max_current_180 = cfg.max_current_180;
            (*h).max_current_330 = cfg.max_current_330;
            (*h).caps |= cfg.caps.bits();
        }
    }

    /// Parses the generic MMC device tree properties (`mmc_of_parse()`).
    ///
    /// These are the bus width, the card detect and write protect GPIOs, the speed modes, ...
    pub fn of_parse(&mut self) -> Result {
        // SAFETY: By the type invariant the host is valid and not registered.
        to_result(unsafe { bindings::mmc_of_parse(self.raw()) })
    }

    /// Gets the optional vmmc/vqmmc regulators and the OCR mask (`mmc_regulator_get_supply()`).
    pub fn regulator_get_supply(&mut self) -> Result {
        // SAFETY: By the type invariant the host is valid and not registered.
        to_result(unsafe { bindings::mmc_regulator_get_supply(self.raw()) })
    }

    /// Returns the voltages the host can give a card (`ocr_avail`).
    ///
    /// Returns 0 when there is no way to power a card.
    pub fn ocr_avail(&self) -> u32 {
        // SAFETY: By the type invariant the host is valid.
        unsafe { (*self.raw()).ocr_avail }
    }

    /// Installs `T`'s callbacks and adds the host (`mmc_add_host()`).
    ///
    /// The MMC core calls the callbacks from then on, until the parent device is unbound.
    ///
    /// The host's removal belongs to the parent's devres: when the parent is unbound (or at once,
    /// if handing it to devres fails) the host is removed (`mmc_remove_host()`: no request in
    /// flight and no callback running afterwards), the driver data dropped in place and the
    /// host freed. The driver data therefore borrows
    /// nothing (`T: 'static`).
    ///
    /// The driver core drops the bound driver's data (`platform::Driver::Data`) before it
    /// releases the device's devres, so the callbacks may run after that data is gone: whatever
    /// they use (clocks, mappings, buffers) belongs to `T`, not to the driver's data.
    ///
    /// The parent device's DMA segment limit becomes the host's `max_seg_size` when the parent
    /// has DMA parameters.
    ///
    /// Returns a [`RegisteredHost`], what the driver may do with the host while it probes.
    pub fn register(mut self) -> Result<RegisteredHost<'a, T>>
    where
        T: 'static,
    {
        self.settle_sdio_irq_caps();
        let h = self.raw();
        // SAFETY: The host is valid and not added, so nothing reads `ops` concurrently; the
        // table is a `'static` constant.
        unsafe { (*h).ops = &Adapter::<T>::VTABLE };
        let parent = self.host_parent().as_raw();
        // SAFETY: `parent` is the parent device of the host, bound or held (type invariant), so
        // it is valid; `dma_parms` is set when the device is created and not changed after.
        if !unsafe { (*parent).dma_parms }.is_null() {
            // SAFETY: `parent` is valid and has `dma_parms`, without which the helper warns. The
            // MMC core itself writes this limit, unsynchronized, for each memory card's queue
            // while the host runs, and only under the same condition (`mmc_setup_queue()`): a
            // host's DMA never relies on it staying put. Written here for cards without a queue
            // (SDIO), with the value the core writes for one with a queue, before the host has
            // any card.
            unsafe { bindings::dma_set_max_seg_size(parent, (*h).max_seg_size) };
        }
        // SAFETY: The host is fully set up and its callbacks find their data.
        to_result(unsafe { bindings::mmc_add_host(h) })?;
        let mut this = ManuallyDrop::new(self);
        // INVARIANT: Added with `T`'s callbacks; the private area holds the `T`; `child` is the
        // parent, when there is one.
        let registration = Registration {
            host: this.host,
            _child: this.child.take(),
            _data: PhantomData::<T>,
        };
        // The parent is bound (type invariant); devres drops the registration when it is
        // unbound, while the parent the host's release reads is still there.
        devres::register(this.parent, registration, GFP_KERNEL)?;
        // INVARIANT: Added with `T`'s callbacks just now; its removal belongs to the parent's
        // devres, which does not release it while the parent is bound, during `'a`.
        Ok(RegisteredHost {
            host: this.host,
            _parent: PhantomData,
            _data: PhantomData,
        })
    }
}

/// A host [`UnregisteredHost::register`] added, while its parent is bound.
///
/// # Invariants
///
/// `host` was added with `T`'s callbacks and its private area holds a pinned `T`; it is not
/// being removed during `'a` (the parent's devres removes it, when the parent is unbound).
pub struct RegisteredHost<'a, T: HostOps> {
    pub(super) host: NonNull<bindings::mmc_host>,
    _parent: PhantomData<&'a Device<Bound>>,
    _data: PhantomData<T>,
}

impl<T: HostOps> RegisteredHost<'_, T> {
    /// Returns the host as its callbacks see it.
    pub fn host(&self) -> &Host<T> {
        // SAFETY: By the type invariant the host is added with `T`'s callbacks, holds its `T`,
        // and is not removed, so not freed, while `self` lives.
        unsafe { Host::from_raw(self.host.as_ptr()) }
    }
}

impl<T: HostOps> Drop for UnregisteredHost<'_, T> {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the host was never added and holds a `T`, which nothing
        // uses: only an added host calls its callbacks. Its parent is still there: `child` is put
        // after this.
        unsafe {
            core::ptr::drop_in_place(priv_ptr::<T>(self.raw()));
            bindings::mmc_free_host(self.raw());
        }
    }
}

// SAFETY: The host is only accessed through `&mut self`, `&self` getters of plain fields or on
// drop; `T` is `Send + Sync`.
unsafe impl<T: HostOps> Send for UnregisteredHost<'_, T> {}

/// A registered host, owned by its parent's devres ([`UnregisteredHost::register`]).
///
/// Dropping it removes the host (`mmc_remove_host()`: no request in flight and no callback
/// running afterwards), drops the driver data and frees the host.
///
/// # Invariants
///
/// `host` was added with `mmc_add_host()` with `Adapter::<T>::VTABLE`; its private area holds a
/// pinned `T`; this object owns both. It is dropped while the device it belongs to is bound; the
/// host's parent is that device, or `_child`, put after the host is freed.
struct Registration<T: HostOps> {
    host: NonNull<bindings::mmc_host>,
    _child: Option<ARef<Device>>,
    _data: PhantomData<T>,
}

impl<T: HostOps> Drop for Registration<T> {
    fn drop(&mut self) {
        let h = self.host.as_ptr();
        // SAFETY: By the type invariant the host was added. `mmc_remove_host()` returns once no
        // request is in flight and no callback runs any more.
        unsafe { bindings::mmc_remove_host(h) };
        // SAFETY: By the type invariant the private area holds a `T`. The host is removed, so
        // no callback runs and nothing else refers to the private area; it is dropped once and
        // the host freed after it.
        unsafe {
            core::ptr::drop_in_place(priv_ptr::<T>(h));
            bindings::mmc_free_host(h);
        }
    }
}

// SAFETY: Dropping removes and frees the host, which may happen on any thread; `T` is
// `Send + Sync`.
unsafe impl<T: HostOps> Send for Registration<T> {}

/// A registered host as its callbacks see it.
///
/// # Invariants
///
/// Wraps a valid host added with `T`'s callbacks whose private area holds a pinned `T`.
#[repr(transparent)]
pub struct Host<T: HostOps>(Opaque<bindings::mmc_host>, PhantomData<T>);

// SAFETY: `Host` only gives shared access to `T` (which is `Sync`) and reads plain fields.
unsafe impl<T: HostOps> Sync for Host<T> {}

impl<T: HostOps> Host<T> {
    /// Creates a reference to a [`Host`] from a raw pointer.
    ///
    /// # Safety
    ///
    /// `ptr` must be a host added with `T`'s callbacks whose private area holds its `T` for
    /// `'a`, and which is not freed during `'a`.
    pub(super) unsafe fn from_raw<'a>(ptr: *mut bindings::mmc_host) -> &'a Self {
        // SAFETY: Transparent wrapper of a valid `struct mmc_host` (safety requirements).
        unsafe { &*ptr.cast() }
    }

    pub(super) fn raw(&self) -> *mut bindings::mmc_host {
        self.0.get()
    }

    /// Returns the driver data.
    pub fn data(&self) -> Pin<&T> {
        // SAFETY: By the type invariant the private area holds a pinned `T`.
        unsafe { Pin::new_unchecked(&*priv_ptr::<T>(self.raw())) }
    }

    /// Tells the core a card may have been inserted or removed.
    ///
    /// It scans the slot `delay_ms` milliseconds later (`mmc_detect_change()`).
    ///
    /// For a controller's own card-detect interrupt; a card-detect GPIO of the device tree
    /// (`cd-gpios`, [`UnregisteredHost::of_parse`]) has the core's interrupt and `get_cd`.
    pub fn detect_change(&self, delay_ms: u32) {
        // SAFETY: By the type invariant the host is valid and added; `mmc_detect_change()` only
        // queues the core's detect work and may be called from any context.
        unsafe {
            bindings::mmc_detect_change(self.raw(), kernel::time::msecs_to_jiffies(delay_ms))
        };
    }
}

/// The right to send tuning blocks, which only [`HostOps::execute_tuning`] receives.
///
/// `mmc_send_tuning()` issues a request through the host's own `request` callback, so it must
/// not be called from `request` or `set_ios`, where it would deadlock.
///
/// # Invariants
///
/// `host` is a registered host whose `execute_tuning` callback is running.
pub struct Tuning<'a> {
    host: NonNull<bindings::mmc_host>,
    _callback: PhantomData<&'a ()>,
}

impl Tuning<'_> {
    /// Sends one tuning block (`mmc_send_tuning()`).
    pub fn send(&self, opcode: u32) -> Result {
        // SAFETY: By the type invariant the host is valid and in `execute_tuning`, where
        // sending tuning commands is allowed; a NULL `cmd_error` is allowed.
        to_result(unsafe {
            bindings::mmc_send_tuning(self.host.as_ptr(), opcode, core::ptr::null_mut())
        })
    }
}

/// The `struct mmc_host_ops` of a [`HostOps`] implementation.
pub(super) struct Adapter<T>(PhantomData<T>);

impl<T: HostOps> Adapter<T> {
    const VTABLE: bindings::mmc_host_ops = bindings::mmc_host_ops {
        request: Some(Self::request),
        set_ios: Some(Self::set_ios),
        pre_req: if T::HAS_PRE_REQ {
            Some(Self::pre_req)
        } else {
            None
        },
        // A mapping `pre_req` made is undone in `post_req` whatever the driver's `post_req` does.
        post_req: if T::HAS_PRE_REQ || T::HAS_POST_REQ {
            Some(Self::post_req)
        } else {
            None
        },
        card_busy: if T::HAS_CARD_BUSY {
            Some(Self::card_busy)
        } else {
            None
        },
        execute_tuning: if T::HAS_EXECUTE_TUNING {
            Some(Self::execute_tuning)
        } else {
            None
        },
        start_signal_voltage_switch: if T::HAS_START_SIGNAL_VOLTAGE_SWITCH {
            Some(Self::voltage_switch)
        } else {
            None
        },
        card_hw_reset: if T::HAS_CARD_HW_RESET {
            Some(Self::card_hw_reset)
        } else {
            None
        },
        get_cd: if T::HAS_GET_CD {
            Some(Self::get_cd)
        } else {
            Some(bindings::mmc_gpio_get_cd)
        },
        get_ro: if T::HAS_GET_RO {
            Some(Self::get_ro)
        } else {
            Some(bindings::mmc_gpio_get_ro)
        },
        enable_sdio_irq: if T::HAS_ENABLE_SDIO_IRQ {
            Some(Self::enable_sdio_irq)
        } else {
            None
        },
        ack_sdio_irq: if T::HAS_ACK_SDIO_IRQ {
            Some(Self::ack_sdio_irq)
        } else {
            None
        },
        ..pin_init::zeroed()
    };

    /// Returns the [`Host`] a callback was called for.
    ///
    /// # Safety
    ///
    /// `host` must be registered with `T`, and one of its callbacks running.
    pub(super) unsafe fn host<'a>(host: *mut bindings::mmc_host) -> &'a Host<T> {
        // SAFETY: A host stays registered while its callbacks run.
        unsafe { Host::from_raw(host) }
    }

    /// Calls [`HostOps::request`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T` and a new request.
    unsafe extern "C" fn request(host: *mut bindings::mmc_host, mrq: *mut bindings::mmc_request) {
        // SAFETY: The core passes its host and a request, neither NULL.
        let (hp, mrq) = unsafe { (NonNull::new_unchecked(host), NonNull::new_unchecked(mrq)) };
        // SAFETY: The core hands over a new request of this registered host.
        let mrq = unsafe { Request::from_raw(hp, mrq) };
        // SAFETY: Called by the MMC core on a host registered with `T`.
        T::request(unsafe { Self::host(host) }, mrq);
    }

    /// Calls [`HostOps::set_ios`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T` and valid settings.
    unsafe extern "C" fn set_ios(host: *mut bindings::mmc_host, ios: *mut bindings::mmc_ios) {
        // SAFETY: The core passes its host, not NULL.
        let hp = unsafe { NonNull::new_unchecked(host) };
        // SAFETY: This is `set_ios`, called by the core with the host claimed and its valid
        // settings.
        let ios = unsafe { Ios::from_raw(hp, ios) };
        // SAFETY: Called by the MMC core on a host registered with `T`.
        T::set_ios(unsafe { Self::host(host) }, &ios);
    }

    /// Calls [`HostOps::pre_req`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T` and a valid request.
    unsafe extern "C" fn pre_req(host: *mut bindings::mmc_host, mrq: *mut bindings::mmc_request) {
        // SAFETY: The core passes its host and a request, neither NULL.
        let (hp, mp) = unsafe { (NonNull::new_unchecked(host), NonNull::new_unchecked(mrq)) };
        // SAFETY: The request is valid during the callback and not started yet; the object
        // does not outlive the callback.
        let mrq = unsafe { PreReqRequest::new(hp, mp) };
        // SAFETY: Called by the MMC core on a host registered with `T`.
        T::pre_req(unsafe { Self::host(host) }, &mrq);
    }

    /// Calls [`HostOps::post_req`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T` and a valid request.
    unsafe extern "C" fn post_req(
        host: *mut bindings::mmc_host,
        mrq: *mut bindings::mmc_request,
        err: c_int,
    ) {
        // SAFETY: The core passes its host and a request, neither NULL.
        let (hp, mp) = unsafe { (NonNull::new_unchecked(host), NonNull::new_unchecked(mrq)) };
        // SAFETY: The request is valid during the callback and completed (or never started);
        // the object does not outlive the callback.
        let mrq = unsafe { PostReqRequest::new(hp, mp) };
        // Before the driver's `post_req`, which may copy into the data's pages with the CPU.
        mrq.unmap_pre_mapped();
        if T::HAS_POST_REQ {
            let error = (err != 0).then(|| Error::from_errno(err));
            // SAFETY: Called by the MMC core on a host registered with `T`.
            T::post_req(unsafe { Self::host(host) }, &mrq, error);
        }
    }

    /// Calls [`HostOps::card_busy`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T`.
    unsafe extern "C" fn card_busy(host: *mut bindings::mmc_host) -> c_int {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        c_int::from(T::card_busy(unsafe { Self::host(host) }))
    }

    /// Calls [`HostOps::execute_tuning`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T`.
    unsafe extern "C" fn execute_tuning(host: *mut bindings::mmc_host, opcode: u32) -> c_int {
        // SAFETY: The core passes its host, not NULL.
        let hp = unsafe { NonNull::new_unchecked(host) };
        // INVARIANT: `execute_tuning` of a registered host is running.
        let tuning = Tuning {
            host: hp,
            _callback: PhantomData,
        };
        // SAFETY: Called by the MMC core on a host registered with `T`.
        let h = unsafe { Self::host(host) };
        from_result(|| T::execute_tuning(h, &tuning, opcode).map(|()| 0))
    }

    /// Calls [`HostOps::start_signal_voltage_switch`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T` and valid settings.
    unsafe extern "C" fn voltage_switch(
        host: *mut bindings::mmc_host,
        ios: *mut bindings::mmc_ios,
    ) -> c_int {
        // SAFETY: The core passes its host, not NULL.
        let hp = unsafe { NonNull::new_unchecked(host) };
        // SAFETY: The core holds the host claimed and passes its valid settings; the switch is
        // serialized with `set_ios`.
        let ios = unsafe { Ios::from_raw(hp, ios) };
        // SAFETY: Called by the MMC core on a host registered with `T`.
        let h = unsafe { Self::host(host) };
        from_result(|| T::start_signal_voltage_switch(h, &ios).map(|()| 0))
    }

    /// Calls [`HostOps::card_hw_reset`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T`.
    unsafe extern "C" fn card_hw_reset(host: *mut bindings::mmc_host) {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        T::card_hw_reset(unsafe { Self::host(host) });
    }

    /// Calls [`HostOps::get_cd`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T`.
    unsafe extern "C" fn get_cd(host: *mut bindings::mmc_host) -> c_int {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        tristate(T::get_cd(unsafe { Self::host(host) }))
    }

    /// Calls [`HostOps::get_ro`] of `T` for the MMC core.
    ///
    /// # Safety
    ///
    /// Only the MMC core calls this, with a host registered with `T`.
    unsafe extern "C" fn get_ro(host: *mut bindings::mmc_host) -> c_int {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        tristate(T::get_ro(unsafe { Self::host(host) }))
    }
}

/// Converts an answer to the C convention of `get_cd`/`get_ro`.
///
/// 1 yes, 0 no, negative unknown.
fn tristate(v: Option<bool>) -> c_int {
    match v {
        Some(true) => 1,
        Some(false) => 0,
        None => ENOSYS.to_errno(),
    }
}
