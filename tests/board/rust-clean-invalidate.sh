#!/usr/bin/env bash
# skip_clean_invalidate (Documentation/driver.rst, "Skipping the invalidate of a clean
# buffer"): a read into a cached bounce buffer skips the invalidate before its transfer only
# when no CPU write left the buffer maybe dirty.  Forced on (1), at its default (-1, decided at
# probe: on, since the test kernel has no SWIOTLB and the buffers' DMA mapping is their own
# memory; the bounce file and the probe's message say so), then forced off (0).  The SDHC non-coherent as on the SoC
# (--model dma-noncoherent=on), every request bounced (force_bounce), through 512 KiB buffers
# (max_dma_size and bounce_size 524288, so that a 256 KiB read is one request).  With one buffer
# (skip_clean_invalidate=1 double_buffer=0), then two (the default, skip_clean_invalidate -1):
#  - writes of random data and reads of it interleaved: each write's copy-in is cleaned by its
#    mapping, so the buffer is clean after it and the next read skips; the data read back is
#    what was written (cmp);
#  - a write whose copy-in stops halfway and fails (debugfs bounce_copy_in_faults, until the
#    write fails for good): the buffer it used is dirty, the next read into it invalidates
#    before its transfer, a read shorter than the dirty range leaves it dirty, one over the
#    whole range cleans it; the card still holds the old data;
#  - for every read, per buffer (debugfs bounce): a buffer that was dirty before the read is
#    never skipped, a clean one always is.
# Then skip_clean_invalidate=0: no read skips.  Any DMA-API report fails the boot
# (scripts/emu-run checks the log).
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
KIB=1024
B=""
bv() { sed -n "s/^$1: //p" "$B"; }
nbuf() { grep -c '^buffer[0-9]: ' "$B"; }
snap() { # snap NAME: the bounce file's values as NAME_stateN, NAME_doneN, NAME_skipN
  local i
  for i in 0 1; do
    eval "$1_state$i=$(bv buffer$i)"
    eval "$1_done$i=$(bv buffer${i}_read_invalidates_done)"
    eval "$1_skip$i=$(bv buffer${i}_read_invalidates_skipped)"
  done
}
get() { eval "echo \${$1:-0}"; }
# rd BS_KIB INDEX: one O_DIRECT read of BS_KIB KiB at INDEX*BS_KIB into /tmp/rd; then, for each
# buffer the read used: dirty before -> invalidated, clean before -> skipped (with $SKIP=1)
rd() {
  local i dd ds st moved
  snap a
  dd if=$DEV of=/tmp/rd bs=$(($1 * KIB)) count=1 skip=$2 iflag=direct 2>/dev/null || fail "read ${1}k at $2"
  snap b
  moved=0
  for i in 0 1; do
    dd=$(($(get b_done$i) - $(get a_done$i)))
    ds=$(($(get b_skip$i) - $(get a_skip$i)))
    [ $((dd + ds)) = 0 ] && continue
    moved=$((moved + dd + ds))
    st=$(get a_state$i)
    if [ "$st" = dirty ] && [ $ds != 0 ]; then
      fail "read ${1}k: buffer$i was dirty and its invalidate was skipped"
    fi
    if [ "$st" = clean ] && [ "$SKIP" = 1 ] && [ $dd != 0 ]; then
      fail "read ${1}k: buffer$i was clean and was invalidated before the transfer"
    fi
    if [ "$SKIP" = 0 ] && [ $ds != 0 ]; then
      fail "read ${1}k: skip_clean_invalidate=0, but buffer$i skipped its invalidate"
    fi
    [ $dd != 0 ] && DONE_DIRTY=$((DONE_DIRTY + 1))
    [ $ds != 0 ] && SKIPS=$((SKIPS + 1))
  done
  [ $moved = 1 ] || fail "read ${1}k: $moved reads counted by the bounce buffers, not 1"
}
# chunk FILE INDEX: 128 KiB number INDEX of FILE
chunk() { dd if=$1 of=/tmp/chunk bs=128k count=1 skip=$2 2>/dev/null; }
all_clean() { ! grep -q '^buffer[0-9]: dirty' "$B"; }
phase() { # phase "PARAMS" SKIP BUFFERS REASON
  SKIP=$2 DONE_DIRTY=0 SKIPS=0
  # 512 KiB buffers: a 256 KiB read is one request, whose buffer the checks follow
  dmesg -c >/dev/null
  insmod $RS_MOD max_dma_size=524288 bounce_size=524288 $1
  wait_card || fail "no card with $1"
  dmesg | grep -F "skip_clean_invalidate: $SKIP ($4)" ||
    fail "no probe message 'skip_clean_invalidate: $SKIP ($4)' with '$1': $(dmesg | grep skip_clean)"
  D=$(rs_debugfs)
  B=$D/bounce
  [ -r "$B" ] || fail "no debugfs $B"
  echo 1 > "$D/force_bounce"
  cat "$B"
  [ "$(bv skip_clean_invalidate)" = "$SKIP ($4)" ] ||
    fail "bounce file: skip_clean_invalidate is '$(bv skip_clean_invalidate)', not '$SKIP ($4)'"
  [ "$(nbuf)" = "$3" ] || fail "$(nbuf) bounce buffers, not $3"
  # a new buffer is cleaned whole when it is allocated
  all_clean || fail "a new bounce buffer is not clean: $(cat $B)"
  dd if=/dev/urandom of=/tmp/pat bs=128k count=8 2>/dev/null
  dd if=/tmp/pat of=$DEV bs=128k oflag=direct 2>/dev/null || fail "write 1 MiB"
  all_clean || fail "completed writes left a buffer dirty: $(cat $B)"
  for i in 0 1 2 3 4 5 6 7; do
    rd 128 $i
    chunk /tmp/pat $i
    cmp /tmp/chunk /tmp/rd || fail "chunk $i read back differs"
  done
  # writes and reads interleaved
  for i in 0 1 2 3 4 5 6 7; do
    dd if=/dev/urandom of=/tmp/new bs=128k count=1 2>/dev/null
    dd if=/tmp/new of=$DEV bs=128k seek=$i count=1 oflag=direct 2>/dev/null || fail "write chunk $i"
    all_clean || fail "write of chunk $i left a buffer dirty: $(cat $B)"
    rd 128 $i
    cmp /tmp/new /tmp/rd || fail "chunk $i written and read back differs"
    dd if=/tmp/new of=/tmp/pat bs=128k seek=$i count=1 conv=notrunc 2>/dev/null
  done
  # a write whose copy-in stops halfway, until it fails
  for n in 1 2; do
    echo 100000 > "$D/bounce_copy_in_faults"
    dd if=/dev/urandom of=/tmp/new bs=256k count=1 2>/dev/null
    if dd if=/tmp/new of=$DEV bs=256k count=1 oflag=direct 2>/dev/null; then
      fail "a write whose copy-in always fails succeeded"
    fi
    left=$(cat "$D/bounce_copy_in_faults")
    echo 0 > "$D/bounce_copy_in_faults"
    say "failed write $n: $((100000 - left)) copy-ins failed; $(grep '^buffer[0-9]: ' $B | tr '\n' ' ')"
    all_clean && fail "copy-ins failed halfway, but every buffer is clean"
    d0=$DONE_DIRTY
    # a 4 KiB read invalidates 4 KiB: the rest of the half-copied range stays dirty
    rd 4 0
    chunk /tmp/pat 0
    head -c 4096 /tmp/chunk | cmp - /tmp/rd || fail "the first 4 KiB changed after a failed write"
    # reads over the whole half-copied range (one request each: 256 KiB is 64 pages, max_segs)
    # until every buffer is clean
    k=0
    while ! all_clean; do
      k=$((k + 1))
      [ $k -le 4 ] || fail "4 reads of 256 KiB left a buffer dirty: $(cat $B)"
      rd 256 0
      dd if=/tmp/pat bs=256k count=1 2>/dev/null | cmp - /tmp/rd || fail "the card's first 256 KiB changed after a failed write"
    done
    [ $DONE_DIRTY -gt $d0 ] || fail "no read invalidated a buffer after a failed write"
    rd 128 1
    chunk /tmp/pat 1
    cmp /tmp/chunk /tmp/rd || fail "chunk 1 read back differs"
  done
  say "$1: $SKIPS reads skipped the invalidate of a clean buffer, $DONE_DIRTY invalidated; $(tr '\n' ' ' < $B)"
  [ "$SKIP" = 0 ] || [ $SKIPS -ge 16 ] || fail "only $SKIPS reads skipped"
  rmmod meson_mx_sdhc_rs
}
phase "skip_clean_invalidate=1 double_buffer=0" 1 1 "forced by parameter"
phase "" 1 2 "auto: identity mapping"
phase "skip_clean_invalidate=0" 0 2 "forced by parameter"
say "skip_clean_invalidate: reads skip the invalidate only of clean buffers"
G
)
emu --card emmc --size 64 --driver none --model dma-noncoherent=on "$g"
