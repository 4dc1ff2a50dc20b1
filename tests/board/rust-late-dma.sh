#!/usr/bin/env bash
# Quiesce after every error (Rust driver, eMMC): the model's late-dma fault reports a
# response CRC error on a read while its DMA engine goes on writing the remaining blocks to
# the programmed address for the normal data time, unless the controller is reset.  A mixed
# soak (one fio job rewriting and verifying one region while another keeps reading and
# verifying a second region) runs with late-dma faults on 3 % of the reads, with the bounce
# buffer (default) and without (bounce_size=0), each twice:
#   - with the C driver's rule (debugfs quiesce_on_error=0: reset only for EIO/ETIMEDOUT on
#     the command): what the late DMA does to memory the driver has handed back is recorded;
#   - with the driver's default (reset after any error): 0 verify errors, and the late DMA is
#     stopped (the model counts the bytes it kept from memory).
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm) "$QMP" "\$EMU_QMP" faults late-dma ppm=10000 seed=9 limit=20 dir=read ;;
clear) "$QMP" "\$EMU_QMP" faults none ;;
stats) "$QMP" "\$EMU_QMP" stats > "$T/stats.json" ;;
esac
HOST
chmod +x "$T/host.sh"
guest_for() { # guest_for QUIESCE
sed "s/@Q@/$1/g" <<'G' | guest "t-$1"
set -e
load_driver rust $EMU_MODPARAMS
wait_card
D=$(rs_debugfs)
echo @Q@ > "$D/quiesce_on_error"
# region 2 (16..32 MiB) written once, then only read and verified
fio --name=pre --filename=$DEV --direct=1 --rw=write --bs=128k --offset=16m --size=16m \
    --verify=crc32c --do_verify=0 --randseed=2 --output-format=terse >/tmp/pre.out 2>&1 ||
  { cat /tmp/pre.out; fail "writing region 2"; }
host_sync arm
set +e
fio --output-format=terse --direct=1 --filename=$DEV --bs=128k --time_based --runtime=10 \
    --name=writer --rw=randwrite --offset=0 --size=16m --verify=crc32c --do_verify=1 --randseed=1 \
    --verify_fatal=0 \
    --name=reader --rw=randread --offset=16m --size=16m --verify=crc32c --verify_only=1 --randseed=2 \
    --verify_fatal=0 >/tmp/soak.out 2>&1
rc=$?
set -e
host_sync clear
bad=$(grep -ci 'verify: bad\|verify failed\|bad magic\|bad header' /tmp/soak.out || true)
say "SOAK quiesce=@Q@ fio_rc=$rc verify_errors=$bad deadlines=$(sed -n 's/^error_deadline: //p' $D/stats) cmd_crc=$(sed -n 's/^error_cmd_crc: //p' $D/stats)"
grep -m3 -i 'verify\|error' /tmp/soak.out || true
host_sync stats
G
}
fail=0
for params in "" "bounce_size=0"; do
  for q in 0 1; do
    echo "== ${params:-default} quiesce_on_error=$q"
    emu --card emmc --size 64 --driver none --timeout 900 --host-script "$T/host.sh" \
        --modparams "$params" "$(guest_for $q)" || { echo "FAILED: run"; fail=1; continue; }
    line=$(grep -o 'SOAK quiesce=.*' "$T/serial.log")
    late=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["faults"].get("late-dma",0), s["late_dma_bytes"], s["late_dma_cancelled_bytes"])' "$T/stats.json")
    echo "  $line; model: late-dma faults, bytes written after the error, bytes stopped by SRST: $late"
    bad=$(sed -n 's/.*verify_errors=\([0-9]*\).*/\1/p' <<<"$line")
    rc=$(sed -n 's/.*fio_rc=\([0-9]*\).*/\1/p' <<<"$line")
    read -r nf lb cb <<<"$late"
    check "${params:-default} q=$q: late-dma faults injected" [ "$nf" -ge 1 ] || fail=1
    check "${params:-default} q=$q: 0 verify errors" [ "$bad" = 0 ] || fail=1
    if [ $q = 0 ]; then
      check "${params:-default} C rule: the engine wrote into memory already handed back" [ "$lb" -gt 0 ] || fail=1
    else
      check "${params:-default} quiesce: nothing written after the error interrupt" [ "$lb" = 0 ] || fail=1
      check "${params:-default} quiesce: the reset stopped the late DMAs" [ "$cb" -gt 0 ] || fail=1
    fi
  done
done
exit $fail
