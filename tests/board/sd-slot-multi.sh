#!/usr/bin/env bash
# Two slots on the SD card slot's controller (qemu/meson_mx_sdio.c): the SD
# card on slot@1, as the Odroid-C1 has it, and the project's SDIO card
# (qemu/sdio_card.c) on slot@0, port A, the GPIOX pins, where the MXIII Plus
# wires its WiFi module (emu-run --sd-slot-sdio: the slot node of a board's
# SDIO WiFi slot, non-removable), here with one data line and at most
# 20 MHz, so that the slots' bus settings differ and the controller's CONF
# must be written for each port switch.  The eMMC on the SDHC runs on the SDHC's
# Rust driver in the same boot (--driver rust).
# First the in-tree C driver meson-mx-sdio, unmodified: it serves the first
# slot node only (slot@0: the SDIO card and its functions), warns about the
# second, and the SD card gets no host.
# Then the Rust driver meson_mx_sdio_rs: a host for each slot (the SD card's
# disk with 4 bits and SD high speed, the SDIO card with 1 bit); Linux's
# sdio_uart on the SDIO card's function 2 moves 8 KiB through the UART in
# loopback at 921600 baud with 16 bytes in flight at most, so that its
# 16-byte receive FIFO cannot overrun however long the SD card's transfers
# hold the controller (the MMC core polls the card's interrupt: CMD52s on
# slot@0), while fio write + crc32c verify runs on the SD card
# (slot@1) all the time and once on the eMMC: every byte back in order,
# every fio verify good, the model's UART counters agreeing (every byte
# looped, no overrun), the driver's statistics showing requests that
# waited for the other slot's, settings written for the port switches and
# no error or soft reset, and the model counting no command sent with
# another port's bus width or clock (width-mismatches, clock-mismatches:
# the model follows each card's bus width and speed mode); then a command
# timeout on the SD card's slot while the UART loops 3 KiB again (the model's
# resp-timeout on the next read, which only the SD card sends: its command
# reaches no card and the controller waits for a response until a soft reset;
# the model counts one fault injected and the command left hanging): the
# driver's timer ends it at its deadline (1 s and the data's time on the bus),
# timed in the guest's clock from the read's start to the statistics'
# error_deadline, with a soft reset and no other error counted; the core reads
# the data again, right; the UART loop, running before and after the stall,
# gets every byte back in order, and requests that waited for the other slot's
# are counted; then the controller unbound (both hosts gone, with sdio_uart
# bound to the card) and bound again: the SD card's data intact, the UART
# looping again and still no command on another port's settings.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
stall) "$QMP" "\$EMU_QMP" sdio-faults resp-timeout count=1 dir=read ;;
*) "$QMP" "\$EMU_QMP" card-stats > "$T/card-\$1.json"
   for c in width-mismatches clock-mismatches commands hung-commands faults-injected fault-kind; do
     echo "\$c \$("$QMP" "\$EMU_QMP" sdio get \$c)"
   done > "$T/model-\$1.txt" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
slot_host() {  # slot_host N: the MMC host of slot@N, empty when there is none
  local d
  for d in /sys/bus/platform/devices/*.mmc:slot@"$1"/mmc_host/mmc*; do
    [ -e "$d" ] && { basename "$d"; return 0; }
  done
  return 0
}
sdio_card() {  # sdio_card: the SDIO card on slot@0 has its function 2
  local d
  for d in /sys/bus/platform/devices/*.mmc:slot@0/mmc_host/mmc*/mmc*:0001/mmc*:0001:2; do
    [ -e "$d" ] && return 0
  done
  return 1
}
wait_for() {  # wait_for WHAT CMD...: CMD succeeds within 20 s
  local what=$1 w=0; shift
  until "$@"; do
    w=$((w + 1)); [ $w -lt 200 ] || fail "$what after 20 s"; usleep 100000
  done
}
sd_ready() { SD=$(slot_disk) && [ -b "$SD" ]; }
uart_ready() { [ -c /dev/ttySDIO0 ]; }

# the in-tree C driver: the first slot node only, with its warning
dmesg -c > /dev/null
insmod /lib/modules/meson-mx-sdio.ko
wait_for "no SDIO card on slot@0 with the C driver" sdio_card
dmesg | grep -q "more than one 'mmc-slot' compatible child found - using the first one" ||
  fail "the C driver did not warn about the second slot node"
[ -z "$(slot_host 1)" ] || fail "the C driver made a host for slot@1"
[ -n "$(sdio_func 2)" ] || fail "the C driver: no SDIO function 2"
say "C driver: the SDIO card on slot@0 ($(slot_host 0), functions $(ls /sys/bus/sdio/devices | tr '\n' ' ')), slot@1 ignored with its warning"
# unbound, not removed: rmmod meson_mx_sdio fails here (EAGAIN, the module
# in use)
echo c1108c20.mmc > /sys/bus/platform/drivers/meson-mx-sdio/unbind
! ls /sys/bus/sdio/devices/*:1 >/dev/null 2>&1 || fail "the SDIO card is left after the C driver's unbind"
[ -z "$(slot_host 0)" ] || fail "a host of slot@0 left after the C driver's unbind"

# the Rust driver: both slots
dmesg -c > /dev/null
insmod /lib/modules/meson_mx_sdio_rs.ko
wait_for "no card in the SD slot" sd_ready
wait_for "no SDIO card on slot@0" sdio_card
drv=$(basename "$(readlink /sys/bus/platform/devices/c1108c20.mmc/driver)")
[ "$drv" = meson-mx-sdio-rs ] || fail "the controller is bound to '$drv'"
! dmesg | grep -q "more than one 'mmc-slot'" || fail "the Rust driver ignored a slot"
h0=$(slot_host 0); h1=$(slot_host 1)
say "Rust driver: SDIO card on slot@0 ($h0), SD card $SD on slot@1 ($h1)"
grep -q 'bus width:.*2 (4 bits)' /sys/kernel/debug/$h1/ios || fail "SD card not 4 bits"
grep -q 'timing spec:.*sd high-speed' /sys/kernel/debug/$h1/ios || fail "SD card not in SD high speed"
grep -q 'bus width:.*0 (1 bits)' /sys/kernel/debug/$h0/ios || fail "SDIO card not 1 bit"
clk() { sed -n 's/^actual clock:[^0-9]*\([0-9]*\) Hz/\1/p' /sys/kernel/debug/$1/ios; }
[ "$(clk $h0)" -gt 0 ] && [ "$(clk $h0)" -le 20000000 ] || fail "SDIO card at $(clk $h0) Hz"
[ "$(clk $h1)" -gt 20000000 ] || fail "SD card at $(clk $h1) Hz"
say "bus settings: slot@0 1 bit at $(clk $h0) Hz, slot@1 4 bits at $(clk $h1) Hz"
# the controller's statistics, in both hosts' debugfs directories
st=/sys/kernel/debug/$h1/stats
[ -f /sys/kernel/debug/$h0/stats ] || fail "no statistics file in $h0's directory"
stv() { v=$(sed -n "s/^$1: //p" "$st"); [ -n "$v" ] || fail "no '$1' in $st"; echo "$v"; }
grep -q '^meson_mx_sdhc_rs ' /proc/modules || fail "meson_mx_sdhc_rs is not loaded"
wait_card 30 || fail "no eMMC on the SDHC"

insmod /lib/modules/sdio_uart.ko
wait_for "no /dev/ttySDIO0" uart_ready
f2=$(sdio_func 2)
[ "$(basename "$(readlink /sys/bus/sdio/devices/$f2/driver)")" = sdio_uart ] ||
  fail "sdio_uart did not bind function 2"
echo 0 > "$st"
dmesg -c > /dev/null

# fio verify on the SD card all the time the UART moves its bytes
t0=$(date +%s)
fio --name=emmc --filename=$DEV --direct=1 --rw=randwrite --bs=64k --size=4m \
    --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio-emmc.out &
emmc_fio=$!
rm -f /tmp/uart.done
(
  n=0
  while [ ! -e /tmp/uart.done ] || [ $n = 0 ]; do
    fio --name=sd$n --filename=$SD --direct=1 --rw=randwrite --bs=64k --size=2m \
        --offset=$(( (n % 8) * 2 ))m --verify=crc32c --do_verify=1 --verify_fatal=1 \
        --output-format=terse >/tmp/fio-sd.out || { cat /tmp/fio-sd.out; exit 1; }
    n=$((n + 1))
  done
  echo $n > /tmp/fio-sd.runs
) &
sd_fio=$!
# the model's counters are read on a failure too: they tell whether a
# command went out on another port's bus settings
sdio-uart-loop /dev/ttySDIO0 921600 8192 300 16 > /tmp/uart.out || {
  cat /tmp/uart.out; touch /tmp/uart.done; host_sync uart
  fail "sdio_uart: bytes lost or out of order beside fio"
}
touch /tmp/uart.done
cat /tmp/uart.out
wait $sd_fio || fail "fio verify on the SD card beside the SDIO card"
wait $emmc_fio || { cat /tmp/fio-emmc.out; fail "fio verify on the eMMC beside the SD slot's cards"; }
say "at once: 8 KiB through the SDIO card's UART, $(cat /tmp/fio-sd.runs) fio verify runs of 2 MiB on $SD, 4 MiB on $DEV (eMMC): ok ($(( $(date +%s) - t0 )) s)"
[ "$(stv waited)" -ge 1 ] || fail "stats: no request waited for the other slot's"
for k in error_setup error_deadline error_cmd_crc error_data_crc resets; do
  [ "$(stv $k)" = 0 ] || fail "stats: $k $(stv $k)"
done
! dmesg | grep -q "Timeout on CMD" || fail "a command timed out beside the other slot's"
# each switch between the slots' differing settings writes them
[ "$(stv settings_writes)" -ge "$(stv waited)" ] ||
  fail "stats: settings_writes $(stv settings_writes), fewer than the requests that waited ($(stv waited))"
say "stats: commands $(stv commands), data_requests $(stv data_requests), waited $(stv waited), settings_writes $(stv settings_writes)"
host_sync uart

# a command timeout on the SD card's slot, the UART looping beside it
uptime_cs() { tr -d . < /proc/uptime | cut -d' ' -f1; }
phase=$(uptime_cs)
dd if=/dev/urandom of=/tmp/stall.pat bs=64k count=1 2>/dev/null
dd if=/tmp/stall.pat of=$SD bs=64k seek=320 oflag=direct 2>/dev/null || fail "pattern write before the stall"
echo 0 > "$st"
sdio-uart-loop /dev/ttySDIO0 921600 3072 300 16 > /tmp/uart-stall.out &
uart=$!
rm -f /tmp/caught
# the watcher: when error_deadline counts the timeout (5 s at most)
( n=0; while [ "$(stv error_deadline)" = 0 ] && [ $n -lt 500 ]; do usleep 10000; n=$((n + 1)); done
  uptime_cs > /tmp/caught ) &
watch=$!
usleep 500000
host_sync stall
t0=$(uptime_cs)
dd if=$SD of=/tmp/stall.back bs=64k count=1 skip=320 iflag=direct 2>/dev/null || fail "the read that timed out: an I/O error"
t1=$(uptime_cs)
wait $watch
kill -0 $uart 2>/dev/null || fail "the UART loop ended before the stall was over: it did not run beside it"
wait $uart || { cat /tmp/uart-stall.out; fail "sdio_uart: bytes lost or out of order beside the SD card's command timeout"; }
cat /tmp/uart-stall.out
cmp /tmp/stall.pat /tmp/stall.back || fail "the read after the command timeout returned wrong data"
caught=$(( $(cat /tmp/caught) - t0 ))
# 1000 ms (CMD_TIMEOUT_MS) and 64 KiB on four lines at about 35 MHz (4 ms); the
# watcher polls every 10 ms, the guest's clock counts in 10 ms
[ $caught -ge 100 ] && [ $caught -le 125 ] ||
  fail "the command timeout caught ${caught}0 ms after the read started, not at its deadline (1000-1250 ms)"
[ "$(stv error_deadline)" = 1 ] || fail "stats: error_deadline $(stv error_deadline) after one command timeout"
[ "$(stv resets)" -ge 1 ] || fail "stats: no soft reset after the command timeout"
[ "$(stv waited)" -ge 1 ] || fail "stats: no request waited for the other slot's beside the command timeout"
for k in error_setup error_cmd_crc error_data_crc; do
  [ "$(stv $k)" = 0 ] || fail "stats: $k $(stv $k) after a command timeout"
done
say "a command timeout on $SD: caught ${caught}0 ms after the read started (the read took $(( t1 - t0 ))0 ms), error_deadline 1, resets $(stv resets), waited $(stv waited); the data read again right; 3 KiB through the UART beside it, every byte in order ($(( $(uptime_cs) - phase ))0 ms in all)"

# unbind: both hosts go (sdio_uart bound to the card); bind: both come back
dd if=$SD of=/tmp/pat bs=64k count=4 iflag=direct 2>/dev/null
echo c1108c20.mmc > /sys/bus/platform/drivers/meson-mx-sdio-rs/unbind
[ -z "$(slot_host 0)" ] && [ -z "$(slot_host 1)" ] || fail "a host is left after unbind"
! ls /sys/bus/sdio/devices/*:1 >/dev/null 2>&1 || fail "the SDIO card is left after unbind"
! slot_disk >/dev/null || fail "the SD card's disk is left after unbind"
[ ! -e /dev/ttySDIO0 ] || fail "/dev/ttySDIO0 is left after unbind"
echo c1108c20.mmc > /sys/bus/platform/drivers/meson-mx-sdio-rs/bind
wait_for "no card in the SD slot after bind" sd_ready
wait_for "no /dev/ttySDIO0 after bind" uart_ready
dd if=$SD of=/tmp/back bs=64k count=4 iflag=direct 2>/dev/null || fail "reads fail after bind"
cmp /tmp/pat /tmp/back || fail "the SD card's data differs after unbind and bind"
sdio-uart-loop /dev/ttySDIO0 921600 1024 || fail "sdio_uart after bind"
rmmod sdio_uart
host_sync end
say "unbind and bind: both hosts gone and back, $SD intact, the UART looping"
say "@@MULTI-TEST done"
G
)
rc=0
emu --board odroidc1 --driver rust --sd-slot "$T/sd.img" --sd-slot-size 64 --sd-slot-sdio \
    --sdio-model sdio-slot-bus-width=1 --sdio-model sdio-slot-max-frequency=20000000 \
    --host-script "$T/host.sh" --timeout 600 "$g" || rc=1
log="$T/serial.log"
check "the guest script finished" grep -q '@@MULTI-TEST done' "$log" || rc=1
python3 - "$T/card-uart.json" <<'PY' || rc=1
import json, sys
u = json.load(open(sys.argv[1]))["uart"]
good = u["looped"] == 8192 and u["overruns"] == 0 and u["irqs"] > 0
print("  %s: the model looped %d of 8192 bytes, %d overruns, %d interrupts"
      % ("ok" if good else "FAILED", u["looped"], u["overruns"], u["irqs"]))
sys.exit(0 if good else 1)
PY
for at in uart end; do
  [ -f "$T/model-$at.txt" ] || { echo "  FAILED: the model's counters not read at $at"; rc=1; continue; }
  python3 - "$T/model-$at.txt" "$at" "$T/model-uart.txt" <<'PY' || rc=1
import sys
m = dict(l.split() for l in open(sys.argv[1]))
good = int(m["commands"]) > 0 and m["width-mismatches"] == "0" and m["clock-mismatches"] == "0"
print("  %s: at %s the model counted %s commands, %s with another port's bus width, %s clocked"
      " above their card" % ("ok" if good else "FAILED", sys.argv[2], m["commands"],
                             m["width-mismatches"], m["clock-mismatches"]))
# the command timeout: none injected before it; after it one, and at least one more command
# left hanging (a command the card does not answer at a card's initialisation hangs too)
n = 0 if sys.argv[2] == "uart" else 1
hung = int(m["hung-commands"]) - (0 if n == 0 else int(dict(l.split() for l in open(sys.argv[3]))["hung-commands"]))
stall = m["faults-injected"] == str(n) and m["fault-kind"] == "none" and (n == 0 or hung >= 1)
print("  %s: at %s the model had injected %s command timeouts (%s expected), fault-kind %s, %s commands"
      " left hanging%s" % ("ok" if stall else "FAILED", sys.argv[2], m["faults-injected"], n,
                           m["fault-kind"], m["hung-commands"], "" if n == 0 else " (%d since uart)" % hung))
sys.exit(0 if good and stall else 1)
PY
done
exit $rc
