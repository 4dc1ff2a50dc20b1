#!/usr/bin/env bash
# scripts/bench-board on the emulated board (32 MiB eMMC, tiny jobs): it
# refuses a card with a mounted filesystem (an ext2 partition [28, 32) MiB
# mounted read-only), also with --scratch and --dry-run, refuses a region
# past the end of the card, and, the partition unmounted, write regions over
# the partition (unless named) and over the partition table area, which is
# everything before the first partition (the --dry-run as the run); a
# --scratch --destroy-partition-table run with write jobs in [8 MiB, 12 MiB)
# produces the table
# and the JSON with every variant, puts the C driver back (and the Rust driver
# when that held the card, also after an error), and leaves every
# byte outside the region as it was (a random pattern, checksummed before and
# after); --designs adds the four bounce designs.  Not a speed check.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -u
D=$DEV
MB=1048576
BB="bench-board --c-module $C_MOD --rust-module $RS_MOD --job-size 1m"
[ $((1 << 40)) = 1099511627776 ] || fail "the guest shell has no 64-bit arithmetic"
tr '\000' '\n' < /proc/device-tree/compatible | grep -qx 'linux,dummy-virt' ||
    say "note: the DT root is not linux,dummy-virt"

# the whole card: a random pattern (1 MiB from /dev/urandom, repeated)
dd if=/dev/urandom of=/tmp/pat bs=1M count=1 2>/dev/null
i=0
while [ $i -lt 32 ]; do
    dd if=/tmp/pat of=$D bs=1M count=1 seek=$i oflag=direct 2>/dev/null ||
        fail "pattern write at MiB $i"
    i=$((i + 1))
done
# an MBR: partition 1 (Linux) = [28 MiB, 32 MiB), with an ext2 on it
write_mbr $D '\000\376\377\377\203\376\377\377\000\340\000\000\000\040\000\000' 1
[ "$(cat /sys/block/${DEV#/dev/}/${DEV#/dev/}p1/start)" = 57344 ] || fail "p1 does not start at 28 MiB"
mke2fs -q ${D}p1 > /dev/null 2>&1 || mke2fs ${D}p1 > /dev/null || fail "mke2fs"
mkdir -p /mnt/p1
mount -t ext4 -o ro ${D}p1 /mnt/p1 || mount -o ro ${D}p1 /mnt/p1 || fail "mount ${D}p1"
grep -q "^${D}p1 " /proc/mounts || fail "${D}p1 is not in /proc/mounts"
say "pattern written, ${D}p1 (ext2) mounted read-only on /mnt/p1"

sums() { # md5 of [0, 8 MiB), [12 MiB, 32 MiB) and of the region [8, 12) MiB
    dev=$1
    a=$(dd if=$dev bs=1M count=8 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
    r=$(dd if=$dev bs=1M skip=8 count=4 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
    b=$(dd if=$dev bs=1M skip=12 count=20 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)
    echo "$a $r $b"
}
before=$(sums $D)

# 1. a mounted filesystem on a partition: refused, whatever the options,
# nothing switched
for opts in "--offset 8m --size 4m" "--scratch --offset 8m --size 4m" "--scratch --destroy-partitions ${D}p1"; do
    rc=0
    $BB $opts > /tmp/o 2> /tmp/e || rc=$?
    cat /tmp/e
    [ $rc = 3 ] || fail "mounted, $opts: exit status $rc, expected 3 (refused)"
    grep -q 'refusing to run' /tmp/e && grep -q "${D}p1 is mounted on /mnt/p1" /tmp/e ||
        fail "mounted, $opts: the refusal does not say that ${D}p1 is mounted"
    [ "$(sdhc_driver)" = c ] && [ ! -d /sys/module/meson_mx_sdhc_rs ] || fail "mounted: the refusal changed the drivers"
done
say "ok: refuses a card with a mounted partition, also with --scratch"
rc=0
$BB --dry-run > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 3 ] && grep -q 'mounted' /tmp/e || fail "mounted: --dry-run was not refused ($rc)"
rc=0
$BB --scratch --dry-run > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 3 ] && grep -q 'mounted' /tmp/e || fail "mounted: --scratch --dry-run was not refused ($rc)"

# 2. regions that do not fit (with --scratch, so only the region is at fault)
rc=0
$BB --scratch --offset 30m --size 4m > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e
[ $rc = 3 ] && grep -q 'does not fit' /tmp/e || fail "region past the end: exit $rc, not refused"
rc=0
$BB --scratch --offset 32m --size 4k > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 3 ] && grep -q 'past the end' /tmp/e || fail "region starting at the end: exit $rc, not refused"
rc=0
$BB --scratch --offset 1000 --size 4m > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 3 ] || fail "unaligned offset: exit $rc, not refused"
[ "$(sdhc_driver)" = c ] || fail "the refusals changed the driver"
say "ok: refuses regions that do not fit"

# 3. the partition unmounted: a write region over it or over the MBR is
# refused (the run as its --dry-run) unless named
umount /mnt/p1 || fail "umount"
N=${D#/dev/}
overlap() { # WANT_RC PATTERN ARGS...: bench-board ARGS (a real run, then --dry-run)
    want=$1 pat=$2; shift 2
    for dry in "" --dry-run; do
        rc=0
        $BB "$@" $dry > /tmp/o 2> /tmp/e || rc=$?
        [ $rc = "$want" ] && grep -q -- "$pat" /tmp/e /tmp/o ||
            { cat /tmp/e; fail "$* $dry: exit $rc (expected $want), no '$pat'"; }
    done
    [ "$(sdhc_driver)" = c ] && [ ! -d /sys/module/meson_mx_sdhc_rs ] || fail "$*: the drivers changed"
}
overlap 3 "overlaps ${D}p1 \[29360128, 33554432)" --offset 26m --size 4m --jobs write-1m
overlap 3 "overlaps ${D}p1" --scratch --jobs write-1m
overlap 3 "the partition table area \[0, 29360128) (table: MBR" --offset 0 --size 4m --jobs write-1m
# everything before the first partition is partition table area (a boot
# loader's place): [8, 12) MiB too, unless --destroy-partition-table
overlap 3 "the partition table area \[0, 29360128)" --scratch --offset 8m --size 4m --jobs write-1m
rc=0
$BB --offset 28m --size 4m --destroy-partitions ${N}p1 --dry-run > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 0 ] && grep -q "^overwrites: ${D}p1" /tmp/o || { cat /tmp/e; fail "p1 named: exit $rc"; }
say "ok: refuses write regions over the partition and the MBR, allows a named partition"
rc=0
$BB --scratch --offset 8m --size 4m --destroy-partition-table --dry-run > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 0 ] || fail "--scratch --dry-run: exit $rc"
cat /tmp/o
grep -q '^writes: yes' /tmp/o || fail "--scratch --dry-run: no writes planned"
awk '/^job: / { for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
         if (v["--offset"] < 8 * 1048576 || v["--offset"] + v["--size"] > 12 * 1048576) bad = 1; n++ }
     END { exit !(n == 9 && !bad) }' /tmp/o || fail "--dry-run: a job outside [8, 12) MiB or not 9 jobs"

# 4. write jobs in [8 MiB, 12 MiB)
rc=0
$BB --scratch --offset 8m --size 4m --destroy-partition-table --json /tmp/bb.json > /tmp/table 2> /tmp/progress || rc=$?
cat /tmp/progress
[ $rc = 0 ] || fail "the --scratch run failed ($rc)"
grep -q 'job 27 of 27, 0 left' /tmp/progress || fail "no progress line for the last job"
sed 's/^/@@TABLE /' /tmp/table
echo "@@JSON $(tr -d '\n' < /tmp/bb.json)"
cur=$(sdhc_disk) && [ -b "$cur" ] || fail "no card after the run"
[ "$cur" = "$D" ] || say "note: the card is now $cur (was $D)"
say "card after the run: $cur, held by $(sdhc_driver)"
[ "$(sdhc_driver)" = c ] || fail "the C driver was not restored"
[ ! -d /sys/module/meson_mx_sdhc_rs ] || fail "the Rust module was left loaded"
after=$(sums "$cur")
echo "before: $before"
echo "after:  $after"
set -- $before; b0=$1; br=$2; b1=$3
set -- $after; a0=$1; ar=$2; a1=$3
[ "$a0" = "$b0" ] || fail "bytes in [0, 8 MiB), before the region, changed"
[ "$a1" = "$b1" ] || fail "bytes in [12 MiB, 32 MiB), after the region, changed"
[ "$ar" != "$br" ] || fail "the region itself did not change: did the write jobs run?"
say "ok: outside the region unchanged, the region was written"

# 5. no region and no --scratch: read jobs only
rc=0
$BB --dry-run > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 0 ] || { cat /tmp/e; fail "plain --dry-run: exit $rc"; }
grep -q '^writes: no' /tmp/o && ! grep -q '^job: write' /tmp/o || fail "write jobs planned without a region"
grep -q 'write jobs skipped' /tmp/e || fail "no note about skipped write jobs"
say "ok: no writes without a region"

# 6. started under the Rust driver: put back on error and at the end
insmod $RS_MOD bounce_size=65536 || fail "insmod bounce_size=65536"
switch-driver rust > /dev/null || fail "switch-driver rust"
wait_card 30 || fail "no card under the Rust driver"
rc=0
$BB --no-write --jobs read-4k --bounce-sizes 12345 --restore-params bounce_size=65536 \
    --json /tmp/bb3.json > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e
[ $rc = 1 ] && grep -q 'insmod .* bounce_size=12345 failed' /tmp/e || fail "a bad bounce_size: exit $rc, not an insmod error"
grep -q 'restoring: controller to .rust., Rust module loaded bounce_size=65536' /tmp/e &&
    grep -q "restored: .* held by 'rust'" /tmp/e || fail "after an error: not restored to the Rust driver"
wait_card 30 && [ "$(sdhc_driver)" = rust ] || fail "after an error: the Rust driver does not hold the card"
rc=0
$BB --no-write --jobs read-4k,randread-4k --bounce-sizes 0 --json /tmp/bb2.json > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 0 ] || { cat /tmp/e; fail "the Rust-first run failed ($rc)"; }
wait_card 30 && [ "$(sdhc_driver)" = rust ] || fail "the Rust driver was not restored"
grep -q 'C driver.*Rust bounce=0' /tmp/o || fail "the Rust-first run has no table"
say "ok: the Rust driver is put back, after an error and at the end"

# 7. --designs: the four bounce designs (bounce_cached x double_buffer) as
# Rust variants; --variant: any parameter set, max_segs included
rc=0
$BB --no-write --jobs aioread-128k --bounce-sizes '' --designs --variant "bounce_size=131072  max_segs=16" \
    --json /tmp/bb4.json > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 0 ] || { cat /tmp/e; fail "the --designs --variant run failed ($rc)"; }
for d in "coherent 1 buffer" "coherent 2 buffers" "cached 1 buffer" "cached 2 buffers" "bounce_size=131072 max_segs=16"; do
    grep -q "| C driver | .*Rust $d" /tmp/o || { cat /tmp/o; fail "--designs/--variant: no column 'Rust $d'"; }
done
grep -q '"Rust bounce_size=131072 max_segs=16": "bounce_size=131072 max_segs=16"' /tmp/bb4.json ||
    { cat /tmp/bb4.json; fail "--variant: its parameters are not in the JSON's variant_params"; }
rc=0
$BB --no-write --jobs read-4k --variant "max_segs" --dry-run > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 1 ] && grep -q "is not PARAMETER=VALUE" /tmp/e || { cat /tmp/e; fail "--variant max_segs: exit $rc, not rejected"; }
say "ok: --designs compares the four bounce designs, --variant adds a parameter set"
G
)
emu --card emmc --size 32 --driver c --timeout 900 "$g"
grep -E '^\[guest\]|^(before|after):' "$T/serial.log" || true
python3 - "$T/serial.log" <<'P'
import json, sys
log = open(sys.argv[1], errors="replace").read().splitlines()
table = [l[len("@@TABLE "):] for l in log if l.startswith("@@TABLE ")]
js = [l[len("@@JSON "):] for l in log if l.startswith("@@JSON ")]
print("\n".join(table))
ok = True
def need(cond, what):
    global ok
    print(("  ok: " if cond else "  FAILED: ") + what)
    ok &= bool(cond)
need(len(js) == 1, "one JSON document")
d = json.loads(js[0])
want = ["C driver", "Rust bounce=0", "Rust bounce=128K"]
need(d["variants"] == want, "variants: %s" % d["variants"])
jobs = ["read-4k", "read-64k", "read-128k", "read-1m", "write-4k", "write-64k", "write-128k", "write-1m", "randread-4k"]
need(d["jobs"] == jobs and d["skipped_jobs"] == [], "9 jobs, none skipped")
need(d["region"] == {"offset": 8 << 20, "size": 4 << 20, "explicit": True} and d["scratch"] and d["writes"],
     "region [8, 12) MiB, scratch, writes")
need(d["time_base"] == "virtual" and d["board"].startswith("Emulated"), "labelled as the emulated board, virtual time")
for v in want:
    for j in jobs:
        c = d["results"][v][j]
        need(c["mib_s"] > 0 and c["iops"] > 0 and c["offset"] >= 8 << 20 and c["offset"] + c["size"] <= 12 << 20,
             "%s / %s: positive MiB/s and IOPS, inside the region" % (v, j))
rows = [l for l in table if l.startswith("| `")]
need(len(rows) == 9 and all(l.count("|") == len(want) + 2 for l in rows), "table: 9 rows, one column per variant")
need(any(l.startswith("| job | C driver | Rust bounce=0 |") for l in table), "table header")
need(all(" (1.00x), " in l.split("|")[2] for l in rows), "the C column is the 1.00x baseline")
need(any("virtual time" in l for l in table), "the table says virtual time")
sys.exit(0 if ok else 1)
P
