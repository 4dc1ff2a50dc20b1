#!/usr/bin/env bash
# The DRAM write acknowledgement of a read's last words (Documentation/emulated-board.rst,
# "dram-ack-ns"): the model lands the flushed tail of every read dram-ack-ns after it left the
# RX FIFO, and with ENHC bit 17 set (both drivers' setting) STAT's RX count reads 0 before the
# tail is in memory; the 8 bursts before the tail ("dram-late-bursts", 256 bytes) land
# dram-late-ns (2 us) after it. The Rust driver's default (dram_write_check=1) bounces every read and
# uses its data only once the marks it wrote over the read's last words and into every burst
# of its last 2 KiB have changed in memory (bounce/tail.rs). One boot on an eMMC, each phase a fio write of 8 MiB and its verifying
# read at bs=128k, with force_bounce 1 and 0 (the check bounces reads either way):
#   ack-<ns>  acknowledgements of 2 us (the model's default), 50 us and 500 us: 0 verify
#             errors although the model showed empty FIFOs with the tail on its way
#             (rx_tail_early_empty), every read's tail looked for (tail_checks), at 500 us
#             waited for (tail_waits);
#   ack-late  3 ms, past the driver's 1 ms wait: the read fails (tail_late, EIO) rather than
#             return the buffer's old bytes, and reads right at 2 us again;
#   onebuf    the module reloaded with double_buffer=0, the tail acknowledged after 2 us and
#             the 64 bursts before it (dram-late-bursts, 2 KiB, what the driver's marks
#             cover), all but the one next to the tail, 500 us later (dram-late-ns): the
#             copy-back follows the wait for the marks at once, so those bursts show unless
#             each of them is marked: 0 verify errors;
#   nocheck   the module reloaded with dram_write_check=0 (and double_buffer=0, whose copy-back
#             follows the flush wait at once; with two buffers it waits for post_req, which
#             comes after the next request started and hides a 50 us acknowledgement), 50 us:
#             the fault bites (fio finds stale tails), which is the check's test.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
ack-*) "$QMP" "\$EMU_QMP" set dram-ack-ns-now "\${1#ack-}" ;;
late-*) "$QMP" "\$EMU_QMP" set dram-late-ns-now "\${1#late-}" ;;
bursts-*) "$QMP" "\$EMU_QMP" set dram-late-bursts-now "\${1#bursts-}" ;;
stats-*) "$QMP" "\$EMU_QMP" stats > "$T/\${1#stats-}.json"; "$QMP" "\$EMU_QMP" reset-stats ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
load_driver rust
wait_card 60 || fail "no card"
D=$(rs_debugfs)
st() { sed -n "s/^$1: //p" "$D/stats"; }
bt() { sed -n "s/^$1: //p" "$D/bounce"; }
phase() { # NAME ACK_NS SEED
  echo 1 > "$D/stats"
  host_sync stats-before-$1
  host_sync ack-$2
  set +e
  fio_verify write $3 8m; wrc=$?
  for fb in 1 0; do
    echo $fb > "$D/force_bounce"
    fio_verify read $3 8m; rrc=$?
    say "PHASE $1 bounce=$fb write_rc=$wrc read_rc=$rrc verify_errors=$(fio_bad) tail_checks=$(bt tail_checks) tail_waits=$(bt tail_waits)"
  done
  set -e
  host_sync stats-$1
}
phase ack-2000 2000 21
phase ack-50000 50000 22
phase ack-500000 500000 23
# ack-late: 3 ms, past the 1 ms flush poll
echo 1 > "$D/stats"
host_sync stats-before-ack-late
for fb in 1 0; do
  echo $fb > "$D/force_bounce"
  dd if=$DEV of=/tmp/ref bs=128k count=1 skip=$((30 + fb)) iflag=direct 2>/dev/null
  host_sync ack-3000000
  set +e
  dd if=$DEV of=/tmp/al bs=128k count=1 skip=$((30 + fb)) iflag=direct 2>/dev/null; arc=$?
  host_sync ack-2000
  dd if=$DEV of=/tmp/al2 bs=128k count=1 skip=$((30 + fb)) iflag=direct 2>/dev/null
  cmp -s /tmp/ref /tmp/al2; after=$?
  set -e
  say "PHASE ack-late bounce=$fb rc=$arc differs_after=$after tail_late=$(bt tail_late)"
done
host_sync stats-ack-late
rmmod meson_mx_sdhc_rs
load_driver rust double_buffer=0
wait_card 60 || fail "no card with double_buffer=0"
D=$(rs_debugfs)
host_sync late-500000
host_sync bursts-64
phase onebuf 2000 24
host_sync bursts-8
host_sync late-2000
rmmod meson_mx_sdhc_rs
load_driver rust dram_write_check=0 double_buffer=0
wait_card 60 || fail "no card with dram_write_check=0"
D=$(rs_debugfs)
phase nocheck 50000 22
say "@@DRAMACK done"
G
)
emu --card emmc --size 64 --driver none --timeout 900 --host-script "$T/host.sh" "$g" ||
    { echo "FAILED: run"; exit 1; }
log="$T/serial.log"
fail=0
check "the guest script finished" grep -q '@@DRAMACK done' "$log" || fail=1
m() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))' "$T/$1.json" "$2"; }
# line PHASE: the guest's last PHASE line starting so; v PHASE FIELD: a number of it
line() { grep -o "PHASE $1 .*" "$log" | tail -1; }
v() { line "$1" | sed -n "s/.*\b$2=\([0-9]*\).*/\1/p"; }
for p in ack-2000 ack-50000 ack-500000 onebuf; do
  for fb in 1 0; do
    l="$p bounce=$fb"
    echo "  $(line "$l")"
    check "$l: write and read+verify passed, every read's tail looked for" \
      eval "[ '$(v "$l" write_rc)' = 0 ] && [ '$(v "$l" read_rc)' = 0 ] && [ '$(v "$l" verify_errors)' = 0 ] && [ '$(v "$l" tail_checks)' -ge 64 ]" || fail=1
  done
  check "$p: $(m $p rx_tail_bytes_flushed) tail bytes flushed, the FIFO read empty $(m $p rx_tail_early_empty) times before they were in memory, $(m $p rx_late_bytes) bytes of bursts in memory after the tail" \
    eval "[ $(m $p rx_tail_bytes_flushed) -gt 0 ] && [ $(m $p rx_tail_early_empty) -gt 0 ] && [ $(m $p rx_late_bytes) -gt 0 ]" || fail=1
done
l="ack-500000 bounce=0"
check "$l: the driver waited for $(v "$l" tail_waits) tails" eval "[ '$(v "$l" tail_waits)' -gt 0 ]" || fail=1
l="onebuf bounce=1"
check "$l: the driver waited for $(v "$l" tail_waits) of the 64 reads (the bursts were not there at its first look)" \
  eval "[ '$(v "$l" tail_waits)' -ge 32 ]" || fail=1
for fb in 1 0; do
  l="ack-late bounce=$fb"
  echo "  $(line "$l")"
  check "$l: a tail acknowledged after the 1 ms wait fails the read (rc $(v "$l" rc), tail_late $(v "$l" tail_late)), which reads right afterwards" \
    eval "[ '$(v "$l" rc)' != 0 ] && [ '$(v "$l" tail_late)' -ge 1 ] && [ '$(v "$l" differs_after)' = 0 ]" || fail=1
done
for fb in 1 0; do
  echo "  $(line "nocheck bounce=$fb")"
done
check "nocheck: without the check the model showed $(m nocheck rx_tail_early_empty) empty FIFOs before the tail was in memory, and fio found stale tails ($(v "nocheck bounce=1" verify_errors) bounced, $(v "nocheck bounce=0" verify_errors) direct verify errors)" \
  eval "[ $(m nocheck rx_tail_early_empty) -gt 0 ] && [ '$(v "nocheck bounce=1" verify_errors)' -gt 0 ]" || fail=1
exit $fail
