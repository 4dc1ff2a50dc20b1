#!/usr/bin/env bash
# make series-test only (needs the kernel built from the upstream series with
# MMC_MESON_MX_SDHC=y and MMC_MESON_MX_SDHC_RUST=y, EMU_KERNEL/EMU_GUEST): the
# Rust driver built into the kernel binds the SDHC at boot, takes its
# parameters from the kernel command line (meson_mx_sdhc_rs.max_segs=32), and
# a write read back with O_DIRECT through the bounce buffer is intact; the C
# driver is not in the kernel.
. "$(dirname "$0")/../lib.sh"
[ -n "${EMU_KERNEL:-}" ] || { echo "EMU_KERNEL is not set: run scripts/series-test"; exit 2; }
g=$(guest builtin <<'G'
wait_card || fail "no card with the driver built in"
drv=$(basename "$(readlink "/sys/bus/platform/devices/$(sdhc_dev)/driver")")
[ "$drv" = meson-mx-sdhc-rs ] || fail "the SDHC is bound to '$drv', not meson-mx-sdhc-rs"
[ ! -d /sys/bus/platform/drivers/meson-mx-sdhc ] || fail "the C driver is registered too"
# Rust module parameters are not in sysfs: the queue limit shows the value.
segs=$(cat /sys/block/${DEV#/dev/}/queue/max_segments)
[ "$segs" = 32 ] || fail "max_segments $segs, not the command line's max_segs=32"
dd if=/dev/urandom of=/tmp/pat bs=64k count=64 2>/dev/null
dd if=/tmp/pat of=$DEV bs=1M oflag=direct 2>/dev/null || fail "write to $DEV"
dd if=$DEV of=/tmp/back bs=1M count=4 iflag=direct 2>/dev/null || fail "read from $DEV"
cmp /tmp/pat /tmp/back || fail "4 MiB written and read back differ"
say "built in: $drv binds at boot, max_segs=32 from the command line, 4 MiB intact"
G
)
rc=0
emu --card emmc --size 16 --driver none --append "meson_mx_sdhc_rs.max_segs=32" "$g" || rc=1
grep -E '\[guest\]' "$T/serial.log" | sort -u
exit $rc
