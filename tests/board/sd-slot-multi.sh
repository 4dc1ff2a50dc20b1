#!/usr/bin/env bash
# Two slots on the SD card slot's controller (qemu/meson_mx_sdio.c): the SD
# card on slot@1, as the Odroid-C1 has it, and the project's SDIO card
# (qemu/sdio_card.c) on slot@0, port A, the GPIOX pins, where the MXIII Plus
# wires its WiFi module (emu-run --sd-slot-sdio: the slot node of a board's
# SDIO WiFi slot, non-removable).  The eMMC on the SDHC runs on the SDHC's
# Rust driver in the same boot (--driver rust).
# First the in-tree C driver meson-mx-sdio, unmodified: it serves the first
# slot node only (slot@0: the SDIO card and its functions), warns about the
# second, and the SD card gets no host.
# Then the Rust driver meson_mx_sdio_rs: a host for each slot (the SD card's
# disk with 4 bits and SD high speed, the SDIO card with 4 bits); Linux's
# sdio_uart on the SDIO card's function 2 moves 8 KiB through the UART in
# loopback at 921600 baud with 16 bytes in flight at most, so that its
# 16-byte receive FIFO cannot overrun however long the SD card's transfers
# hold the controller (the MMC core polls the card's interrupt: CMD52s on
# slot@0), while fio write + crc32c verify runs on the SD card
# (slot@1) all the time and once on the eMMC: every byte back in order,
# every fio verify good, the model's UART counters agreeing (every byte
# looped, no overrun), and the driver's statistics showing requests that
# waited for the other slot's; then the controller unbound (both hosts
# gone, with sdio_uart bound to the card) and bound again: the SD card's
# data intact and the UART looping again.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
"$QMP" "\$EMU_QMP" card-stats > "$T/card-\$1.json"
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
grep -q 'bus width:.*2 (4 bits)' /sys/kernel/debug/$h0/ios || fail "SDIO card not 4 bits"
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
sdio-uart-loop /dev/ttySDIO0 921600 8192 300 16 > /tmp/uart.out || { cat /tmp/uart.out; touch /tmp/uart.done; fail "sdio_uart: bytes lost or out of order beside fio"; }
touch /tmp/uart.done
cat /tmp/uart.out
wait $sd_fio || fail "fio verify on the SD card beside the SDIO card"
wait $emmc_fio || { cat /tmp/fio-emmc.out; fail "fio verify on the eMMC beside the SD slot's cards"; }
say "at once: 8 KiB through the SDIO card's UART, $(cat /tmp/fio-sd.runs) fio verify runs of 2 MiB on $SD, 4 MiB on $DEV (eMMC): ok ($(( $(date +%s) - t0 )) s)"
[ "$(stv waited)" -ge 1 ] || fail "stats: no request waited for the other slot's"
[ "$(stv error_setup)" = 0 ] || fail "stats: error_setup $(stv error_setup)"
say "stats: commands $(stv commands), data_requests $(stv data_requests), waited $(stv waited)"
host_sync uart

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
say "unbind and bind: both hosts gone and back, $SD intact, the UART looping"
say "@@MULTI-TEST done"
G
)
emu --board odroidc1 --driver rust --sd-slot "$T/sd.img" --sd-slot-size 64 --sd-slot-sdio \
    --host-script "$T/host.sh" --timeout 600 "$g"
log="$T/serial.log"
rc=0
check "the guest script finished" grep -q '@@MULTI-TEST done' "$log" || rc=1
python3 - "$T/card-uart.json" <<'PY' || rc=1
import json, sys
u = json.load(open(sys.argv[1]))["uart"]
good = u["looped"] == 8192 and u["overruns"] == 0 and u["irqs"] > 0
print("  %s: the model looped %d of 8192 bytes, %d overruns, %d interrupts"
      % ("ok" if good else "FAILED", u["looped"], u["overruns"], u["irqs"]))
sys.exit(0 if good else 1)
PY
exit $rc
