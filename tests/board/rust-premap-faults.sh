#!/usr/bin/env bash
# Faults on writes that pre_req mapped (Rust driver, default parameters: two
# cached bounce buffers).  A write of one scatterlist entry that goes direct is
# mapped in pre_req (kernel::mmc::pre_map; the host cookie marks it) and
# unmapped in post_req, or by the request path if it never reaches post_req
# mapped (it timed out).  Random 4 KiB O_DIRECT writes of 1 MiB at iodepth 8
# (libaio; the queue's nomerges=2 keeps each write one page, one entry), with
# crc32c verify, while 128 KiB reads of another region, verified too, run
# alongside: those of more than one segment go through the bounce buffers
# (prepared in pre_req, copied out in post_req).
# Four passes, each with faults on writes from the model: 3 data CRC errors,
# 3 data timeouts, 3 response CRC errors, 1 lost interrupt (the 10 s deadline
# fails the write).  Checks per pass: the driver counts each injected fault as
# an error of its kind and of a request whose data pre_req had mapped
# (pre_mapped_errors in the stats file); writes queued behind a failure were
# pre-mapped and cleaned up unstarted (pre_mapped beyond fio's 256 writes and
# the failed ones); double buffering ran (prepared, post_req_copies: without
# faults, and in the fault passes together); every
# write and read verifies; no scatter-gather mapping of the controller is left
# (DMA-API debugging's dump).  Then rmmod, where DMA-API debugging reports a
# mapping still held, and scripts/emu-run fails on any DMA-API or other
# report.  A pass without faults first: 256 writes pre-mapped, none failed.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm-*) IFS=, read -r -a a <<< "\${1#arm-}"
       "$QMP" "\$EMU_QMP" faults "\${a[@]}" dir=write ;;
clear) "$QMP" "\$EMU_QMP" faults none ;;
model) "$QMP" "\$EMU_QMP" stats | python3 -c 'import json,sys; f=json.load(sys.stdin)["faults"]; print(" ".join("%s=%d" % kv for kv in sorted(f.items())))' > "$T/faults" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
D=$(rs_debugfs)
stat() { sed -n "s/^$1: //p" "$D/stats"; }
CTL=$(sdhc_dev)
sg_left() { grep " $CTL scatter-gather " /sys/kernel/debug/dma-api/dump || true; }
# Every 4 KiB write its own request: one page, one scatterlist entry.
echo 2 > "/sys/block/$(basename "$DEV")/queue/nomerges"
reads() { # reads ARGS: 128 KiB bounced reads of 2 MiB at 4 MiB, crc32c verify headers
  echo "--name=r --rw=read --bs=128k --offset=4m --size=2m --ioengine=psync --verify=crc32c --randseed=2 $*"
}
fio --filename=$DEV --direct=1 --output-format=terse $(reads --rw=write --do_verify=1) \
  >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; fail "writing the read region"; }
run() { # run SEED: random 4 KiB writes of 1 MiB at iodepth 8, verified; reads meanwhile
  fio --filename=$DEV --direct=1 --output-format=terse \
      --name=w --rw=randwrite --bs=4k --size=1m --ioengine=libaio --iodepth=8 \
      --verify=crc32c --do_verify=1 --randseed="$1" \
      $(reads --loops=4) >/tmp/fio.out 2>&1
}
echo 0 > "$D/stats"
run 1 || { cat /tmp/fio.out; fail "writes without faults"; }
say "CLEAN pre_mapped=$(stat pre_mapped) pre_mapped_errors=$(stat pre_mapped_errors)" \
    "prepared=$(stat prepared) post_req_copies=$(stat post_req_copies)"
seed=10
for spec in data-crc,ppm=50000,limit=3 data-timeout,ppm=50000,limit=3 \
            resp-crc,ppm=50000,limit=3 lost-irq,ppm=50000,limit=1; do
  kind=${spec%%,*}
  echo 0 > "$D/stats"
  host_sync "arm-$spec,seed=$seed"
  run $seed || { cat /tmp/fio.out; fail "$kind on pre-mapped writes: not recovered or data differs"; }
  host_sync clear
  left=$(sg_left)
  [ -z "$left" ] || { echo "$left"; fail "$kind: scatter-gather mappings of $CTL left"; }
  say "STATS $kind pre_mapped=$(stat pre_mapped) pre_mapped_errors=$(stat pre_mapped_errors)" \
      "error_data_crc=$(stat error_data_crc) error_data_timeout=$(stat error_data_timeout)" \
      "error_cmd_crc=$(stat error_cmd_crc) error_deadline=$(stat error_deadline)" \
      "direct=$(stat direct) bounced=$(stat bounced) prepared=$(stat prepared)" \
      "post_req_copies=$(stat post_req_copies) error_setup=$(stat error_setup)"
  seed=$((seed + 1))
done
host_sync model
# Unbinding checks that the driver holds no DMA mapping any more (DMA-API
# debugging: "pending DMA allocations" is a report).
rmmod meson_mx_sdhc_rs
say "rmmod done"
G
)
emu --card emmc --size 64 --driver rust --host-script "$T/host.sh" "$g"
grep '\[guest\]' "$T/serial.log"
python3 - "$T/serial.log" "$T/faults" <<'P'
import re, sys
log = open(sys.argv[1], errors="replace").read()
faults = dict(kv.split("=") for kv in open(sys.argv[2]).read().split())
ok = True
def want(what, good):
    global ok
    ok = ok and good
    print("  %s: %s" % ("ok" if good else "FAILED", what))
rows = {}
for m in re.finditer(r"\[guest\] (?:STATS )?(\S+) (pre_mapped=.*)", log):
    rows[m.group(1)] = {k: int(v) for k, v in (kv.split("=") for kv in m.group(2).split())}
clean = rows.pop("CLEAN", None) or {}
want("without faults: 256 writes pre-mapped, none failed (%s)" % clean,
     clean.get("pre_mapped") == 256 and clean.get("pre_mapped_errors") == 0)
want("4 fault passes reported", len(rows) == 4)
counter = {"data-crc": "error_data_crc", "data-timeout": "error_data_timeout",
           "resp-crc": "error_cmd_crc", "lost-irq": "error_deadline"}
limit = {"data-crc": 3, "data-timeout": 3, "resp-crc": 3, "lost-irq": 1}
for kind, r in rows.items():
    n = limit[kind]
    want("%s: %d injected, the model counts %s" % (kind, n, faults.get(kind)),
         int(faults.get(kind, -1)) == n)
    want("%s: the driver counted %d errors of its kind (%d)" % (kind, r[counter[kind]], n),
         r[counter[kind]] == n)
    want("%s: every failed request was pre-mapped (pre_mapped_errors %d)" % (kind, r["pre_mapped_errors"]),
         r["pre_mapped_errors"] == n)
    # fio writes each of its 256 blocks once: every pre_map beyond those and the n
    # failed attempts was of a write the core cleaned up (post_req) without starting it.
    unstarted = r["pre_mapped"] - 256 - n
    want("%s: %d writes pre-mapped: 256, %d failed, %d cleaned up unstarted"
         % (kind, r["pre_mapped"], n, unstarted), unstarted >= 1)
    want("%s: no request failed in its setup" % kind, r["error_setup"] == 0)
# Double buffering needs the psync reads and the queued writes in flight together: a
# pass whose faults hold the writes back (data timeouts) can see the reads end alone, with
# nothing prepared, so it is asked of the clean pass and of the fault passes together.
pre = {k: sum(r[k] for r in rows.values()) for k in ("prepared", "post_req_copies")}
want("double buffering ran without faults (prepared %s, post_req_copies %s) and in the fault "
     "passes together (%d, %d; per pass %s)"
     % (clean.get("prepared"), clean.get("post_req_copies"), pre["prepared"],
        pre["post_req_copies"], ", ".join("%s %d/%d" % (k, r["prepared"], r["post_req_copies"])
                                          for k, r in rows.items())),
     clean.get("prepared", 0) > 0 and clean.get("post_req_copies", 0) > 0
     and pre["prepared"] > 0 and pre["post_req_copies"] > 0)
want("unloaded", "[guest] rmmod done" in log)
sys.exit(0 if ok else 1)
P
