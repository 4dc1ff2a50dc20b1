#!/usr/bin/env bash
# scripts/sdhc-pack-probe, the board owners' sampling of DATA_1PACK_OK (Documentation/bench.rst,
# "Completion per packet"), on the emulated board under the C driver: it refuses while the
# card is mounted, then samples a 16 KiB read at 400 kHz, counts latches and packets, puts the
# clock back, and after a rebind the card reads as before.  The model sets the bit once per
# transfer, so the counts say nothing about the silicon; this checks the script.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
wait_card 60 || fail "no card"
mke2fs -q $DEV > /dev/null 2>&1 || mke2fs $DEV > /dev/null || fail "mke2fs"
mkdir -p /mnt/x
mount -t ext4 $DEV /mnt/x || mount $DEV /mnt/x || fail "mount $DEV"
if sdhc-pack-probe > /tmp/refused 2>&1; then fail "sdhc-pack-probe ran while the card was mounted"; fi
say "REFUSED $(tail -n 1 /tmp/refused)"
umount /mnt/x || fail "umount"
dd if=$DEV of=/tmp/ref bs=4k count=8 skip=400 iflag=direct 2>/dev/null
clk=$(cat /sys/kernel/debug/$(sdhc_host)/clock)
sdhc-pack-probe --clock 400000 --size 16384 --skip 400 --out /tmp/probe.log > /tmp/probe.out
cat /tmp/probe.out | while read -r l; do say "PROBE $l"; done
say "SAMPLELINES $(wc -l < /tmp/probe.log) CLOCK-AFTER $(cat /sys/kernel/debug/$(sdhc_host)/clock) CLOCK-BEFORE $clk"
switch-driver rust >/dev/null 2>&1 || true
switch-driver c
dd if=$DEV of=/tmp/back bs=4k count=8 skip=400 iflag=direct 2>/dev/null
cmp -s /tmp/ref /tmp/back || fail "the card reads differently after the probe and a rebind"
say "@@PACK-PROBE done"
G
)
emu --card emmc --size 64 --driver c "$g" || { echo "FAILED: run"; exit 1; }
log="$T/serial.log"
fail=0
check "the guest script finished (the card reads as before after a rebind)" grep -q '@@PACK-PROBE done' "$log" || fail=1
check "refused while the card was mounted: $(grep -o 'REFUSED .*' "$log" | head -1 | cut -c1-120)" grep -q 'REFUSED .*in use' "$log" || fail=1
check "$(grep -o 'PROBE DATA_1PACK_OK.*' "$log" | head -1)" grep -q 'PROBE DATA_1PACK_OK latches counted: [0-9]*; packets of the data commands sampled: [1-9]' "$log" || fail=1
l=$(grep -o 'SAMPLELINES .*' "$log" | tail -1)
check "samples written, clock put back ($l)" eval "[ \$(sed -n 's/SAMPLELINES \([0-9]*\).*/\1/p' <<<'$l') -gt 0 ] && [ \"\$(sed -n 's/.*CLOCK-AFTER \([0-9]*\).*/\1/p' <<<'$l')\" = \"\$(sed -n 's/.*CLOCK-BEFORE \([0-9]*\).*/\1/p' <<<'$l')\" ]" || fail=1
exit $fail
