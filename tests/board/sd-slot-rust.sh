#!/usr/bin/env bash
# The Rust driver of the SD card slot (sdio/, meson_mx_sdio_rs) on the model
# of the Meson8b's other MMC controller (qemu/meson_mx_sdio.c, the Odroid-C1's
# slot@1): the module loaded in place of the C driver (meson-mx-sdio not
# loaded); the card found with its size, 4-bit bus and SD high speed; the
# host's max_segments above 1 (the bounce buffer); fio write + crc32c verify
# with bs 128k (32 pages per request: through the bounce buffer) and 4k (one
# aligned page: in place); mmc_test's correctness cases, with those the C
# driver refuses from case 7 on (blocks of 1-256 bytes, scatterlists of
# unaligned entries), which go through the bounce buffer, and transfers of
# up to max_segments (64) segments a request, overlapped (pre_req), on an
# 8 MiB card (their test area is half the card); then faults injected over
# QMP: one data CRC
# error on a read (the driver reports it with nothing transferred, so the
# MMC core retries: the read returns the card's data, never the damaged
# bytes), data CRC errors on every read (an I/O error reaches dd; once they
# stop the card reads back intact), and a lost interrupt (the driver's timer
# and a soft reset; the card works on); the statistics in debugfs (direct and
# bounced requests and pre_req mappings after the fio runs, reset by a write,
# the injected data CRC error counted once with its soft reset, the lost
# interrupt as a timeout); the module parameters: out-of-range values refuse
# to load with a message naming the parameter and its range, max_segs=1 and
# bounce_size=0 load with one segment a request (the latter sending every
# request in place), the card's data intact.
# The eMMC on the SDHC runs on the SDHC's Rust driver in the same boot
# (--driver rust): fio verify on both cards at once.
. "$(dirname "$0")/../lib.sh"
sd_slot_host_script data-crc
g=$(guest t <<'G'
set -e
wait_disk() {
  local w=0
  until SD=$(slot_disk) && [ -b "$SD" ]; do
    w=$((w + 1)); [ $w -lt 100 ] || fail "$1"; usleep 100000
  done
}
insmod /lib/modules/meson_mx_sdio_rs.ko
grep -q '^meson_mx_sdio_rs ' /proc/modules || fail "meson_mx_sdio_rs is not loaded"
! grep -q '^meson_mx_sdio ' /proc/modules || fail "the C driver meson_mx_sdio is loaded"
wait_disk "no card in the SD slot after 10 s"
host=$(basename "$(ls -d /sys/bus/platform/devices/*.mmc:slot@1/mmc_host/mmc*)")
drv=$(basename "$(readlink /sys/bus/platform/devices/c1108c20.mmc/driver)")
[ "$drv" = meson-mx-sdio-rs ] || fail "the controller is bound to '$drv'"
say "SD slot card: $SD on $host (driver $drv)"
sz=$(cat /sys/block/${SD#/dev/}/size)
[ "$sz" = $((8 * 2048)) ] || fail "size $sz sectors, expected $((8 * 2048))"
cat /sys/kernel/debug/$host/ios
grep -q 'bus width:.*2 (4 bits)' /sys/kernel/debug/$host/ios || fail "not 4 bits"
grep -q 'timing spec:.*sd high-speed' /sys/kernel/debug/$host/ios || fail "not in SD high speed"
segs=$(cat /sys/block/${SD#/dev/}/queue/max_segments)
[ "$segs" = 64 ] || fail "max_segments $segs, expected 64 (max_segs' default)"
say "max_segments $segs, max_hw_sectors_kb $(cat /sys/block/${SD#/dev/}/queue/max_hw_sectors_kb)"

for bs in 128k 4k; do
  t0=$(date +%s)
  fio --name=v$bs --filename=$SD --direct=1 --rw=randwrite --bs=$bs --size=4m \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out \
      || { cat /tmp/fio.out; fail "fio verify bs=$bs"; }
  say "fio randwrite+verify bs=$bs 4 MiB ok ($(( $(date +%s) - t0 )) s)"
done
st=/sys/kernel/debug/$host/stats
[ -f "$st" ] || fail "no statistics file $st"
stv() { v=$(sed -n "s/^$1: //p" "$st"); [ -n "$v" ] || fail "no '$1' in $st"; echo "$v"; }
# bs=4k: one page, in place, and each such write mapped in pre_req; bs=128k
# goes direct or through the bounce buffer as fio's pages happen to lie (one
# segment or more), so the bounced count is checked after mmc_test below
[ "$(stv direct)" -ge 1024 ] || fail "stats: direct $(stv direct) after fio bs=4k"
[ "$(stv pre_mapped)" -ge 512 ] || fail "stats: pre_mapped $(stv pre_mapped) after fio bs=4k"
[ "$(stv bytes_written)" -ge $((8 << 20)) ] || fail "stats: bytes_written $(stv bytes_written)"
[ "$(stv bytes_read)" -ge $((8 << 20)) ] || fail "stats: bytes_read $(stv bytes_read)"
[ "$(stv error_data_crc)" = 0 ] || fail "stats: data CRC errors before any was injected"
grep -v '^size_.*: 0$' "$st"
say "stats after fio: direct $(stv direct), bounced $(stv bounced), pre_mapped $(stv pre_mapped), bytes_written $(stv bytes_written), bytes_read $(stv bytes_read)"

# both Rust drivers at once: the eMMC on the SDHC (meson_mx_sdhc_rs, loaded
# by the guest's init) and the SD card, fio verify on both side by side
grep -q '^meson_mx_sdhc_rs ' /proc/modules || fail "meson_mx_sdhc_rs is not loaded"
wait_card 30 || fail "no eMMC on the SDHC"
edrv=$(basename "$(readlink /sys/bus/platform/devices/"$(sdhc_dev)"/driver)")
[ "$edrv" = meson-mx-sdhc-rs ] || fail "the SDHC is bound to '$edrv'"
t0=$(date +%s)
fio --name=emmc --filename=$DEV --direct=1 --rw=randwrite --bs=64k --size=8m \
    --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio-emmc.out &
emmc_fio=$!
fio --name=sd --filename=$SD --direct=1 --rw=randwrite --bs=128k --size=8m \
    --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio-sd.out \
    || { cat /tmp/fio-sd.out; fail "fio verify on the SD card beside the eMMC"; }
wait $emmc_fio || { cat /tmp/fio-emmc.out; fail "fio verify on the eMMC beside the SD card"; }
say "both Rust drivers at once: fio randwrite+verify 8 MiB on $DEV (eMMC, $edrv) and $SD ok ($(( $(date +%s) - t0 )) s)"

# the kernel's mmc_test (the block driver is unbound meanwhile): 1-14 (7-14
# move blocks of 1-256 bytes and badly aligned scatterlists, through the
# bounce buffer), 19-22 (highmem pages) and 23-28 (the best-case and
# single-transfer performance cases, 25 and 26 with a page per segment),
# 31 (consecutive writes of 4 MiB by transfer size), 42 and 44 (writes and
# reads of half the card with 1 to 512 segments a request, as many as
# max_segments allows, non-blocking: the next request prepared while one
# runs) and 45 (the reset test: the card power-cycled and initialised
# again);
# 15-18, which expect a data timeout with the command good for a command
# the card sends no data for, run apart under both readings of what the
# controller does then (mmc_test_broken: the driver's timer, -ETIMEDOUT;
# CMD_INT with the CRC16 status clear, -EILSEQ); from 29 on see
# Documentation/sd-slot.rst
t0=$(date +%s)
mmc-test-run 1-14 19-28 31 42 44 45 > /tmp/mmc-test.out
cat /tmp/mmc-test.out
n=$(grep -c "|" /tmp/mmc-test.out || true)
ok=$(grep -c "|OK$" /tmp/mmc-test.out || true)
[ "$n" = 28 ] && [ "$ok" = 28 ] || fail "mmc_test: $ok of $n cases OK, expected 28 of 28"
# requests of as many segments as the host takes reached it (mmc_test's sg_len)
sg=$(dmesg | sed -n 's/.*sg_len \([0-9]*\)).*/\1/p' | sort -n | tail -1)
[ "${sg:-0}" = "$segs" ] || fail "mmc_test's largest request had ${sg:-no} segments, not max_segments ($segs)"
# 15-18 under both readings of a data phase the card does not complete
mmc_test_broken
card=$(ls /sys/bus/mmc/devices/ | head -1)
echo "$card" > /sys/bus/mmc/drivers/mmc_test/unbind
echo "$card" > /sys/bus/mmc/drivers/mmcblk/bind
wait_disk "the card's disk did not come back"
say "mmc_test cases 1-14, 19-28, 31, 42, 44 and 45 OK, up to $sg segments a request ($(( $(date +%s) - t0 )) s); $SD back"
# mmc_test's unaligned lists (7-14) and a page per segment (25, 26) go
# through the bounce buffer whatever the pages are
[ "$(stv bounced)" -ge 2 ] || fail "stats: bounced $(stv bounced) after mmc_test's scattered cases"

dd if=/dev/urandom of=/tmp/pat bs=64k count=4 2>/dev/null
dd if=/tmp/pat of=$SD bs=64k seek=16 oflag=direct 2>/dev/null
# a write to the file resets the counters
echo 0 > "$st"
[ "$(stv bytes_read)" = 0 ] && [ "$(stv bounced)" = 0 ] || fail "stats not reset by a write"
# One data CRC error on a read: reported with nothing transferred, the MMC
# core retries; the read returns the card's data or an I/O error, never the
# damaged bytes (the model changes one byte).
host_sync one-read
if dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null; then
  cmp -s /tmp/pat /tmp/back || fail "a read with one data CRC error returned damaged data as good"
  say "one data CRC error on a read: retried, data intact"
else
  say "one data CRC error on a read: I/O error reported"
fi
host_sync count-1
dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null \
    || fail "reads fail after one data CRC error"
cmp /tmp/pat /tmp/back || fail "data differs on the card after one data CRC error"
[ "$(stv error_data_crc)" = 1 ] || fail "stats: error_data_crc $(stv error_data_crc) after one injected data CRC error"
[ "$(stv resets)" -ge 1 ] || fail "stats: no soft reset counted after the data CRC error"
say "after one data CRC error: the card reads back intact; stats: error_data_crc 1, resets $(stv resets)"

# Data CRC errors on every read, until disarmed: the error reaches dd.
host_sync every-read
if dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null; then
  fail "a read with a data CRC error every time returned success"
fi
host_sync clear
host_sync count-2
say "data CRC errors on every read: the read failed with an I/O error"
dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null \
    || fail "reads fail after the data CRC errors stopped"
cmp /tmp/pat /tmp/back || fail "data differs after the data CRC errors"
say "after the data CRC errors: the card reads back intact"

# a lost interrupt on a command without data (the core's card-detect poll,
# CMD13, once a second with broken-cd): the driver's timer ends it with a
# soft reset, the core retries, the card stays
host_sync lost-irq
sleep 3
host_sync lost-done
dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null \
    || fail "reads fail after the lost interrupt"
cmp /tmp/pat /tmp/back || fail "data differs after the lost interrupt"
fio --name=after --filename=$SD --direct=1 --rw=randwrite --bs=16k --size=2m \
    --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out \
    || { cat /tmp/fio.out; fail "fio verify after the faults"; }
[ "$(stv error_deadline)" -ge 1 ] || fail "stats: the lost interrupt's timeout not counted"
say "a lost interrupt: timed out (stats: error_deadline $(stv error_deadline)), soft reset; after the faults: data intact, fio write+verify ok"

dd if=$SD of=/tmp/pat bs=64k count=4 skip=16 iflag=direct 2>/dev/null \
    || fail "reads fail after fio"
rmmod meson_mx_sdio_rs
[ ! -e /sys/bus/platform/devices/c1108c20.mmc/driver ] || fail "the controller is still bound after rmmod"
# out-of-range parameters: the module refuses to load, naming the parameter
for bad in bounce_size=3000 bounce_size=262144 bounce_size=-2 max_segs=0 max_segs=257; do
  if insmod /lib/modules/meson_mx_sdio_rs.ko "$bad" 2>/dev/null; then
    fail "the module loaded with $bad"
  fi
  ! grep -q '^meson_mx_sdio_rs ' /proc/modules || fail "meson_mx_sdio_rs is loaded after $bad"
  dmesg | grep -q "invalid $bad: must be .*[0-9]" || fail "no message naming $bad and its range"
done
say "bad parameters refused: $(dmesg | grep -c 'invalid \(bounce_size\|max_segs\)=') messages, e.g. '$(dmesg | grep 'invalid max_segs=0' | tail -1 | sed 's/^\[[^]]*\] //')'"
for p in max_segs=1 bounce_size=0; do
  insmod /lib/modules/meson_mx_sdio_rs.ko "$p"
  wait_disk "no card after the module was loaded with $p"
  host=$(basename "$(ls -d /sys/bus/platform/devices/*.mmc:slot@1/mmc_host/mmc*)")
  st=/sys/kernel/debug/$host/stats
  segs=$(cat /sys/block/${SD#/dev/}/queue/max_segments)
  [ "$segs" = 1 ] || fail "max_segments $segs with $p"
  dd if=$SD of=/tmp/back bs=64k count=4 skip=16 iflag=direct 2>/dev/null \
      || fail "reads fail after the module was loaded with $p"
  cmp /tmp/pat /tmp/back || fail "data differs after the module was loaded with $p"
  if [ "$p" = bounce_size=0 ]; then
    [ "$(stv bounced)" = 0 ] && [ "$(stv direct)" -ge 4 ] \
        || fail "bounce_size=0: bounced $(stv bounced), direct $(stv direct)"
  fi
  say "module loaded again with $p: max_segments $segs, direct $(stv direct), bounced $(stv bounced); data intact"
  rmmod meson_mx_sdio_rs
done
insmod /lib/modules/meson_mx_sdio_rs.ko
wait_disk "no card after the module was loaded again"
dmesg | grep -E 'mmc[0-9]|mmcblk|sdio' | tail -8
G
)
emu --board odroidc1 --driver rust --sd-slot "$T/sd.img" --sd-slot-size 8 \
    --host-script "$T/host.sh" "$g"
