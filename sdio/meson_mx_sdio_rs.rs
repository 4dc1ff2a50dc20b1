// SPDX-License-Identifier: GPL-2.0

//! Amlogic Meson6/Meson8/Meson8b "SDIO" MMC host controller driver, the SD card slot.
//!
//! A Rust port of `drivers/mmc/host/meson-mx-sdio.c` that drives the hardware the same way: one
//! slot of the controller's mux (the `mmc-slot` child node), SET_BLOCK_COUNT (CMD23), the
//! card's busy signal waited for by the controller, the card clock as a divider of the clock
//! framework, one or four data lines, and a timer for the command the controller never reports.
//! It adds a bounce buffer: a request of several scatterlist segments, or of one the controller
//! cannot take in place (not whole, aligned words), goes through one DMA-coherent buffer, so
//! that the host takes up to [`MAX_SEGS`] segments per request. After every error the
//! controller is soft-reset.
//!
//! The crate root holds the module. The driver logic is safe Rust:
//!
//! - `probe.rs`: the platform driver and probe; `slot.rs` the slot sub-node;
//! - `host.rs`: the controller state the MMC callbacks, the interrupt and the timer share, and
//!   the host's callbacks, implemented in `request.rs` (starting a request and its commands),
//!   `irq.rs` (the end of a command, the timer, completing a request) and `ios.rs` (bus
//!   settings);
//! - `hw.rs`: register programming; `regs.rs` the register map; `clkc.rs` the card clock.
//!
//! The C API is reached only through kernel-crate abstractions, the same the SDHC driver
//! (`meson_mx_sdhc_rs`) uses: `kernel::mmc`, the MMC host API; `kernel::platform::of_child`,
//! the slot's device; `kernel::clk::provider`, the card clock; `kernel::irq::managed`,
//! `kernel::io::window`, `kernel::dma::cpu_copy` (the bounce buffer's copies) and
//! `kernel::workqueue::timer`.

#[path = "../bindings/mod.rs"]
mod bindings;
mod clkc;
mod host;
mod hw;
mod ios;
mod irq;
mod probe;
mod regs;
mod request;
mod slot;

/// The kernel-crate abstractions, the same files as the SDHC driver's (`rust/kernel/`), laid
/// out as in the kernel tree.
///
/// They are modules of this driver too, so what it does not use of them (`kernel::mmc`'s
/// `pre_req` mapping, SDIO card interrupts, tuning, the non-coherent DMA memory, ...) is dead
/// code to the compiler here.
#[path = "../rust/kernel"]
#[allow(dead_code, unused_imports)]
mod kernel_ext {
    pub(crate) mod io {
        #[cfg(CONFIG_HAS_IOMEM)]
        pub(crate) mod window;
    }
    pub(crate) mod dma {
        #[cfg(CONFIG_HAS_DMA)]
        pub(crate) mod cpu_copy;
        #[cfg(CONFIG_HAS_DMA)]
        pub(crate) mod noncoherent;
        #[cfg(CONFIG_HAS_DMA)]
        pub(crate) mod pre_map;
    }
    pub(crate) mod clk {
        #[cfg(CONFIG_COMMON_CLK)]
        pub(crate) mod provider;
        #[cfg(CONFIG_COMMON_CLK)]
        pub(crate) mod round_rate;
    }
    pub(crate) mod irq {
        pub(crate) mod managed;
    }
    pub(crate) mod debugfs {
        pub(crate) mod foreign_dir;
    }
    pub(crate) mod platform {
        pub(crate) mod of_child;
    }
    pub(crate) mod workqueue {
        pub(crate) mod alloc;
        pub(crate) mod rearm;
        pub(crate) mod timer;
    }
    pub(crate) mod mmc;
    pub(crate) mod out_of_tree;
}

use kernel_ext::mmc;

/// The largest request, in bytes: the bounce buffer's size, and the C driver's limit.
pub(crate) const MAX_REQ_SIZE: u32 = 128 * 1024;

/// The most scatterlist segments in a request.
pub(crate) const MAX_SEGS: u16 = 64;

kernel::module_platform_driver! {
    type: probe::SdioDriver,
    name: "meson-mx-sdio-rs",
    authors: ["The meson_mx_sdhc_rs driver authors"],
    description: "Meson6, Meson8 and Meson8b SDIO/MMC Host Driver (Rust)",
    license: "GPL",
}
