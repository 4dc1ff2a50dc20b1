#!/usr/bin/env bash
# scripts/first-contact on the emulated board (32 MiB eMMC: an MBR, p1 =
# [1, 12) MiB with an ext2, p2 = [12, 32) MiB, the rest a random pattern):
#   1. refusals and bad input, nothing switched: a mounted p1 (also for the
#      read comparison alone), a raw region over p1 or over the partition
#      table area unless named, sizes that are not sizes, --offset without
#      --size, --fs naming no partition of the card, --restore of no file;
#   2. the healthy driver passes: raw mode in p2 (named with
#      --destroy-partitions) with a read comparison of 8 MiB, its JSON
#      (the Rust driver at its defaults: skip_clean_invalidate on, auto),
#      then --restore puts p2's bytes back; file mode on p1's ext2, the file
#      gone afterwards;
#   3. the model's corrupt-read-byte-now (one byte of one read flipped, no
#      error) armed over QMP by the test hook just before the Rust driver's
#      read-back (raw and file mode) or its read comparison: first-contact
#      fails (exit 4) naming the bad block, the byte and both values, and
#      its JSON says fail; the card itself holds the right data (the C
#      driver's read-back passes);
#   4. the model's corrupt-write-byte-now (one byte of one write flipped on
#      its way to the card, no error) armed just before the Rust driver's
#      pattern writes: first-contact fails (exit 4), both drivers' read-backs
#      bad and the same, and --restore puts p2 back.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
corrupt) "$QMP" "\$EMU_QMP" set corrupt-read-byte-now 40000 ;;
corrupt-write) "$QMP" "\$EMU_QMP" set corrupt-write-byte-now 40000 ;;
stats) "$QMP" "\$EMU_QMP" stats > "$T/stats.json" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -u
D=$DEV
N=${D#/dev/}
FC="first-contact --c-module $C_MOD --rust-module $RS_MOD"
MB=1048576
# the card: a random pattern, an MBR with p1 = [1, 12) MiB, p2 = [12, 32) MiB
dd if=/dev/urandom of=/tmp/pat bs=1M count=1 2>/dev/null
i=0
while [ $i -lt 32 ]; do
    dd if=/tmp/pat of=$D bs=1M count=1 seek=$i oflag=direct 2>/dev/null || fail "pattern write at MiB $i"
    i=$((i + 1))
done
write_mbr $D '\000\376\377\377\203\376\377\377\000\010\000\000\000\130\000\000\000\376\377\377\203\376\377\377\000\140\000\000\000\240\000\000' 2
mke2fs -q ${D}p1 > /dev/null 2>&1 || mke2fs ${D}p1 > /dev/null || fail "mke2fs"
mkdir -p /mnt/p1
p2sum() { dd if=$D bs=1M skip=12 count=20 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1; }
P2=$(p2sum)
drivers_unchanged() { [ "$(sdhc_driver)" = c ] && [ ! -d /sys/module/meson_mx_sdhc_rs ] || fail "$1: the drivers changed"; }
expect() { # RC PATTERN WHAT ARGS...: first-contact ARGS exits RC, stderr/stdout has PATTERN
    want=$1 pat=$2 what=$3; shift 3
    rc=0
    $FC "$@" > /tmp/o 2> /tmp/e || rc=$?
    [ $rc = "$want" ] && grep -q -- "$pat" /tmp/e /tmp/o ||
        { cat /tmp/o /tmp/e; fail "$what: exit $rc (expected $want), no '$pat'"; }
}

# 1. refusals and bad input
mount -o ro ${D}p1 /mnt/p1 || fail "mount ${D}p1"
expect 3 "${D}p1 is mounted on /mnt/p1" "mounted, raw" --offset 12m --size 4m --destroy-partitions ${N}p2
expect 3 "${D}p1 is mounted on /mnt/p1" "mounted, read comparison only"
drivers_unchanged "mounted"
umount /mnt/p1
expect 3 "overlaps ${D}p1 \[1048576, 12582912)" "over p1" --offset 8m --size 8m --destroy-partitions ${N}p2
expect 3 "the partition table area \[0, 1048576) (table: MBR" "over the MBR" --offset 0 --size 1m
expect 3 "name them: --destroy-partitions ${N}p2" "p2 not named" --offset 12m --size 4m
expect 1 "--offset: '12x' is not a size" "a bad size" --offset 12x --size 4m
expect 1 "needs both --offset and --size" "--offset alone" --offset 12m
expect 1 "--fs: '${N}p7' is not a partition of $D" "--fs on no partition" --fs ${N}p7
expect 1 "exclude each other" "--fs with --offset" --fs ${N}p1 --offset 12m --size 4m
expect 1 "no file /tmp/none" "--restore of no file" --restore /tmp/none
expect 1 "belong to raw mode" "--destroy-partitions in file mode" --fs ${N}p1 --destroy-partitions ${N}p2
drivers_unchanged "refusals"
say "ok: refusals and bad input, nothing switched"

# 2. the healthy driver
rc=0
$FC --offset 12m --size 2m --destroy-partitions ${N}p2 --read-size 8m --save /tmp/fc.save --json /tmp/raw.json > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e /tmp/o
[ $rc = 0 ] || fail "raw mode, healthy: exit $rc"
grep -q '^first-contact: PASS (raw mode)' /tmp/o || fail "raw mode: no PASS line"
grep -q "read comparison: \[0, 8388608): same" /tmp/o || fail "raw mode: the read comparison is not 'same'"
echo "@@JSON raw $(tr -d '\n' < /tmp/raw.json)"
drivers_unchanged "raw mode"
[ "$(p2sum)" != "$P2" ] || fail "raw mode: p2 did not change"
expect 0 "restored \[12582912," "--restore" --restore /tmp/fc.save
[ "$(p2sum)" = "$P2" ] || fail "--restore: p2 is not as it was"
[ ! -e /tmp/fc.save ] || fail "--restore left its file"
say "ok: raw mode passes, --restore puts the region back"
rc=0
$FC --fs ${N}p1 --file-size 2m --read-size 0 --json /tmp/file.json > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e /tmp/o
[ $rc = 0 ] || fail "file mode, healthy: exit $rc"
grep -q '^first-contact: PASS (file mode)' /tmp/o || fail "file mode: no PASS line"
echo "@@JSON file $(tr -d '\n' < /tmp/file.json)"
mount -o ro ${D}p1 /mnt/p1 || fail "mount ${D}p1 after file mode"
[ ! -e /mnt/p1/first-contact.dat ] || fail "file mode left first-contact.dat"
umount /mnt/p1
drivers_unchanged "file mode"
say "ok: file mode passes, its file removed"

# 3. one byte of one read corrupted under the Rust driver
cat > /tmp/hook <<'H'
#!/bin/sh
. /bin/emu-lib.sh
[ "$1" != "$FC_ARM" ] || host_sync "${FC_TAG:-corrupt}" > /dev/console
H
chmod +x /tmp/hook
bad() { # LABEL PHASE ARGS...: first-contact with the fault armed before PHASE
    lab=$1 arm=$2 js=/tmp/$1.json; shift 2
    rc=0
    MESON_SDHC_TEST_HOOKS=1 FIRST_CONTACT_HOOK=/tmp/hook FC_ARM=$arm $FC "$@" --json "$js" > /tmp/o 2> /tmp/e || rc=$?
    cat /tmp/e /tmp/o
    [ $rc = 4 ] || fail "corrupted before $arm ($*): exit $rc, expected 4"
    grep -q '^first-contact: FAIL' /tmp/o || fail "corrupted before $arm: no FAIL line"
    echo "@@JSON $lab $(tr -d '\n' < "$js")"
    drivers_unchanged "corrupted before $arm"
}
bad raw-bad rust-verify --offset 12m --size 2m --destroy-partitions ${N}p2 --read-size 0 --save /tmp/fc.save
grep -q "MISMATCH: the Rust driver's read-back: the 65024-byte block at card byte [0-9]*: byte [0-9]* (byte 40000 of the block): written 0x\(..\), read 0x" /tmp/e ||
    fail "raw mode, corrupted: the mismatch is not named with its byte"
grep -q "read back: Rust driver bad, C driver ok" /tmp/o || fail "raw mode, corrupted: the C driver's read-back did not pass"
expect 0 "restored" "--restore after the corrupted run" --restore /tmp/fc.save
[ "$(p2sum)" = "$P2" ] || fail "--restore after the corrupted run: p2 is not as it was"
bad file-bad rust-verify --fs ${N}p1 --file-size 2m --read-size 0
grep -q "MISMATCH: the Rust driver's read-back: the 65024-byte block at file offset [0-9]*: byte [0-9]* (byte 40000 of the block)" /tmp/e ||
    fail "file mode, corrupted: the mismatch is not named with its byte"
bad read-bad rust-read --read-offset 4m --read-size 2m
grep -q "MISMATCH: the read comparison (the Rust driver's read against the C driver's): the chunk at byte 4194304 differs" /tmp/e ||
    fail "read comparison, corrupted: the chunk is not named"
# 4. one byte of one write corrupted on its way to the card under the Rust driver
export FC_TAG=corrupt-write
bad write-bad rust-write --offset 12m --size 2m --destroy-partitions ${N}p2 --read-size 0 --save /tmp/fc2.save
unset FC_TAG
grep -q "read back: Rust driver bad, C driver bad; the two reads same" /tmp/o ||
    fail "raw mode, a corrupted write: not both read-backs bad with the same data"
expect 0 "restored" "--restore after the corrupted write" --restore /tmp/fc2.save
[ "$(p2sum)" = "$P2" ] || fail "--restore after the corrupted write: p2 is not as it was"
host_sync stats
say "ok: one corrupted byte fails raw mode, file mode and the read comparison, and a corrupted write"
G
)
emu --card emmc --size 32 --driver c --timeout 600 --host-script "$T/host.sh" "$g"
grep -E '^\[guest\]' "$T/serial.log" || true
python3 - "$T/serial.log" "$T/stats.json" <<'P'
import json, re, sys
log = open(sys.argv[1], errors="replace").read().splitlines()
js = {}
for l in log:
    m = re.match(r"@@JSON (\S+) (.*)", l)
    if m:
        js[m.group(1)] = json.loads(m.group(2))
ok = True
def need(cond, what):
    global ok
    print(("  ok: " if cond else "  FAILED: ") + what)
    ok &= bool(cond)
need(set(js) == {"raw", "file", "raw-bad", "file-bad", "read-bad", "write-bad"}, "JSON of the six runs: %s" % sorted(js))
for k, d in js.items():
    for f in ("result", "mode", "bytes_compared", "mismatches", "c_driver_version", "rust_driver_version", "max_req_size"):
        need(f in d, "%s: has %s" % (k, f))
r = js["raw"]
need(r["result"] == "pass" and r["mode"] == "raw" and r["mismatches"] == 0, "raw: pass, no mismatch")
need(r["max_req_size"] == 131072 and r["max_req_size_from"] == "debugfs", "raw: max_req_size 131072 from debugfs")
need(r["read_compare"]["size"] == 8 << 20 and r["read_compare"]["result"] == "same", "raw: 8 MiB compared, same")
# the driver as first-contact loads it, with no parameter: the default, on (no swiotlb)
for k in ("raw", "file"):
    need(js[k].get("rust_skip_clean_invalidate") == "1 (auto: identity mapping)",
         "%s: the Rust driver ran with skip_clean_invalidate 1 (auto: identity mapping): %s"
         % (k, js[k].get("rust_skip_clean_invalidate")))
need(r["patterns"]["sizes"][0] == 512 and 131072 in r["patterns"]["sizes"] and max(r["patterns"]["sizes"]) > 131072,
     "raw: sizes from 512 to max_req_size and beyond: %s" % r["patterns"]["sizes"])
need(r["bytes_compared"] == (8 << 20) + 2 * r["patterns"]["bytes"], "raw: bytes_compared = card + 2 x patterns")
f = js["file"]
need(f["result"] == "pass" and f["mode"] == "file" and f["patterns"]["file_system"].endswith("p1"), "file: pass, on p1")
for k in ("raw-bad", "file-bad", "read-bad", "write-bad"):
    need(js[k]["result"] == "fail" and js[k]["mismatches"] >= 1 and js[k]["first_mismatch"], "%s: fail, the mismatch named" % k)
st = json.load(open(sys.argv[2]))
need(st.get("corrupted_reads") == 3, "the model corrupted 3 reads: %s" % st.get("corrupted_reads"))
need(st.get("corrupted_writes") == 1, "the model corrupted 1 write: %s" % st.get("corrupted_writes"))
sys.exit(0 if ok else 1)
P
