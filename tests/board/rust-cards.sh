#!/usr/bin/env bash
# The Rust driver on an eMMC (meson8b variant) and on an SD card (meson8m2):
# enumeration with the right size, fio write + verify (crc32c, direct=1) at
# bs 4k, 128k and 1m over 32 MiB.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
[ "$(sdhc_driver)" = rust ] || fail "the controller is held by '$(sdhc_driver)', not the Rust driver"
want=$((EMU_SIZE_MIB * 2048))
sz=$(cat /sys/block/${DEV#/dev/}/size)
say "$DEV: $sz sectors ($EMU_CARD, $EMU_COMPATIBLE)"
[ "$sz" = "$want" ] || fail "size $sz sectors, expected $want"
grep -E 'actual clock|bus width|timing spec' /sys/kernel/debug/$(sdhc_host)/ios
for bs in 4k 128k 1m; do
  fio --name=v$bs --filename=$DEV --direct=1 --rw=write --bs=$bs --size=32m \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out \
      || { cat /tmp/fio.out; fail "fio write+verify bs=$bs"; }
  say "fio write+verify bs=$bs over 32 MiB ok"
done
G
)
sed -i '1a EMU_SIZE_MIB=128' "$g"
rc=0
# Each card type and each SoC variant once (emmc on meson8b, sd on meson8m2):
# the variants differ in the controller's set-up, not per card type.
for spec in emmc:meson8b sd:meson8m2; do
  card=${spec%:*}; compat=${spec#*:}
  echo "== $card, $compat"
  emu --card "$card" --size 128 --driver rust --compatible "$compat" "$g" || rc=1
  grep -E '\[guest\]|/dev/mmcblk[0-9]+:' "$T/serial.log" | tail -5
done
exit $rc
