#!/usr/bin/env bash
# Fault injection over QMP, each kind in each direction, with the C driver and
# with the Rust driver:
# the driver reports the error, the MMC core retries, the model counts it,
# and the data on the card is intact afterwards.
#
# One known defect of the in-tree C driver is characterised, not hidden: after
# a response timeout on a read command it still reports the whole transfer as
# done (bytes_xfered is set whenever data->error is clear), so the MMC core
# completes the request with whatever was in the buffer.  The test records
# what the read returned in that case; Documentation/emulated-board.rst.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm-*) spec=\${1#arm-}; dir=\${spec##*-}; kind=\${spec%-*}
       "$QMP" "\$EMU_QMP" faults "\$kind" after=1 dir="\$dir" ;;
persist) "$QMP" "\$EMU_QMP" faults data-crc ppm=1000000 dir=read ;;
clear) "$QMP" "\$EMU_QMP" faults none ;;
done) "$QMP" "\$EMU_QMP" stats > "$T/stats.json" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
dd if=/dev/urandom of=/tmp/pat bs=64k count=4 2>/dev/null
dd if=/tmp/pat of=$DEV bs=64k oflag=direct 2>/dev/null
for kind in data-crc data-timeout resp-crc resp-timeout; do
  host_sync arm-$kind-read
  dd if=$DEV of=/tmp/back bs=64k count=4 iflag=direct 2>/dev/null || say "read with $kind: I/O error reported"
  if ! cmp -s /tmp/pat /tmp/back; then
    if [ "$EMU_DRIVER" = c ] && [ $kind = resp-timeout ]; then
      say "C driver known defect reproduced: stale data returned after a response timeout on a read"
    else
      fail "data read back differs after $kind on read"
    fi
  fi
  host_sync arm-$kind-write
  dd if=/tmp/pat of=$DEV bs=64k oflag=direct 2>/dev/null || say "write with $kind: I/O error reported"
  dd if=$DEV of=/tmp/back bs=64k count=4 iflag=direct 2>/dev/null
  cmp /tmp/pat /tmp/back || fail "data on the card differs after $kind on write"
  say "$kind: data intact"
done
# a card that keeps failing: the error must reach the block layer
host_sync persist
if dd if=$DEV of=/tmp/back bs=64k count=1 skip=8 iflag=direct 2>/dev/null; then
  fail "a read that fails every time returned success"
fi
say "persistent data CRC errors: the read failed with an I/O error"
host_sync clear
dd if=$DEV of=/tmp/back bs=64k count=4 iflag=direct 2>/dev/null
cmp /tmp/pat /tmp/back || fail "data differs after the persistent faults"
dmesg | grep -E 'mmcblk[0-9]|mmc[0-9]' | tail -5
host_sync done
G
)
for drv in c rust; do
echo "== $drv driver"
# The C driver reads ISTA once: under the model's default late-status-ns it takes a late
# data CRC error for a success (what c-driver-silicon-readings shows); here it gets the
# kinder reading, so that this test checks the faults themselves.
late=(); [ $drv = c ] && late=(--model late-status-ns=0)
emu --card emmc --size 64 --driver $drv "${late[@]}" --host-script "$T/host.sh" "$g"
grep '\[guest\]' "$T/serial.log"
python3 - "$T/stats.json" $drv <<'P'
import json, sys
s = json.load(open(sys.argv[1]))
print("faults injected:", s["faults"])
f = s["faults"]
old = ("data-crc", "data-timeout", "resp-crc", "resp-timeout")
bad = [k for k in old if (f[k] < 3 if k == "data-crc" else f[k] != 2)]
bad += [k for k, v in f.items() if k not in old and v != 0]
if bad:
    print("FAILED: expected 2 of each kind (one read, one write) plus the persistent data-crc ones")
    sys.exit(1)
# The model's default stop-after-error=false: a failed multi-block transfer leaves the card in
# its data state. The Rust driver stops it itself; the C driver leaves it to the MMC core,
# whose recovery sends CMD13 to the card in that state, then CMD12.
left, cmds = s["data_state_left"], s["cmds_while_card_in_data_state"]
print("failed transfers that left the card in its data state: %d, commands that reached it"
      " there: %d" % (left, cmds))
if left == 0 or (sys.argv[2] == "rust" and cmds != 0):
    print("FAILED: expected the card left in its data state, and no command to it there"
          " from the Rust driver")
    sys.exit(1)
P
done
echo "ok: every fault recovered with the data intact, a persistent one reached the block layer"
