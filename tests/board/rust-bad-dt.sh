#!/usr/bin/env bash
# A broken device tree makes the Rust driver's probe fail with a message that
# names what is wrong; no oops, no card, and the module unloads cleanly.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
insmod $RS_MOD || true
usleep 500000
[ -b /dev/mmcblk0 ] && fail "a card appeared with a broken DT"
dmesg | grep -i 'meson-mx-sdhc-rs\|meson_mx_sdhc_rs' | tail -5
dmesg | grep -i "meson-mx-sdhc-rs.*$EXPECT" >/dev/null || fail "no probe message naming '$EXPECT'"
rmmod meson_mx_sdhc_rs || fail "rmmod after a failed probe"
say "probe failed cleanly naming '$EXPECT'"
G
)
rc=0
for spec in "dt-omit=pclk:pclk" "dt-omit=interrupts:interrupt" "bus-width=3:bus-width"; do
  model=${spec%%:*}; expect=${spec#*:}
  sed "1a EXPECT='$expect'" "$g" > "$T/g-$expect.sh"
  echo "== --model $model"
  emu --card emmc --size 16 --driver none --model "$model" "$T/g-$expect.sh" || rc=1
  grep -E '\[guest\]' "$T/serial.log" | tail -3
done
exit $rc
