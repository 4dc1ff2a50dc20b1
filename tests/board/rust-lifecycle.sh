#!/usr/bin/env bash
# Lifecycle of the Rust driver: 50 insmod/rmmod cycles with the card coming
# up and readable each time; then, with data written and verified, an unbind
# while fio is writing (fio gets errors, no oops), a rebind after which the
# data written before the unbind still verifies; then rmmod while the block
# device is held open (the host goes away, the open file gets errors, closing
# it later is fine); then a debugfs file of the host held open across unbind:
# rmmod is refused (the file's operations belong to the module, which the
# open file holds) until it is closed, then succeeds, and the driver loads
# again.  The guest's kmemleak scan at the end must be clean and the log free
# of warnings (scripts/emu-run).
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
i=0
while [ $i -lt 50 ]; do
  i=$((i + 1))
  insmod $RS_MOD
  wait_card 30 || fail "cycle $i: no card"
  dd if=$DEV of=/dev/null bs=64k count=4 2>/dev/null || fail "cycle $i: read failed"
  rmmod meson_mx_sdhc_rs
  wait_no_card 30 || fail "cycle $i: card still there after rmmod"
  [ -d /sys/bus/platform/drivers/meson-mx-sdhc-rs ] && fail "cycle $i: driver still registered"
done
say "50 insmod/rmmod cycles done"

insmod $RS_MOD
wait_card 30 || fail "no card"
PDEV=$(sdhc_dev)
DRV=/sys/bus/platform/drivers/meson-mx-sdhc-rs
# 8 MiB verified at the start of the card, then a long writer further on.
keep_data write || fail "initial write"
fio --name=busy --filename=$DEV --direct=1 --rw=randwrite --bs=64k --offset=16m --size=32m \
    --time_based --runtime=30 --output-format=terse >/tmp/busy.out 2>&1 &
pid=$!
usleep 300000
kill -0 $pid 2>/dev/null || { cat /tmp/busy.out; fail "fio stopped before the unbind"; }
echo "$PDEV" > $DRV/unbind
say "unbound $PDEV while fio was writing"
rc=0; wait $pid || rc=$?
[ $rc != 0 ] || fail "fio reported success although the host went away under it"
say "fio exit status $rc: $(grep -o 'err=[0-9]*[^,]*' /tmp/busy.out | head -1)"
[ -b "$DEV" ] && fail "$DEV still there after the unbind"
echo "$PDEV" > $DRV/bind
wait_card 30 || fail "no card after the rebind"
keep_data verify || fail "data written before the unbind does not verify"
say "rebound; the 8 MiB written before the unbind verify"

# rmmod while the block device is open
exec 3<"$DEV"
rmmod meson_mx_sdhc_rs || fail "rmmod refused while the device was open"
if dd if=$DEV of=/dev/null bs=4k count=1 2>/dev/null; then fail "read succeeded after rmmod"; fi
exec 3<&-
say "rmmod with the device open: done, later reads fail, close is fine"
insmod $RS_MOD
wait_card 30 || fail "no card after insmod"
keep_data verify || fail "data does not verify after reload"
say "reloaded; data verifies"

# a debugfs file of the host open across unbind and rmmod
PDEV=$(sdhc_dev)
exec 4<"$(rs_debugfs)/stats"
echo "$PDEV" > $DRV/unbind
if rmmod meson_mx_sdhc_rs 2>/tmp/rmmod.err; then fail "rmmod succeeded while a debugfs file of the driver was open"; fi
cat <&4 >/dev/null 2>&1 || true
exec 4<&-
rmmod meson_mx_sdhc_rs || fail "rmmod refused after the debugfs file was closed"
say "debugfs file open across unbind: rmmod refused ($(head -c 80 /tmp/rmmod.err)), then done once closed"
insmod $RS_MOD
wait_card 30 || fail "no card after insmod"
say "@@LIFECYCLE debugfs done"
G
)
emu --card emmc --size 64 --driver none "$g" || exit 1
check "the guest script reached its end" grep -q '@@LIFECYCLE debugfs done' "$T/serial.log"
