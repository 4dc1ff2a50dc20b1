#!/usr/bin/env bash
# The in-tree C driver, unmodified, on the model with an 8-bit eMMC (meson8b):
# enumeration with the right size and mode, fio write + verify.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
sz=$(cat /sys/block/${DEV#/dev/}/size)
say "$DEV sectors: $sz"
[ "$sz" = $((128 * 2048)) ] || fail "size $sz sectors, expected $((128 * 2048))"
cat /sys/kernel/debug/$(sdhc_host)/ios
grep -q 'timing spec:.*mmc HS200' /sys/kernel/debug/$(sdhc_host)/ios || fail "not in HS200"
grep -q 'bus width:.*3 (8 bits)' /sys/kernel/debug/$(sdhc_host)/ios || fail "not 8 bits"
for bs in 4k 128k 1m; do
  fio --name=v$bs --filename=$DEV --direct=1 --rw=write --bs=$bs --size=32m \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out \
      || { cat /tmp/fio.out; fail "fio verify bs=$bs"; }
  say "fio write+verify bs=$bs ok"
done
G
)
emu --card emmc --size 128 --driver c --compatible meson8b "$g"
