#!/usr/bin/env bash
# Never hang (Rust driver, edge-triggered interrupt): the model loses a command's interrupt
# (lost-irq: the command completes, ISTA stays clear) or freezes (freeze: busy, no interrupt,
# until SRST), during probe and during an fio write+verify, on eMMC and SD.  Every fault must
# be recovered by the driver's software deadline (controller reset, ETIMEDOUT, the MMC core
# retries): the card comes up, 0 corrupted blocks, the number of deadlines that fired
# (stats error_deadline) equals the faults the model injected, and unbind and rmmod still
# complete within seconds afterwards.  The write+verify uses 4 KiB requests and at most one
# fault: each fault costs its deadline (here the 10 s floor), which the board waits out.
# Then, for freeze, one multi-block read freezes the controller after it reached the card
# (the model's freeze of a data command: the card waits sending data): the driver's deadline
# resets the controller and sends the request's stop, so the model counts the card left in its
# data state once and no command but CMD12 reaching it there; the read is retried through.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm-*) "$QMP" "\$EMU_QMP" faults "\${1#arm-}" ppm=20000 seed=11 limit=1 ;;
clear) "$QMP" "\$EMU_QMP" faults none ;;
arm1-*) "$QMP" "\$EMU_QMP" reset-stats; "$QMP" "\$EMU_QMP" faults "\${1#arm1-}" after=1 dir=read-multi ;;
frozen) "$QMP" "\$EMU_QMP" stats | python3 -c 'import json,sys; s=json.load(sys.stdin); print("data_state_left=%d cmds_in_data_state=%d" % (s["data_state_left"], s["cmds_while_card_in_data_state"]))' > "$T/frozen" ;;
stats) "$QMP" "\$EMU_QMP" stats | python3 -c 'import json,sys; s=json.load(sys.stdin); f=dict(s["faults"], data_state_left=s["data_state_left"], cmds_in_data_state=s["cmds_while_card_in_data_state"]); print(" ".join("%s=%d" % kv for kv in sorted(f.items())))' > "$T/faults" ;;
esac
HOST
chmod +x "$T/host.sh"
guest_for() { # guest_for FAULT: the guest script for one fault kind
sed "s/@FAULT@/$1/g" <<'G' | guest "t-$1"
set -e
load_driver rust
wait_card 60 || fail "the card did not come up after faults during probe"
D=$(rs_debugfs)
stat() { sed -n "s/^$1: //p" "$D/stats"; }
say "PROBE deadlines=$(stat error_deadline)"
host_sync arm-@FAULT@
fio --name=v --filename=$DEV --direct=1 --rw=randwrite --bs=4k --size=2m \
    --verify=crc32c --do_verify=1 --randseed=3 --output-format=terse >/tmp/fio.out 2>&1 ||
  { cat /tmp/fio.out; fail "fio write+verify with @FAULT@ faults"; }
host_sync clear
keep_data write || fail "write after the faults"
keep_data verify || fail "verify after the faults"
say "DEADLINES $(stat error_deadline) LATE $(stat late_interrupts)"
host_sync stats
if [ @FAULT@ = freeze ]; then
    host_sync arm1-freeze
    dd if=$DEV of=/dev/null bs=64k count=1 skip=3 iflag=direct 2>/dev/null ||
        fail "a multi-block read that froze the controller was not retried through"
    host_sync clear
    host_sync frozen
    say "FROZEN-READ stops=$(stat error_stops) failed=$(stat error_stops_failed)"
fi
PDEV=$(sdhc_dev)
t0=$(cut -d' ' -f1 /proc/uptime)
echo "$PDEV" > /sys/bus/platform/drivers/meson-mx-sdhc-rs/unbind
rmmod meson_mx_sdhc_rs
t1=$(cut -d' ' -f1 /proc/uptime)
say "UNBIND+RMMOD $(echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}') s"
G
}
fail=0
for card in emmc sd; do
  for fault in lost-irq freeze; do
    echo "== $card $fault"
    # During probe: the 4th command the controller sees gets the fault (an early
    # enumeration command; the MMC core must retry it after the deadline).
    emu --card $card --size 32 --driver none --timeout 600 --host-script "$T/host.sh" \
        --model fault-kind=$fault --model fault-after=4 "$(guest_for $fault)" || { echo "FAILED: $card $fault run"; fail=1; continue; }
    log=$(cat "$T/serial.log")
    model=$(sed -n "s/.*\b$fault=\([0-9]*\).*/\1/p" "$T/faults")
    fired=$(sed -n 's/.*DEADLINES \([0-9]*\).*/\1/p' <<<"$log")
    probe=$(sed -n 's/.*PROBE deadlines=\([0-9]*\).*/\1/p' <<<"$log")
    secs=$(sed -n 's/.*UNBIND+RMMOD \([0-9.]*\) s.*/\1/p' <<<"$log")
    left=$(sed -n 's/.*\bdata_state_left=\([0-9]*\).*/\1/p' "$T/faults")
    indata=$(sed -n 's/.*\bcmds_in_data_state=\([0-9]*\).*/\1/p' "$T/faults")
    echo "  model injected $fault: $model; deadlines fired: $fired (during probe: $probe); unbind+rmmod: ${secs}s; card left in its data state $left times, $indata commands reached it there"
    check "$card $fault: faults during probe were recovered by deadlines" [ "${probe:-0}" -ge 1 ] || fail=1
    check "$card $fault: deadlines fired == faults injected" [ -n "$model" ] && [ "$model" = "$fired" ] || fail=1
    check "$card $fault: no command reached a card left in its data state" [ "${indata:-1}" = 0 ] || fail=1
    if [ $fault = freeze ]; then
        read -r fl fin < <(sed -n 's/data_state_left=\([0-9]*\) cmds_in_data_state=\([0-9]*\)/\1 \2/p' "$T/frozen" 2>/dev/null)
        fs=$(sed -n 's/.*FROZEN-READ \(.*\)/\1/p' <<<"$log")
        check "$card freeze of a multi-block read: the card left in its data state ${fl:-x} time(s), ${fin:-x} commands but CMD12 reached it there; the driver's $fs" \
            eval "[ '${fl:-0}' = 1 ] && [ '${fin:-1}' = 0 ]" || fail=1
    fi
    check "$card $fault: unbind+rmmod within 5 s" awk -v s="${secs:-99}" 'BEGIN{exit !(s < 5)}' || fail=1
  done
done
exit $fail
