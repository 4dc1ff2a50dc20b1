// SPDX-License-Identifier: GPL-2.0

//! MMC host controllers.
//!
//! C header: [`include/linux/mmc/host.h`](srctree/include/linux/mmc/host.h)
//!
//! A host controller driver describes its callbacks with a [`HostOps`] implementation, allocates
//! a host with its driver data pin-initialised in the host's private area
//! ([`UnregisteredHost::new`], like `pwm::Chip::new`), configures it ([`HostConfig`],
//! [`Caps`], the device tree and the supplies) and registers it ([`UnregisteredHost::register`]).
//! From then on the MMC core calls the callbacks:
//!
//! - [`HostOps::request`] receives an owned [`Request`], completed exactly once by
//!   [`Request::done`] (`mmc_request_done()`); dropped without it, it completes as failed. Its
//!   command, the optional `sbc` (CMD23) and `stop` (CMD12) commands and its data are views
//!   ([`Command`], [`Data`]) borrowed from it.
//! - [`HostOps::set_ios`] receives the bus settings as [`Ios`], which is also the only way to
//!   report the actual clock and to switch the vmmc supply.
//! - [`HostOps::execute_tuning`] receives a [`Tuning`] handle, the only way to send tuning
//!   blocks: from any other callback `mmc_send_tuning()` would re-enter `request` and deadlock.
//! - The optional callbacks (`card_busy`, `pre_req`/`post_req`, `card_hw_reset`,
//!   `start_signal_voltage_switch`, `get_cd`/`get_ro`) are only installed when the
//!   implementation overrides them (`#[vtable]`); card detect and write protect default to the
//!   slot-gpio helpers.
//! - Data moved with one DMA address per transfer: a [`DmaRequest`] takes over the [`Request`]
//!   and maps its scatterlist ([`DmaRequest::map_count`] gives the number of DMA segments,
//!   [`DmaRequest::dma_for_device`] the address); dropping it unmaps, then completes.
//! - The registration belongs to the parent's devres, as a PWM chip's does: the host is removed
//!   when the parent is unbound, whatever the driver keeps, so the driver data borrows nothing
//!   (`'static`). A driver's interrupts are requested the same way (`kernel::irq::managed`).
//!   Registration gives the device the segment limit the block queue of a memory card would
//!   set.
//!
//! # Examples
//!
//! A host with no card slot wired up, whose every command fails, and what a probe does with
//! it:
//!
//! ```
//! use kernel::{
//!     device::{
//!         Bound,
//!         Device, //
//!     },
//!     mmc::{
//!         Cap,
//!         Host,
//!         HostConfig,
//!         HostOps,
//!         Ios,
//!         Request,
//!         UnregisteredHost, //
//!     },
//!     prelude::*, //
//! };
//!
//! struct NoSlot;
//!
//! #[vtable]
//! impl HostOps for NoSlot {
//!     fn request(_host: &Host<Self>, mrq: Request) {
//!         mrq.cmd().set_error(ENOMEDIUM);
//!         // Dropping `mrq` completes it.
//!     }
//!
//!     fn set_ios(_host: &Host<Self>, _ios: &Ios) {}
//! }
//!
//! fn probe(dev: &Device<Bound>) -> Result {
//!     let mut host = UnregisteredHost::new(dev, Ok::<_, Error>(NoSlot))?;
//!     host.configure(&HostConfig {
//!         f_min: 400_000,
//!         f_max: 50_000_000,
//!         max_req_size: 512 * 128,
//!         max_seg_size: 512 * 128,
//!         max_segs: 1,
//!         max_blk_count: 128,
//!         max_blk_size: 512,
//!         max_busy_timeout: 0,
//!         max_current_180: 0,
//!         max_current_330: 0,
//!         caps: Cap::FourBitData.into(),
//!     });
//!     host.of_parse()?;
//!     // Removed when `dev` is unbound.
//!     host.register()
//! }
//! ```

mod caps;
mod cpu_copy;
mod debugfs;
mod dma;
mod host;
mod ios;
mod pre_map;
mod request;
mod sdio;
mod timer;

pub(crate) use caps::{
    Cap,
    Caps, //
};
pub(crate) use cpu_copy::{
    copy_buffer_to_idle,
    copy_idle_to_buffer, //
};
pub(crate) use cpu_copy::{
    read_buffer_word,
    write_buffer_word,
    CpuBuffer, //
};
pub(crate) use dma::{
    dma_merge_boundary,
    DmaMapError,
    DmaRequest, //
};
pub(crate) use host::{
    Host,
    HostConfig,
    HostOps,
    Tuning,
    UnregisteredHost, //
};
pub(crate) use ios::{
    BusWidth,
    Ios,
    PowerMode,
    SignalVoltage,
    Timing, //
};
pub(crate) use pre_map::pre_map;
pub(crate) use request::{
    Command,
    Data,
    IdleRequest,
    Request,
    RequestView,
    SgList, //
};
pub(crate) use sdio::SdioIrqSignal;

use crate::bindings;

/// `MMC_STOP_TRANSMISSION` (CMD12).
pub(crate) const MMC_STOP_TRANSMISSION: u32 = bindings::MMC_STOP_TRANSMISSION;
/// `SD_IO_RW_EXTENDED` (CMD53).
pub(crate) const SD_IO_RW_EXTENDED: u32 = bindings::SD_IO_RW_EXTENDED;
