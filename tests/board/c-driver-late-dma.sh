#!/usr/bin/env bash
# The in-tree C driver under late-dma faults (edge-triggered board, eMMC):
# the controller reports a response CRC error at the response of a read while
# its DMA engine still writes the blocks afterwards.  The C driver resets the
# controller only for -EIO/-ETIMEDOUT, so nothing stops the engine; and it
# sets bytes_xfered to the whole transfer when the data has no error of its
# own (a documented defect), so the MMC core may complete the read as a
# success before the blocks have arrived.  The test records, for 8 single
# 4 KiB O_DIRECT reads each hit by one late-dma fault, whether the reader got
# the card's data, other data, or an error, and how many bytes the model's
# DMA wrote after the error interrupt (into pages the driver had handed back
# by then).  A fault that hits 128 bytes is the re-tuning's CMD21 (the MMC
# core re-tunes after a CRC error, before the next read): its buffer is
# freed when mmc_send_tuning() returns the error, and the late blocks land
# in freed kernel memory.
# This test is the referee for the C driver's rule (a reset only for
# -EIO/-ETIMEDOUT on the command): the Rust driver resets after every error
# and its late-dma test (rust-late-dma) checks that the reset stops every
# late DMA; what the C rule lets the engine do to memory already handed back
# is shown here, by the C driver itself.  It checks that the model counted
# bytes the late DMA wrote after the error interrupt, that no SRST was
# written while the faults ran and no late block was cancelled (nothing
# stopped the engine), and that at least one read returned other data
# without an error (the defect no longer reproduces: look again).  A
# characterisation, like model-faults' resp-timeout case: it also fails if
# the board hangs, a report other than the C driver's known ones is logged,
# or the data on the card changes.
. "$(dirname "$0")/../lib.sh"
fault_host
g=$(guest t <<'G'
set -e
dd if=/dev/urandom of=/tmp/pat bs=4k count=16 2>/dev/null
dd if=/tmp/pat of=$DEV bs=4k oflag=direct 2>/dev/null
good=0; wrong=0; err=0
srst0=$(model_counter srst_resets)
for i in 1 2 3 4 5 6 7 8; do
  b0=$(model_counter late_dma_bytes)
  host_sync arm,late-dma,after=1,dir=read
  rc=0
  timeout 20 dd if=$DEV of=/tmp/back bs=4k count=1 skip=$i iflag=direct 2>/dev/null || rc=$?
  usleep 20000
  late=$(( $(model_counter late_dma_bytes) - b0 ))
  if [ $rc != 0 ]; then r="error (dd status $rc)"; err=$((err + 1))
  elif dd if=/tmp/pat bs=4k skip=$i count=1 2>/dev/null | cmp -s - /tmp/back; then r="the card's data"; good=$((good + 1))
  else r="OTHER DATA, no error"; wrong=$((wrong + 1)); fi
  hit="the read"; [ $late = 128 ] && hit="the re-tuning's CMD21 (128 bytes)"
  say "read $i: $r; the fault hit $hit; the late DMA wrote $late bytes after the error interrupt"
done
echo "@@LATE good=$good wrong=$wrong errors=$err srst_during=$(( $(model_counter srst_resets) - srst0 )) late_bytes=$(model_counter late_dma_bytes) cancelled=$(model_counter late_dma_cancelled)"
dmesg | grep -E 'mmc[0-9]|mmcblk[0-9]' | grep -v 'new HS200' | sed 's/^\[[ 0-9.]*\] //' | sort | uniq -c | head -6
dd if=$DEV of=/tmp/back bs=4k count=16 iflag=direct 2>/dev/null
cmp -s /tmp/pat /tmp/back || fail "the card's data differs"
host_sync stats
G
)
emu --timeout 300 --card emmc --size 64 --driver c --host-script "$T/host.sh" "$g"
grep -E '\[guest\]|@@LATE' "$T/serial.log"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("model: late-dma faults %d, late DMA bytes %d, cancelled %d, SRST %d" % (s["faults"]["late-dma"], s["late_dma_bytes"], s["late_dma_cancelled_bytes"], s["srst_resets"]))' "$T/stats.json"
fail=0
v() { grep -o "@@LATE .*" "$T/serial.log" | tail -1 | sed -n "s/.*\b$1=\([0-9]*\).*/\1/p"; }
wrong=$(v wrong)
check "the C rule: the late DMA wrote $(v late_bytes) bytes after the error interrupts, into pages already handed back" \
  [ "$(v late_bytes)" -gt 0 ] || fail=1
check "the C rule: no SRST while the faults ran ($(v srst_during)), no late block cancelled ($(v cancelled) bytes)" \
  eval "[ '$(v srst_during)' = 0 ] && [ '$(v cancelled)' = 0 ]" || fail=1
check "C driver defect reproduced: ${wrong:-0} read(s) returned data that is not the card's, without an error" \
  [ "${wrong:-0}" -ge 1 ] || { echo "FAILED: no read returned other data: the C driver's behaviour changed, look again"; fail=1; }
exit $fail
