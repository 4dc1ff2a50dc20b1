#!/usr/bin/env bash
# The in-tree C driver on the model with a 4-bit SD card (meson8m2 variant:
# hardware RX flush): enumeration, high speed, fio write + verify.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
sz=$(cat /sys/block/${DEV#/dev/}/size)
[ "$sz" = $((64 * 2048)) ] || fail "size $sz sectors, expected $((64 * 2048))"
cat /sys/kernel/debug/$(sdhc_host)/ios
grep -q 'timing spec:.*sd high-speed' /sys/kernel/debug/$(sdhc_host)/ios || fail "not in SD high speed"
grep -q 'bus width:.*2 (4 bits)' /sys/kernel/debug/$(sdhc_host)/ios || fail "not 4 bits"
for bs in 4k 128k; do
  fio --name=v$bs --filename=$DEV --direct=1 --rw=randwrite --bs=$bs --size=16m \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out \
      || { cat /tmp/fio.out; fail "fio verify bs=$bs"; }
  say "fio randwrite+verify bs=$bs ok"
done
G
)
emu --card sd --size 64 --driver c --compatible meson8m2 "$g"
