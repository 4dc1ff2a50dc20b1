#!/usr/bin/env bash
# The C driver with the RFC's bounce buffer (bench/c-rfc-bounce, the module
# meson_mx_sdhc_rfc) on the model with an 8-bit eMMC (meson8b), one boot:
#   limits  the queue limits it sets, read back from sysfs: max_segments 64,
#           max_hw_sectors_kb 128;
#   fio     write + verify (crc32c, O_DIRECT) at bs 4k, 8k, 16k, 64k, 128k
#           and 1m; the model's counters around each job give the average
#           transfer: a request of several pages is one transfer through the
#           bounce buffer, so from 8k on it is min(bs, 128k) (the C driver's
#           one segment gives 4 KiB: fio's pages are not physically
#           contiguous);
#   fault   a response timeout injected on one bounced 128 KiB read (the
#           model: the command never reached the card, no data moved) right
#           after a read of other data through the same buffer: the read
#           must return the data on the card, never the buffer's stale
#           contents.  The read goes to a buffer of pages none of which is
#           physically next to another (tests/guest/sgread), so that it has
#           32 segments and is bounced.  The MMC core's trace (mmc_request_done) must show the
#           failed 128 KiB CMD18 with cmd_err=-110, data_err=0 and
#           bytes_xfered=0: a single-segment request keeps the C driver's
#           path, which reports every byte after a command error without a
#           data error, so only a bounced request ends with 0.
# Every check runs and is reported; any failure fails the test.  The kernel
# log must stay free of warnings and DMA-API reports (scripts/emu-run; the
# one lockdep report of the C driver's interrupt handler, which the module
# keeps, is the only one allowed: KNOWN_C_RFC there).
# The module runs under the model's kind readings of DRAM (scripts/emu-run
# --driver c-rfc: dram-ack-ns=0 dram-late-bursts=0).  By hand:
# C_RFC_EMMC_DRIVER=c runs the same checks against the unmodified C driver,
# which fails them (no bounce buffer: max_segments 1, 4 KiB transfers, stale
# data after the response timeout); C_RFC_EMMC_MODEL="dram-ack-ns=2000
# dram-late-bursts=8" (the model's defaults) shows the RFC module's copy-back
# taking stale bytes: the verify at 8k and 16k fails.
. "$(dirname "$0")/../lib.sh"
DRIVER=${C_RFC_EMMC_DRIVER:-c-rfc}
MODEL=()
for m in ${C_RFC_EMMC_MODEL:-}; do MODEL+=(--model "$m"); done
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm) "$QMP" "\$EMU_QMP" faults resp-timeout after=1 dir=read ;;
stats) "$QMP" "\$EMU_QMP" stats > "$T/stats.json" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
bad=0
no() { echo "[guest] FAILED: $*"; bad=$((bad + 1)); }
drv=$(sdhc_driver)
say "driver: $drv"
[ "$drv" = c-rfc ] || no "the controller is held by '$drv', not the RFC module (c-rfc)"
q=/sys/block/${DEV#/dev/}/queue
segs=$(cat $q/max_segments); kb=$(cat $q/max_hw_sectors_kb)
say "limits: max_segments=$segs max_hw_sectors_kb=$kb max_segment_size=$(cat $q/max_segment_size)"
[ "$segs" = 64 ] || no "max_segments $segs, expected 64"
[ "$kb" = 128 ] || no "max_hw_sectors_kb $kb, expected 128"
for bs in 4k 8k 16k 64k 128k 1m; do
  case $bs in 4k|8k) size=1m ;; 16k) size=2m ;; *) size=4m ;; esac
  set -- $(model_counters); c0=$2; r0=$3; w0=$4
  if fio --name=v --filename=$DEV --direct=1 --rw=write --bs=$bs --size=$size \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse >/tmp/fio.out 2>&1; then
    ok=ok
  else
    cat /tmp/fio.out; ok=FAILED; no "fio write+verify bs=$bs"
  fi
  set -- $(model_counters)
  n=$(($2 - c0)); bytes=$(($3 - r0 + $4 - w0))
  avg=$((bytes / (n > 0 ? n : 1)))
  b=$((${bs%[km]} * 1024)); [ "${bs%m}" != "$bs" ] && b=$((${bs%m} * 1048576))
  [ $b -gt 131072 ] && b=131072
  say "fio bs=$bs over $size: $ok; $n data commands, $bytes bytes, average transfer $avg bytes"
  if [ $bs != 4k ] && [ $((avg * 2)) -lt $b ]; then
    no "bs=$bs: average transfer $avg bytes, expected about $b (multi-segment requests bounced)"
  fi
done
# The fault: a on the card at 0, b at 1 MiB (128 KiB each); b read back
# through the bounce buffer (which then holds it), then one response timeout
# on the next read, a's.  sgread's buffer has 32 pages, none physically
# next to another: 32 segments, a bounced request.
dd if=/dev/urandom of=/tmp/a bs=128k count=1 2>/dev/null
dd if=/dev/urandom of=/tmp/b bs=128k count=1 2>/dev/null
dd if=/tmp/a of=$DEV bs=128k oflag=direct 2>/dev/null
dd if=/tmp/b of=$DEV bs=128k seek=8 oflag=direct 2>/dev/null
sgread $DEV 1048576 131072 > /tmp/back 2>/tmp/sg.err || { cat /tmp/sg.err; no "sgread of b"; }
cmp -s /tmp/b /tmp/back || no "b read back differs (no fault armed)"
tr=/sys/kernel/tracing
mount -t tracefs nodev $tr 2>/dev/null
echo 1 > $tr/events/mmc/mmc_request_done/enable
echo > $tr/trace
host_sync arm
if sgread $DEV 0 131072 > /tmp/back 2>/tmp/sg.err; then
  if cmp -s /tmp/a /tmp/back; then
    say "fault: the read after the response timeout returned the data on the card ($(cat /tmp/sg.err))"
  elif cmp -s /tmp/b /tmp/back; then
    no "fault: the read returned the bounce buffer's stale contents (b) as success"
  else
    no "fault: the read returned wrong data as success ($(cmp /tmp/a /tmp/back 2>&1 | head -1))"
  fi
else
  say "fault: the read failed with an I/O error (no data reported): $(cat /tmp/sg.err)"
fi
echo 0 > $tr/events/mmc/mmc_request_done/enable
# "cmd_opcode=N cmd_err=E bytes_xfered=B data_err=D" of the failed reads
sed -n 's/.*\(cmd_opcode=1[78]\) \(cmd_err=-[0-9]*\) .*\(bytes_xfered=[0-9]*\) \(data_err=[-0-9]*\).*/\1 \2 \3 \4/p' \
  $tr/trace > /tmp/errs
sort /tmp/errs | uniq -c | sed 's/^ */[guest] trace: /'
grep -q 'cmd_opcode=18 cmd_err=-110 bytes_xfered=0 data_err=0' /tmp/errs ||
  no "fault: no failed CMD18 with cmd_err=-110 and bytes_xfered=0 in the MMC core's trace"
if grep -q 'cmd_err=-110 bytes_xfered=[1-9]' /tmp/errs; then
  no "fault: a read with cmd_err=-110 reported bytes as transferred"
fi
host_sync stats
dd if=$DEV of=/tmp/back bs=128k count=1 iflag=direct 2>/dev/null
cmp -s /tmp/a /tmp/back || no "a differs on the card after the fault"
[ $bad = 0 ] || fail "$bad check(s) failed"
say "@@C-RFC-EMMC ok"
G
)
rc=0
emu --card emmc --size 128 --driver "$DRIVER" --compatible meson8b ${MODEL[@]+"${MODEL[@]}"} --host-script "$T/host.sh" "$g" || rc=1
grep '\[guest\]' "$T/serial.log" || true
if [ -f "$T/stats.json" ]; then
  python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["faults"]; print("model: resp-timeout faults injected: %d" % f["resp-timeout"]); sys.exit(0 if f["resp-timeout"] == 1 else 1)' "$T/stats.json" || {
    echo "  FAILED: expected exactly one injected response timeout"; rc=1; }
fi
check "the RFC module passed every check" grep -q '@@C-RFC-EMMC ok' "$T/serial.log" || rc=1
exit $rc
