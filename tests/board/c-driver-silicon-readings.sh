#!/usr/bin/env bash
# The referee: what the in-tree C driver does under the model's less kind readings that it
# shares with the Rust driver's port (rust-silicon-readings runs the Rust driver under the
# same ones). One boot on an eMMC, each phase a fio write of a region and its verifying read
# (O_DIRECT, 128 KiB):
#   flush  (a boot of its own) the read's last words reach memory 200 us after the manual
#          RX FIFO flush (rx-flush-ns=200000): the C driver does not wait for them, and its
#          FIFO reset drops them (the model's rx_tail_bytes_lost): the eMMC does not come up
#          (its tuning blocks miss their tails) or its reads' tails are stale; a tail the
#          FIFO reset did not drop lands after the request completed, in memory the kernel
#          may have freed and used again (the model's rx_tails_landed_unwatched): such a
#          boot may oops or hang, which the check accepts after the model logged such a tail;
#   late   data CRC errors on writes latch after their completion bit (late-status-ns, the
#          model's default): the C driver reads ISTA once, reports the rejected writes as
#          written, and the region reads back wrong;
#   busy   the controller stays busy 150 ms after a read completed (busy-hold): the C driver
#          resets it after 100 ms, which drops the read's last words still in the RX FIFO,
#          and completes the read as a success: the read's tail is stale;
#   program STAT.CMD_BUSY stays set while the card programs a write (busy-while-programming,
#          the model's default) and two writes program for 150 ms (long-program): the C
#          driver gives up after 100 ms ("Failed to poll for CMD_BUSY") and resets the
#          controller while the card programs; the data survives (the card goes on).
# The checks say that the C driver shows each effect, as the model's counters say it should:
# the faults reach it, and what it does with them is what this records.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
late) "$QMP" "\$EMU_QMP" faults data-crc ppm=200000 seed=3 limit=4 dir=write ;;
busy) "$QMP" "\$EMU_QMP" faults busy-hold after=5 limit=1 dir=read ;;
program) "$QMP" "\$EMU_QMP" faults long-program ppm=200000 seed=7 limit=2 dir=write ;;
clear) "$QMP" "\$EMU_QMP" faults none ;;
stats-*) "$QMP" "\$EMU_QMP" stats > "$T/\${1#stats-}.json"; "$QMP" "\$EMU_QMP" reset-stats ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
wait_card 60 || fail "no card"
phase() { # NAME FAULT SEED
  host_sync stats-before-$1
  case $2 in late|program) host_sync $2 ;; esac
  set +e
  fio_verify write $3 4m 128k; wrc=$?
  host_sync clear
  [ "$2" = busy ] && host_sync busy
  fio_verify read $3 4m 128k; rrc=$?
  set -e
  say "PHASE $1 write_rc=$wrc read_rc=$rrc verify_errors=$(fio_bad)"
  host_sync clear
  host_sync stats-$1
}
phase program program 24
phase late late 22
phase busy busy 23
say "@@READINGS done"
G
)
emu --card emmc --size 64 --driver c --timeout 600 --host-script "$T/host.sh" "$g" ||
    { echo "FAILED: run"; exit 1; }
log="$T/serial.log"
fail=0
check "the guest script finished" grep -q '@@READINGS done' "$log" || fail=1
m() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))' "$T/$1.json" "$2"; }
v() { grep -o "PHASE $1 .*" "$log" | tail -1 | sed -n "s/.*\b$2=\([0-9]*\).*/\1/p"; }
for p in program late busy; do echo "  $(grep -o "PHASE $p .*" "$log" | tail -1)"; done
check "late: $(m late late_status_commands) writes rejected late; the C driver reported them written ($(v late write_rc) write rc, $(v late verify_errors) verify errors)" \
  eval "[ $(m late late_status_commands) -ge 1 ] && [ $(v late write_rc) = 0 ] && [ $(v late verify_errors) -gt 0 ]" || fail=1
pw=$(sed -n '/PHASE program /q;p' "$log" | grep -c 'Failed to poll for CMD_BUSY')
mf() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["faults"].get(sys.argv[2], 0))' "$T/$1.json" "$2"; }
check "program: $(mf program long-program) writes programmed 150 ms; the C driver gave up on CMD_BUSY $pw times and reset the controller while the card programmed ($(v program write_rc) write rc, $(v program verify_errors) verify errors)" \
  eval "[ $(mf program long-program) = 2 ] && [ $pw = 2 ] && [ $(v program write_rc) = 0 ] && [ $(v program verify_errors) = 0 ]" || fail=1
check "busy: $(m busy busy_hold_commands) read held busy; the C driver's reset dropped its last words ($(m busy rx_tail_bytes_lost) bytes) and the read completed as a success ($(v busy verify_errors) verify errors)" \
  eval "[ $(m busy busy_hold_commands) = 1 ] && [ $(m busy rx_tail_bytes_lost) -gt 0 ] && [ $(v busy verify_errors) -gt 0 ]" || fail=1

# The long flush: a boot of its own (the C driver may not bring the card up).
g2=$(guest f <<'G'
load_driver c
if wait_card 20; then
  fio --name=r --filename=$DEV --direct=1 --rw=read --bs=128k --size=4m --output-format=terse >/dev/null 2>&1
  dd if=$DEV of=/tmp/a bs=128k count=8 iflag=direct 2>/dev/null
  dd if=$DEV of=/tmp/b bs=4k count=256 iflag=direct 2>/dev/null
  cmp -s /tmp/a /tmp/b; say "FLUSH card=1 differs=$?"
else
  say "FLUSH card=0"
fi
host_sync stats-flush
say "@@FLUSH done"
G
)
# A tail that no SEND or reset drops lands 200 us after its flush wherever the read's buffer
# was: the C driver has completed the request by then, and the MMC core may have freed the
# buffer (a tuning block's or EXT_CSD's kmalloc) and the kernel used it again. When that
# happens (the model logs it; how often depends on the guest's timing, which the console's
# speed on the host moves) the kernel may oops or hang: panic_on_oops ends such a boot at
# once, a hang at the run's timeout (a healthy run takes under a minute, unloaded), and the
# check below takes either only after the model's line.
frc=0
emu --card emmc --size 64 --driver none --timeout 240 --model rx-flush-ns=200000 \
    --append "panic_on_oops=1 panic=-1" --host-script "$T/host.sh" "$g2" || frc=$?
if [ "$frc" != 0 ]; then
  landed=$(grep -n -m1 'landed at .*, with no STAT read or SRST since' "$T/serial.log" | cut -d: -f1)
  last=$(grep -c '' "$T/serial.log")
  echo "  the flush run failed; the model's first line of a tail that landed unwatched: ${landed:-none}, of $last"
  check "flush: a read's last words landed after the C driver completed the read, in memory the kernel may have used again; the kernel crashed or hung afterwards" \
    eval "[ -n '$landed' ] && ! grep -q '@@FLUSH done' '$T/serial.log'" || { echo "FAILED: flush run"; exit 1; }
  exit $fail
fi
fl=$(grep -o 'FLUSH card=.*' "$T/serial.log" | tail -1)
echo "  $fl; $(grep -c 'tuning execution failed' "$T/serial.log") tuning failures in the log"
check "flush: the C driver loses the read tails ($(m flush rx_tail_bytes_lost) bytes lost, $(m flush rx_tails_landed_unwatched) landed unwatched): no card, or reads that differ ($fl)" \
  eval "[ $(m flush rx_tail_bytes_lost) -gt 0 ] && { grep -q 'card=0' <<< '$fl' || grep -q 'differs=1' <<< '$fl'; }" || fail=1
exit $fail
