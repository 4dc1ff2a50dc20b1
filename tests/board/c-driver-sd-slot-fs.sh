#!/usr/bin/env bash
# ext4 on the SD card slot and a card swapped under the mounted file system, on
# the in-tree C driver (meson-mx-sdio): tests/lib.sh sd_slot_fs_test.
. "$(dirname "$0")/../lib.sh"
sd_slot_fs_test c
