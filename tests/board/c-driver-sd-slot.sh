#!/usr/bin/env bash
# The in-tree C driver meson-mx-sdio, unmodified, on the model of the
# Meson8b's other MMC controller (qemu/meson_mx_sdio.c, the SD card slot of
# the Odroid-C1 board: slot@1, 4 bits, SD high speed): the SD card in the
# slot is found with its size, 4-bit bus and high speed; fio write + crc32c
# verify; mmc_test's basic cases 1-6 (from case 7 on mmc_test moves blocks
# of 1-256 bytes, which the driver refuses: it takes scatterlists of whole,
# aligned words only); then faults injected over QMP: one data CRC error on
# a read (the driver reports it in cmd->error but with the whole transfer
# done, so the MMC core keeps the damaged data: characterised, not hidden;
# the card reads back intact afterwards), response timeouts on every read
# (the driver's timer; after the MMC core's retries an I/O error reaches the
# block layer, and once they stop the card works as before: data intact,
# fio verify again), and a lost interrupt on a command without data (the
# driver's timeout and a soft reset; the card works on).
# The SDHC's driver is not loaded: the slot's card is the only MMC card.
. "$(dirname "$0")/../lib.sh"
sd_slot_host_script resp-timeout
g=$(guest t <<'G'
set -e
insmod /lib/modules/meson-mx-sdio.ko
w=0
until SD=$(slot_disk) && [ -b "$SD" ]; do
  w=$((w + 1)); [ $w -lt 100 ] || fail "no card in the SD slot after 10 s"; usleep 100000
done
host=$(basename "$(ls -d /sys/bus/platform/devices/*.mmc:slot@1/mmc_host/mmc*)")
say "SD slot card: $SD on $host"
sz=$(cat /sys/block/${SD#/dev/}/size)
[ "$sz" = $((64 * 2048)) ] || fail "size $sz sectors, expected $((64 * 2048))"
cat /sys/kernel/debug/$host/ios
grep -q 'bus width:.*2 (4 bits)' /sys/kernel/debug/$host/ios || fail "not 4 bits"
grep -q 'timing spec:.*sd high-speed' /sys/kernel/debug/$host/ios || fail "not in SD high speed"
for bs in 4k 64k; do
  fio --name=v$bs --filename=$SD --direct=1 --rw=randwrite --bs=$bs --size=4m \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out \
      || { cat /tmp/fio.out; fail "fio verify bs=$bs"; }
  say "fio randwrite+verify bs=$bs ok"
done

# the kernel's mmc_test, basic cases (the block driver is unbound meanwhile)
mmc-test-run 1-6 > /tmp/mmc-test.out
cat /tmp/mmc-test.out
[ "$(grep -c "|OK$" /tmp/mmc-test.out)" = 6 ] || fail "mmc_test: not every basic case passed"
# 15-18 (whole, aligned words: the driver takes them) under both readings of a data phase
# the card does not complete
mmc_test_broken
card=$(ls /sys/bus/mmc/devices/ | head -1)
echo "$card" > /sys/bus/mmc/drivers/mmc_test/unbind
echo "$card" > /sys/bus/mmc/drivers/mmcblk/bind
w=0
until SD=$(slot_disk) && [ -b "$SD" ]; do
  w=$((w + 1)); [ $w -lt 100 ] || fail "the card's disk did not come back"; usleep 100000
done
say "mmc_test cases 1-6 OK; $SD back"

dd if=/dev/urandom of=/tmp/pat bs=64k count=4 2>/dev/null
dd if=/tmp/pat of=$SD bs=64k seek=16 oflag=direct 2>/dev/null
# One data CRC error on a read.  The driver sets cmd->error but also
# bytes_xfered to the whole transfer, and the MMC core's recovery keeps
# what was transferred when the card's status is clean: the read returns
# success with the damaged data (the model changes one byte).
host_sync one-read
dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null \
    || say "a read with one data CRC error: I/O error reported"
host_sync count-1
if cmp -s /tmp/pat /tmp/back; then
  say "one data CRC error on a read: retried, data intact"
else
  say "C driver defect reproduced: a data CRC error on a read returned the damaged data as good"
fi
dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null \
    || fail "reads fail after one data CRC error"
cmp /tmp/pat /tmp/back || fail "data differs on the card after one data CRC error"
say "after one data CRC error: the card reads back intact"

# a lost interrupt on a command without data (the MMC core's card-detect
# poll, CMD13, once a second with broken-cd): the driver's 1 s timer ends
# it with a soft reset, the core retries, the card stays
host_sync lost-irq
sleep 3
host_sync lost-done
dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null \
    || fail "reads fail after the lost interrupt"
cmp /tmp/pat /tmp/back || fail "data differs after the lost interrupt"
say "a lost interrupt: timed out, soft reset, the card works on"

# Reads the card never answers (every read command, until disarmed): the
# driver's 1 s timer ends each, nothing is transferred, and after the MMC
# core's retries the error reaches the block layer.
host_sync every-read
if dd if=$SD of=/tmp/back bs=4k count=1 skip=256 iflag=direct 2>/dev/null; then
  fail "a read that times out every time returned success"
fi
host_sync clear
say "response timeouts on every read: the read failed with an I/O error"
host_sync count-2
dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null \
    || fail "reads fail after the faults stopped"
cmp /tmp/pat /tmp/back || fail "data differs after the faults stopped"
fio --name=after --filename=$SD --direct=1 --rw=randwrite --bs=16k --size=2m \
    --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out \
    || { cat /tmp/fio.out; fail "fio verify after the faults"; }
say "after the faults: data intact, fio write+verify ok"

dmesg | grep -E 'mmc[0-9]|mmcblk' | tail -8
G
)
emu --board odroidc1 --driver none --sd-slot "$T/sd.img" --sd-slot-size 64 \
    --host-script "$T/host.sh" "$g"
