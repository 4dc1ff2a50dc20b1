#!/usr/bin/env bash
# Concurrency with lockdep on (test kernel), 2 vCPUs running at the same time
# on two host threads (emu-run --parallel: multi-threaded TCG, no -icount, so
# the guest's clock is the host's): 4 fio jobs at iodepth 8
# on disjoint regions of the card, two with libaio and two with io_uring, each
# writing at random with crc32c verify headers and reading back while it
# writes (verify_backlog: every block written is read back and checked during
# the run); meanwhile the
# statistics file is read and reset.  No deadlock (the run must finish), no
# lockdep or other kernel report (scripts/emu-run), every verify clean.
#   CONC_SECONDS: seconds of I/O per job (default 180: three minutes of guest
#   time, which under --parallel is also about three minutes of wall time)
. "$(dirname "$0")/../lib.sh"
SECS=${CONC_SECONDS:-180}
g=$(guest t <<'G'
set -e
t0=$(cut -d' ' -f1 /proc/uptime)
D=$(rs_debugfs)
engines=$(fio --enghelp 2>&1 | tr -s ' \t' '\n' | grep -xE 'libaio|io_uring' | sort -u | tr '\n' ' ')
say "fio engines available: $engines"
case "$engines" in *libaio*) ;; *) fail "fio has no libaio engine" ;; esac
case "$engines" in *io_uring*) ;; *) fail "fio has no io_uring engine" ;; esac
cat > /tmp/conc.fio <<F
[global]
filename=$DEV
direct=1
iodepth=8
rw=randwrite
verify=crc32c
verify_backlog=64
verify_fatal=1
time_based=1
runtime=$CONC_SECONDS
size=12m
[aio-4k]
ioengine=libaio
bs=4k
offset=0m
[aio-64k]
ioengine=libaio
bsrange=512-64k
offset=16m
[uring-128k]
ioengine=io_uring
bs=128k
offset=32m
[uring-mixed]
ioengine=io_uring
bsrange=4k-256k
iomem_align=512
offset=48m
F
fio --output-format=terse /tmp/conc.fio >/tmp/conc.out 2>&1 &
pid=$!
n=0
while kill -0 $pid 2>/dev/null; do
  cat "$D/stats" >/dev/null; n=$((n + 1))
  [ $((n % 10)) = 0 ] && echo 0 > "$D/stats"
  usleep 200000
done
rc=0; wait $pid || rc=$?
[ $rc = 0 ] || { cat /tmp/conc.out; fail "fio failed ($rc)"; }
grep -c '' /tmp/conc.out >/dev/null
awk -F';' 'NF > 50 {printf "[guest] job %s: errors %s, written %d KiB, read back %d KiB\n", $3, $5, $47, $6}' /tmp/conc.out
t1=$(cut -d' ' -f1 /proc/uptime)
say "4 jobs x iodepth 8 for $CONC_SECONDS s: done, verify clean; stats read $n times; guest time $t0 s -> $t1 s"
awk '/^cpu[0-9]/ {printf "[guest] %s busy %d of %d ticks\n", $1, $2+$3+$4+$6+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat
cat /proc/lockdep_stats 2>/dev/null | grep -E 'debug_locks|lock-classes' | sed 's/^/[guest] lockdep: /'
G
)
sed -i "1a CONC_SECONDS=$SECS" "$g"
emu --parallel --timeout 1800 --smp 2 --card emmc --size 64 --driver rust "$g"
grep -E '\[guest\]' "$T/serial.log"
grep -q 'debug_locks: *1' "$T/serial.log" || { echo "FAILED: lockdep was not on (debug_locks 0) at the end"; exit 1; }
