#!/usr/bin/env bash
# skip_clean_invalidate's default (-1) where the DMA API bounces the bounce buffers: the
# swiotlb kernel (make kernel-swiotlb: the test configuration with CONFIG_ARM_LPAE=y, which
# selects SWIOTLB) booted with swiotlb=force, its guest (make guest-swiotlb: the Rust module
# built against it).  Every streaming mapping goes through a swiotlb slot, so the mapping that
# cleans each cached buffer at probe reaches other memory than the buffer: the default resolves
# to off, "0 (auto: mapping differs)", in the bounce file and the probe's message, and no read
# skips its first invalidate.  skip_clean_invalidate=1 still forces it on ("1 (forced by
# parameter)"); with coherent buffers there is nothing to decide ("0 (auto: no cached
# buffer)").  Data written and read back through the bounced path (force_bounce) and in
# place are what was written.  Any DMA-API report fails the boot (scripts/emu-run checks the
# log).  The model writes every read's data to memory by the time its tail leaves the FIFO
# (dram-ack-ns=0 dram-late-bursts=0): a late burst would land in the swiotlb slot after the
# unmapping copied the slot into the buffer, where dram_write_check's look for a read's last
# words cannot see it.
. "$(dirname "$0")/../lib.sh"
KOUT=$(readlink -f "${MESON_SDHC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meson-mx-sdhc-rs}/kernel-swiotlb")
export EMU_KERNEL="$KOUT/arch/arm/boot/zImage" EMU_GUEST="$TOP/build/guest-swiotlb"
[ -f "$EMU_KERNEL" ] || { echo "no swiotlb kernel (make kernel-swiotlb)"; exit 1; }
[ -f "$EMU_GUEST/initrd.gz" ] || { echo "no swiotlb guest (make guest-swiotlb)"; exit 1; }
grep -qx 'CONFIG_ARM_LPAE=y' "$KOUT/.config" || { echo "$KOUT is not an LPAE kernel"; exit 1; }
grep -qx 'CONFIG_SWIOTLB=y' "$KOUT/.config" || { echo "$KOUT has no SWIOTLB"; exit 1; }
g=$(guest t <<'G'
set -e
grep -qw 'swiotlb=force' /proc/cmdline || fail "not booted with swiotlb=force: $(cat /proc/cmdline)"
dmesg | grep -i 'swiotlb\|software IO TLB' | head -3
dd if=/dev/urandom of=/tmp/pat bs=128k count=8 2>/dev/null
sci() { # PARAMS VALUE REASON
  dmesg -c >/dev/null
  insmod "$RS_MOD" $1
  wait_card || fail "no card with '$1'"
  D=$(rs_debugfs)
  cat "$D/bounce"
  v=$(sed -n 's/^skip_clean_invalidate: //p' "$D/bounce")
  [ "$v" = "$2 ($3)" ] || fail "skip_clean_invalidate '$v' with '$1', not '$2 ($3)'"
  dmesg | grep -F "skip_clean_invalidate: $2 ($3)" || fail "no probe message 'skip_clean_invalidate: $2 ($3)' with '$1'"
  # every request through a bounce buffer, then in place where it can be
  for fb in 1 0; do
    echo $fb > "$D/force_bounce"
    dd if=/tmp/pat of=$DEV bs=128k oflag=direct 2>/dev/null || fail "write with '$1', force_bounce=$fb"
    dd if=$DEV of=/tmp/back bs=128k count=8 iflag=direct 2>/dev/null || fail "read with '$1', force_bounce=$fb"
    cmp /tmp/pat /tmp/back || fail "data read back differs with '$1', force_bounce=$fb"
  done
  skipped=$(sed -n 's/^buffer[0-9]_read_invalidates_skipped: //p' "$D/bounce" | awk '{ s += $1 } END { print s + 0 }')
  if [ "$2" = 0 ] && [ "$skipped" != 0 ]; then fail "'$1': off, but $skipped reads skipped their invalidate"; fi
  if [ "$2" = 1 ] && [ "$3" != "auto: no cached buffer" ] && [ "$skipped" = 0 ]; then fail "'$1': on, but no read skipped"; fi
  say "'$1': skip_clean_invalidate: $v, $skipped reads skipped their first invalidate, data intact"
  rmmod meson_mx_sdhc_rs
}
sci "" 0 "auto: mapping differs"
sci "skip_clean_invalidate=-1 double_buffer=0" 0 "auto: mapping differs"
sci "skip_clean_invalidate=0" 0 "forced by parameter"
sci "skip_clean_invalidate=1" 1 "forced by parameter"
sci "bounce_cached=0" 0 "auto: no cached buffer"
say "swiotlb=force: skip_clean_invalidate's default resolves to off"
G
)
emu --card emmc --size 64 --driver none --model dma-noncoherent=on --model dram-ack-ns=0 \
    --model dram-late-bursts=0 --append "swiotlb=force" "$g"
