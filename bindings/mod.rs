// SPDX-License-Identifier: GPL-2.0

//! Raw bindings of the MMC host API, the clock provider API and runtime PM.
//!
//! `scripts/build-module.sh` generates `build/bindings/mmc_generated.rs` from
//! `bindings/mmc_helper.h` with the kernel's own bindgen command line,
//! restricted to `include/linux/mmc/`, `include/linux/clk-provider.h` and
//! `include/linux/pm_runtime.h`.
//! Every other type (`struct device`, `struct scatterlist`, ...) comes from
//! `kernel::bindings`, which is re-exported here so that this module is the
//! single place `kernel::mmc`, `kernel::clk::provider` and `kernel::pm` take
//! raw C items from. Items defined by the generated file take precedence over
//! the glob re-export.
//!
//! Nothing outside `kernel::mmc`, `kernel::clk::provider` and `kernel::pm` uses this module.

#![allow(
    clippy::all,
    clippy::undocumented_unsafe_blocks,
    clippy::ptr_as_ptr,
    clippy::ref_as_ptr,
    clippy::as_underscore,
    clippy::cast_lossless,
    dead_code,
    improper_ctypes,
    missing_docs,
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    unused_imports
)]

pub(crate) use kernel::bindings::*;
use kernel::ffi;
use pin_init::MaybeZeroable;

/// `dma_sync_sg_for_device()`, a static inline function: in the kernel tree the series adds its
/// helper to `rust/helpers/dma.c`, which a module built out of tree cannot do. On 32-bit ARM
/// (`CONFIG_DMA_NEED_SYNC`) the inline function calls `__dma_sync_sg_for_device()` unless the
/// device skips syncs (`dma_dev_need_sync()`), and for such a device (DMA-coherent, no bounce
/// buffering) that function has no cache maintenance to do: calling it always is equivalent.
pub(crate) use kernel::bindings::__dma_sync_sg_for_device as dma_sync_sg_for_device;

include!("../build/bindings/mmc_generated.rs");
