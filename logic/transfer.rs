// SPDX-License-Identifier: GPL-2.0

//! What a finished transfer reports and copies back, the same rule in both drivers (the
//! SDHC's `logic.rs` and the SD card slot's `sdio/logic.rs`).
//!
//! Plain `core` Rust only: no allocation, no kernel types.

/// Returns `bytes_xfered` of a finished transfer of `len` bytes.
///
/// All of it, or 0 whenever the command or the data phase reported an error.
pub(crate) fn bytes_xfered(cmd_error: bool, data_error: bool, len: u32) -> u32 {
    if cmd_error || data_error {
        0
    } else {
        len
    }
}

/// Returns how many bytes of a bounced transfer to copy from the bounce buffer back into the
/// request's scatterlist.
///
/// Only for reads, only without a command or data error, and only `bytes_xfered` bytes. A failed
/// read never overwrites the caller's memory.
pub(crate) fn copy_back_len(read: bool, cmd_error: bool, data_error: bool, xfered: u32) -> u32 {
    if read && !cmd_error && !data_error {
        xfered
    } else {
        0
    }
}
