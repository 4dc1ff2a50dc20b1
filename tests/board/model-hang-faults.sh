#!/usr/bin/env bash
# The model's hang and late-DMA faults at register level, no driver bound
# (--driver none): the guest drives the controller with devmem (eMMC brought
# up by hand: CMD0, CMD1, CMD2, CMD3, CMD7; 400 kHz, 1-bit bus; 40 kHz for
# the late-dma cases, where a 512-byte block takes 103 ms and shell steps fit
# between blocks) and DMAs into the top 16 MiB of RAM, which the kernel does
# not use (mem=496M).
#
#  - lost-irq: the command completes inside the controller (response in
#    ARGU, data in memory, STAT not busy) but ISTA stays clear, also for the
#    next command, until SRST; then commands interrupt again;
#  - freeze: STAT.CMD_BUSY stays set, no ISTA bit, no data, a second SEND is
#    refused, until SRST; the card never saw a command without data; a read
#    that froze reached the card, which waits sending data (CMD13 says so)
#    until CMD12, after which reads work again;
#  - the RX phase beyond the clock divider (Linux c82efcaad2a4) freezes the
#    controller by itself; a phase equal to the divider does not;
#  - late-dma: the response CRC error is in ISTA at the response while the
#    blocks are still to come; memory the guest rewrites after that
#    interrupt is overwritten by the late blocks (what a driver handed back
#    would be), and the command path takes a new command meanwhile; with an
#    SRST right after the interrupt nothing reaches memory;
#  - every counter (QMP stats and the guest's counter window) agrees.
# Then the DT: the interrupt is edge-triggered by default (meson.dtsi) and
# level-high with --model irq-trigger=level.
. "$(dirname "$0")/../lib.sh"
python3 - "$T/card.img" <<'P'
import struct, sys
# 16 MiB eMMC; block b (b < 64) holds the word 0x5a000000 + b everywhere
with open(sys.argv[1], "wb") as f:
    for b in range(64):
        f.write(struct.pack("<I", 0x5a000000 + b) * 128)
    f.truncate(16 << 20)
P
fault_host
g=$(guest t <<'G'
set -e
base=$((0x$(sdhc_dev | cut -d. -f1)))
buf=$((0x5f000000))
r() { echo $(($(devmem $((base + $1)) 32))); }
w() { devmem $((base + $1)) 32 $(($2)); }
R1=0x40 R1B=0x1040 R2=0x340 R3=0x240
RCA=0x10000
CTRL=$((0x7f << 13))   # 1-bit bus, 512-byte packets, RX_TIMEOUT 127 clocks (as the C driver)
SRSTS=0
# ista_wait MS: ISTA once it is not zero, or 0 after MS milliseconds
ista_wait() {
  local n=0 v
  while v=$(r 0x28); [ "$v" = 0 ] && [ $n -lt $1 ]; do n=$((n + 1)); usleep 1000; done
  echo $v
}
# cmd INDEX ARG FLAGS [MS]: send a command, print ISTA
cmd() {
  w 0x18 0; w 0x28 0x7fff; w 0x00 $2; w 0x04 $(($1 | $3)); ista_wait ${4:-50}
}
# rd INDEX ARG BLOCKS [MS]: read BLOCKS x 512 bytes by DMA to buf, print ISTA
rd() {
  w 0x14 $buf; w 0x08 $CTRL; w 0x28 0x7fff; w 0x00 $2; w 0x18 1
  w 0x04 $(($1 | 0xc0 | (($3 - 1) << 16))); ista_wait ${4:-200}
}
resp() { w 0x18 0; r 0x00; }
busy() { echo $(($(r 0x0c) & 1)); }
srst() { w 0x2c 0x3f; w 0x2c 0; SRSTS=$((SRSTS + 1)); }
mem() { echo $(($(devmem $((buf + $1 * 512 + ${2:-0})) 32))); }
mark() { local b; for b in $(seq 0 $(($1 - 1))); do devmem $((buf + b * 512)) 32 0xdeadbeef; done; }
# card_blocks N FIRST: how many of N blocks at buf hold card block FIRST+i
card_blocks() { local b c=0; for b in $(seq 0 $(($1 - 1))); do [ $(mem $b) = $((0x5a000000 + $2 + b)) ] && c=$((c + 1)); done; echo $c; }
want() { if [ "$2" = "$3" ]; then say "ok: $1 ($2)"; else fail "$1: $2, expected $3"; fi; }

w 0x10 $((0xf000 | 59))   # CLKC: 24 MHz / 60 = 400 kHz, clocks on, memory on
w 0x38 0                  # CLK2: RX phase 0
w 0x08 $CTRL
w 0x24 0x3fff             # ICTL
cmd 0 0 0 >/dev/null
n=0
until [ $(($(cmd 1 0x40ff8080 $R3) & 1)) = 1 ] && [ $(($(resp) >> 31)) = 1 ]; do
  n=$((n + 1)); [ $n -lt 20 ] || fail "CMD1: the card never powered up"
done
want "CMD2" $(($(cmd 2 0 $R2) & 7)) 1
want "CMD3" $(($(cmd 3 $RCA $R1) & 7)) 1
want "CMD7" $(($(cmd 7 $RCA $R1B) & 7)) 1
want "CMD13: card in transfer state" $(($(cmd 13 $RCA $R1) & 7)):$(($(resp) >> 9 & 15)) 1:4
mark 8
want "plain 8-block read: ISTA" $(rd 18 0 8) $((0x899))
want "plain read: blocks from the card" $(card_blocks 8 0) 8

say "== lost-irq on a command (ppm=1000000 limit=1)"
host_sync arm,lost-irq,ppm=1000000,limit=1
want "ISTA after the command" $(cmd 13 $RCA $R1 30) 0
want "STAT.CMD_BUSY" $(busy) 0
want "response latched (card status: transfer)" $(($(resp) >> 9 & 15)) 4
want "state: interrupt lost" $(model_counter state) 1
want "next command without SRST: ISTA still clear" $(cmd 13 $RCA $R1 30) 0
srst
want "state after SRST" $(model_counter state) 0
want "command after SRST: ISTA" $(($(cmd 13 $RCA $R1) & 1)) 1

say "== lost-irq on a read (after=1 dir=read)"
host_sync arm,lost-irq,after=1,dir=read
want "a command that is not a read is spared" $(($(cmd 13 $RCA $R1) & 1)) 1
mark 1
want "ISTA after the read" $(rd 17 $((3 * 512)) 1 60) 0
want "STAT.CMD_BUSY" $(busy) 0
want "the data reached memory" $(card_blocks 1 3) 1
srst
want "read after SRST: ISTA" $(rd 17 $((4 * 512)) 1) $((0x899))

say "== freeze on a command (after=1)"
host_sync arm,freeze,after=1
want "ISTA after the command" $(cmd 13 $RCA $R1 30) 0
want "STAT.CMD_BUSY" $(busy) 1
want "state: frozen" $(model_counter state) 2
w 0x04 $((13 | R1))
usleep 50000
want "a second SEND is refused; still busy, ISTA" $(busy):$(r 0x28) 1:0
srst
want "STAT.CMD_BUSY after SRST" $(busy) 0
want "command after SRST: ISTA" $(($(cmd 13 $RCA $R1) & 1)) 1
want "the card never saw the frozen command (transfer state)" $(($(resp) >> 9 & 15)) 4

say "== freeze on a read (after=1 dir=read)"
host_sync arm,freeze,after=1,dir=read
mark 2
want "ISTA after the read" $(rd 18 0 2 60) 0
want "STAT.CMD_BUSY" $(busy) 1
want "no data in memory" $(card_blocks 2 0) 0
srst
want "the card took the frozen read (sending-data state)" $(($(cmd 13 $RCA $R1) & 1)):$(($(resp) >> 9 & 15)) 1:5
want "CMD12 after SRST" $(($(cmd 12 0 $R1B) & 1)) 1
want "read after SRST and CMD12: ISTA" $(rd 18 0 2) $((0x899))

say "== RX phase beyond the divider (c82efcaad2a4)"
w 0x38 60
want "RX phase 60, divider 59: ISTA" $(cmd 13 $RCA $R1 30) 0
want "STAT.CMD_BUSY" $(busy) 1
want "rx-phase freezes" $(model_counter rx_phase_freezes) 1
srst
w 0x38 59
want "RX phase 59 = divider: ISTA" $(($(cmd 13 $RCA $R1) & 1)) 1
w 0x38 0

say "== late-dma on an 8-block read (40 kHz: 103 ms per block)"
w 0x10 $((0xf000 | 599))
host_sync arm,late-dma,after=1
mark 8
want "ISTA at the response" $(rd 18 0 8) 4
want "STAT.CMD_BUSY" $(busy) 0
want "state: late DMA running" $(model_counter state) 4
early=$(model_counter late_dma_bytes)
mark 8   # the buffer is someone else's now
want "a new command meanwhile: ISTA" $(($(cmd 13 $RCA $R1) & 1)) 1
usleep 1000000
late=$(card_blocks 8 0)
say "late-dma: $early bytes in memory right after the interrupt; $late of 8 blocks overwritten after the guest rewrote them"
[ $late -ge 4 ] || fail "fewer than 4 blocks written after the error interrupt"
want "late DMA bytes" $(model_counter late_dma_bytes) 4096
want "state after the late DMA" $(model_counter state) 0

say "== late-dma, SRST right after the interrupt"
host_sync arm,late-dma,after=1
mark 8
want "ISTA at the response" $(rd 18 0 8) 4
srst
mark 8
usleep 1000000
want "no block written after SRST" $(card_blocks 8 0) 0
want "late DMA bytes (unchanged)" $(model_counter late_dma_bytes) 4096
want "late DMA bytes cancelled" $(model_counter late_dma_cancelled) 4096
w 0x10 $((0xf000 | 59))
want "read after SRST" $(rd 18 0 8):$(card_blocks 8 0) $((0x899)):8

say "== counters"
for c in faults lost_irq freeze late_dma rx_phase_freezes srst_resets late_dma_bytes late_dma_cancelled lost_irq_commands; do
  echo "@@COUNTER $c $(model_counter $c)"
done
echo "@@SRSTS $SRSTS"
host_sync stats
G
)
emu --card emmc --image "$T/card.img" --driver none --append mem=496M \
    --host-script "$T/host.sh" "$g"
grep '\[guest\]' "$T/serial.log"
python3 - "$T/stats.json" "$T/serial.log" <<'P'
import json, re, sys
s = json.load(open(sys.argv[1]))
log = open(sys.argv[2], errors="replace").read()
guest = {k: int(v) for k, v in re.findall(r"@@COUNTER (\S+) (\d+)", log)}
srsts = int(re.search(r"@@SRSTS (\d+)", log).group(1))
print("model stats:", json.dumps(s))
ok = True
def want(what, got, exp):
    global ok
    ok = ok and got == exp
    print("  %s: %s = %s (expected %s)" % ("ok" if got == exp else "FAILED", what, got, exp))
f = s["faults"]
for k, n in (("lost-irq", 2), ("freeze", 2), ("late-dma", 2), ("data-crc", 0),
             ("data-timeout", 0), ("resp-crc", 0), ("resp-timeout", 0)):
    want("faults " + k, f[k], n)
want("rx-phase freezes", s["rx_phase_freezes"], 1)
want("lost-irq: completions ISTA did not show", s["lost_irq_commands"], 3)
want("late DMA bytes written after the error", s["late_dma_bytes"], 4096)
want("late DMA bytes cancelled by SRST", s["late_dma_cancelled_bytes"], 4096)
want("SRST resets (the guest wrote %d)" % srsts, s["srst_resets"], srsts)
want("busy rejects (the SEND while frozen)", s["busy_rejects"], 1)
want("state: nothing pending", [s["state"][k] for k in ("irq_stuck", "frozen", "late_dma_running")], [False] * 3)
host = {"faults": sum(f.values()), "lost_irq": f["lost-irq"], "freeze": f["freeze"],
        "late_dma": f["late-dma"], "rx_phase_freezes": s["rx_phase_freezes"],
        "srst_resets": s["srst_resets"], "late_dma_bytes": s["late_dma_bytes"],
        "late_dma_cancelled": s["late_dma_cancelled_bytes"],
        "lost_irq_commands": s["lost_irq_commands"]}
for k, v in host.items():
    want("guest's counter window: " + k, guest.get(k), v)
sys.exit(0 if ok else 1)
P
grep -q 'frozen until SRST' "$T/serial.log" || { echo "FAILED: the RX-phase freeze was not logged"; exit 1; }

echo "== the DT's interrupt type: edge by default, level with irq-trigger=level"
dt=$(guest dt <<'G'
f=$(ls -d /proc/device-tree/platform-bus@*/mmc@*/interrupts | head -1)
echo "@@IRQ-FLAGS $(od -An -tx1 "$f" | tr -d ' \n' | tail -c 2)"
G
)
for trig in default level; do
  args=(); [ $trig = default ] || args=(--model irq-trigger=$trig)
  emu --card emmc --size 16 --driver none "${args[@]}" "$dt"
  got=$(sed -n 's/.*@@IRQ-FLAGS \([0-9a-f]*\).*/\1/p' "$T/serial.log")
  exp=01; [ $trig = level ] && exp=04
  check "irq-trigger $trig: interrupt flags 0x$got (expected 0x$exp: ${trig/default/edge})" [ "$got" = "$exp" ]
done
echo "ok: lost-irq, freeze (injected and RX phase) and late-dma behave as documented and are counted"
