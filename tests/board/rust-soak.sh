#!/usr/bin/env bash
# Fault-injection soak of the Rust driver: fio write + verify jobs (sizes 512 B
# to 1 MiB, sequential and random, page-aligned and 512-byte-offset buffers)
# while the model injects faults of all four kinds (data CRC, data timeout,
# response CRC, response timeout), drawn from a fixed seed, in both
# directions.  Then, with the faults off, a verify pass over everything
# written: not one block may differ.
#
# Each round, for each job, a write phase and a read phase:
#   write phase  faults on write data commands; the job runs in chunks of at
#                most 1 MiB, written and read back (verify); a chunk that fio
#                sees fail is written again, up to 5 times;
#   read phase   faults on read data commands, at a quarter of the write
#                rate: every chunk is read back and verified; a read that fio
#                sees fail is retried up to 5 times.
# The rate per command falls with the job's request size because of how the
# MMC core recovers: after an error it redoes the whole request one sector at
# a time, within a budget of 2 more data errors (5 command errors), so a
# 256 KiB request at 2 % would almost always fail.  SOAK_PPM (default 20000)
# is the rate for 512 B and 4 KiB requests, divided for bigger ones.
# (Faults on the card's housekeeping commands, e.g. the re-initialisation
# after an error, are left out: at these rates they kill the card for the
# MMC core, which says nothing about the driver.)
#
# Printed: the seeds, faults injected by kind and direction, I/O errors seen
# by fio, errors the driver reported and the MMC core recovered from, blocks
# verified, blocks corrupted (must be 0).  Kernel warnings must be 0
# (scripts/emu-run).  The content of a chunk whose write failed 5 times is not
# defined: such chunks are reported and left out of the final verify.
#
#   SOAK_SEED (default 20261130), SOAK_PPM (default 20000), SOAK_ROUNDS
#   (default 1: 30 chunks, 12 MiB, about 300 faults; each round adds as
#   many with seeds of its own, so SOAK_ROUNDS=2 injects about 600 and
#   SOAK_ROUNDS=20 is a long soak).  Job j of round r uses seed
#   SOAK_SEED + 100r + 2j (writes) and + 1 (reads).  The test fails with fewer
#   than 200 faults per round (the injection is not working at these rates).
. "$(dirname "$0")/../lib.sh"
SEED=${SOAK_SEED:-20261130}
PPM=${SOAK_PPM:-20000}
ROUNDS=${SOAK_ROUNDS:-1}
echo "soak: seed $SEED, $PPM ppm per write data command (small requests), $ROUNDS rounds"
echo "replay: SOAK_SEED=$SEED SOAK_PPM=$PPM SOAK_ROUNDS=$ROUNDS TESTS=rust-soak tests/run-all"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
save() { "$QMP" "\$EMU_QMP" stats > "$T/\$1.json"; "$QMP" "\$EMU_QMP" reset-stats; }
case "\$1" in
start) "$QMP" "\$EMU_QMP" reset-stats ;;
w-*|r-*) IFS=- read -r d r j div <<< "\$1"   # arm job j of round r at SOAK_PPM/div
     [ -f "$T/phase" ] && save "\$(cat "$T/phase")"
     echo "\$1" > "$T/phase"
     if [ \$d = w ]; then dir=write; ppm=\$(( $PPM / div )); k=0; else dir=read; ppm=\$(( $PPM / div / 4 )); k=1; fi
     "$QMP" "\$EMU_QMP" faults mixed ppm=\$ppm seed=\$(( $SEED + 100 * r + 2 * j + k )) dir=\$dir ;;
end) save "\$(cat "$T/phase")"; "$QMP" "\$EMU_QMP" faults none ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
D=$(rs_debugfs)
# name rw bs offset size rate-divisor [fio options]: disjoint regions
cat > /tmp/jobs <<J
seq512 write 512 0m 1m 1
rand4k randwrite 4k 2m 3m 1
seq12k write 12k 8m 3m 2
rand64k randwrite 64k 14m 1m 10 --iomem_align=512
seq128k write 128k 16m 1m 20
randmix randwrite 512-128k 18m 1m 20 --iomem_align=512
seq1m write 1m 20m 2m 40
J
job() { # name rw bs off size [opts]: off and size in KiB
  local n=$1 rw=$2 bs=$3 off=$4 size=$5 b
  shift 5
  case $bs in *-*) b=--bsrange=$bs ;; *) b=--bs=$bs ;; esac
  fio --name=$n --filename=$DEV --direct=1 --rw=$rw $b --offset=${off}k \
      --size=${size}k --verify=crc32c --randseed=7 --output-format=terse "$@"
}
# the chunks of job j: name rw bs offset-KiB size-KiB [opts], whole blocks
j=0
while read -r n rw bs off size div opts; do
  j=$((j + 1))
  o=$(( ${off%m} * 1024 )); end=$(( o + ${size%m} * 1024 ))
  case $bs in 512) ch=128 ;; 12k) ch=384 ;; 1m) ch=1024 ;; *) ch=512 ;; esac
  while [ $o -lt $end ]; do echo "$n $rw $bs $o $ch $opts" >> /tmp/chunks.$j; o=$((o + ch)); done
  echo "$j $div" >> /tmp/jobdiv
done < /tmp/jobs
cat /tmp/chunks.* > /tmp/chunks
say "$(wc -l < /tmp/chunks) chunks per round"
echo 0 > "$D/stats"
host_sync start
werr=0; rerr=0; : > /tmp/bad
r=0
while [ $r -lt $SOAK_ROUNDS ]; do
  r=$((r + 1))
  : > /tmp/good; : > /tmp/bad
  while read -r j div; do
    host_sync w-$r-$j-$div
    : > /tmp/good.$j
    while read -r n rw bs off size opts; do
      try=0
      until job $n $rw $bs $off $size $opts --do_verify=1 --verify_fatal=1 >/tmp/o 2>&1; do
        try=$((try + 1)); werr=$((werr + 1))
        [ $try -lt 5 ] || break
      done
      if [ $try -lt 5 ]; then echo "$n $rw $bs $off $size $opts" >> /tmp/good.$j
      else echo "$n $rw $bs $off $size $opts" >> /tmp/bad
        say "round $r $n@${off}k: write failed 5 times: $(grep -o 'err=[0-9]*[^,]*' /tmp/o | head -1)"
      fi
    done < /tmp/chunks.$j
    host_sync r-$r-$j-$div
    while read -r n rw bs off size opts; do
      try=0
      until job $n $rw $bs $off $size $opts --verify_only=1 --verify_fatal=1 >/tmp/o 2>&1; do
        try=$((try + 1)); rerr=$((rerr + 1))
        [ $try -lt 5 ] || { tail -3 /tmp/o; fail "round $r $n@${off}k: read back failed 5 times"; }
      done
    done < /tmp/good.$j
    cat /tmp/good.$j >> /tmp/good
  done < /tmp/jobdiv
  say "round $r done: fio errors: $werr on writes, $rerr on reads; $(wc -l < /tmp/bad) chunks not written"
done
host_sync end
# The final pass, faults off: every block written must verify.
blocks=0; bad=0
while read -r n rw bs off size opts; do
  job $n $rw $bs $off $size $opts --verify_only=1 --verify_fatal=0 --continue_on_error=verify >/tmp/o 2>&1 || true
  b=$(grep -c 'verify: bad\|verify failed' /tmp/o || true)
  bad=$((bad + b))
  blocks=$((blocks + size * 2))
done < /tmp/good
st() { sed -n "s/^$1: //p" "$D/stats"; }
errs=0; for k in cmd_crc cmd_timeout data_crc data_timeout fifo setup; do errs=$((errs + $(st error_$k))); done
echo "@@SOAK write_errors=$werr read_errors=$rerr chunks_not_written=$(wc -l < /tmp/bad) chunks=$(wc -l < /tmp/chunks) driver_errors=$errs blocks_verified=$blocks blocks_corrupted=$bad commands=$(st commands) bounced=$(st bounced) direct=$(st direct)"
[ $bad = 0 ] || fail "$bad corrupted blocks"
G
)
sed -i "1a SOAK_ROUNDS=$ROUNDS" "$g"
emu --timeout 3000 --card emmc --size 64 --driver rust --host-script "$T/host.sh" "$g"
grep -E '\[guest\]' "$T/serial.log" | tail -12
python3 - "$T" "$ROUNDS" "$SEED" <<'P'
import json, re, sys
t, rounds, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3]
log = open(t + "/serial.log", errors="replace").read()
s = {k: int(v) for k, v in (kv.split("=") for kv in re.search(r"@@SOAK (.*)", log).group(1).split())}
import glob, os
tot = {"write": {}, "read": {}}
cmds = 0
for f in glob.glob(t + "/[wr]-*.json"):
    d = "write" if os.path.basename(f).startswith("w-") else "read"
    m = json.load(open(f))
    cmds += m["commands"]
    for k, v in m["faults"].items():
        tot[d][k] = tot[d].get(k, 0) + v
total = sum(sum(v.values()) for v in tot.values())
print("seed %s: %d faults injected over %d commands" % (seed, total, cmds))
for d in ("write", "read"):
    print("  on %ss: %s" % (d, ", ".join("%s %d" % kv for kv in sorted(tot[d].items()))))
print("I/O errors seen by fio: %d on writes, %d on reads" % (s["write_errors"], s["read_errors"]))
print("errors the driver reported: %d; recovered by the MMC core's retries: %d"
      % (s["driver_errors"], s["driver_errors"] - s["write_errors"] - s["read_errors"]))
print("blocks verified: %d; blocks corrupted: %d; chunks not written (failed 5 times): %d of %d"
      % (s["blocks_verified"], s["blocks_corrupted"], s["chunks_not_written"], s["chunks"]))
ok = s["blocks_corrupted"] == 0 and s["blocks_verified"] > 0
if total < 200 * rounds:
    print("FAILED: fewer than %d faults injected" % (200 * rounds)); ok = False
for d in ("write", "read"):
    if not all(tot[d].get(k, 0) > 0 for k in ("data-crc", "data-timeout", "resp-crc", "resp-timeout")):
        print("FAILED: not every fault kind was injected on %ss" % d); ok = False
if s["chunks_not_written"] * 10 > s["chunks"]:
    print("FAILED: more than a tenth of the chunks could not be written"); ok = False
sys.exit(0 if ok else 1)
P
