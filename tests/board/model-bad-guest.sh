#!/usr/bin/env bash
# What real hardware would not do is an error, never a QEMU crash: DMA outside
# RAM raises the error interrupt and logs a guest error; a command written
# while another is busy is logged and ignored.  Registers poked with devmem,
# no driver bound.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
base=$((0x$(sdhc_dev | cut -d. -f1)))
r() { devmem $((base + $1)) 32; }
w() { devmem $((base + $1)) 32 $2; }
w 0x10 0x0000f008          # CLKC: gates on, divider 9, source 0, memory powered
w 0x24 0x00003fff          # ICTL: everything
w 0x28 0x00007fff          # ISTA: clear
w 0x18 0x00000001          # PDMA: DMA mode
w 0x14 0x70000000          # ADDR: beyond the 512 MiB of RAM
w 0x08 0x00000000          # CTRL: 1-bit bus, 512-byte packets
w 0x04 0x00000498          # SEND: CMD24, data, write, no response
usleep 200000
ista=$(r 0x28)
say "ISTA after a DMA outside RAM: $ista"
[ $((ista & 0x2000)) != 0 ] || fail "no TXFIFO_EMPTY error interrupt for a DMA outside RAM"
w 0x28 0x00007fff
# a slow command without response (the model's latency is 50 ms here), then
# a second SEND while it is in flight
w 0x04 0x00000000
w 0x04 0x00000000
usleep 200000
say "model still answers: STAT=$(r 0x0c) ISTA=$(r 0x28)"
G
)
emu --card emmc --size 16 --driver none --model cmd-latency-ns=50000000 "$g"
grep -q 'is outside RAM' "$T/serial.log" || { echo "FAILED: no guest error logged for the DMA"; exit 1; }
grep -q 'written while CMD0 is busy' "$T/serial.log" || { echo "FAILED: command while busy not logged"; exit 1; }
echo "ok: both logged, guest and QEMU alive"
