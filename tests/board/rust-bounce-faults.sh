#!/usr/bin/env bash
# Faults on bounced transfers (Rust driver, default 128 KiB bounce buffer,
# debugfs force_bounce on so that every request is bounced): data CRC errors
# and data timeouts injected by the model on reads and on writes of 128 KiB
# requests.  For each: the driver counts the error of that
# kind exactly as often as the model injected it; for reads the "copy-back
# skipped" counter rises (the model puts garbage into the bounce buffer on a
# read CRC error: it must never reach the caller); the MMC core retries and the
# data on the card is intact afterwards.  Then faults that never stop: the read
# and the write fail with an I/O error in the caller (the error reached the
# block layer), and once the faults clear the card holds the old data or the
# new, nothing else.  No warning may be logged (scripts/emu-run checks).
# Twice: with the default two buffers (reads copied out in post_req, writes
# copied in pre_req) and with one coherent buffer (bounce_cached=0
# double_buffer=0); BOUNCE_FAULT_VARIANTS="a;b" by hand.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm-*) spec=\${1#arm-}; dir=\${spec##*-}; kind=\${spec%-*}
       "$QMP" "\$EMU_QMP" faults "\$kind" after=1 dir="\$dir" ;;
persist-*) spec=\${1#persist-}; dir=\${spec##*-}; kind=\${spec%-*}
       "$QMP" "\$EMU_QMP" faults "\$kind" ppm=1000000 dir="\$dir" ;;
clear) "$QMP" "\$EMU_QMP" faults none ;;
model-*) "$QMP" "\$EMU_QMP" stats | python3 -c 'import json,sys; f=json.load(sys.stdin)["faults"]; print(" ".join("%s=%d" % kv for kv in sorted(f.items())))' > "$T/faults" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
D=$(rs_debugfs)
stat() { sed -n "s/^$1: //p" "$D/stats"; }
# fio's buffers usually map to many DMA segments, so its 128 KiB requests are
# bounced; but a buffer can be one physically contiguous segment and go direct.
# force_bounce makes every request bounce, so that each injected fault hits a
# bounced transfer (and on a read skips exactly one copy-back).
echo 1 > "$D/force_bounce"
job() { # job SEED ARGS...: 512 KiB at bs=128k with crc32c verify headers
  s=$1; shift
  fio --name=j --filename=$DEV --direct=1 --bs=128k --size=512k --rw=write \
      --verify=crc32c --randseed="$s" --output-format=terse "$@" >/tmp/fio.out 2>&1
}
intact() { job 1 --verify_only=1; }
job 1 --do_verify=1 || { cat /tmp/fio.out; fail "initial write"; }
for kind in data-crc data-timeout; do
  k=$(echo $kind | tr - _)
  for dir in read write; do
    echo 0 > "$D/stats"
    n=6
    for i in $(seq $n); do
      host_sync arm-$kind-$dir
      if [ $dir = read ]; then
        intact || { cat /tmp/fio.out; fail "$kind on a read: not recovered or data differs"; }
      else
        job 1 --do_verify=1 || { cat /tmp/fio.out; fail "$kind on a write: not recovered"; }
      fi
    done
    intact || { cat /tmp/fio.out; fail "data on the card differs after $kind on ${dir}s"; }
    say "STATS $kind $dir error_$k=$(stat error_$k) copy_back_skipped=$(stat copy_back_skipped) bounced=$(stat bounced) direct=$(stat direct)"
  done
done
# Faults that do not stop: the caller gets the error.
echo 0 > "$D/stats"
host_sync persist-data-crc-read
if intact; then fail "reads that fail every time returned success"; fi
host_sync clear
grep -E 'err|error' /tmp/fio.out | head -2
say "PERSIST read: I/O error in fio; copy_back_skipped=$(stat copy_back_skipped) error_data_crc=$(stat error_data_crc)"
[ "$(stat copy_back_skipped)" -ge 1 ] || fail "no copy-back skipped for the failing bounced reads"
intact || { cat /tmp/fio.out; fail "data differs after the persistent read faults cleared"; }
for kind in data-crc data-timeout; do
  host_sync persist-$kind-write
  if job 2 --do_verify=0; then fail "writes that fail every time ($kind) returned success"; fi
  host_sync clear
  if intact; then say "PERSIST write $kind: I/O error in fio; the card holds the old data"
  elif job 2 --verify_only=1; then say "PERSIST write $kind: I/O error in fio; the card holds the new data"
  else cat /tmp/fio.out; fail "the card holds neither the old nor the new data after failing writes ($kind)"
  fi
  job 1 --do_verify=1 || { cat /tmp/fio.out; fail "rewrite after $kind"; }
done
dmesg | grep -E 'mmcblk[0-9]|mmc[0-9]' | grep -v 'new HS200' | sed 's/^\[[ 0-9.]*\] //' | sort | uniq -c | sort -rn | head -8
host_sync model-end
G
)
check_log() {
python3 - "$T/serial.log" "$T/faults" <<'P'
import re, sys
log = open(sys.argv[1], errors="replace").read()
ok = True
def want(what, good):
    global ok
    ok = ok and good
    print("  %s: %s" % ("ok" if good else "FAILED", what))
rows = re.findall(r"\[guest\] STATS (\S+) (\S+) error_\S+=(\d+) copy_back_skipped=(\d+) bounced=(\d+) direct=(\d+)", log)
want("4 passes reported", len(rows) == 4)
for kind, d, errs, skipped, bounced, direct in rows:
    errs, skipped, bounced = int(errs), int(skipped), int(bounced)
    # One fault armed per pass of 4 requests; every request is bounced (force_bounce).
    n = 6
    want("%s on %ss: no direct requests" % (kind, d), int(direct) == 0)
    want("%s on %ss: %d errors counted by the driver (%d injected)" % (kind, d, errs, n), errs == n)
    want("%s on %ss: %d requests bounced (at least %d)" % (kind, d, bounced, n), bounced >= n)
    if d == "read":
        want("%s on reads: copy-back skipped %d times (%d)" % (kind, skipped, n), skipped == n)
    else:
        want("%s on writes: copy-back skipped %d (writes never copy back)" % (kind, skipped), skipped == 0)
print("model:", open(sys.argv[2]).read().strip())
sys.exit(0 if ok else 1)
P
}
variants=("" "bounce_cached=0 double_buffer=0")
[ -z "${BOUNCE_FAULT_VARIANTS:-}" ] || IFS=';' read -r -a variants <<< "$BOUNCE_FAULT_VARIANTS"
rc=0
for mp in "${variants[@]}"; do
  echo "== modparams: '${mp:-default}'"
  emu --card emmc --size 64 --driver rust --modparams "$mp" --host-script "$T/host.sh" "$g" || rc=1
  grep '\[guest\]' "$T/serial.log"
  check_log || rc=1
done
exit $rc
