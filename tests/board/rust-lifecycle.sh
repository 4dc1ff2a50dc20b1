#!/usr/bin/env bash
# 20 insmod/rmmod cycles of the Rust driver with the card coming up each
# time; the guest's kmemleak scan at the end must be clean and the log free of
# warnings.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
i=0
while [ $i -lt 20 ]; do
  i=$((i + 1))
  insmod $RS_MOD
  wait_card 30 || fail "cycle $i: no card"
  dd if=/dev/mmcblk0 of=/dev/null bs=64k count=4 2>/dev/null || fail "cycle $i: read failed"
  rmmod meson_mx_sdhc_rs
  wait_no_card 30 || fail "cycle $i: card still there after rmmod"
  [ -d /sys/bus/platform/drivers/meson-mx-sdhc-rs ] && fail "cycle $i: driver still registered"
done
say "20 insmod/rmmod cycles done"
G
)
emu --card emmc --size 64 --driver none "$g"
