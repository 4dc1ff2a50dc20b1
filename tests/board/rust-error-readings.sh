#!/usr/bin/env bash
# Two readings of the silicon around a failed transfer (Documentation/
# emulated-board.rst "Unknowns of the silicon"), each at its less kind
# default, Rust driver, eMMC at HS200, one boot:
#  - rxtimeout: the controller's data receive timeout (ENHC.RX_TIMEOUT,
#    255 as both drivers program it; rx-data-timeout-unit-clks, default
#    1024 bus clocks a unit: 2.8 ms at 94.4 MHz) under a card that stalls a
#    read's access time for 5 ms (busy-stall, 5 % of the data commands).
#    The model raises the data timeout, late (late-status-ns: after the
#    completion bits, as every data error) and writes nothing of the read
#    to memory.  Checked: the model timed reads out, the driver counted data
#    timeouts (error_data_timeout), 64 reads of 64 KiB (one dd each) either
#    fail or return exactly what was written (a read reported good without
#    its data would return what the buffer held: the MMC core retries a
#    failed read, then reads it sector by sector, and a sector that times
#    out again fails the read), and once the card stalls no more, 4 MiB
#    verify;
#  - errorbusy: a transfer's error that latches with its completion leaves
#    the controller busy finishing it (error-busy-ns, default 100 us;
#    STAT.CMD_BUSY, ESTA[13:11]), and an SRST meanwhile hangs it until the
#    next SRST.  Response CRC errors on 4 reads (the data moves): the driver
#    waits for the controller before its reset (the model's
#    srst_while_error_busy stays 0, no quiesce reported busy), the reads
#    are retried and 4 MiB verify;
#  - datastop: data CRC errors on 4 multi-block reads (fault-dir
#    read-multi), under the model's default reading of the stop after a
#    failed transfer (stop-after-error=false: the controller does not stop
#    the card, and takes no block past the failing one, so the card of an
#    open-ended CMD18 is left sending data): the driver sends the request's stop
#    after its reset (error_stops, none failed), so the model counts cards
#    left in their data state (data_state_left) and no command but CMD12
#    reaching one there (cmds_while_card_in_data_state 0; without the
#    driver's stop the core's CMD13 would be the first); 4 MiB verify;
#  - kindstop: the other reading (stop-after-error-now 1: the controller
#    stops the card itself), the same faults: the driver's stop then finds
#    the card stopped already (the card ignores CMD12 in its transfer
#    state: error_stops_failed counts them, each followed by a reset); the
#    reads are retried and 4 MiB verify, no card left in its data state.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
stall) "$QMP" "\$EMU_QMP" stall ppm=50000 count=1 read-ns=5000000 seed=7 ;;
nostall) "$QMP" "\$EMU_QMP" stall ;;
respcrc) "$QMP" "\$EMU_QMP" faults resp-crc ppm=200000 seed=3 limit=4 dir=read ;;
datacrc) "$QMP" "\$EMU_QMP" faults data-crc ppm=200000 seed=5 limit=4 dir=read-multi ;;
kindstop) "$QMP" "\$EMU_QMP" set stop-after-error-now 1 ;;
unkindstop) "$QMP" "\$EMU_QMP" set stop-after-error-now 0 ;;
nofaults) "$QMP" "\$EMU_QMP" faults none ;;
stats-*) "$QMP" "\$EMU_QMP" stats > "$T/\${1#stats-}.json"; "$QMP" "\$EMU_QMP" reset-stats ;;
esac
HOST
chmod +x "$T/host.sh"

g=$(guest errs <<'G'
set -e
wait_card 30 || fail "no card"
D=$(rs_debugfs)
st() { sed -n "s/^$1: //p" "$D/stats"; }
dd if=/dev/urandom of=/tmp/w bs=1M count=4 2>/dev/null
dd if=/tmp/w of=$DEV bs=1M oflag=direct 2>/dev/null || fail "write"
# readback NAME: 4 MiB read in 64 KiB requests, compared with what was written
readback() {
    local rc=0
    dd if=$DEV of=/tmp/r bs=64k count=64 iflag=direct 2>/dev/null || rc=$?
    [ "$rc" = 0 ] || fail "$1: dd failed ($rc): the core's retries did not bring the reads through"
    cmp /tmp/w /tmp/r || fail "$1: 4 MiB read back differ from what was written"
}

echo 1 > "$D/stats"
host_sync stall
i=0; good=0; bad=0
while [ $i -lt 64 ]; do
    if dd if=$DEV of=/tmp/c bs=64k skip=$i count=1 iflag=direct 2>/dev/null; then
        dd if=/tmp/w of=/tmp/e bs=64k skip=$i count=1 2>/dev/null
        cmp -s /tmp/c /tmp/e || fail "rxtimeout: 64 KiB at $i reported read, not what was written"
        good=$((good + 1))
    else
        bad=$((bad + 1))
    fi
    i=$((i + 1))
done
host_sync nostall
host_sync stats-rxtimeout
to=$(st error_data_timeout)
say "rxtimeout: under 5 ms read stalls $good of 64 reads of 64 KiB right, $bad failed, error_data_timeout=$to"
[ "${to:-0}" -gt 0 ] || fail "rxtimeout: the driver saw no data timeout"
readback rxtimeout-after

echo 1 > "$D/stats"
host_sync respcrc
readback errorbusy
host_sync nofaults
host_sync stats-errorbusy
crc=$(st error_cmd_crc); qb=$(st quiesce_busy); hb=$(st held_back)
say "errorbusy: 4 MiB verify, error_cmd_crc=$crc quiesce_busy=$qb held_back=$hb error_stops=$(st error_stops) error_stops_failed=$(st error_stops_failed)"
[ "${crc:-0}" -gt 0 ] || fail "errorbusy: no response CRC error reached the driver"
[ "$qb" = 0 ] && [ "$hb" = 0 ] || fail "errorbusy: the controller stayed busy after a reset"

stops() { # PHASE: the data CRC phase's line
    say "$1: 4 MiB verify, error_data_crc=$(st error_data_crc) error_stops=$(st error_stops) error_stops_failed=$(st error_stops_failed)"
    [ "$(st error_data_crc)" -gt 0 ] || fail "$1: no data CRC error reached the driver"
    echo "@@STOPS $1 $(st error_data_crc) $(st error_stops) $(st error_stops_failed)"
}
echo 1 > "$D/stats"
host_sync datacrc
readback datastop
host_sync nofaults
host_sync stats-datastop
stops datastop

echo 1 > "$D/stats"
host_sync kindstop
host_sync datacrc
readback kindstop
host_sync nofaults
host_sync unkindstop
host_sync stats-kindstop
stops kindstop
G
)

rc=0
emu --card emmc --size 16 --driver rust --host-script "$T/host.sh" "$g" || rc=1
grep '\[guest\]' "$T/serial.log" | tr -d '\r' | sed 's/^/  /'
m() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(*[s.get(k, s["faults"].get(k)) for k in sys.argv[2:]])' "$@" 2>/dev/null || echo 0 0 0; }
read -r n _ < <(m "$T/rxtimeout.json" rx_data_timeouts rx_data_timeouts)
read -r eb hung < <(m "$T/errorbusy.json" error_busy_commands srst_while_error_busy)
read -r _ indata < <(m "$T/errorbusy.json" data_state_left cmds_while_card_in_data_state)
read -r dleft dindata < <(m "$T/datastop.json" data_state_left cmds_while_card_in_data_state)
read -r kleft kindata < <(m "$T/kindstop.json" data_state_left cmds_while_card_in_data_state)
read -r _ dcrc dstops dfailed < <(grep -a '^@@STOPS datastop ' "$T/serial.log" | tr -d '\r' | cut -d' ' -f2-)
read -r _ kcrc kstops kfailed < <(grep -a '^@@STOPS kindstop ' "$T/serial.log" | tr -d '\r' | cut -d' ' -f2-)
echo "  model: $n reads timed out by ENHC.RX_TIMEOUT; $eb failed transfers busy after their error, $hung SRSTs while busy"
check "rxtimeout: the model timed reads out" [ "${n:-0}" -gt 0 ] || rc=1
check "errorbusy: failed transfers left the controller busy" [ "${eb:-0}" -gt 0 ] || rc=1
check "errorbusy: no SRST while the controller finished a failed transfer" [ "${hung:-1}" = 0 ] || rc=1
check "errorbusy: $indata commands reached a card in its data state" [ "${indata:-1}" = 0 ] || rc=1
check "datastop: $dcrc data CRC errors left the card in its data state $dleft times; the driver's stop $dstops times, $dfailed failed; $dindata commands but CMD12 reached the card there" \
  eval "[ '${dleft:-0}' -gt 0 ] && [ '${dstops:-0}' -ge '${dleft:-1}' ] && [ '${dfailed:-1}' = 0 ] && [ '${dindata:-1}' = 0 ]" || rc=1
check "kindstop: $kcrc data CRC errors, the controller stopped the card itself ($kleft left in its data state); the driver's stop $kstops times, $kfailed of them to a stopped card; $kindata commands reached a card in its data state" \
  eval "[ '${kleft:-1}' = 0 ] && [ '${kstops:-0}' -gt 0 ] && [ '${kfailed:-0}' = '${kstops:-1}' ] && [ '${kindata:-1}' = 0 ]" || rc=1
exit $rc
