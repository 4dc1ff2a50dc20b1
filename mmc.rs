// SPDX-License-Identifier: GPL-2.0

//! Minimal safe binding of the MMC host API (`include/linux/mmc/host.h`).
//!
//! This file and `clkc.rs` are the only places of the driver that touch raw
//! C pointers. It provides:
//!
//! - [`UnregisteredHost`]: an allocated `struct mmc_host` (`mmc_alloc_host()`)
//!   that can be configured, parsed from the device tree and given its
//!   supplies, then registered with [`UnregisteredHost::register`].
//! - [`Registration`]: a registered host (`mmc_add_host()`); dropping it
//!   removes (`mmc_remove_host()`) and frees (`mmc_free_host()`) the host.
//! - [`HostOps`]: the `struct mmc_host_ops` callbacks as a Rust trait. The
//!   card detect and write protect callbacks are the slot-gpio helpers.
//! - [`Host`]: the view of `struct mmc_host` handed to the callbacks.
//! - [`Request`]: an owned, in-flight `struct mmc_request`, with views of its
//!   command ([`Command`]) and data ([`Data`]) and the DMA mapping of its
//!   scatterlist. Dropping it completes it (`mmc_request_done()`), so a
//!   request is completed exactly once and never left DMA-mapped.

use core::{
    marker::PhantomData,
    mem::ManuallyDrop,
    ptr::{addr_of_mut, NonNull},
};

use kernel::{
    device::{Bound, Device},
    dma::{Coherent, DataDirection},
    error::{from_result, to_result},
    prelude::*,
    sync::Arc,
    types::Opaque,
};

use crate::bindings as b;

/// `MMC_STOP_TRANSMISSION` (CMD12).
pub(crate) const MMC_STOP_TRANSMISSION: u32 = b::MMC_STOP_TRANSMISSION;
/// `SD_IO_RW_EXTENDED` (CMD53).
pub(crate) const SD_IO_RW_EXTENDED: u32 = b::SD_IO_RW_EXTENDED;
/// `MMC_CAP_WAIT_WHILE_BUSY`.
pub(crate) const CAP_WAIT_WHILE_BUSY: u32 = b::MMC_CAP_WAIT_WHILE_BUSY;
/// `MMC_CAP_HW_RESET`.
pub(crate) const CAP_HW_RESET: u32 = b::MMC_CAP_HW_RESET;

/// The host controller's callbacks (`struct mmc_host_ops`).
///
/// The MMC core serializes `request`, `set_ios`, `card_busy` and
/// `execute_tuning` (they are called with the host claimed), and all of them
/// may sleep.
pub(crate) trait HostOps: Send + Sync {
    /// Start `mrq`. The request is completed when `mrq` is dropped.
    fn request(&self, host: &Host, mrq: Request);
    /// Apply bus settings.
    fn set_ios(&self, host: &Host, ios: &Ios);
    /// Whether the card holds DAT0 low.
    fn card_busy(&self, host: &Host) -> bool;
    /// Run the tuning procedure for the given tuning command.
    fn execute_tuning(&self, host: &Host, opcode: u32) -> Result;
}

/// Limits and capabilities of a host, written to `struct mmc_host` before registration.
pub(crate) struct HostConfig {
    /// Lowest bus clock, in Hz.
    pub(crate) f_min: u32,
    /// Highest bus clock, in Hz.
    pub(crate) f_max: u32,
    /// Largest request, in bytes.
    pub(crate) max_req_size: u32,
    /// Largest DMA segment, in bytes.
    pub(crate) max_seg_size: u32,
    /// Most DMA segments in a request.
    pub(crate) max_segs: u16,
    /// Most blocks in a request.
    pub(crate) max_blk_count: u32,
    /// Largest block, in bytes.
    pub(crate) max_blk_size: u32,
    /// Longest busy wait the host can do in hardware, in milliseconds.
    pub(crate) max_busy_timeout: u32,
    /// Maximum current at 1.8V, in mA.
    pub(crate) max_current_180: u32,
    /// Maximum current at 3.3V, in mA.
    pub(crate) max_current_330: u32,
    /// `MMC_CAP_*` bits added to those already set.
    pub(crate) caps: u32,
}

/// Casts a device reference to the raw `struct device *`.
fn raw_dev<Ctx: kernel::device::DeviceContext>(dev: &Device<Ctx>) -> *mut b::device {
    // CAST: `Device<Ctx>` is a `#[repr(transparent)]` wrapper of `Opaque<struct device>`
    // (and a zero-sized marker), which itself is a transparent wrapper of `struct device`.
    core::ptr::from_ref(dev).cast::<b::device>().cast_mut()
}

/// `dma_get_merge_boundary()` of `dev`: 0 when mapping a scatterlist for it never merges
/// entries into one DMA segment (no IOMMU), otherwise the boundary mask merged segments keep.
pub(crate) fn dma_merge_boundary(dev: &Device<Bound>) -> usize {
    // SAFETY: `dev` is a valid, bound device.
    unsafe { b::dma_get_merge_boundary(raw_dev(dev)) }
}

/// An allocated, not yet registered `struct mmc_host`.
///
/// # Invariants
///
/// `host` was returned by `mmc_alloc_host()` with room for one pointer in its private area, has
/// not been added and is owned by this object.
pub(crate) struct UnregisteredHost {
    host: NonNull<b::mmc_host>,
}

impl UnregisteredHost {
    /// Allocates a host whose parent is `dev` (`mmc_alloc_host()`).
    pub(crate) fn new(dev: &Device<Bound>) -> Result<Self> {
        let extra = c_int::try_from(size_of::<*const c_void>())?;
        // SAFETY: `raw_dev(dev)` is a valid, bound device; `mmc_alloc_host()` takes its own
        // reference to it.
        let host = unsafe { b::mmc_alloc_host(extra, raw_dev(dev)) };
        // INVARIANT: a non-NULL return is a new host with `extra` bytes of private area.
        Ok(Self {
            host: NonNull::new(host).ok_or(ENOMEM)?,
        })
    }

    /// Writes limits and capabilities.
    pub(crate) fn configure(&mut self, cfg: &HostConfig) {
        let h = self.host.as_ptr();
        // SAFETY: By the type invariant `h` is a valid host that nothing else uses yet.
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
            (*h).caps |= cfg.caps;
        }
    }

    /// Parses the generic MMC device tree properties (`mmc_of_parse()`): bus width, card
    /// detect and write protect GPIOs, speed modes, ...
    pub(crate) fn of_parse(&mut self) -> Result {
        // SAFETY: By the type invariant the host is valid and not registered.
        to_result(unsafe { b::mmc_of_parse(self.host.as_ptr()) })
    }

    /// Gets the optional vmmc/vqmmc regulators and the OCR mask (`mmc_regulator_get_supply()`).
    pub(crate) fn regulator_get_supply(&mut self) -> Result {
        // SAFETY: By the type invariant the host is valid and not registered.
        to_result(unsafe { b::mmc_regulator_get_supply(self.host.as_ptr()) })
    }

    /// The voltages the host can give a card (`ocr_avail`), as the regulators (or the device
    /// tree) made them known; 0 when there is no way to power a card.
    pub(crate) fn ocr_avail(&self) -> u32 {
        // SAFETY: By the type invariant the host is valid.
        unsafe { (*self.host.as_ptr()).ocr_avail }
    }

    /// Installs `T`'s callbacks with `ops` as their data and adds the host (`mmc_add_host()`).
    ///
    /// From here on the MMC core calls the callbacks at any time until the [`Registration`] is
    /// dropped.
    pub(crate) fn register<T: HostOps>(self, ops: Arc<T>) -> Result<Registration<T>> {
        let h = self.host.as_ptr();
        let data = Arc::into_raw(ops);
        // SAFETY: By the type invariant the private area of `h` has room for one pointer and is
        // suitably aligned (`____cacheline_aligned`); the host is not registered yet, so nothing
        // reads the private area or `ops` concurrently.
        unsafe {
            priv_slot::<T>(h).write(data);
            (*h).ops = &OpsTable::<T>::VTABLE;
        }
        // SAFETY: The host is fully set up and its callbacks find their data.
        if let Err(e) = to_result(unsafe { b::mmc_add_host(h) }) {
            // SAFETY: `data` came from `Arc::into_raw` above and the failed `mmc_add_host()`
            // left no user of it.
            drop(unsafe { Arc::from_raw(data) });
            return Err(e);
        }
        // The host is now owned by the registration.
        let this = ManuallyDrop::new(self);
        // INVARIANT: `mmc_add_host()` succeeded with `T`'s callbacks and an `Arc<T>` reference
        // in the private area.
        Ok(Registration {
            host: this.host,
            _ops: PhantomData,
        })
    }
}

impl Drop for UnregisteredHost {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own the host and it was never added.
        unsafe { b::mmc_free_host(self.host.as_ptr()) };
    }
}

// SAFETY: The host is only accessed through `&mut self` or on drop; `mmc_free_host()` may be
// called from any thread.
unsafe impl Send for UnregisteredHost {}

/// A registered host.
///
/// # Invariants
///
/// `host` was added with `mmc_add_host()`, its callbacks are `OpsTable::<T>::VTABLE` and its
/// private area holds a pointer obtained from `Arc::<T>::into_raw`, owned by this object.
pub(crate) struct Registration<T: HostOps> {
    host: NonNull<b::mmc_host>,
    _ops: PhantomData<Arc<T>>,
}

impl<T: HostOps> Drop for Registration<T> {
    fn drop(&mut self) {
        let h = self.host.as_ptr();
        // SAFETY: By the type invariant the host was added. `mmc_remove_host()` stops the host
        // and returns once no request is in flight and no callback runs any more.
        unsafe { b::mmc_remove_host(h) };
        // SAFETY: By the type invariant the private area holds a pointer from `Arc::into_raw`;
        // the host is removed, so the callbacks no longer use it.
        drop(unsafe { Arc::from_raw(priv_slot::<T>(h).read()) });
        // SAFETY: The host is removed and nothing refers to it any more.
        unsafe { b::mmc_free_host(h) };
    }
}

// SAFETY: `Registration` only removes and frees the host on drop, which may happen on any
// thread; `T` is `Send + Sync` by the `HostOps` bound.
unsafe impl<T: HostOps> Send for Registration<T> {}

// SAFETY: `Registration` has no methods taking `&self`.
unsafe impl<T: HostOps> Sync for Registration<T> {}

/// The private area of `host`, holding the `*const T` callback data.
///
/// # Safety
///
/// `host` must be a valid host allocated by [`UnregisteredHost::new`].
unsafe fn priv_slot<T>(host: *mut b::mmc_host) -> *mut *const T {
    // SAFETY: By the safety requirements `host` is valid; `private` is its trailing flexible
    // array, backed by the extra room `mmc_alloc_host()` allocated.
    unsafe { addr_of_mut!((*host).private) }.cast::<*const T>()
}

/// The `struct mmc_host_ops` of a [`HostOps`] implementation.
struct OpsTable<T>(PhantomData<T>);

impl<T: HostOps> OpsTable<T> {
    const VTABLE: b::mmc_host_ops = b::mmc_host_ops {
        request: Some(Self::request),
        set_ios: Some(Self::set_ios),
        get_ro: Some(b::mmc_gpio_get_ro),
        get_cd: Some(b::mmc_gpio_get_cd),
        card_busy: Some(Self::card_busy),
        execute_tuning: Some(Self::execute_tuning),
        ..pin_init::zeroed()
    };

    /// The host view and the callback data of `host`.
    ///
    /// # Safety
    ///
    /// `host` must be a host registered by [`UnregisteredHost::register`] with `T`, and the
    /// MMC core must be running one of its callbacks.
    unsafe fn get<'a>(host: *mut b::mmc_host) -> (&'a Host, &'a T) {
        // SAFETY: While a callback runs the host is registered, so the private area holds the
        // pointer of an `Arc<T>` the registration keeps alive until the host is removed.
        let data = unsafe { &*priv_slot::<T>(host).read() };
        // SAFETY: `host` is valid while the callback runs.
        (unsafe { Host::from_raw(host) }, data)
    }

    /// The `request` callback.
    ///
    /// # Safety
    ///
    /// Only the MMC core may call this, with a host registered with `T` and valid arguments.
    unsafe extern "C" fn request(host: *mut b::mmc_host, mrq: *mut b::mmc_request) {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        let (h, data) = unsafe { Self::get(host) };
        let (Some(hp), Some(mrq)) = (NonNull::new(host), NonNull::new(mrq)) else {
            return;
        };
        // INVARIANT: The core hands over a valid request that stays valid until
        // `mmc_request_done()`; it is completed when the `Request` is dropped.
        data.request(
            h,
            Request {
                host: hp,
                mrq,
                mapped: None,
            },
        );
    }

    /// The `set_ios` callback.
    ///
    /// # Safety
    ///
    /// Only the MMC core may call this, with a host registered with `T` and valid arguments.
    unsafe extern "C" fn set_ios(host: *mut b::mmc_host, ios: *mut b::mmc_ios) {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        let (h, data) = unsafe { Self::get(host) };
        // SAFETY: `ios` is valid during the callback.
        let ios = unsafe {
            Ios {
                clock: (*ios).clock,
                vdd: (*ios).vdd,
                power_mode: PowerMode::from_raw((*ios).power_mode),
                bus_width: BusWidth::from_raw((*ios).bus_width),
            }
        };
        data.set_ios(h, &ios);
    }

    /// The `card_busy` callback.
    ///
    /// # Safety
    ///
    /// Only the MMC core may call this, with a host registered with `T` and valid arguments.
    unsafe extern "C" fn card_busy(host: *mut b::mmc_host) -> c_int {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        let (h, data) = unsafe { Self::get(host) };
        c_int::from(data.card_busy(h))
    }

    /// The `execute_tuning` callback.
    ///
    /// # Safety
    ///
    /// Only the MMC core may call this, with a host registered with `T` and valid arguments.
    unsafe extern "C" fn execute_tuning(host: *mut b::mmc_host, opcode: u32) -> c_int {
        // SAFETY: Called by the MMC core on a host registered with `T`.
        let (h, data) = unsafe { Self::get(host) };
        from_result(|| data.execute_tuning(h, opcode).map(|()| 0))
    }
}

/// A `struct mmc_host` as seen from its callbacks.
///
/// # Invariants
///
/// Wraps a valid, registered host.
#[repr(transparent)]
pub(crate) struct Host(Opaque<b::mmc_host>);

impl Host {
    /// # Safety
    ///
    /// `ptr` must be a valid host for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut b::mmc_host) -> &'a Self {
        // SAFETY: `Host` is a transparent wrapper of `struct mmc_host`, valid by the safety
        // requirements.
        unsafe { &*ptr.cast() }
    }

    fn as_raw(&self) -> *mut b::mmc_host {
        self.0.get()
    }

    /// Reports the bus clock actually running, in Hz.
    pub(crate) fn set_actual_clock(&self, hz: u32) {
        // SAFETY: By the type invariant the host is valid; `actual_clock` is written by the host
        // driver from `set_ios`, which the core serializes.
        unsafe { (*self.as_raw()).actual_clock = hz };
    }

    /// Sets the vmmc supply to the voltage of OCR bit `vdd` (0: off), if the host has a vmmc
    /// regulator (`mmc_regulator_set_ocr()`).
    pub(crate) fn set_vmmc_ocr(&self, vdd: u16) -> Result {
        let h = self.as_raw();
        // SAFETY: By the type invariant the host is valid; `supply.vmmc` was set by
        // `mmc_regulator_get_supply()` before registration.
        let vmmc = unsafe { (*h).supply.vmmc };
        // SAFETY: `IS_ERR()` only inspects the pointer value.
        if unsafe { b::IS_ERR(vmmc.cast_const().cast()) } {
            return Ok(());
        }
        // SAFETY: `h` is a valid host and `vmmc` its regulator.
        to_result(unsafe { b::mmc_regulator_set_ocr(h, vmmc, vdd) })
    }

    /// Sends one tuning block (`mmc_send_tuning()`).
    pub(crate) fn send_tuning(&self, opcode: u32) -> Result {
        // SAFETY: By the type invariant the host is valid; a NULL `cmd_error` is allowed.
        to_result(unsafe { b::mmc_send_tuning(self.as_raw(), opcode, core::ptr::null_mut()) })
    }
}

/// `ios->power_mode`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PowerMode {
    /// `MMC_POWER_OFF`.
    Off,
    /// `MMC_POWER_UP`.
    Up,
    /// `MMC_POWER_ON`.
    On,
    /// `MMC_POWER_UNDEFINED` or anything else.
    Undefined,
}

impl PowerMode {
    fn from_raw(v: u8) -> Self {
        match u32::from(v) {
            b::MMC_POWER_OFF => Self::Off,
            b::MMC_POWER_UP => Self::Up,
            b::MMC_POWER_ON => Self::On,
            _ => Self::Undefined,
        }
    }
}

/// `ios->bus_width`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BusWidth {
    /// `MMC_BUS_WIDTH_1`.
    One,
    /// `MMC_BUS_WIDTH_4`.
    Four,
    /// `MMC_BUS_WIDTH_8`.
    Eight,
    /// Any other raw value.
    Other(u8),
}

impl BusWidth {
    fn from_raw(v: u8) -> Self {
        match u32::from(v) {
            b::MMC_BUS_WIDTH_1 => Self::One,
            b::MMC_BUS_WIDTH_4 => Self::Four,
            b::MMC_BUS_WIDTH_8 => Self::Eight,
            _ => Self::Other(v),
        }
    }
}

/// The settings of a `set_ios` call (`struct mmc_ios`).
pub(crate) struct Ios {
    /// Bus clock in Hz, 0 for off.
    pub(crate) clock: u32,
    /// OCR bit number of the selected voltage.
    pub(crate) vdd: u16,
    /// Power state.
    pub(crate) power_mode: PowerMode,
    /// Data bus width.
    pub(crate) bus_width: BusWidth,
}

/// Why [`Request::map_dma`] failed.
#[derive(Clone, Copy, Debug)]
pub(crate) enum DmaMapError {
    /// The request has no data.
    NoData,
    /// The data is mapped already.
    AlreadyMapped,
    /// `dma_map_sg()` mapped nothing.
    MapFailed,
}

impl From<DmaMapError> for Error {
    fn from(e: DmaMapError) -> Error {
        match e {
            DmaMapError::NoData | DmaMapError::AlreadyMapped => EINVAL,
            DmaMapError::MapFailed => ENOMEM,
        }
    }
}

/// `DMA_ATTR_SKIP_CPU_SYNC` as the `attrs` argument of the mapping functions.
const SKIP_CPU_SYNC: c_ulong = b::DMA_ATTR_SKIP_CPU_SYNC as c_ulong;

/// The DMA mapping of a request's scatterlist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mapping {
    /// Mapped for `dir` without CPU cache maintenance: only to learn the number of DMA
    /// segments; the device has not been given the memory.
    Counted(DataDirection),
    /// Mapped for `dir` and synchronized for the device: the controller may use it.
    ForDevice(DataDirection),
}

/// An in-flight `struct mmc_request`, handed to [`HostOps::request`].
///
/// Dropping it unmaps its data if it is still mapped and completes it with
/// `mmc_request_done()`.
///
/// # Invariants
///
/// - `mrq` is a request the MMC core passed to the `request` callback of `host`, not completed
///   yet; it stays valid until completion.
/// - If `mapped` is `Some(m)`, the data scatterlist of the request is DMA-mapped on
///   `host->parent` for the direction in `m`, with `DMA_ATTR_SKIP_CPU_SYNC`; with
///   `Mapping::ForDevice` it has also been synchronized for the device since.
pub(crate) struct Request {
    host: NonNull<b::mmc_host>,
    mrq: NonNull<b::mmc_request>,
    mapped: Option<Mapping>,
}

// SAFETY: A request may be completed from any context and thread; its fields are only
// accessed through this object (and the views borrowed from it) until completion.
unsafe impl Send for Request {}

impl Request {
    /// The request's command (`mrq->cmd`).
    pub(crate) fn cmd(&self) -> &Command {
        // SAFETY: By the type invariant `mrq` is valid; the core always sets `mrq->cmd`, and the
        // command lives as long as the request.
        unsafe { Command::from_raw((*self.mrq.as_ptr()).cmd) }
    }

    fn data_ptr(&self) -> *mut b::mmc_data {
        // SAFETY: By the type invariant `mrq` is valid.
        unsafe { (*self.mrq.as_ptr()).data }
    }

    /// Number of entries of the request's data scatterlist (`data->sg_len`); 0 without data.
    pub(crate) fn sg_len(&self) -> u32 {
        let data = self.data_ptr();
        if data.is_null() {
            return 0;
        }
        // SAFETY: `data` is the valid data of the request.
        unsafe { (*data).sg_len }
    }

    /// DMA-maps the request's data scatterlist (`dma_map_sg()`) and returns the number of DMA
    /// segments the mapping produced. The mapping stays until [`Request::unmap_dma`] or the
    /// request is dropped.
    ///
    /// No CPU cache maintenance is done yet (`DMA_ATTR_SKIP_CPU_SYNC`): a request that goes
    /// through the bounce buffer instead is unmapped again without ever touching the caches
    /// for its (maybe 4 MiB of) data; [`Request::dma_for_device`] hands the memory to the
    /// device when it is used directly.
    ///
    /// Fails, leaving nothing newly mapped, if the request has no data or is mapped already, or
    /// if the mapping fails.
    pub(crate) fn map_dma(&mut self) -> Result<u32, DmaMapError> {
        let data = self.data_ptr();
        if data.is_null() {
            return Err(DmaMapError::NoData);
        }
        if self.mapped.is_some() {
            return Err(DmaMapError::AlreadyMapped);
        }
        // SAFETY: `data` is the valid data of the request.
        let (sg, nents, dir) = unsafe { ((*data).sg, (*data).sg_len, dma_dir((*data).flags)) };
        let nents = c_int::try_from(nents).map_err(|_| DmaMapError::MapFailed)?;
        // SAFETY: `host->parent` is the controller device, `sg`/`nents` describe the request's
        // scatterlist, which is not mapped yet.
        let count = unsafe {
            b::dma_map_sg_attrs(
                (*self.host.as_ptr()).parent,
                sg,
                nents,
                dir.into(),
                SKIP_CPU_SYNC,
            )
        };
        if count == 0 {
            return Err(DmaMapError::MapFailed);
        }
        // INVARIANT: The scatterlist is mapped now, without cache maintenance.
        self.mapped = Some(Mapping::Counted(dir));
        Ok(count)
    }

    /// Hands the mapped scatterlist to the device (`dma_sync_sg_for_device()`, once) and
    /// returns the DMA address of its first segment; `None` if it is not mapped.
    pub(crate) fn dma_for_device(&mut self) -> Option<u64> {
        let dir = match self.mapped? {
            Mapping::Counted(dir) => dir,
            Mapping::ForDevice(dir) => dir,
        };
        let data = self.data_ptr();
        if self.mapped == Some(Mapping::Counted(dir)) {
            // SAFETY: By the type invariant the scatterlist of `data` is mapped for `dir` on
            // `host->parent`; `sg_len` is the count it was mapped with.
            unsafe {
                b::__dma_sync_sg_for_device(
                    (*self.host.as_ptr()).parent,
                    (*data).sg,
                    (*data).sg_len as c_int,
                    dir.into(),
                )
            };
            // INVARIANT: Synchronized for the device just now.
            self.mapped = Some(Mapping::ForDevice(dir));
        }
        // SAFETY: The scatterlist of `data` is mapped, so its first entry has a DMA address.
        let addr = unsafe { b::sg_dma_address((*data).sg) };
        #[allow(clippy::useless_conversion)]
        Some(u64::from(addr))
    }

    /// Total length of the request's data, `blksz * blocks`, in bytes (0 without data).
    pub(crate) fn data_len(&self) -> u32 {
        self.cmd()
            .data()
            .map_or(0, |d| d.blksz().saturating_mul(d.blocks()))
    }

    /// Copies the first `len` bytes of the request's data scatterlist into `buf`
    /// (`sg_copy_to_buffer()`), for a write through the bounce buffer. Returns the number of
    /// bytes copied: 0 if the request has no data or its scatterlist is DMA-mapped (the CPU
    /// must not touch it then), at most the size of `buf`.
    ///
    /// The controller must not be using `buf` (see `bounce.rs`); `buf` is accessed only through
    /// its raw address, never through a Rust reference.
    pub(crate) fn copy_to_dma_buffer(&self, buf: &Coherent<[u8]>, len: u32) -> u32 {
        let data = self.data_ptr();
        if data.is_null() || self.mapped.is_some() {
            return 0;
        }
        let len = usize::try_from(len).map_or(0, |l| l.min(buf.size()));
        // SAFETY: `data` is the valid data of the request and its scatterlist of `sg_len`
        // entries is not DMA-mapped, so the CPU may read it; `buf.as_mut_ptr()` is valid for
        // writes of `buf.size()` bytes and `len` is at most that.
        let n = unsafe {
            b::sg_copy_to_buffer(
                (*data).sg,
                (*data).sg_len,
                buf.as_mut_ptr().cast::<c_void>(),
                len,
            )
        };
        u32::try_from(n).unwrap_or(0)
    }

    /// Copies `len` bytes from `buf` into the request's data scatterlist
    /// (`sg_copy_from_buffer()`), for a read through the bounce buffer. Returns the number of
    /// bytes copied, with the same rules as [`Request::copy_to_dma_buffer`].
    pub(crate) fn copy_from_dma_buffer(&self, buf: &Coherent<[u8]>, len: u32) -> u32 {
        let data = self.data_ptr();
        if data.is_null() || self.mapped.is_some() {
            return 0;
        }
        let len = usize::try_from(len).map_or(0, |l| l.min(buf.size()));
        // SAFETY: `data` is the valid data of the request and its scatterlist of `sg_len`
        // entries is not DMA-mapped, so the CPU may write it; `buf.as_ptr()` is valid for reads
        // of `buf.size()` bytes and `len` is at most that.
        let n = unsafe {
            b::sg_copy_from_buffer(
                (*data).sg,
                (*data).sg_len,
                buf.as_ptr().cast::<c_void>(),
                len,
            )
        };
        u32::try_from(n).unwrap_or(0)
    }

    /// Unmaps the data scatterlist if it is mapped (`dma_unmap_sg()`). After the device had it,
    /// the CPU caches are synchronized for the CPU (read data becomes visible); a mapping that
    /// only counted segments is dropped without cache maintenance.
    pub(crate) fn unmap_dma(&mut self) {
        let (dir, attrs) = match self.mapped.take() {
            None => return,
            Some(Mapping::Counted(dir)) => (dir, SKIP_CPU_SYNC),
            Some(Mapping::ForDevice(dir)) => (dir, 0),
        };
        let data = self.data_ptr();
        // SAFETY: By the type invariant the scatterlist of `data` is mapped for `dir` on
        // `host->parent`; `sg_len` is the count it was mapped with.
        unsafe {
            b::dma_unmap_sg_attrs(
                (*self.host.as_ptr()).parent,
                (*data).sg,
                (*data).sg_len as c_int,
                dir.into(),
                attrs,
            )
        };
    }

    /// Completes the request (`mmc_request_done()`); same as dropping it.
    pub(crate) fn done(self) {}
}

impl Drop for Request {
    fn drop(&mut self) {
        self.unmap_dma();
        // SAFETY: By the type invariant the request is in flight on `host`; this consumes it.
        unsafe { b::mmc_request_done(self.host.as_ptr(), self.mrq.as_ptr()) };
    }
}

/// `mmc_get_dma_dir()`.
fn dma_dir(flags: c_uint) -> DataDirection {
    if flags & b::MMC_DATA_WRITE != 0 {
        DataDirection::ToDevice
    } else {
        DataDirection::FromDevice
    }
}

/// The command of a [`Request`] (`struct mmc_command`).
///
/// # Invariants
///
/// Wraps a valid command of an in-flight request.
#[repr(transparent)]
pub(crate) struct Command(Opaque<b::mmc_command>);

impl Command {
    /// # Safety
    ///
    /// `ptr` must be a valid command for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut b::mmc_command) -> &'a Self {
        // SAFETY: `Command` is a transparent wrapper of `struct mmc_command`, valid by the
        // safety requirements.
        unsafe { &*ptr.cast() }
    }

    fn raw(&self) -> *mut b::mmc_command {
        self.0.get()
    }

    /// Command index.
    pub(crate) fn opcode(&self) -> u32 {
        // SAFETY: By the type invariant the command is valid.
        unsafe { (*self.raw()).opcode }
    }

    /// Command argument.
    pub(crate) fn arg(&self) -> u32 {
        // SAFETY: By the type invariant the command is valid.
        unsafe { (*self.raw()).arg }
    }

    fn flags(&self) -> u32 {
        // SAFETY: By the type invariant the command is valid.
        unsafe { (*self.raw()).flags }
    }

    /// `MMC_RSP_PRESENT`: the card answers.
    pub(crate) fn resp_present(&self) -> bool {
        self.flags() & b::MMC_RSP_PRESENT != 0
    }

    /// `MMC_RSP_136`: the answer is 136 bits long.
    pub(crate) fn resp_136(&self) -> bool {
        self.flags() & b::MMC_RSP_136 != 0
    }

    /// `MMC_RSP_CRC`: the answer carries a valid CRC.
    pub(crate) fn resp_crc(&self) -> bool {
        self.flags() & b::MMC_RSP_CRC != 0
    }

    /// `MMC_RSP_BUSY`: the card may signal busy after answering (R1b).
    pub(crate) fn resp_busy(&self) -> bool {
        self.flags() & b::MMC_RSP_BUSY != 0
    }

    /// The command's error, if any.
    pub(crate) fn error(&self) -> Option<Error> {
        // SAFETY: By the type invariant the command is valid.
        errno(unsafe { (*self.raw()).error })
    }

    /// Sets the command's error.
    pub(crate) fn set_error(&self, e: Error) {
        // SAFETY: By the type invariant the command is valid; the core does not look at it before
        // the request completes.
        unsafe { (*self.raw()).error = e.to_errno() };
    }

    /// Sets `resp[idx]`.
    pub(crate) fn set_resp(&self, idx: usize, v: u32) {
        let resp = self.raw_resp();
        // SAFETY: By the type invariant the command is valid; `resp` is its response array and
        // the write is bounds checked.
        if let Some(r) = unsafe { (*resp).get_mut(idx) } {
            *r = v;
        }
    }

    fn raw_resp(&self) -> *mut [u32; 4] {
        // SAFETY: By the type invariant the command is valid.
        unsafe { addr_of_mut!((*self.raw()).resp) }
    }

    /// The command's data (`cmd->data`), if it transfers any.
    pub(crate) fn data(&self) -> Option<&Data> {
        // SAFETY: By the type invariant the command is valid.
        let data = unsafe { (*self.raw()).data };
        if data.is_null() {
            None
        } else {
            // SAFETY: A non-NULL `cmd->data` is the valid data of the same request.
            Some(unsafe { Data::from_raw(data) })
        }
    }
}

/// The data phase of a [`Request`] (`struct mmc_data`).
///
/// # Invariants
///
/// Wraps valid data of an in-flight request.
#[repr(transparent)]
pub(crate) struct Data(Opaque<b::mmc_data>);

impl Data {
    /// # Safety
    ///
    /// `ptr` must be valid data for `'a`.
    unsafe fn from_raw<'a>(ptr: *mut b::mmc_data) -> &'a Self {
        // SAFETY: `Data` is a transparent wrapper of `struct mmc_data`, valid by the safety
        // requirements.
        unsafe { &*ptr.cast() }
    }

    fn raw(&self) -> *mut b::mmc_data {
        self.0.get()
    }

    /// Block size in bytes.
    pub(crate) fn blksz(&self) -> u32 {
        // SAFETY: By the type invariant the data is valid.
        unsafe { (*self.raw()).blksz }
    }

    /// Number of blocks.
    pub(crate) fn blocks(&self) -> u32 {
        // SAFETY: By the type invariant the data is valid.
        unsafe { (*self.raw()).blocks }
    }

    fn flags(&self) -> u32 {
        // SAFETY: By the type invariant the data is valid.
        unsafe { (*self.raw()).flags }
    }

    /// `MMC_DATA_WRITE`: host to card.
    pub(crate) fn is_write(&self) -> bool {
        self.flags() & b::MMC_DATA_WRITE != 0
    }

    /// `MMC_DATA_READ`: card to host.
    pub(crate) fn is_read(&self) -> bool {
        self.flags() & b::MMC_DATA_READ != 0
    }

    /// The data error, if any.
    pub(crate) fn error(&self) -> Option<Error> {
        // SAFETY: By the type invariant the data is valid.
        errno(unsafe { (*self.raw()).error })
    }

    /// Sets the data error.
    pub(crate) fn set_error(&self, e: Error) {
        // SAFETY: By the type invariant the data is valid; the core does not look at it before
        // the request completes.
        unsafe { (*self.raw()).error = e.to_errno() };
    }

    /// Sets the number of bytes transferred.
    pub(crate) fn set_bytes_xfered(&self, n: u32) {
        // SAFETY: As for `set_error`.
        unsafe { (*self.raw()).bytes_xfered = n };
    }
}

fn errno(e: c_int) -> Option<Error> {
    (e != 0).then(|| Error::from_errno(e))
}
