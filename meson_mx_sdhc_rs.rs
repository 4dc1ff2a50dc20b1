// SPDX-License-Identifier: GPL-2.0

//! Amlogic Meson6/Meson8/Meson8b/Meson8m2 SDHC MMC host controller driver.
//!
//! A Rust port of `drivers/mmc/host/meson-mx-sdhc-mmc.c` that drives the hardware the same way,
//! with features of its own, each a module below (the bounce buffer, double buffering, the
//! software deadline, the statistics, the SDIO card interrupt). All of them are always built;
//! the module parameters switch the bounce buffer, double buffering and the SDIO card
//! interrupt at load time.
//!
//! The crate root holds the module and its parameters. The driver logic is safe Rust:
//!
//! - `probe.rs`: the platform driver, probe and the bound device's data;
//! - `controller.rs`: the controller state shared by the MMC callbacks and the interrupt, and
//!   the driver's timer; it holds the features' state and acts on what they return, and no
//!   feature module imports it;
//! - `host_ops.rs`: the MMC host callbacks, implemented in `request.rs` (starting a request),
//!   `irq.rs` (finishing it), `ios.rs` (bus settings) and `tuning.rs` (RX phase);
//! - `hw.rs` and `soc.rs`: register programming and what differs between the SoCs; `regs.rs`
//!   the register map;
//! - `drain.rs`: the controller's reset after an error, and the memory its DMA engine may
//!   still write;
//! - `logic.rs`: the driver's pure decisions (also built and tested on the host).
//!
//! The C API is reached only through kernel-crate abstractions, which own every `unsafe` of
//! the driver: `kernel::mmc`, the MMC host API with the DMA mapping of a request's
//! scatterlist and the host's registration, tied to the device's binding;
//! `kernel::irq::managed`, the interrupt requested for the device's binding;
//! `kernel::io::mem`, the register window's mapping, revoked at unbind;
//! `kernel::clk::provider`, the basic clocks `clkc.rs` builds the controller's clock tree
//! from; `kernel::dma::noncoherent`, the bounce buffer's cached memory, and
//! `kernel::dma::cpu_copy` and `kernel::dma::pre_map`, the copies between a request's
//! scatterlist and that buffer and the mapping of a request ahead of its transfer; and
//! `kernel::workqueue::timer`, the watchdog.

use kernel::prelude::*;

mod bindings;
// A bounce buffer, so that one request can carry many scatterlist segments: the buffers the
// module parameters ask for and the policy of which requests go through them.
mod bounce;
mod clkc;
mod controller;
// What happens when a request's software deadline passes.
mod deadline;
mod drain;
mod host_ops;
mod hw;
mod ios;
mod irq;
mod logic;
// The registers through their device-managed mapping.
mod mapped_regs;
// `pre_req` and `post_req`: the work done for a request while the previous one runs.
mod prepare;
mod probe;
mod regs;
mod request;
// The SDIO card interrupt and every `ICTL` write.
mod sdio_irq;
mod soc;
// The statistics, in debugfs.
mod stats;
mod stop;
#[cfg(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS)]
mod test_knobs;
mod tuning;

/// The kernel-crate abstractions this driver needs and Linux 7.3 lacks, laid out as in the kernel
/// tree (`rust/kernel/`), where they are `kernel::mmc` and the like.
///
/// They are `pub`, as in the kernel crate: what this driver does not use of them (the SD card
/// slot driver's slot device and its hosts on it, CMD23 and fixed-factor clock, more than one threaded interrupt by
/// index) is their API, not dead code. `out_of_tree`, `clk::round_rate`, `debugfs::foreign_dir`
/// and `io::mem` stand in for what the kernel crate has or the upstream series adds to or fixes
/// in its existing modules.
#[path = "rust/kernel"]
pub mod kernel_ext {
    /// Memory-mapped I/O.
    pub mod io {
        // Out of tree only: `kernel::io::mem` with the series' fixes.
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
        // Out of tree only: a method the series adds to `kernel::clk::Clk` itself.
        #[cfg(CONFIG_COMMON_CLK)]
        pub mod round_rate;
    }
    /// Interrupt requests.
    pub mod irq {
        pub mod managed;
    }
    /// The debug file system.
    pub mod debugfs {
        // Out of tree only: the series adds `ScopedDir::from_raw()` to `kernel::debugfs` itself.
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
    pub mod pm;
}

use kernel_ext::mmc;

use logic::Params;

/// Returns the module parameters, checked in module init (so they are valid here).
fn params() -> Params {
    Params::from_module(
        *module_parameters::bounce_size.value_ref(),
        *module_parameters::max_segs.value_ref(),
        *module_parameters::max_dma_size.value_ref(),
    )
    .unwrap_or(Params {
        bounce_size: 0,
        max_segs: 1,
        max_dma: logic::MAX_DMA_DEFAULT,
    })
}

/// Returns whether the bounce buffer is cached memory with streaming syncs (`bounce_cached`).
fn bounce_cached() -> bool {
    *module_parameters::bounce_cached.value_ref()
}

/// Returns whether a read into a cached bounce buffer with no dirty cache line skips the invalidate
/// before the transfer (`skip_clean_invalidate`).
///
/// Always, never, or decided at probe (checked in module init, so valid here).
fn skip_clean_invalidate() -> logic::SkipClean {
    logic::SkipClean::from_module(*module_parameters::skip_clean_invalidate.value_ref())
        .unwrap_or(logic::SkipClean::Off)
}

/// Returns whether there are two bounce buffers, copied in `pre_req`/`post_req` (`double_buffer`).
fn double_buffer() -> bool {
    *module_parameters::double_buffer.value_ref()
}

/// Returns whether SDIO card interrupts come from the controller (DAT1, `sdio_irq`) rather than
/// from the MMC core's polling.
fn sdio_irq() -> bool {
    *module_parameters::sdio_irq.value_ref()
}

/// Returns whether every read is bounced and its data used only once its last words are seen in
/// memory (`dram_write_check`, `bounce::tail`).
fn dram_write_check() -> bool {
    *module_parameters::dram_write_check.value_ref()
}

/// The message of a [`logic::ParamError`] for the kernel's formatting macros.
struct ParamMsg(logic::ParamError);

impl kernel::fmt::Display for ParamMsg {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        core::fmt::Display::fmt(&self.0, f)
    }
}

/// Checks the module parameters.
///
/// `EINVAL`, with a message, if one is out of range.
fn check_params() -> Result {
    Params::from_module(
        *module_parameters::bounce_size.value_ref(),
        *module_parameters::max_segs.value_ref(),
        *module_parameters::max_dma_size.value_ref(),
    )
    .map(|_| ())
    .and_then(|()| {
        logic::SkipClean::from_module(*module_parameters::skip_clean_invalidate.value_ref())
            .map(|_| ())
    })
    .map_err(|e| {
        pr_err!("{}\n", ParamMsg(e));
        EINVAL
    })
}

/// The module, which checks its parameters, then registers the platform driver.
#[pin_data]
struct SdhcModule {
    #[pin]
    _driver: kernel::driver::Registration<crate::kernel_ext::pm::Adapter<probe::SdhcDriver>>,
}

impl kernel::InPlaceModule for SdhcModule {
    fn init(module: &'static ThisModule) -> impl PinInit<Self, Error> {
        pin_init::pin_init_scope(move || {
            check_params()?;
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
    type: SdhcModule,
    name: "meson-mx-sdhc-rs",
    authors: ["The meson_mx_sdhc_rs driver authors"],
    description: "Meson6, Meson8, Meson8b and Meson8m2 SDHC Host Driver (Rust)",
    license: "GPL",
    params: {
        bounce_size: i32 {
            default: crate::logic::BOUNCE_FOLLOWS_MAX_DMA,
            description: "Bounce buffer size in bytes: -1 (default) as large as max_dma_size, 0 (none: requests of one DMA segment, 128 KiB at most), or a power of two from 4096 to max_dma_size",
        },
        max_dma_size: u32 {
            default: crate::logic::MAX_DMA_DEFAULT,
            description: "Largest transfer to one DMA address in bytes, a power of two from 4096 to 4194304 (default 131072; larger sizes are unproven on the silicon): requests and bounce_size are no larger",
        },
        max_segs: u32 {
            default: crate::logic::MAX_SEGS_DEFAULT,
            description: "Most scatterlist segments per request with the bounce buffer, 1 to 256",
        },
        bounce_cached: bool {
            default: true,
            description: "Bounce buffer memory: true (default) cached with streaming DMA syncs (as sdhci), false DMA-coherent (uncached on the Meson8b)",
        },
        skip_clean_invalidate: i32 {
            default: crate::logic::SKIP_CLEAN_AUTO,
            description: "Cached bounce buffer: a read skips the invalidate before its transfer when no CPU write left the buffer maybe dirty: -1 (default) if the buffers' DMA mapping is their own memory (no SWIOTLB bouncing), decided at probe; 0 never; 1 always",
        },
        double_buffer: bool {
            default: true,
            description: "Two bounce buffers (default true): a write copied in while the previous request runs, a read copied out while the next runs",
        },
        dram_write_check: bool {
            default: true,
            description: "Reads go through the bounce buffer, whose data is used only once the read's last words are seen in memory (default true); false: a read of one segment goes to the controller in place and is used once the RX FIFO is empty, as the C driver does",
        },
        sdio_irq: bool {
            default: true,
            description: "SDIO card interrupts through DAT1 (default true); false: the MMC core polls the card",
        },
    },
}
