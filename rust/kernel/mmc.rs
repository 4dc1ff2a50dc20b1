// SPDX-License-Identifier: GPL-2.0

//! MMC host controller support.
//!
//! C header: [`include/linux/mmc/host.h`](srctree/include/linux/mmc/host.h)
//!
//! A driver implements [`HostOps`], allocates an [`UnregisteredHost`] with its driver data in
//! the host's private area, configures it and registers it; the MMC core then calls the
//! callbacks until the parent device is unbound. A [`Request`] is completed exactly once, by
//! [`Request::done`] or, dropped, as failed.
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
//!     host.register()?;
//!     Ok(())
//! }
//! ```

mod caps;
mod debugfs;
mod dma;
mod host;
mod ios;
mod request;
mod sdio;

pub use caps::{
    Cap,
    Caps, //
};
pub use dma::{
    dma_merge_boundary,
    DmaMapError,
    DmaRequest, //
};
pub use host::{
    Host,
    HostConfig,
    HostOps,
    RegisteredHost,
    Tuning,
    UnregisteredHost, //
};
pub use ios::{
    BusWidth,
    Ios,
    PowerMode, //
};
pub use request::{
    Command,
    Data,
    IdleRequest,
    PostReqRequest,
    PreReqRequest,
    Request,
    RequestView, //
};
pub use sdio::SdioIrqSignal;

use crate::bindings;

/// The opcode of STOP_TRANSMISSION (CMD12), `MMC_STOP_TRANSMISSION`.
pub const MMC_STOP_TRANSMISSION: u32 = bindings::MMC_STOP_TRANSMISSION;
/// The opcode of IO_RW_EXTENDED (CMD53), `SD_IO_RW_EXTENDED`.
pub const SD_IO_RW_EXTENDED: u32 = bindings::SD_IO_RW_EXTENDED;
