#!/usr/bin/env bash
# Out-of-range module parameters of the Rust driver (every parameter, below
# and above its range, not a power of two, not a number): insmod fails with
# EINVAL and the kernel log names the parameter, the value and the valid
# range (for a value that is not a number, the kernel's parser names it); nothing is registered, and valid values load afterwards.
# skip_clean_invalidate at -1 (default), 0 and 1, with cached and coherent buffers: the value
# and its reason in the bounce file and the probe's message.
# A bounce_size above max_dma_size is refused; the queue limits follow max_dma_size, and so
# does the bounce buffer when bounce_size is left at -1 (max_dma_size=524288 alone: 512 KiB
# requests).
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
bad() { # param=value expected-message
  dmesg -c >/dev/null
  if insmod "$RS_MOD" "$1" 2>/tmp/err; then fail "insmod $1 succeeded"; fi
  say "insmod $1: $(cat /tmp/err)"
  grep -q 'Invalid argument\|-22' /tmp/err || fail "insmod $1 did not fail with EINVAL"
  dmesg | grep -F "$2" || fail "no kernel message '$2' for $1"
  [ ! -d /sys/bus/platform/drivers/meson-mx-sdhc-rs ] || fail "driver registered after insmod $1"
}
bad bounce_size=3000 "invalid bounce_size=3000: must be -1 (as large as max_dma_size, the default), 0 (no bounce buffer) or a power of two from 4096 to 4194304"
bad bounce_size=-2 "invalid bounce_size=-2: must be -1"
bad max_segs=0 "invalid max_segs=0: must be from 1 to 256"
bad bounce_size=8388608 "invalid bounce_size=8388608"
bad max_segs=257 "invalid max_segs=257: must be from 1 to 256"
bad bounce_size=2048 "invalid bounce_size=2048"
bad bounce_size=4097 "invalid bounce_size=4097"
bad bounce_size=4294967295 "for parameter \`bounce_size'"
bad max_segs=4294967295 "invalid max_segs=4294967295"
bad max_dma_size=3000 "invalid max_dma_size=3000: must be a power of two from 4096 to 4194304"
bad max_dma_size=8388608 "invalid max_dma_size=8388608"
bad max_dma_size=0 "invalid max_dma_size=0"
# A bounce buffer larger than the largest transfer to one address (128 KiB by default).
bad bounce_size=524288 "invalid bounce_size=524288: above max_dma_size=131072"
# Not numbers: the kernel's parameter parser rejects them, naming the parameter.
bad max_segs=-1 "for parameter \`max_segs'"
bad bounce_size=128k "for parameter \`bounce_size'"
bad skip_clean_invalidate=2 "invalid skip_clean_invalidate=2: must be -1 (on if the bounce buffers' DMA mapping is their own memory, decided at probe; the default), 0 (off) or 1 (on)"
bad skip_clean_invalidate=-2 "invalid skip_clean_invalidate=-2: must be -1"
bad skip_clean_invalidate=y "for parameter \`skip_clean_invalidate'"
insmod "$RS_MOD" bounce_size=4096 max_segs=256
wait_card
[ "$(cat /sys/block/${DEV#/dev/}/queue/max_segments)" = 256 ] || fail "max_segments $(cat /sys/block/${DEV#/dev/}/queue/max_segments)"
[ "$(cat /sys/block/${DEV#/dev/}/queue/max_hw_sectors_kb)" = 4 ] || fail "max_hw_sectors_kb $(cat /sys/block/${DEV#/dev/}/queue/max_hw_sectors_kb)"
dd if=/dev/urandom of=/tmp/pat bs=64k count=4 2>/dev/null
dd if=/tmp/pat of=$DEV bs=64k oflag=direct 2>/dev/null
dd if=$DEV of=/tmp/back bs=64k count=4 iflag=direct 2>/dev/null
cmp /tmp/pat /tmp/back || fail "data differs with bounce_size=4096"
say "bounce_size=4096 max_segs=256: loads, limits right, data intact"
rmmod meson_mx_sdhc_rs
# skip_clean_invalidate: the bounce file and the probe's message give the value and why; at -1
# (default) the test kernel, without SWIOTLB, gives the cached buffers their own memory
sci() { # PARAMS VALUE REASON
  dmesg -c >/dev/null
  insmod "$RS_MOD" $1
  wait_card || fail "no card with $1"
  v=$(sed -n 's/^skip_clean_invalidate: //p' "$(rs_debugfs)/bounce")
  [ "$v" = "$2 ($3)" ] || fail "skip_clean_invalidate '$v' with '$1', not '$2 ($3)'"
  dmesg | grep -F "skip_clean_invalidate: $2 ($3)" || fail "no probe message 'skip_clean_invalidate: $2 ($3)' with '$1'"
  say "'$1': skip_clean_invalidate: $v"
  rmmod meson_mx_sdhc_rs
}
sci "" 1 "auto: identity mapping"
sci "skip_clean_invalidate=-1 double_buffer=0" 1 "auto: identity mapping"
sci "skip_clean_invalidate=0" 0 "forced by parameter"
sci "skip_clean_invalidate=1 bounce_cached=0" 1 "forced by parameter"
sci "bounce_cached=0" 0 "auto: no cached buffer"
sci "bounce_size=0" 0 "auto: no cached buffer"
lim() { # max_segments max_hw_sectors_kb
  q=/sys/block/${DEV#/dev/}/queue
  [ "$(cat $q/max_segments) $(cat $q/max_hw_sectors_kb)" = "$1 $2" ] ||
    fail "limits $(cat $q/max_segments) $(cat $q/max_hw_sectors_kb), not $1 $2 with $MP"
  say "$MP: max_segments $1, max_hw_sectors_kb $2"
}
for MP in "" "max_dma_size=524288 bounce_size=524288" "max_dma_size=65536 bounce_size=0" \
    "max_dma_size=65536 bounce_size=65536" "max_dma_size=524288" "max_dma_size=65536"; do
  insmod "$RS_MOD" $MP
  wait_card || fail "no card with $MP"
  case "$MP" in
  "") lim 64 128 ;;
  *524288) lim 64 512 ;;
  *bounce_size=0) lim 1 64 ;;
  *) lim 64 64 ;;
  esac
  rmmod meson_mx_sdhc_rs
done
G
)
emu --card emmc --size 64 --driver none "$g"
