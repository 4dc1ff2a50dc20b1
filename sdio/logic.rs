// SPDX-License-Identifier: GPL-2.0

//! The driver's pure decisions, free of kernel types so that they are also unit tested on the
//! host (`cargo test`).
//!
//! They are the module parameters and the queue limits they give
//! (`logic/module_params.rs`), a command's timeout (`logic/timeout.rs`), the statistics
//! (`logic/counters.rs`) and the turns of the slots on the controller's mux
//! (`logic/ports.rs`).
//!
//! The rules the SDHC driver has as well are its files, included here (`../logic/`): the
//! parameter ranges and their messages (`params`), the direct-or-bounce choice and the
//! `pre_req` mapping (`data_path`, with this controller's alignment), what a finished transfer
//! reports and copies back (`transfer`), and the request counters (`stats`). What this driver
//! does not use of them is dead code here.
//!
//! The card clock's divider is not among them: the common clock framework's divider
//! (`clk-divider.c`) chooses it for the rate `set_ios` asks (`clkc.rs`).
//!
//! Plain `core` Rust only: no allocation, no kernel types.

#[path = "../logic/data_path.rs"]
#[allow(dead_code)]
pub(crate) mod data_path;
#[path = "../logic/params.rs"]
#[allow(dead_code)]
pub(crate) mod params;
#[path = "../logic/stats.rs"]
#[allow(dead_code)]
pub(crate) mod stats;
#[path = "../logic/transfer.rs"]
pub(crate) mod transfer;

#[path = "logic/counters.rs"]
pub(crate) mod counters;
#[path = "logic/module_params.rs"]
pub(crate) mod module_params;
#[path = "logic/ports.rs"]
pub(crate) mod ports;
#[path = "logic/timeout.rs"]
pub(crate) mod timeout;

#[cfg(test)]
#[path = "logic/tests.rs"]
mod tests;
