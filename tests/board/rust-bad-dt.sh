#!/usr/bin/env bash
# A broken device tree, one required part missing at a time (and a bus-width
# the hardware does not have): the Rust driver's probe fails with a message
# that names what is wrong, or, where the part is optional, the card comes up
# and works.  Never an oops; the module unloads cleanly every time.
#
#   reg, interrupts, pclk, clkin0, vmmc, bus-width=3  probe fails, naming it
#   clkin1..clkin3  optional: other parents of the clock mux (the card works
#                   from clkin0 and what is left)
#                   (without vmmc the host has no voltage for a card: the C
#                   driver probes and every card init fails with -22; the
#                   Rust driver refuses to probe and names vmmc-supply)
#   vqmmc           optional: no 1.8 V signalling, the eMMC runs without HS200
#   bus-width       optional: 1-bit bus
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
insmod $RS_MOD || true
usleep 500000
dmesg | grep -iE 'meson-mx-sdhc-rs|meson_mx_sdhc_rs|mmc[0-9]' | tail -4
case "$EXPECT" in
works)
  wait_card 30 || fail "no card although '$OMIT' is optional"
  dd if=/dev/urandom of=/tmp/p bs=64k count=2 2>/dev/null
  dd if=/tmp/p of=$DEV bs=64k oflag=direct 2>/dev/null || fail "write failed"
  dd if=$DEV of=/tmp/b bs=64k count=2 iflag=direct 2>/dev/null || fail "read failed"
  cmp -s /tmp/p /tmp/b || fail "data differs"
  grep -E 'timing spec|bus width' /sys/kernel/debug/$(sdhc_host)/ios | tr '\n' ' '
  say "without '$OMIT': card works" ;;
*)
  sdhc_disk > /dev/null && fail "a card appeared with a broken DT: $(sdhc_disk)"
  dmesg | grep -i "meson-mx-sdhc-rs.*$EXPECT" >/dev/null || fail "no probe message naming '$EXPECT'"
  say "probe failed cleanly naming '$EXPECT'" ;;
esac
rmmod meson_mx_sdhc_rs || fail "rmmod"
G
)
rc=0
for spec in "dt-omit=reg:reg" "dt-omit=interrupts:interrupt" "dt-omit=pclk:pclk" \
            "dt-omit=clkin0:clkin0" "bus-width=3:bus-width" \
            "dt-omit=clkin1:works" "dt-omit=clkin2:works" "dt-omit=clkin3:works" \
            "dt-omit=vmmc:vmmc-supply" "dt-omit=vqmmc:works" "dt-omit=bus-width:works"; do
  model=${spec%%:*}; expect=${spec#*:}
  sed "1a EXPECT='$expect'; OMIT='${model#*=}'" "$g" > "$T/g.sh"
  echo "== --model $model (expect: $expect)"
  emu --card emmc --size 16 --driver none --model "$model" "$T/g.sh" || rc=1
  grep -E '\[guest\]' "$T/serial.log" | tail -2
done
exit $rc
