#!/usr/bin/env bash
# A reset that does not stop the DMA engine at once (the model's reset-drain: after SRST the
# engine goes on writing the blocks of a late DMA, a pattern that is not the card's data).
# late-dma faults on reads (a response CRC error while the data still arrives) make the Rust
# driver quiesce: reset, wait hw::RESET_DRAIN_US (1 ms), then poll STAT for up to 1 ms more
# until the controller shows idle, before the bounce buffer or the request's pages are handed
# back; a controller still busy then keeps them (drain.rs). The model counts the bytes the
# engine wrote after SRST and, of those, the bytes written after the next command was sent
# (the retry: memory that was handed back, then used again). Two boots:
#   bounced, direct  a 500 us drain STAT does not show (drain-visible=false, the default):
#                    bounced (default) and bounce_size=0 (direct pages): the engine wrote
#                    after the reset, nothing after the next command (the fixed wait
#                    outlasted the drain), 0 verify errors, at least 1 ms waited per quiesce;
#                    without the wait the retry's command comes within the drain and the
#                    model counts bytes written after it;
#   long             a 5 ms drain STAT shows (drain-visible=true), 512 KiB bounced reads
#                    (force_bounce; requests of up to 256 KiB: loaded with max_dma_size and
#                    bounce_size 524288) whose late DMA outlasts the
#                    driver's 2 ms bound: STAT still shows the drain when the bound ends, so
#                    the bounce buffer is held back (held_back) and freed once the
#                    controller shows idle (held_forced 0); nothing written after the next
#                    command, 0 verify errors. A driver that hands the buffer back at the
#                    end of the bound fails the held_back check; the model's
#                    drain_bytes_after_cmd stays 0 for it too, as no command reaches the
#                    controller while STAT shows the drain.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
drain) "$QMP" "\$EMU_QMP" drain 500000 ;;
drain-long) "$QMP" "\$EMU_QMP" drain 5000000 ;;
arm) "$QMP" "\$EMU_QMP" reset-stats; "$QMP" "\$EMU_QMP" faults late-dma ppm=100000 seed=9 limit=10 dir=read ;;
arm-long) "$QMP" "\$EMU_QMP" reset-stats; "$QMP" "\$EMU_QMP" faults late-dma ppm=200000 seed=9 limit=4 dir=read ;;
clear) "$QMP" "\$EMU_QMP" faults none ;;
stats-*) "$QMP" "\$EMU_QMP" stats > "$T/\${1#stats-}.json" ;;
esac
HOST
chmod +x "$T/host.sh"
# phase NAME ARM BS SIZE: a verifying random read of the region with late-dma faults
# armed (host_sync ARM), then the driver's counters
phase_fn='
phase() {
  D=$(rs_debugfs)
  echo 1 > "$D/stats"
  host_sync $2
  set +e
  fio --name=read --filename=$DEV --direct=1 --rw=randread --bs=$3 --size=$4 \
      --verify=crc32c --verify_only=1 --randseed=2 --verify_fatal=0 \
      --output-format=terse >/tmp/read.out 2>&1
  rc=$?
  set -e
  host_sync clear
  bad=$(grep -ci "verify: bad\|verify failed\|bad magic\|bad header" /tmp/read.out || true)
  st() { sed -n "s/^$1: //p" "$D/stats"; }
  say "PHASE $1 rc=$rc verify_errors=$bad quiesce_resets=$(st quiesce_resets) quiesce_wait_us=$(st quiesce_wait_us) quiesce_busy=$(st quiesce_busy) held_back=$(st held_back) held_forced=$(st held_forced)"
  host_sync stats-$1
}
prewrite() { # BS SIZE
  fio --name=pre --filename=$DEV --direct=1 --rw=write --bs=$1 --size=$2 \
      --verify=crc32c --do_verify=0 --randseed=2 --output-format=terse >/tmp/pre.out 2>&1 ||
    { cat /tmp/pre.out; fail "writing the region"; }
}'
g=$(guest t <<G
set -e
$phase_fn
host_sync drain
load_driver rust
wait_card 60 || fail "no card"
prewrite 128k 16m
phase bounced arm 128k 16m
rmmod meson_mx_sdhc_rs
load_driver rust bounce_size=0
wait_card 60 || fail "no card with bounce_size=0"
phase direct arm 128k 16m
G
)
emu --card emmc --size 64 --driver none --timeout 900 --host-script "$T/host.sh" "$g" || { echo "FAILED: run"; exit 1; }
cp "$T/serial.log" "$T/serial-invisible.log"
g=$(guest t <<G
set -e
$phase_fn
host_sync drain-long
load_driver rust max_dma_size=524288 bounce_size=524288
wait_card 60 || fail "no card"
prewrite 512k 8m
echo 1 > "\$(rs_debugfs)/force_bounce"
phase long arm-long 512k 8m
G
)
emu --card emmc --size 64 --driver none --timeout 900 --model drain-visible=true \
    --host-script "$T/host.sh" "$g" || { echo "FAILED: run"; exit 1; }
fail=0
for p in bounced direct long; do
  log=$T/serial.log; [ $p = long ] || log=$T/serial-invisible.log
  line=$(grep -o "PHASE $p .*" "$log" | tail -1)
  read -r nf drain after < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["faults"].get("late-dma", 0), s["drain_bytes"], s["drain_bytes_after_cmd"])' "$T/$p.json")
  echo "  $line; model: late-dma faults $nf, bytes written after SRST $drain, of those after the next command $after"
  v() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$line"; }
  check "$p: late-dma faults injected" [ "${nf:-0}" -ge 1 ] || fail=1
  check "$p: every fault quiesced" [ "$(v quiesce_resets)" -ge "$nf" ] || fail=1
  check "$p: the engine went on writing after the reset" [ "${drain:-0}" -gt 0 ] || fail=1
  check "$p: read+verify passed" [ "$(v rc)" = 0 ] && [ "$(v verify_errors)" = 0 ] || fail=1
  check "$p: nothing written after the memory was handed back" [ "${after:-1}" = 0 ] || fail=1
  if [ $p = long ]; then
    check "$p: the drain outlasted the bound: $(v held_back) bounce buffer(s) held back, $(v held_forced) freed by force" \
      eval "[ '$(v held_back)' -ge 1 ] && [ '$(v held_forced)' = 0 ]" || fail=1
  else
    check "$p: the driver waited at least 1 ms per quiesce" [ "$(v quiesce_wait_us)" -ge $((1000 * $(v quiesce_resets))) ] || fail=1
  fi
done
exit $fail
