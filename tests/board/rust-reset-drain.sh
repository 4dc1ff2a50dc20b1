#!/usr/bin/env bash
# A reset that does not stop the DMA engine at once (the model's reset-drain: after SRST the
# engine goes on writing the blocks of a late DMA for 500 us, a pattern that is not the
# card's data). late-dma faults on reads (a response CRC error while the data still
# arrives) make the Rust driver quiesce: reset, then wait (debugfs reset_drain_us, 1000 us by
# default) before the bounce buffer or the request's pages are handed back. The model counts
# the bytes the engine wrote after SRST and, of those, the bytes written after the next
# command was sent (the retry: memory that was handed back, then used again).
#   bounced (default) and bounce_size=0 (direct pages), with the wait: the engine wrote after
#   the reset, nothing after the next command, 0 verify errors;
#   bounce_size=0 without the wait (reset_drain_us=0): the engine writes into memory already
#   handed back (the check that the canaries can be hit at all).
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
drain) "$QMP" "\$EMU_QMP" drain 500000 ;;
arm) "$QMP" "\$EMU_QMP" reset-stats; "$QMP" "\$EMU_QMP" faults late-dma ppm=100000 seed=9 limit=10 dir=read ;;
clear) "$QMP" "\$EMU_QMP" faults none ;;
stats-*) "$QMP" "\$EMU_QMP" stats > "$T/\${1#stats-}.json" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
host_sync drain
load_driver rust
wait_card 60 || fail "no card"
fio --name=pre --filename=$DEV --direct=1 --rw=write --bs=128k --size=16m \
    --verify=crc32c --do_verify=0 --randseed=2 --output-format=terse >/tmp/pre.out 2>&1 ||
  { cat /tmp/pre.out; fail "writing the region"; }
phase() { # phase NAME
  D=$(rs_debugfs)
  echo 1 > "$D/stats"
  host_sync arm
  set +e
  fio --name=read --filename=$DEV --direct=1 --rw=randread --bs=128k --size=16m \
      --verify=crc32c --verify_only=1 --randseed=2 --verify_fatal=0 \
      --output-format=terse >/tmp/read.out 2>&1
  rc=$?
  set -e
  host_sync clear
  bad=$(grep -ci 'verify: bad\|verify failed\|bad magic\|bad header' /tmp/read.out || true)
  st() { sed -n "s/^$1: //p" "$D/stats"; }
  say "PHASE $1 rc=$rc verify_errors=$bad quiesce_resets=$(st quiesce_resets) quiesce_wait_us=$(st quiesce_wait_us)"
  host_sync stats-$1
}
phase bounced
rmmod meson_mx_sdhc_rs
load_driver rust bounce_size=0
wait_card 60 || fail "no card with bounce_size=0"
phase direct
echo 0 > "$(rs_debugfs)/reset_drain_us"
phase nowait
G
)
emu --card emmc --size 64 --driver none --timeout 900 --host-script "$T/host.sh" "$g" || { echo "FAILED: run"; exit 1; }
fail=0
for p in bounced direct nowait; do
  line=$(grep -o "PHASE $p .*" "$T/serial.log")
  read -r nf drain after < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["faults"]["late-dma"], s["drain_bytes"], s["drain_bytes_after_cmd"])' "$T/$p.json")
  echo "  $line; model: late-dma faults $nf, bytes written after SRST $drain, of those after the next command $after"
  v() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$line"; }
  check "$p: late-dma faults injected" [ "${nf:-0}" -ge 1 ] || fail=1
  check "$p: every fault quiesced" [ "$(v quiesce_resets)" -ge "$nf" ] || fail=1
  check "$p: the engine went on writing after the reset" [ "${drain:-0}" -gt 0 ] || fail=1
  if [ $p = nowait ]; then
    check "$p: without the wait the engine writes into memory handed back" [ "${after:-0}" -gt 0 ] || fail=1
  else
    check "$p: read+verify passed" [ "$(v rc)" = 0 ] && [ "$(v verify_errors)" = 0 ] || fail=1
    check "$p: nothing written after the memory was handed back" [ "${after:-1}" = 0 ] || fail=1
    check "$p: the driver waited at least 1 ms per quiesce" [ "$(v quiesce_wait_us)" -ge $((1000 * $(v quiesce_resets))) ] || fail=1
  fi
done
exit $fail
