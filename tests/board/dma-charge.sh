#!/usr/bin/env bash
# The kernel's cache-maintenance and copy charge (kernel-patches/,
# Documentation/cache-maintenance.rst) on both drivers, with the SDHC
# non-coherent as on the SoC (--model dma-noncoherent=on).  Two boots:
#  - without the boot parameters: the rates are 0 and nothing is charged,
#    with the C driver and then the Rust driver (counters stay 0);
#  - with them (10x the documented rates, so the effect stands far above
#    the run-to-run spread): the C driver's 4 KiB O_DIRECT reads are
#    invalidated twice each (at map and at unmap) and its writes cleaned
#    once, charged as the rates say, and its read and write latencies rise
#    by about what was charged against scale_percent 0 in the same boot
#    (the virtual time of I/O varies between boots by more than that); the Rust driver's cached
#    bounce buffers are synced (invalidates) and copied at the cached rate,
#    its coherent ones (bounce_cached=0) copied at the uncached rate, seen
#    by the kernel from the buffer's page table entry; debugfs
#    scale_percent 0 charges nothing and 200 twice the rates.
. "$(dirname "$0")/../lib.sh"
# 10x: clean, invalidate, clean+invalidate ns/KiB, floor ns; copy cached, uncached
MAINT=24400,12200,24400,2000
COPY=15400,76400
g=$(guest t <<'G'
set -e
[ -b "$DEV" ] || fail "no card disk on the SDHC"
D=/sys/kernel/debug/dma_maint_charge
[ -r $D/stats ] || fail "no $D/stats: the kernel lacks kernel-patches/"
ls /sys/firmware/devicetree/base/*/mmc@*/dma-noncoherent >/dev/null 2>&1 ||
  fail "the SDHC's DT node has no dma-noncoherent (emu-run --model dma-noncoherent=on)"
on=0
grep -q 'dma_maint_ns_per_kib=' /proc/cmdline && on=1
cat $D/rates
v() { sed -n "s/^$1: //p" $D/stats; }
rate() { sed -n "s/^$1: //p" $D/rates; }
snap() { for k in charged_ns inval_ops inval_ns clean_ops clean_ns copy_cached_bytes copy_uncached_bytes; do
  eval "$1_$k=$(v $k)"; done; }
delta() { eval "echo \$((\$$2_$3 - \$$1_$3))"; }
run() { # name rw bs size: fio O_DIRECT psync; prints the mean completion latency (us)
  fio --name=$1 --filename=$DEV --direct=1 --ioengine=psync --rw=$2 --bs=$3 --size=$4 \
      --output-format=terse >/tmp/$1.out 2>&1 || { cat /tmp/$1.out; fail "fio $1"; }
  case $2 in
  read) lat=$(cut -d';' -f16 /tmp/$1.out) ;;
  *) lat=$(cut -d';' -f57 /tmp/$1.out) ;;
  esac
  say "RESULT $1=$lat"
}
if [ $on = 0 ]; then
  for k in clean_ns_per_kib inval_ns_per_kib flush_ns_per_kib floor_ns copy_cached_ns_per_kib copy_uncached_ns_per_kib; do
    [ "$(rate $k)" = 0 ] || fail "no boot parameter, but $k is $(rate $k)"
  done
fi
# the C driver: one 4 KiB segment per request
[ "$(sdhc_driver)" = c ] || fail "the controller is held by '$(sdhc_driver)', not the C driver"
snap a
run c_read read 4k 1m
snap b
run c_write write 4k 512k
snap c
say "C driver: read: $(delta a b inval_ops) invalidates, $(delta a b inval_ns) ns; write: $(delta b c clean_ops) cleans, $(delta b c clean_ns) ns"
if [ $on = 0 ]; then
  [ "$(v charged_ns)" = 0 ] || fail "nothing asked for, but $(v charged_ns) ns charged after the C driver's I/O"
else
  # 256 reads of 4096 bytes (page-aligned buffers: 128 lines), each invalidated twice
  want=$((256 * 2 * 4096 * $(rate inval_ns_per_kib) / 1024))
  got=$(delta a b inval_ns)
  [ "$(delta a b inval_ops)" -ge 512 ] || fail "256 reads, $(delta a b inval_ops) invalidates: not two per mapping"
  [ "$got" -ge $((want * 95 / 100)) ] && [ "$got" -le $((want * 130 / 100)) ] ||
    fail "C driver's reads charged $got ns of invalidates, expected about $want"
  want=$((128 * 4096 * $(rate clean_ns_per_kib) / 1024))
  got=$(delta b c clean_ns)
  [ "$got" -ge $((want * 95 / 100)) ] && [ "$got" -le $((want * 130 / 100)) ] ||
    fail "C driver's writes charged $got ns of cleans, expected about $want"
  # scale_percent at run time: 0 charges nothing, 200 twice the rates
  echo 0 > $D/scale_percent
  snap s0
  run c_read_scale0 read 4k 256k
  run c_write_scale0 write 4k 256k
  snap s1
  [ "$(delta s0 s1 charged_ns)" = 0 ] || fail "scale_percent 0, but $(delta s0 s1 charged_ns) ns charged"
  echo 200 > $D/scale_percent
  run c_read_scale200 read 4k 256k
  snap s2
  want=$((64 * 2 * 4096 * 2 * $(rate inval_ns_per_kib) / 1024))
  got=$(delta s1 s2 inval_ns)
  [ "$got" -ge $((want * 95 / 100)) ] && [ "$got" -le $((want * 130 / 100)) ] ||
    fail "scale_percent 200: 64 reads charged $got ns of invalidates, expected about $want"
  echo 100 > $D/scale_percent
  say "scale_percent: 0 charged 0 ns, 200 charged $got ns for 64 reads (2x the rate: $want)"
fi
# the Rust driver, default design: two cached bounce buffers, synced and copied
insmod $RS_MOD
switch-driver rust
wait_card 30 || fail "no card under the Rust driver"
[ "$(sdhc_driver)" = rust ] || fail "switch-driver rust did not move the controller"
snap d
run rs_read read 128k 2m
snap e
say "Rust, cached: $(delta d e inval_ops) invalidates, $(delta d e inval_ns) ns; copies: cached $(delta d e copy_cached_bytes) B, uncached $(delta d e copy_uncached_bytes) B"
if [ $on = 0 ]; then
  [ "$(v charged_ns)" = 0 ] || fail "nothing asked for, but $(v charged_ns) ns charged after the Rust driver's I/O"
else
  [ "$(delta d e inval_ops)" -gt 0 ] || fail "the Rust driver's cached bounce buffers were not charged an invalidate"
  [ "$(delta d e copy_cached_bytes)" -ge $((2 * 1024 * 1024)) ] ||
    fail "2 MiB read through cached bounce buffers, $(delta d e copy_cached_bytes) bytes charged as cached copies"
  [ "$(delta d e copy_uncached_bytes)" = 0 ] || fail "cached bounce buffers charged as uncached copies"
  # the coherent design: the bounce buffer is mapped non-cacheable
  switch-driver c
  wait_card 30 || fail "no card under the C driver"
  rmmod meson_mx_sdhc_rs
  insmod $RS_MOD bounce_cached=0
  switch-driver rust
  wait_card 30 || fail "no card under the Rust driver (bounce_cached=0)"
  snap f
  run rs_coherent_read read 128k 1m
  snap g
  say "Rust, coherent: copies: cached $(delta f g copy_cached_bytes) B, uncached $(delta f g copy_uncached_bytes) B"
  [ "$(delta f g copy_uncached_bytes)" -ge $((1024 * 1024)) ] ||
    fail "1 MiB read through a coherent bounce buffer, $(delta f g copy_uncached_bytes) bytes charged as uncached copies"
fi
cat $D/stats
G
)
results() { sed -n 's/.*\[guest\] RESULT \([a-z0-9_]*\)=\([0-9.]*\).*/\1 \2/p' "$T/serial.log"; }
rc=0
echo "== no charge"
emu --card emmc --size 64 --driver c --model dma-noncoherent=on "$g" || rc=1
results > "$T/off"
grep -E '\[guest\]' "$T/serial.log" | tail -8
echo "== dma_maint_ns_per_kib=$MAINT dma_copy_ns_per_kib=$COPY"
emu --card emmc --size 64 --driver c --model dma-noncoherent=on \
    --append "dma_maint_ns_per_kib=$MAINT dma_copy_ns_per_kib=$COPY" "$g" || rc=1
results > "$T/on"
grep -E '\[guest\]' "$T/serial.log" | tail -12
[ "$rc" = 0 ] || exit 1
python3 - "$T/off" "$T/on" "${MAINT}" <<'P' || rc=1
import sys
off = dict(l.split() for l in open(sys.argv[1]))
on = dict(l.split() for l in open(sys.argv[2]))
clean, inval = (int(x) for x in sys.argv[3].split(",")[:2])
ok = True
def need(cond, what):
    global ok
    print(("  ok: " if cond else "  FAILED: ") + what)
    ok &= bool(cond)
# Latencies compared within the second boot (scale_percent 0 against 100):
# the virtual time of I/O varies between boots by more than the charge.
# A 4 KiB read is invalidated twice: 2 x 4 x the rate, in us.
extra = 2 * 4 * inval / 1000.0
a, b = float(on["c_read_scale0"]), float(on["c_read"])
need(b - a >= 0.8 * extra,
     "C driver 4 KiB read latency %.1f us at scale 0 -> %.1f us at 100 (+%.1f; charged %.1f per read)" % (a, b, b - a, extra))
# a 4 KiB write is cleaned once
extra = 4 * clean / 1000.0
a, b = float(on["c_write_scale0"]), float(on["c_write"])
need(b - a >= 0.8 * extra,
     "C driver 4 KiB write latency %.1f us at scale 0 -> %.1f us at 100 (+%.1f; charged %.1f per write)" % (a, b, b - a, extra))
a, b = float(off["rs_read"]), float(on["rs_read"])
need(b > 1.2 * a, "Rust driver 128 KiB read latency %.1f us -> %.1f us with the charge" % (a, b))
sys.exit(0 if ok else 1)
P
exit $rc
