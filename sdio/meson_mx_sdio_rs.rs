// SPDX-License-Identifier: GPL-2.0

//! Amlogic Meson6/Meson8/Meson8b "SDIO" MMC host controller driver, the SD card slot.
//!
//! A Rust port of `drivers/mmc/host/meson-mx-sdio.c` that drives the hardware the same way: a
//! slot of the controller's mux (an `mmc-slot` child node), SET_BLOCK_COUNT (CMD23), the
//! card's busy signal waited for by the controller, the card clock as a divider of the clock
//! framework, one or four data lines, and a timer for the command the controller never reports.
//! It adds a bounce buffer: a request of several scatterlist segments, or of one the controller
//! cannot take in place (not whole, aligned words), goes through one DMA-coherent buffer, so
//! that the host takes up to `max_segs` segments per request; a write that goes in place is
//! mapped in `pre_req`. After every error the controller is soft-reset. The module parameters
//! `bounce_size` and `max_segs` are the SDHC driver's, and its statistics are in the host's
//! debugfs directory (`stats`). Where the C driver serves the first slot node only, it
//! registers a host for each, and the slots' requests take the controller in turn.
//!
//! The crate root holds the module and its parameters. The driver logic is safe Rust:
//!
//! - `probe.rs`: the platform driver and probe; `slot.rs` the slot sub-nodes;
//! - `host.rs`: the controller state the hosts' MMC callbacks, the interrupt and the timers
//!   share (the bus the slots take in turn), and the hosts' callbacks, implemented in
//!   `request.rs` (starting a request, or leaving it to wait for its turn, and its commands),
//!   `irq.rs` (the end of a command, the timer, completing a request) and `ios.rs` (bus
//!   settings);
//! - `hw.rs`: register programming; `regs.rs` the register map; `clkc.rs` the card clock;
//! - `logic.rs`: the driver's pure decisions (also built and tested on the host), with the
//!   rules it shares with the SDHC driver (`../logic/`); the `stats` file is the SDHC
//!   driver's `StatsFile` (`../stats/file.rs`).
//!
//! The C API is reached only through kernel-crate abstractions, the same the SDHC driver
//! (`meson_mx_sdhc_rs`) uses: `kernel::mmc`, the MMC host API; `kernel::platform::of_child`,
//! the slot's device; `kernel::clk::provider`, the card clock; `kernel::irq::managed`,
//! `kernel::io::mem`, `kernel::dma::cpu_copy` (the bounce buffer's copies) and
//! `kernel::workqueue::timer`.

use kernel::prelude::*;

#[path = "../bindings/mod.rs"]
mod bindings;
mod clkc;
mod host;
mod hw;
mod ios;
mod irq;
mod logic;
#[path = "../mapped_regs.rs"]
mod mapped_regs;
mod probe;
mod regs;
mod request;
mod slot;
#[path = "../stats/file.rs"]
mod stats_file;

/// The kernel-crate abstractions, the same files as the SDHC driver's (`rust/kernel/`), laid
/// out as in the kernel tree.
///
/// They are `pub`, as in the kernel crate: what this driver does not use of them (SDIO card
/// interrupts, tuning, the non-coherent DMA memory, ...) is their API, not dead code.
#[path = "../rust/kernel"]
pub mod kernel_ext {
    /// Memory-mapped I/O.
    pub mod io {
        #[cfg(CONFIG_HAS_IOMEM)]
        pub mod mem;
    }
    /// Direct memory access.
    pub mod dma {
        #[cfg(CONFIG_HAS_DMA)]
        pub mod cpu_copy;
        #[cfg(CONFIG_HAS_DMA)]
        pub mod noncoherent;
        #[cfg(CONFIG_HAS_DMA)]
        pub mod pre_map;
    }
    /// Clock providers and consumers.
    pub mod clk {
        #[cfg(CONFIG_COMMON_CLK)]
        pub mod provider;
        #[cfg(CONFIG_COMMON_CLK)]
        pub mod round_rate;
    }
    /// Interrupt requests.
    pub mod irq {
        pub mod managed;
    }
    /// The debug file system.
    pub mod debugfs {
        pub mod foreign_dir;
    }
    /// Platform devices.
    pub mod platform {
        pub mod of_child;
    }
    /// Work items and their queues.
    pub mod workqueue {
        pub mod alloc;
        pub mod rearm;
        pub mod timer;
    }
    pub mod mmc;
    pub mod out_of_tree;
}

use kernel_ext::mmc;

use logic::module_params::{
    ParamError,
    Params, //
};

/// Returns the module parameters as given, checked.
fn checked_params() -> Result<Params, ParamError> {
    Params::from_module(
        *module_parameters::bounce_size.value_ref(),
        *module_parameters::max_segs.value_ref(),
    )
}

/// Returns the module parameters, checked in module init (so they are valid here).
fn params() -> Params {
    checked_params().unwrap_or(Params {
        bounce_size: 0,
        max_segs: 1,
    })
}

/// The module, which checks its parameters, then registers the platform driver.
///
/// A parameter out of range fails with `EINVAL` and a message naming it and its range.
#[pin_data]
struct SdioModule {
    #[pin]
    _driver: kernel::driver::Registration<kernel::platform::Adapter<probe::SdioDriver>>,
}

impl kernel::InPlaceModule for SdioModule {
    fn init(module: &'static ThisModule) -> impl PinInit<Self, Error> {
        pin_init::pin_init_scope(move || {
            if let Err(e) = checked_params() {
                pr_err!("{}\n", format_args!("{}", e));
                return Err(EINVAL);
            }
            Ok(try_pin_init!(Self {
                _driver <- kernel::driver::Registration::new(
                    <Self as kernel::ModuleMetadata>::NAME,
                    module,
                ),
            }))
        })
    }
}

module! {
    type: SdioModule,
    name: "meson-mx-sdio-rs",
    authors: ["The meson_mx_sdhc_rs driver authors"],
    description: "Meson6, Meson8 and Meson8b SDIO/MMC Host Driver (Rust)",
    license: "GPL",
    params: {
        bounce_size: i32 {
            default: crate::logic::params::BOUNCE_SIZE_DEFAULT,
            description: "Bounce buffer size in bytes: -1 (default) 131072, the largest request; 0 (none: the C driver's limits, one segment of whole, aligned words per request); or a power of two from 4096 to 131072",
        },
        max_segs: u32 {
            default: crate::logic::params::MAX_SEGS_DEFAULT,
            description: "Most scatterlist segments per request with the bounce buffer, 1 to 256",
        },
    },
}
