#!/usr/bin/env bash
# The Rust driver's bounce buffer: fio write + verify (crc32c, direct=1) at
# bs 512, 4k, 12k, 64k, 128k and 1m, rw=write and randwrite, and rw=write
# with buffers 512 bytes past a page boundary (--iomem_align=512: every
# request then spans more pages than it fills, so it maps to several DMA
# segments), for bounce_size=0 (the C driver's limits, no bounce),
# bounce_size=131072, the default (512 KiB, 64 segments, coherent memory) and the
# default with bounce_cached=1 (cached memory with streaming syncs).  The queue limits
# the driver set are checked in sysfs.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
[ "$(sdhc_driver)" = rust ] || fail "the controller is held by '$(sdhc_driver)', not the Rust driver"
q=/sys/block/mmcblk0/queue
segs=$(cat $q/max_segments); kb=$(cat $q/max_hw_sectors_kb)
say "modparams '$EMU_MODPARAMS': max_segments=$segs max_hw_sectors_kb=$kb max_segment_size=$(cat $q/max_segment_size)"
case "$EMU_MODPARAMS" in
*bounce_size=0*) [ "$segs" = 1 ] && [ "$kb" = 128 ] || fail "limits without bounce buffer" ;;
*bounce_size=131072*) [ "$segs" = 64 ] && [ "$kb" = 128 ] || fail "limits with a 128 KiB bounce buffer" ;;
*) [ "$segs" = 64 ] && [ "$kb" = 512 ] || fail "default limits (512 KiB)" ;;
esac
mem=$(sed -n 's/^bounce_memory: //p' "$(rs_debugfs)/limits")
case "$EMU_MODPARAMS" in
*bounce_cached=1*) [ "$mem" = cached ] || fail "bounce_cached=1 but the bounce memory is '$mem'" ;;
*bounce_size=0*) ;;
*) [ "$mem" = coherent ] || fail "the default bounce memory is '$mem', not coherent" ;;
esac
run() { # bs rw extra...
  local bs=$1 rw=$2; shift 2
  local size=3m
  [ "$bs" = 512 ] && size=256k
  fio --name=v --filename=/dev/mmcblk0 --direct=1 --rw=$rw --bs=$bs --size=$size "$@" \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out 2>&1 \
      || { cat /tmp/fio.out; fail "fio write+verify bs=$bs rw=$rw $*"; }
  say "ok: bs=$bs rw=$rw $* over $size"
}
for bs in 512 4k 12k 64k 128k 1m; do
  run $bs write
  run $bs randwrite
  run $bs write --iomem_align=512
done
G
)
rc=0
for mp in "bounce_size=0" "bounce_size=131072" "" "bounce_cached=1"; do
  echo "== modparams: '${mp:-default}'"
  emu --card emmc --size 64 --driver rust --modparams "$mp" "$g" || rc=1
  grep -E '\[guest\]' "$T/serial.log" | tail -20
done
exit $rc
