#!/usr/bin/env bash
# The controller's data receive timeout (ENHC.RX_TIMEOUT, 255 as both
# drivers program it; the model's rx-data-timeout-unit-clks, default 1024
# bus clocks a unit: 2.8 ms at HS200's 94.4 MHz, Documentation/
# emulated-board.rst "Unknowns of the silicon") under a card that stalls a
# read's access time for 5 ms (busy-stall, 5 % of the data commands), Rust
# driver, eMMC at HS200.  The model raises the data timeout, late (its
# default late-status-ns: after the completion bits, as every data error),
# and writes nothing of the read to memory.  Checked: the model timed reads
# out; the driver counted data timeouts (error_data_timeout); 4 MiB read in
# 64 KiB requests through one dd (whose buffer holds the last chunk: a read
# reported good without its data would repeat it) are exactly what was
# written, the MMC core's retries bringing each request through; no kernel
# error beyond the retried reads'.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
stall) "$QMP" "\$EMU_QMP" stall ppm=50000 count=1 read-ns=5000000 seed=7 ;;
nostall) "$QMP" "\$EMU_QMP" stall ;;
stats) "$QMP" "\$EMU_QMP" stats > "$T/stats.json" ;;
esac
HOST
chmod +x "$T/host.sh"

g=$(guest rxto <<'G'
set -e
wait_card 30 || fail "no card"
D=$(rs_debugfs)
st() { sed -n "s/^$1: //p" "$D/stats"; }
dd if=/dev/urandom of=/tmp/w bs=1M count=4 2>/dev/null
dd if=/tmp/w of=$DEV bs=1M oflag=direct 2>/dev/null || fail "write"
echo 1 > "$D/stats"
host_sync stall
rc=0
dd if=$DEV of=/tmp/r bs=64k count=64 iflag=direct 2>/dev/null || rc=$?
host_sync nostall
host_sync stats
to=$(st error_data_timeout)
say "reads under 5 ms stalls: dd rc=$rc, error_data_timeout=$to"
[ "$rc" = 0 ] || fail "dd failed: the core's retries did not bring the reads through"
cmp /tmp/w /tmp/r || fail "4 MiB read back differ from what was written"
[ "${to:-0}" -gt 0 ] || fail "the driver saw no data timeout"
say "4 MiB read back verify"
G
)

rc=0
emu --card emmc --size 16 --driver rust --host-script "$T/host.sh" "$g" || rc=1
grep '\[guest\]' "$T/serial.log" | tr -d '\r' | sed 's/^/  /'
n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["rx_data_timeouts"])' "$T/stats.json" 2>/dev/null || echo 0)
echo "  model: $n reads timed out by ENHC.RX_TIMEOUT"
check "the model timed reads out" [ "$n" -gt 0 ] || rc=1
exit $rc
