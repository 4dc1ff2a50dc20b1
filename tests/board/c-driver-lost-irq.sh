#!/usr/bin/env bash
# The in-tree C driver when the controller's interrupt never comes (lost-irq)
# or the controller freezes (freeze), on the emulated board with the SoC's
# edge-triggered interrupt.  The C driver has no software timeout and the
# MMC core never times a request out for a host without CQE, so the expected
# result is a hang: a 4 KiB O_DIRECT read that never returns.  The guest
# detects it with a bounded wait (10 s of virtual time), records the state
# (the reader's task state, the controller's registers, the model's state
# and counters, the interrupt count) and then rescues the driver by hand, so
# that the board can power off: SRST through devmem (which ends the fault),
# then one command the model answers with a response timeout (a resp-timeout
# fault armed from the host), whose interrupt completes the C driver's
# request with -ETIMEDOUT.  What the reader then gets is recorded: after a
# lost interrupt the data had reached memory; after a freeze it had not, and
# the C driver's known defect (bytes_xfered set on a command error) decides
# whether stale data is returned.  Unbind and rmmod must still work.
# Bounded on the host by emu-run --timeout.
. "$(dirname "$0")/../lib.sh"
fault_host
g=$(guest t <<'G'
set -e
base=$((0x$(sdhc_dev | cut -d. -f1)))
r() { printf '0x%08x' $(($(devmem $((base + $1)) 32))); }
irqs() { awk '/mmc|sdhc/ { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i; print n; exit }' /proc/interrupts; }
grep -E 'mmc|sdhc' /proc/interrupts || true
dd if=/dev/urandom of=/tmp/pat bs=4k count=16 2>/dev/null
dd if=/tmp/pat of=$DEV bs=4k oflag=direct 2>/dev/null
for kind in lost-irq freeze; do
  say "== $kind on the next read"
  i0=$(irqs)
  host_sync arm,$kind,after=1,dir=read
  rm -f /tmp/back
  dd if=$DEV of=/tmp/back bs=4k count=1 skip=3 iflag=direct 2>/tmp/dd.err &
  pid=$!
  n=0
  while kill -0 $pid 2>/dev/null && [ $n -lt 100 ]; do usleep 100000; n=$((n + 1)); done
  if ! kill -0 $pid 2>/dev/null; then
    echo "@@RESULT $kind no-hang"
    wait $pid || true
    continue
  fi
  st=$(awk '{ print $3 }' /proc/$pid/stat)
  say "$kind: the read has not returned after 10 s (task state $st); STAT=$(r 0x0c) ISTA=$(r 0x28) ICTL=$(r 0x24); model state $(model_counter state), lost-irq completions $(model_counter lost_irq_commands); interrupts $i0 -> $(irqs)"
  echo "@@RESULT $kind hang state=$st stat=$(r 0x0c) ista=$(r 0x28) model_state=$(model_counter state)"
  # rescue: SRST ends the fault; a command the model times out interrupts the driver
  host_sync arm,resp-timeout,after=1
  devmem $((base + 0x2c)) 32 0x3f; devmem $((base + 0x2c)) 32 0
  devmem $((base + 0x04)) 32 $((13 | 0x40))
  n=0
  while kill -0 $pid 2>/dev/null && [ $n -lt 100 ]; do usleep 100000; n=$((n + 1)); done
  kill -0 $pid 2>/dev/null && fail "$kind: still hung after SRST and a timed-out command"
  rc=0; wait $pid || rc=$?
  if [ $rc != 0 ]; then data="I/O error ($(cat /tmp/dd.err | head -1))"
  elif dd if=/tmp/pat bs=4k skip=3 count=1 2>/dev/null | cmp -s - /tmp/back; then data="correct data"
  else data="WRONG DATA (not what the card holds)"; fi
  say "$kind: rescued after $((n * 100)) ms; the read returned: $data"
  echo "@@RESCUE $kind $data"
done
dmesg | grep -E 'mmc[0-9]|mmcblk[0-9]|meson' | grep -v 'new HS200' | tail -8
dd if=$DEV of=/tmp/back bs=4k count=16 iflag=direct 2>/dev/null
cmp -s /tmp/pat /tmp/back || fail "the card's data differs after the rescues"
d=$(sdhc_dev)
echo "$d" > /sys/bus/platform/drivers/meson-mx-sdhc/unbind
rmmod meson_mx_sdhc
say "unbind and rmmod done"
host_sync stats
G
)
emu --timeout 300 --card emmc --size 64 --driver c --host-script "$T/host.sh" "$g"
grep -E '\[guest\]|@@RESULT|@@RESCUE' "$T/serial.log"
python3 - "$T/stats.json" "$T/serial.log" <<'P'
import json, re, sys
s = json.load(open(sys.argv[1]))
log = open(sys.argv[2], errors="replace").read()
print("model:", {k: s[k] for k in ("srst_resets", "lost_irq_commands", "busy_rejects")}, s["faults"])
ok = True
for kind in ("lost-irq", "freeze"):
    m = re.search(r"@@RESULT %s (\S+)" % kind, log)
    print("%s: %s" % (kind, m.group(1) if m else "no result"))
    # the finding this test records: the C driver hangs (no software timeout)
    if not m or m.group(1) != "hang":
        print("FAILED: expected the C driver to hang on %s" % kind)
        ok = False
    if s["faults"][kind] != 1:
        print("FAILED: %s injected %d times" % (kind, s["faults"][kind]))
        ok = False
sys.exit(0 if ok else 1)
P
echo "ok: the C driver hangs on a lost interrupt and on a frozen controller (detected, bounded, rescued by hand)"
