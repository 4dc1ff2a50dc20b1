#!/usr/bin/env bash
# A card that stalls inside requests (busy-stall): DAT0 held busy between the blocks of a
# write, a read's access time stretched, many times in one 512 KiB request, each stall within
# the per-block data timeout the MMC core computes from the card's CSD, and together longer
# than one data timeout per request (what the driver's deadline once allowed):
#   eMMC (TAAC 1 ms, R2W x16): 10 ms per block read, 160 ms per block written;
#        128 stalls of 9 ms (1.15 s) per read, 128 of 20 ms (2.56 s) per write;
#   SD   (TAAC 1.5 ms, SD multiplier 100, R2W x16; reads capped at 100 ms): 100 ms per block
#        read, 2.4 s per block written; 16 stalls of 90 ms (1.44 s) per read, 16 of 100 ms
#        (1.6 s) per write.
# One boot per card: the C driver (no software timer) as the referee, then the Rust driver
# with the same stall settings: both write and verify with 0 errors (the C driver 512 KiB: its
# requests are single segments, mostly 4 KiB, so its stalls are shorter and many more; the
# Rust driver 4 MiB in 512 KiB requests); the Rust driver's deadline never fires. Then a lost
# interrupt on top of the stalls, with the watchdog armed 9 s early (debugfs
# watchdog_early_ms, a fault that makes the deadline's work run before its request is due):
# it arms again (deadline_rearms > 0), and the deadlines that fire are exactly the lost
# interrupts the model injected.
# The stalls are within the card's own limits, longer than the controller's
# data receive timeout under the model's default unit for ENHC.RX_TIMEOUT
# (2.8 ms at HS200): this test runs under the kind reading, no timeout
# (rx-data-timeout-unit-clks=0); rust-error-readings runs the other.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
stall,*) IFS=, read -r -a a <<< "\$1"; "$QMP" "\$EMU_QMP" reset-stats; "$QMP" "\$EMU_QMP" stall "\${a[@]:1}" ;;
lost) "$QMP" "\$EMU_QMP" faults lost-irq ppm=200000 seed=13 limit=1 dir=data ;;
clear) "$QMP" "\$EMU_QMP" faults none; "$QMP" "\$EMU_QMP" stall ;;
stats-*) "$QMP" "\$EMU_QMP" stats > "$T/\${1#stats-}.json" ;;
esac
HOST
chmod +x "$T/host.sh"

guest_for() { # guest_for STALL_OPTIONS
sed "s/@STALL@/$1/g" <<'G' | guest t
set -e
job() { # job NAME OFFSET SIZE: written and verified in 512 KiB requests
  fio --name="$1" --filename=$DEV --direct=1 --rw=write --bs=512k --offset="$2" --size="$3" \
      --verify=crc32c --do_verify=1 --randseed=5 --output-format=terse >/tmp/$1.out 2>&1
  echo $?
}
kerr() { dmesg -c | grep -ci 'mmcblk.*error\|I/O error\|timed out\|got no interrupt' || true; }
wait_card 60 || fail "no card under the C driver"
dmesg -c >/dev/null
host_sync stall,@STALL@
rc=$(job c 0 512k)
say "C rc=$rc kernel_errors=$(kerr)"
host_sync stats-c
host_sync clear
insmod $RS_MOD
switch-driver rust
wait_card 60 || fail "no card under the Rust driver"
D=$(rs_debugfs)
st() { sed -n "s/^$1: //p" "$D/stats"; }
echo 1 > "$D/stats"
dmesg -c >/dev/null
host_sync stall,@STALL@
rc=$(job rust 0 4m)
say "RUST rc=$rc kernel_errors=$(kerr) deadlines=$(st error_deadline) errors=$(cat $D/stats | sed -n 's/^error_[a-z_]*: //p' | awk '{s+=$1} END {print s+0}') rearms=$(st deadline_rearms)"
host_sync stats-rust
host_sync clear
echo 1 > "$D/stats"
echo 9000 > "$D/watchdog_early_ms"
host_sync stall,@STALL@
host_sync lost
rc=$(job lost 16m 1m)
say "LOST rc=$rc deadlines=$(st error_deadline) rearms=$(st deadline_rearms)"
echo 0 > "$D/watchdog_early_ms"
host_sync stats-lost
host_sync clear
keep_data write || fail "write after the stalls"
keep_data verify || fail "verify after the stalls"
say "AFTER ok"
G
}
fail=0
for card in emmc sd; do
  case $card in
  emmc) stall="ppm=250000,count=128,read-ns=9000000,write-ns=20000000,seed=5" ;;
  sd) stall="ppm=250000,count=16,read-ns=90000000,write-ns=100000000,seed=5" ;;
  esac
  echo "== $card: $stall"
  emu --card $card --size 64 --driver c --timeout 900 --host-script "$T/host.sh" \
      --model rx-data-timeout-unit-clks=0 \
      "$(guest_for "$stall")" || { echo "FAILED: $card run"; fail=1; continue; }
  log=$(cat "$T/serial.log")
  cline=$(grep -o 'C rc=.*' <<<"$log" | head -1)
  rline=$(grep -o 'RUST rc=.*' <<<"$log" | head -1)
  lline=$(grep -o 'LOST rc=.*' <<<"$log" | head -1)
  model() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(*[s[k] if k in s else s["faults"][k] for k in sys.argv[2:]])' "$@"; }
  read -r cst cns < <(model "$T/c.json" busy_stalls stall_ns)
  read -r rst rns < <(model "$T/rust.json" busy_stalls stall_ns)
  read -r lst lost < <(model "$T/lost.json" busy_stalls lost-irq)
  echo "  C:    $cline; model: $cst stalled requests, $((cns / 1000000)) ms of stalls"
  echo "  Rust: $rline; model: $rst stalled requests, $((rns / 1000000)) ms of stalls"
  echo "  lost-irq on top: $lline; model: $lost lost interrupts, $lst stalled requests"
  v() { sed -n "s/.*\b$2=\([0-9]*\).*/\1/p" <<<"$1"; }
  check "$card: the card stalled (C run)" [ "${cst:-0}" -ge 4 ] || fail=1
  check "$card: the card stalled (Rust run)" [ "${rst:-0}" -ge 2 ] || fail=1
  check "$card: a stalled request took longer than 1 s of stalls" [ $((rns / rst)) -gt 1000000000 ] || fail=1
  check "$card: C driver: write+verify passed, no kernel errors" [ "$(v "$cline" rc)" = 0 ] && [ "$(v "$cline" kernel_errors)" = 0 ] || fail=1
  check "$card: Rust driver: write+verify passed, no kernel errors" [ "$(v "$rline" rc)" = 0 ] && [ "$(v "$rline" kernel_errors)" = 0 ] || fail=1
  check "$card: Rust driver: 0 deadlines, 0 errors" [ "$(v "$rline" deadlines)" = 0 ] && [ "$(v "$rline" errors)" = 0 ] || fail=1
  check "$card: lost interrupts injected" [ "${lost:-0}" -ge 1 ] || fail=1
  check "$card: with lost interrupts: write+verify passed" [ "$(v "$lline" rc)" = 0 ] || fail=1
  check "$card: deadlines fired == lost interrupts injected" [ "$(v "$lline" deadlines)" = "$lost" ] || fail=1
  check "$card: the early watchdog armed itself again" [ "$(v "$lline" rearms)" -ge 1 ] || fail=1
  check "$card: data intact afterwards" grep -q 'AFTER ok' <<<"$log" || fail=1
done
exit $fail
