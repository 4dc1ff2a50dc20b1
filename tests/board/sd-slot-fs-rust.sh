#!/usr/bin/env bash
# ext4 on the SD card slot and a card swapped under the mounted file system, on
# the Rust driver (meson_mx_sdio_rs): tests/lib.sh sd_slot_fs_test.
. "$(dirname "$0")/../lib.sh"
sd_slot_fs_test rust
