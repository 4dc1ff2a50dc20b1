#!/usr/bin/env bash
# The Rust driver's bounce buffer: fio write + verify (crc32c, direct=1) at
# bs 512, 4k, 12k, 64k, 128k and 1m, rw=write and randwrite, and rw=write
# with buffers 512 bytes past a page boundary (--iomem_align=512: every
# request then spans more pages than it fills, so it maps to several DMA
# segments), for bounce_size=0 (the C driver's limits, no bounce),
# bounce_size=524288 (with max_dma_size=524288), the default (128 KiB, 64 segments, two buffers of cached
# memory with streaming syncs: copies in pre_req/post_req), and the other three
# designs: coherent memory with one buffer (bounce_cached=0 double_buffer=0,
# the first bounce design), coherent with two, cached with one.  The queue
# limits the driver set are checked in sysfs; with two buffers the driver must
# report them and have prepared requests and copied reads in post_req (its
# statistics), with one it must have done neither.
#
# One boot: the module is loaded with each variant's parameters in turn
# (statistics and limits start afresh with each load).  Every fio job moves
# BOUNCE_FIO_SIZE (default 1m; 2m at bs=1m, two requests of each size the
# driver takes, so that one can be prepared while the other runs; 256k at
# bs=512).  A longer run: BOUNCE_FIO_SIZE=3m.
# BOUNCE_FIO_VARIANTS="a;b": only these variants (';'-separated; by hand).
. "$(dirname "$0")/../lib.sh"
variants=("bounce_size=0" "max_dma_size=524288 bounce_size=524288" "" "bounce_cached=0 double_buffer=0"
    "bounce_cached=0" "double_buffer=0")
[ -z "${BOUNCE_FIO_VARIANTS:-}" ] || IFS=';' read -r -a variants <<< "$BOUNCE_FIO_VARIANTS"
SIZE=${BOUNCE_FIO_SIZE:-1m}
g=$(guest t <<'G'
set -e
variant() { # module parameters (none: the defaults)
MP="$*"
say "== modparams: '${MP:-default}'"
load_driver rust $MP
wait_card || fail "no card with '$MP'"
[ "$(sdhc_driver)" = rust ] || fail "the controller is held by '$(sdhc_driver)', not the Rust driver"
q=/sys/block/${DEV#/dev/}/queue
segs=$(cat $q/max_segments); kb=$(cat $q/max_hw_sectors_kb)
say "modparams '$MP': max_segments=$segs max_hw_sectors_kb=$kb max_segment_size=$(cat $q/max_segment_size)"
case "$MP" in
*bounce_size=0*) [ "$segs" = 1 ] && [ "$kb" = 128 ] || fail "limits without bounce buffer" ;;
*bounce_size=524288*) [ "$segs" = 64 ] && [ "$kb" = 512 ] || fail "limits with a 512 KiB bounce buffer" ;;
*) [ "$segs" = 64 ] && [ "$kb" = 128 ] || fail "default limits (128 KiB)" ;;
esac
mem=$(sed -n 's/^bounce_memory: //p' "$(rs_debugfs)/limits")
case "$MP" in
*bounce_size=0*) ;;
*bounce_cached=0*) [ "$mem" = coherent ] || fail "bounce_cached=0 but the bounce memory is '$mem'" ;;
*) [ "$mem" = cached ] || fail "the default bounce memory is '$mem', not cached" ;;
esac
nbuf=$(sed -n 's/^bounce_buffers: //p' "$(rs_debugfs)/limits")
case "$MP" in
*bounce_size=0*) [ "$nbuf" = 0 ] || fail "bounce_size=0 but $nbuf bounce buffers" ;;
*double_buffer=0*) [ "$nbuf" = 1 ] || fail "double_buffer=0 but $nbuf bounce buffers" ;;
*) [ "$nbuf" = 2 ] || fail "$nbuf bounce buffers by default, not 2" ;;
esac
for bs in 512 4k 12k 64k 128k 1m; do
  run $bs write
  run $bs randwrite
  run $bs write --iomem_align=512
done
say "stats: bounced=$(stat bounced) prepared=$(stat prepared) post_req_copies=$(stat post_req_copies)"
case "$MP" in
*double_buffer=0*|*bounce_size=0*)
  [ "$(stat prepared)" = 0 ] && [ "$(stat post_req_copies)" = 0 ] ||
    fail "one bounce buffer or none, but requests were prepared or copied in post_req" ;;
*)
  [ "$(stat prepared)" -gt 0 ] || fail "two buffers but no request was prepared in pre_req"
  [ "$(stat post_req_copies)" -gt 0 ] || fail "two buffers but no read was copied in post_req" ;;
esac
rmmod meson_mx_sdhc_rs
wait_no_card || fail "the card stayed after rmmod"
}
run() { # bs rw extra...
  local bs=$1 rw=$2; shift 2
  local size=$SIZE
  [ "$bs" = 512 ] && size=256k
  [ "$bs" = 1m ] && [ "$size" = 1m ] && size=2m
  fio --name=v --filename=$DEV --direct=1 --rw=$rw --bs=$bs --size=$size "$@" \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out 2>&1 \
      || { cat /tmp/fio.out; fail "fio write+verify bs=$bs rw=$rw $* with '$MP'"; }
  say "ok: bs=$bs rw=$rw $* over $size"
}
stat() { sed -n "s/^$1: //p" "$(rs_debugfs)/stats"; }
G
)
{
  echo "SIZE=$SIZE"
  for mp in "${variants[@]}"; do echo "variant $mp"; done
  echo 'say "@@BOUNCE-FIO all variants passed"'
} >> "$g"
rc=0
emu --card emmc --size 64 --driver none --timeout 1500 "$g" || rc=1
grep -E '\[guest\]' "$T/serial.log" | grep -v ' ok: ' || true
echo "fio jobs that passed: $(grep -c '\[guest\] ok: ' "$T/serial.log" || true)"
check "every variant passed (${#variants[@]})" grep -q '@@BOUNCE-FIO all variants passed' "$T/serial.log" || rc=1
exit $rc
