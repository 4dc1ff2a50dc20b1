#!/usr/bin/env bash
# The Rust driver under the model's less kind readings of what the silicon may do
# (Documentation/emulated-board.rst, "Unknowns of the silicon"), one boot on an eMMC, each
# phase a fio write of a region and its verifying read (O_DIRECT, 128 KiB), bounced and
# direct:
#   flush      the read's last words reach memory only 200 us after the manual RX FIFO
#              flush (rx-flush-ns=200000): the driver waits for STAT's RX count (debugfs
#              read_flush_wait=1): 0 verify errors, no tail lost; without the wait
#              (read_flush_wait=0, the C driver's way) the FIFO reset after the read drops
#              the tails (the model's rx_tail_bytes_lost, the check that the fault bites),
#              and the check of a read's last words in memory (dram_write_check, the
#              default) fails those reads (tail_late) instead of returning stale bytes: 0
#              verify errors (with dram_write_check=0 the tails are stale: rust-dram-ack);
#              in every phase but nowait no read's last words land with no STAT read or
#              SRST since their flush (the model's rx_tails_landed_unwatched): the driver's
#              flush and its first look at STAT are one step, no interrupt between them;
#   late       data CRC errors on writes latch after their completion bit (late-status-ns,
#              the model's default): the driver reads ISTA again once the controller is
#              idle (stats late_status) and fails the write; what fio was told was written
#              reads back whole (a write it was told failed may not);
#   busy       the controller stays busy 150 ms after a read completed (busy-hold): the
#              request fails (error_not_ready) and is retried, no verify error;
#   program    STAT.CMD_BUSY stays set while the card programs a write (the model's
#              busy-while-programming, default on), and two writes program for 150 ms
#              (long-program): past the C driver's 100 ms wait, within the 160 ms the core
#              allows this eMMC's write: the driver waits for the card (error_not_ready 0),
#              no write fails;
#   failprog   two multi-block writes fail their CRC check half way, the error with the
#              completion, while the card programs the blocks it took for 150 ms
#              (partial-program): the driver waits for DAT0 before it completes the failed
#              write, so the core's next command (CMD12, CMD13) finds the controller ready:
#              no controller reset while the card programs (the model's
#              srst_while_programming 0), the retried write and its read verify;
#   stop       (last, after the r1b phase's new bind, while the MMC core sends whole
#              requests) a multi-block write fails with a data timeout (no CRC status) and a
#              multi-block read with a data CRC error, and the controller leaves the card in its
#              receiving- or sending-data state after each that failed as a multi-block transfer
#              (the core may retry one a block at a time; the model's default stop-after-error=false;
#              the late and failprog phases fail multi-block writes too): the driver sends the
#              request's stop (CMD12) itself after its reset (stats error_stops), so no command
#              but CMD12 reaches the card in that state (the model's
#              cmds_while_card_in_data_state 0; without the driver's stop the core's recovery
#              CMD13 does), and the retried write and the reads verify;
#   lost-edge  a completion latched in ISTA whose interrupt never rose (lost-edge): the
#              deadline completes it as its interrupt would have (deadline_completed), not
#              with ETIMEDOUT (error_deadline 0);
#   flushfail  the read's last words land 3 ms after the flush (rx-flush-ns-now 3000000), past
#              the driver's 1 ms poll: the read fails (error_flush, EIO) rather than return
#              the buffer's old bytes, bounced and direct, and reads right once the flush is
#              200 us again;
#   stall      a command sleeps 11 s before it is written to SEND (debugfs send_stall_ms), past
#              its 10 s deadline: it is sent under the in-flight lock, so the deadline cannot
#              complete the request (and the core send the next) while it sleeps, and the
#              deadline's clock starts when the command is sent: the read is right, not timed
#              out, and the model saw no SEND while busy;
#   r1b        the card holds DAT0 busy 5 ms after each R1b response, whose completion comes
#              with the response (r1b-busy-ns, the model's default r1b-done-at-dat0=false),
#              and STAT.CMD_BUSY does not show it (busy-while-programming off for the
#              phase): the driver binds again (the eMMC's CMD6 switches are R1b) and waits
#              for DAT0 itself: no command but CMD12/CMD13 reaches the busy card
#              (cmds_while_card_busy 0), the card comes back and reads;
#   drain      after a late-dma fault's reset the DMA engine writes on for up to 5 ms, visible
#              in STAT (drain-visible=true), in 1 MiB reads (256 KiB requests: loaded with
#              max_dma_size and bounce_size 524288; whose late DMA
#              outlasts the driver's 2 ms bound: 1 ms wait, 1 ms poll of STAT; run second,
#              before the error phases leave the MMC core sending 512-byte blocks): the
#              bound does not see it end (quiesce_busy), so the bounce buffer of the read
#              (force_bounce=1 pass) is held back (held_back), and nothing is written after
#              the next command (drain_bytes_after_cmd 0). A driver that hands the buffer
#              back at the end of the bound fails the held_back check; the model's counter
#              stays 0 for it too, as no command reaches the controller while STAT shows
#              the drain.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
late) "$QMP" "\$EMU_QMP" faults data-crc ppm=200000 seed=3 limit=4 dir=write ;;
busy) "$QMP" "\$EMU_QMP" faults busy-hold after=5 limit=1 dir=read ;;
program) "$QMP" "\$EMU_QMP" faults long-program ppm=200000 seed=7 limit=2 dir=write ;;
failprog) "$QMP" "\$EMU_QMP" faults partial-program ppm=200000 seed=17 limit=2 dir=write ;;
stop) "$QMP" "\$EMU_QMP" faults data-timeout after=2 dir=write ;;
stop-read) "$QMP" "\$EMU_QMP" faults data-crc after=2 dir=read ;;
lost-edge) "$QMP" "\$EMU_QMP" faults lost-edge after=3 limit=1 dir=read ;;
drain) "$QMP" "\$EMU_QMP" drain 5000000; "$QMP" "\$EMU_QMP" faults late-dma ppm=200000 seed=9 limit=6 dir=read ;;
flushfail) "$QMP" "\$EMU_QMP" set rx-flush-ns-now 3000000 ;;
flushok) "$QMP" "\$EMU_QMP" set rx-flush-ns-now 200000 ;;
r1b) "$QMP" "\$EMU_QMP" set busy-while-programming-now 0; "$QMP" "\$EMU_QMP" set r1b-busy-ns-now 5000000 ;;
r1b-off) "$QMP" "\$EMU_QMP" set r1b-busy-ns-now 0; "$QMP" "\$EMU_QMP" set busy-while-programming-now 1 ;;
clear) "$QMP" "\$EMU_QMP" faults none; "$QMP" "\$EMU_QMP" drain 0 ;;
stats-*) "$QMP" "\$EMU_QMP" stats > "$T/\${1#stats-}.json"; "$QMP" "\$EMU_QMP" reset-stats ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
# 512 KiB bounce buffers, for the drain phase's 256 KiB requests
load_driver rust max_dma_size=524288 bounce_size=524288
wait_card 60 || fail "no card"
D=$(rs_debugfs)
st() { sed -n "s/^$1: //p" "$D/stats"; }
bt() { sed -n "s/^$1: //p" "$D/bounce"; }
phase() { # NAME FAULT SEED [BS]: write, faults armed (FAULT, or - for none) for the write or the read
  BS=${4:-128k}
  echo 1 > "$D/stats"
  host_sync stats-before-$1
  case $2 in late|program|failprog|stop) host_sync $2 ;; esac
  set +e
  fio_verify write $3 8m $BS; wrc=$?
  host_sync clear
  case $2 in -|late|program|failprog) ;; stop) host_sync stop-read ;; *) host_sync $2 ;; esac
  for fb in 1 0; do
    echo $fb > "$D/force_bounce"
    fio_verify read $3 8m $BS; rrc=$?
    say "PHASE $1 bounce=$fb write_rc=$wrc read_rc=$rrc verify_errors=$(fio_bad) late_status=$(st late_status) not_ready=$(st error_not_ready) deadline_completed=$(st deadline_completed) deadlines=$(st error_deadline) held_back=$(st held_back) quiesce_busy=$(st quiesce_busy) flush_errors=$(st error_flush) error_stops=$(st error_stops) error_stops_failed=$(st error_stops_failed) tail_late=$(bt tail_late)"
  done
  set -e
  host_sync clear
  host_sync stats-$1
}
phase flush - 11
# 256 KiB requests (1 MiB reads, 64 segments), whose late DMA's visible drain outlasts the
# driver's 2 ms bound; second, while the MMC core still sends the reads whole (after the
# error phases below it sends much of the I/O in 512-byte blocks)
phase drain drain 15 1m
echo 0 > "$D/read_flush_wait"
phase nowait - 11
echo 1 > "$D/read_flush_wait"
# The nowait phase leaves reads whose last words never land (the reset dropped them): the
# next request on each of those bounce buffers waits for them and fails. Those failures
# happen here, not in the late phase's recovery; then a read must pass.
echo 1 > "$D/force_bounce"
for i in 1 2 3 4 5 6 7 8; do
  dd if=$DEV of=/dev/null bs=128k count=1 skip=$i iflag=direct 2>/dev/null || true
done
dd if=$DEV of=/dev/null bs=128k count=8 iflag=direct 2>/dev/null || fail "a read after the nowait phase failed"
echo 0 > "$D/force_bounce"
phase late late 12
phase busy busy 13
phase program program 16
phase failprog failprog 17
phase lost-edge lost-edge 14
# flushfail: the read's last words land 3 ms after the flush, past the driver's 1 ms poll
echo 1 > "$D/stats"
host_sync stats-before-flushfail
for fb in 1 0; do
  echo $fb > "$D/force_bounce"
  dd if=$DEV of=/tmp/ref bs=128k count=1 skip=$((20 + fb)) iflag=direct 2>/dev/null
  host_sync flushfail
  set +e
  dd if=$DEV of=/tmp/ff bs=128k count=1 skip=$((20 + fb)) iflag=direct 2>/dev/null; frc=$?
  host_sync flushok
  dd if=$DEV of=/tmp/ff2 bs=128k count=1 skip=$((20 + fb)) iflag=direct 2>/dev/null
  cmp -s /tmp/ref /tmp/ff2; after=$?
  set -e
  say "PHASE flushfail bounce=$fb rc=$frc differs_after=$after flush_errors=$(st error_flush) held_back=$(st held_back) quiesce_busy=$(st quiesce_busy)"
done
host_sync stats-flushfail
# stall: the next command sleeps 11 s before SEND (send_stall_ms), past its 10 s deadline
echo 1 > "$D/stats"
host_sync stats-before-stall
dd if=$DEV of=/tmp/ref bs=4k count=1 skip=100 iflag=direct 2>/dev/null
echo 11000 > "$D/send_stall_ms"
set +e
dd if=$DEV of=/tmp/blk bs=4k count=1 skip=100 iflag=direct 2>/dev/null; drc=$?
cmp -s /tmp/ref /tmp/blk; same=$?
set -e
say "PHASE stall rc=$drc differs=$same deadlines=$(st error_deadline) late_interrupts=$(st late_interrupts)"
host_sync stats-stall
# r1b: the card busy 5 ms after each R1b response, the completion at the response, STAT.CMD_BUSY
# not covering it: the driver binds again (the card's CMD6 switches) and reads
dev=$(sdhc_dev)
host_sync stats-before-r1b
host_sync r1b
echo "$dev" > /sys/bus/platform/drivers/meson-mx-sdhc-rs/unbind
echo "$dev" > /sys/bus/platform/drivers/meson-mx-sdhc-rs/bind
set +e
wait_card 60; crc=$?
dd if=$DEV of=/tmp/r1b bs=128k count=1 iflag=direct 2>/dev/null; rrc=$?
set -e
host_sync r1b-off
host_sync stats-r1b
D=$(rs_debugfs)
say "PHASE r1b card=$crc rc=$rrc not_ready=$(st error_not_ready)"
# stop: last, on the host bound again, whose new block queue sends whole requests (once a
# request has failed, the MMC core sends it one block at a time, and later requests on the
# same tag too)
phase stop stop 18
say "@@READINGS done"
G
)
emu --card emmc --size 64 --driver none --timeout 900 --model rx-flush-ns=200000 \
    --model drain-visible=true --host-script "$T/host.sh" "$g" || { echo "FAILED: run"; exit 1; }
log="$T/serial.log"
fail=0
check "the guest script finished" grep -q '@@READINGS done' "$log" || fail=1
m() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))' "$T/$1.json" "$2"; }
mf() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["faults"].get(sys.argv[2], 0))' "$T/$1.json" "$2"; }
for p in flush nowait late busy program failprog stop lost-edge drain; do
  for fb in 1 0; do
    line=$(grep -o "PHASE $p bounce=$fb .*" "$log" | tail -1)
    echo "  $line"
    v() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$line"; }
    case $p in
    nowait) check "nowait bounce=$fb: reads whose tails the reset dropped failed (tail_late $(v tail_late) so far), none returned stale bytes (verify errors $(v verify_errors))" \
              eval "[ '$(v tail_late)' -gt 0 ] && [ '$(v verify_errors)' = 0 ]" || fail=1 ;;
    late) check "late bounce=$fb: a write the card rejected is reported failed, or reads back whole" \
         eval "[ $(v write_rc) != 0 ] || [ $(v verify_errors) = 0 ]" || fail=1 ;;
    *) check "$p bounce=$fb: write and read+verify passed" \
         eval "[ $(v write_rc) = 0 ] && [ $(v read_rc) = 0 ] && [ $(v verify_errors) = 0 ]" || fail=1 ;;
    esac
  done
done
# A read's last words that land with no STAT read or SRST since their flush
# (rx_tails_landed_unwatched): nothing waited for them, the buffer may have been handed back
# already. Only the nowait phase (read_flush_wait=0) does not wait, on purpose.
for p in flush drain late busy program failprog stop lost-edge flushfail stall r1b; do
  check "$p: $(m $p rx_tails_landed_unwatched) read tails landed unwatched (the longest flush before a look $(m $p rx_flush_gap_max_ns) ns)" \
    [ "$(m $p rx_tails_landed_unwatched)" = 0 ] || fail=1
done
echo "  nowait: $(m nowait rx_tails_landed_unwatched) read tails landed unwatched (the driver does not wait there)"
lost=$(m flush rx_tail_bytes_lost); flushed=$(m flush rx_tail_bytes_flushed)
check "flush: $flushed tail bytes flushed, $lost lost" eval "[ $flushed -gt 0 ] && [ $lost = 0 ]" || fail=1
check "nowait: the model lost read tails ($(m nowait rx_tail_bytes_lost) bytes)" [ "$(m nowait rx_tail_bytes_lost)" -gt 0 ] || fail=1
last() { grep -o "PHASE $1 bounce=0 .*" "$log" | tail -1 | sed -n "s/.*\b$2=\([0-9]*\).*/\1/p"; }
check "late: the model latched $(m late late_status_commands) errors late, the driver found $(last late late_status)" \
  eval "[ $(m late late_status_commands) -ge 1 ] && [ $(last late late_status) -ge $(m late late_status_commands) ]" || fail=1
check "busy: $(m busy busy_hold_commands) held busy, $(last busy not_ready) failed not ready" \
  eval "[ $(m busy busy_hold_commands) = 1 ] && [ $(last busy not_ready) = 1 ]" || fail=1
check "program: $(mf program long-program) writes programmed 150 ms, $(m program programming_busy_reads) STAT reads busy for programming, $(last program not_ready) failed not ready" \
  eval "[ $(mf program long-program) = 2 ] && [ $(m program programming_busy_reads) -gt 0 ] && [ $(last program not_ready) = 0 ]" || fail=1
check "failprog: $(mf failprog partial-program) writes failed half way with the card programming 150 ms, $(m failprog srst_while_programming) controller resets while it programmed, $(last failprog not_ready) failed not ready" \
  eval "[ $(mf failprog partial-program) = 2 ] && [ $(m failprog srst_while_programming) = 0 ] && [ $(last failprog not_ready) = 0 ]" || fail=1
check "stop: $(mf stop data-timeout) multi-block write and $(mf stop data-crc) read failed, $(m stop data_state_left) left the card in its data state; the driver sent $(last stop error_stops) stops ($(last stop error_stops_failed) failed); $(m stop cmds_while_card_in_data_state) commands reached the card in that state" \
  eval "[ $(mf stop data-timeout) = 1 ] && [ $(mf stop data-crc) = 1 ] && [ $(m stop data_state_left) -ge 1 ] &&
  [ $(last stop error_stops) -ge $(m stop data_state_left) ] && [ $(last stop error_stops_failed) = 0 ] &&
  [ $(m stop cmds_while_card_in_data_state) = 0 ]" || fail=1
for p in late failprog; do
  check "$p: $(m $p data_state_left) failed writes left the card in its data state, the driver sent $(last $p error_stops) stops; $(m $p cmds_while_card_in_data_state) commands reached the card in that state" \
    eval "[ $(last $p error_stops) -ge $(m $p data_state_left) ] && [ $(last $p error_stops_failed) = 0 ] && [ $(m $p cmds_while_card_in_data_state) = 0 ]" || fail=1
done
check "lost-edge: $(m lost-edge lost_edge_commands) edge lost, $(last lost-edge deadline_completed) completed at the deadline, $(last lost-edge deadlines) timed out" \
  eval "[ $(m lost-edge lost_edge_commands) = 1 ] && [ $(last lost-edge deadline_completed) = 1 ] && [ $(last lost-edge deadlines) = 0 ]" || fail=1
# quiesce_busy: the bound ended with STAT still showing the drain; held_back: the bounced
# read's buffer was kept from use then (no command reaches the controller while STAT shows
# it busy, so drain_bytes_after_cmd stays 0 even for a driver that hands the buffer back)
check "drain: $(m drain drain_bytes) bytes written after the reset, $(m drain drain_bytes_after_cmd) after the next command; quiesces still busy $(last drain quiesce_busy), held back $(last drain held_back)" \
  eval "[ $(m drain drain_bytes) -gt 0 ] && [ $(m drain drain_bytes_after_cmd) = 0 ] && [ $(last drain quiesce_busy) -gt 0 ] && [ $(last drain held_back) -gt 0 ]" || fail=1
for fb in 1 0; do
  ff=$(grep -o "PHASE flushfail bounce=$fb .*" "$log" | tail -1)
  echo "  $ff"
  fv() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$ff"; }
  check "flushfail bounce=$fb: a read whose tail outlasts the 1 ms poll fails (rc $(fv rc), $(fv flush_errors) flush errors) instead of returning stale bytes, and reads right afterwards" \
    eval "[ '$(fv rc)' != 0 ] && [ '$(fv flush_errors)' -ge 1 ] && [ '$(fv differs_after)' = 0 ]" || fail=1
done
check "flushfail: the model dropped the late tails ($(m flushfail rx_tail_bytes_lost) bytes), none flushed into returned memory" \
  eval "[ $(m flushfail rx_tail_bytes_lost) -gt 0 ] && [ $(m flushfail drain_bytes_after_cmd) = 0 ]" || fail=1
sl=$(grep -o "PHASE stall .*" "$log" | tail -1)
echo "  $sl"
check "stall: a command stalled past its deadline before SEND: read right, nothing sent while busy ($(m stall busy_rejects) SENDs rejected), not timed out" \
  eval "[ $(sed -n 's/.*\brc=\([0-9]*\).*/\1/p' <<<"$sl") = 0 ] && [ $(sed -n 's/.*differs=\([0-9]*\).*/\1/p' <<<"$sl") = 0 ] &&
  [ $(m stall busy_rejects) = 0 ] && [ $(sed -n 's/.*deadlines=\([0-9]*\).*/\1/p' <<<"$sl") = 0 ]" || fail=1
r1=$(grep -o "PHASE r1b .*" "$log" | tail -1)
echo "  $r1"
check "r1b: $(m r1b r1b_busy_commands) R1b commands left the card busy 5 ms past their response, which completed them; $(m r1b cmds_while_card_busy) commands sent while it was busy (the driver waits for DAT0); the card came back and reads" \
  eval "[ $(m r1b r1b_busy_commands) -gt 0 ] && [ $(m r1b cmds_while_card_busy) = 0 ] && grep -q 'card=0 rc=0 not_ready=0' <<< '$r1'" || fail=1
exit $fail
