#!/usr/bin/env bash
# Power management of the Rust driver.  Runtime PM: the idle host's
# controller is runtime suspended with its module clock (sdhc-pclk) and the
# clock tree's inputs (sdhc-clkin0-3) off, and resumed with them on while
# I/O runs; power/control "on" keeps it powered, "auto" lets it go again.
# System sleep: 8 MiB with crc32c headers written, suspend-to-idle with
# pm_test=devices (every device suspended and resumed, the driver's own
# suspend and resume callbacks among them, pm_print_times, the controller
# active going in and coming out), the data verified
# after it, and new I/O written and verified.  Then unbind while runtime
# suspended and bind again, the data still there; the log must be free of
# warnings (scripts/emu-run).
. "$(dirname "$0")/../lib.sh"
g=$(guest pm <<'G'
set -e
insmod $RS_MOD
wait_card 30 || fail "no card"
PDEV=$(sdhc_dev)
P=/sys/bus/platform/devices/$PDEV/power
CLK=/sys/kernel/debug/clk
[ -r $P/runtime_status ] || fail "no runtime PM status for $PDEV"
[ -r $CLK/sdhc-pclk/clk_enable_count ] || fail "no sdhc-pclk in $CLK"
status() { cat $P/runtime_status; }
pclk() { cat $CLK/sdhc-pclk/clk_enable_count; }
clkin() {
  local n=0 i
  for i in 0 1 2 3; do n=$((n + $(cat $CLK/sdhc-clkin$i/clk_enable_count))); done
  echo $n
}
# wait_status WANT: the runtime status becomes WANT within 2 s
wait_status() {
  local i=0
  while [ "$(status)" != "$1" ]; do
    i=$((i + 1)); [ $i -gt 100 ] && return 1
    usleep 20000
  done
}
say "autosuspend_delay_ms $(cat $P/autosuspend_delay_ms)"
wait_status suspended || fail "idle host not runtime suspended: $(status)"
[ "$(pclk)" = 0 ] || fail "suspended, sdhc-pclk enable count $(pclk)"
[ "$(clkin)" = 0 ] || fail "suspended, clock tree inputs enabled $(clkin) times"
say "idle: runtime suspended, pclk and clkin off"

# I/O resumes it: sample while fio reads
fio --name=rd --filename=$DEV --direct=1 --rw=read --bs=64k --size=32m \
    --output-format=terse >/tmp/rd.out 2>&1 &
pid=$!
seen=""
while kill -0 $pid 2>/dev/null; do
  s=$(status); c=$(pclk); k=$(clkin)
  [ "$s" = active ] && [ "$c" = 1 ] && [ "$k" -ge 1 ] && seen=yes
  usleep 10000
done
wait $pid || { cat /tmp/rd.out; fail "read failed"; }
[ -n "$seen" ] || fail "never active with the clocks on during the read"
wait_status suspended || fail "not runtime suspended after the read: $(status)"
[ "$(pclk)" = 0 ] || fail "suspended after the read, sdhc-pclk enable count $(pclk)"
say "read: active with the clocks on, suspended again after"

echo on > $P/control
[ "$(status)" = active ] && [ "$(pclk)" = 1 ] || fail "control=on: $(status), pclk $(pclk)"
usleep 500000
[ "$(status)" = active ] || fail "control=on: suspended while idle"
echo auto > $P/control
wait_status suspended || fail "control=auto: not suspended: $(status)"
say "power/control on keeps it active, auto lets it suspend"

keep_data write || fail "initial write"
echo 1 > /sys/power/pm_print_times
echo 1 > /sys/module/suspend/parameters/pm_test_delay
echo devices > /sys/power/pm_test
dmesg -c >/dev/null
# active going in (power/control on), so that the system suspend switches the clocks off
echo on > $P/control
echo freeze > /sys/power/state || fail "suspend to idle failed"
echo none > /sys/power/pm_test
dmesg > /tmp/pm.log
grep -q "suspend debug: Waiting for 1 second" /tmp/pm.log || fail "no pm_test wait in the log"
for cb in suspend resume; do
  grep -q "$PDEV: PM: platform_pm_$cb returned 0 after" /tmp/pm.log ||
    { grep "$PDEV" /tmp/pm.log; fail "no $cb callback of $PDEV returning 0 in the log"; }
done
if grep "$PDEV: .* returned -" /tmp/pm.log; then fail "a PM callback of $PDEV failed"; fi
[ "$(status)" = active ] && [ "$(pclk)" = 1 ] || fail "after resume with control=on: $(status), pclk $(pclk)"
echo auto > $P/control
wait_card 30 || fail "no card after resume"
keep_data verify || fail "data written before the suspend does not verify"
fio --name=after --filename=$DEV --direct=1 --rw=write --bs=64k --offset=16m --size=8m \
    --verify=crc32c --do_verify=1 --output-format=terse >/tmp/after.out 2>&1 ||
  { cat /tmp/after.out; fail "I/O after resume"; }
wait_status suspended || fail "not runtime suspended after resume: $(status)"
say "suspend to idle (pm_test=devices): data verifies, I/O after works, suspended again"

DRV=/sys/bus/platform/drivers/meson-mx-sdhc-rs
echo "$PDEV" > $DRV/unbind
[ -b "$DEV" ] && fail "$DEV still there after the unbind"
echo "$PDEV" > $DRV/bind
wait_card 30 || fail "no card after the rebind"
keep_data verify || fail "data does not verify after unbind while suspended and rebind"
wait_status suspended || fail "not runtime suspended after rebind: $(status)"
rmmod meson_mx_sdhc_rs
say "@@PM done"
G
)
emu --card emmc --size 64 --driver none "$g" || exit 1
check "the guest script reached its end" grep -q '@@PM done' "$T/serial.log"
