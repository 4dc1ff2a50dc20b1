#!/usr/bin/env bash
# Quiesce after every error (Rust driver, eMMC): the model's late-dma fault reports a
# response CRC error on a read while its DMA engine goes on writing the remaining blocks to
# the programmed address for the normal data time, unless the controller is reset.  A mixed
# soak (one fio job rewriting and verifying one region while another keeps reading and
# verifying a second region, LATE_DMA_SECONDS of guest time, default 5) runs with late-dma
# faults on 1 % of the reads (at most 20 per run), with the bounce buffer (default) and
# without (bounce_size=0): 0 verify errors, and the driver's reset after the error stops
# every late DMA before the request's memory is handed back: the model counts the bytes the
# reset kept from memory and 0 bytes written after the next command (the memory went back).
# A block may land between the error interrupt and the reset when the interrupt thread runs
# later than the card's next block: into memory the driver still holds, reported only.
# A driver that does not reset after this error (the C driver's rule: a reset only for
# EIO/ETIMEDOUT on the command) fails the last check: no reset stops a late DMA, and the
# model counts the late blocks it lets land.  What that rule does to memory already handed
# back is shown by the C driver itself (tests/board/c-driver-late-dma.sh, the referee).
# One boot: the module is loaded again for each bounce setting (the model's counters are
# saved and zeroed after each run).
# A longer soak per run: LATE_DMA_SECONDS=10 (the run reaches the 20 faults in either case).
. "$(dirname "$0")/../lib.sh"
SECS=${LATE_DMA_SECONDS:-5}
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm) "$QMP" "\$EMU_QMP" faults late-dma ppm=10000 seed=9 limit=20 dir=read ;;
clear) "$QMP" "\$EMU_QMP" faults none ;;
stats-*) "$QMP" "\$EMU_QMP" stats > "$T/\$1.json"; "$QMP" "\$EMU_QMP" reset-stats ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(sed "s/@SECS@/$SECS/g" <<'G' | guest t
set -e
load() { # module parameters
  load_driver rust "$@"
  wait_card
  D=$(rs_debugfs)
}
run() { # TAG
  echo 0 > "$D/stats"
  host_sync arm
  set +e
  fio --output-format=terse --direct=1 --filename=$DEV --bs=128k --time_based --runtime=@SECS@ \
      --name=writer --rw=randwrite --offset=0 --size=16m --verify=crc32c --do_verify=1 --randseed=1 \
      --verify_fatal=0 \
      --name=reader --rw=randread --offset=16m --size=16m --verify=crc32c --verify_only=1 --randseed=2 \
      --verify_fatal=0 >/tmp/soak.out 2>&1
  rc=$?
  set -e
  host_sync clear
  bad=$(grep -ci 'verify: bad\|verify failed\|bad magic\|bad header' /tmp/soak.out || true)
  say "SOAK params=$1 fio_rc=$rc verify_errors=$bad deadlines=$(sed -n 's/^error_deadline: //p' $D/stats) cmd_crc=$(sed -n 's/^error_cmd_crc: //p' $D/stats) quiesce_resets=$(sed -n 's/^quiesce_resets: //p' $D/stats)"
  grep -m3 -i 'verify\|error' /tmp/soak.out || true
  host_sync stats-$1
}
load
# region 2 (16..32 MiB) written once, then only read and verified
fio --name=pre --filename=$DEV --direct=1 --rw=write --bs=128k --offset=16m --size=16m \
    --verify=crc32c --do_verify=0 --randseed=2 --output-format=terse >/tmp/pre.out 2>&1 ||
  { cat /tmp/pre.out; fail "writing region 2"; }
host_sync stats-pre
run default
rmmod meson_mx_sdhc_rs
wait_no_card || fail "the card stayed after rmmod"
load bounce_size=0
run bounce0
G
)
fail=0
emu --card emmc --size 64 --driver none --timeout 1000 --host-script "$T/host.sh" "$g" ||
  { echo "FAILED: run"; fail=1; }
for params in default bounce0; do
  name=$params; [ $params = bounce0 ] && name=bounce_size=0
  echo "== $name"
  line=$(grep -o "SOAK params=$params .*" "$T/serial.log" || true)
  if [ -z "$line" ] || [ ! -f "$T/stats-$params.json" ]; then
    echo "  FAILED: no result for this run"; fail=1; continue
  fi
  late=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["faults"].get("late-dma",0), s["late_dma_bytes"], s["late_dma_cancelled_bytes"], s["drain_bytes_after_cmd"])' "$T/stats-$params.json")
  echo "  $line; model: late-dma faults, bytes written after the error, bytes stopped by SRST, bytes written after the next command: $late"
  bad=$(sed -n 's/.*verify_errors=\([0-9]*\).*/\1/p' <<<"$line")
  read -r nf lb cb ac <<<"$late"
  check "$name: late-dma faults injected" [ "$nf" -ge 1 ] || fail=1
  check "$name: 0 verify errors" [ "$bad" = 0 ] || fail=1
  # A block may land between the error interrupt and the reset, when the thread runs later
  # than the card's next block (read access 190 us): into memory the driver still holds.
  # What must not happen is a write after the memory went back (the next command).
  check "$name: nothing written after the next command ($lb bytes before the reset)" [ "$ac" = 0 ] || fail=1
  check "$name: the reset stopped the late DMAs" [ "$cb" -gt 0 ] || fail=1
done
exit $fail
