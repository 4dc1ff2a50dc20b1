#!/usr/bin/env bash
# scripts/first-contact --controller sd-slot on the emulated Odroid-C1, one
# boot, an 8 MiB SD card in the slot, the C driver (meson-mx-sdio) holding
# it at the start and the Rust module (meson_mx_sdio_rs) loaded by
# first-contact:
#   1. the walk-through's raw run on a blank card (--offset 0
#      --destroy-partition-table --no-backup): the whole card read through
#      both drivers and the same, the patterns written through the Rust
#      driver and read back through both: PASS; the JSON names the SD card
#      slot's controller and drivers, the slot's DT node (bus-width 4), the
#      card under the Rust driver at SD high speed, 4 bits, no driver error
#      counted, no kernel warning; at the end the C driver holds the card
#      again and the Rust module is unloaded; --restore makes it blank again;
#   2. a read comparison that differs (the test hook writes a byte of the
#      card between the C driver's read and the Rust driver's): FAIL, exit
#      4, the chunk named;
#   3. refusals, nothing switched: --controller sdhc with the SD card's
#      disk, and a mounted partition of the card;
#   4. file mode on that partition, an ext4 made on the host (mkfs.ext4,
#      a journal; [4.5, 8) MiB of the card, under an MBR written in the
#      guest), with --backup (the whole card, dd | gzip -1 through the C
#      driver), a 1 MiB file and 16 blocks per size (--blocks 16: every
#      size up to max_req_size, in less time): PASS; the backup checked
#      against the card, e2fsck -fn (Debian's e2fsck-static) clean before
#      and after, the file system
#      mounted as ext4 under the Rust driver (the test hook at rust-write
#      reads /proc/mounts), the file gone afterwards; its JSON checked as
#      the raw run's is (the whole card compared, the patterns read back
#      through both drivers, max_req_size among the sizes, no driver error
#      or kernel warning, ios), with the backup verified and fsck clean.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -u
SDC=/lib/modules/meson-mx-sdio.ko
SDR=/lib/modules/meson_mx_sdio_rs.ko
insmod $SDC || fail "insmod meson-mx-sdio"
w=0
until D=$(slot_disk) && [ -b "$D" ]; do
  w=$((w + 1)); [ $w -lt 100 ] || fail "no card in the SD slot after 10 s"; usleep 100000
done
N=${D#/dev/}
FC="first-contact --controller sd-slot --c-module $SDC --rust-module $SDR"
holder() { switch-driver status --controller sd-slot | cut -d' ' -f2; }
drivers_unchanged() { [ "$(holder)" = c ] && [ ! -d /sys/module/meson_mx_sdio_rs ] || fail "$1: the drivers changed"; }
passed() { # RC MODE WHAT: a run (exit RC, output /tmp/o) passed in MODE, the whole card compared the same
    [ "$1" = 0 ] || fail "$3: exit $1"
    grep -q "^first-contact: PASS ($2 mode)" /tmp/o || fail "$3: no PASS line"
    grep -q "read comparison: \[0, $(($(cat /sys/block/$N/size) * 512))): same" /tmp/o || fail "$3: the read comparison of the whole card is not 'same'"
}
. /bin/first-contact-lib.sh
# the slot's DT node (the card's host's), as the guest reads it itself
node=$(readlink -f /sys/bus/platform/devices/c1108c20.mmc/*:slot@1/of_node)
B=$(readlink -f /sys/firmware/devicetree/base)
echo "@@DT ${node#$B} $(od -An -v -tx1 "$node/bus-width" | tr -d ' \n')"
# the card: blank but for 256 random KiB at 4 MiB (in the read comparison)
dd if=/dev/urandom of=/tmp/pat bs=256k count=1 2>/dev/null
dd if=/tmp/pat of=$D bs=256k seek=16 oflag=direct 2>/dev/null || fail "pattern write at 4 MiB"
cmp -n 4194304 /dev/zero $D || fail "the card's first 4 MiB are not zero"

# 1. raw mode on a blank card
blank_raw_run "raw mode on a blank SD card" $(($(cat /sys/block/$N/size) * 512))
drivers_unchanged "--restore"
say "ok: raw mode on the blank SD card passes through both drivers, --restore puts the region back"

# 2. the card changed between the two drivers' reads: the comparison says so
cat > /tmp/hook <<'H'
#!/bin/sh
[ "$1" != rust-read ] || printf '\377' | dd of="$FC_DEV" bs=1 seek=4194404 conv=notrunc,fsync 2>/dev/null
H
chmod +x /tmp/hook
rc=0
MESON_SDHC_TEST_HOOKS=1 FIRST_CONTACT_HOOK=/tmp/hook FC_DEV=$D $FC --read-offset 4m --read-size 1m --json /tmp/bad.json > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e /tmp/o
[ $rc = 4 ] || fail "a read comparison that differs: exit $rc, expected 4"
grep -q '^first-contact: FAIL' /tmp/o || fail "a read comparison that differs: no FAIL line"
grep -q "MISMATCH: the read comparison (the Rust driver's read against the C driver's): the chunk at byte 4194304 differs" /tmp/e ||
    fail "a read comparison that differs: the chunk is not named"
echo "@@JSON bad $(tr -d '\n' < /tmp/bad.json)"
drivers_unchanged "a read comparison that differs"
say "ok: a read comparison that differs: FAIL, exit 4, the chunk named"

# 3. refusals
expect 1 "not the sdhc one (--controller sdhc)" "--controller sdhc with the SD card" --controller sdhc --device $D --read-size 1m
drivers_unchanged "--controller sdhc"
# p1 = [4.5, 8) MiB: the host's ext4
write_mbr $D '\000\376\377\377\203\376\377\377\000\044\000\000\000\034\000\000' 1
mkdir -p /mnt/p1
mount -t ext4 ${D}p1 /mnt/p1 || fail "mount -t ext4 ${D}p1"
expect 3 "${D}p1 is mounted on /mnt/p1" "a mounted partition" --read-size 1m
drivers_unchanged "a mounted partition"
umount /mnt/p1
say "ok: refused: --controller sdhc with the SD card's disk, a mounted partition"

# 4. file mode on p1's ext4, with the owner's copy of the whole card
dd if=$D bs=1M iflag=direct 2>/dev/null | gzip -1 > /tmp/card.gz || fail "the card's copy"
cat > /tmp/hook-fs <<'H'
#!/bin/sh
# the file system as mounted under the Rust driver, while it holds the card
[ "$1" != rust-write ] || echo "$(switch-driver status --controller sd-slot | cut -d' ' -f2) $(grep "^$FC_PART " /proc/mounts)" > /tmp/fs-mounted
H
chmod +x /tmp/hook-fs
rc=0
MESON_SDHC_TEST_HOOKS=1 FIRST_CONTACT_HOOK=/tmp/hook-fs FC_PART=${D}p1 \
    $FC --fs ${N}p1 --file-size 1m --blocks 16 --backup /tmp/card.gz --json /tmp/file.json > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e /tmp/o
passed $rc file "file mode on the SD card's ext4"
grep -q "the backup is the card, byte for byte" /tmp/e || fail "file mode: the backup not checked"
grep -q "file system check, before the first write: clean" /tmp/e || fail "file mode: no check before the first write"
read -r held fsdev fsmnt fstype rest < /tmp/fs-mounted || fail "file mode: the test hook did not run at rust-write"
[ "$held $fsdev $fstype" = "rust ${D}p1 ext4" ] ||
    fail "file mode: at rust-write the card is held by '$held' with '$fsdev' mounted as '$fstype' (expected rust, ${D}p1, ext4)"
echo "@@JSON file $(tr -d '\n' < /tmp/file.json)"
drivers_unchanged "file mode"
mount -t ext4 -o ro ${D}p1 /mnt/p1 || fail "mount ${D}p1 after file mode"
[ ! -e /mnt/p1/first-contact.dat ] || fail "file mode left first-contact.dat"
umount /mnt/p1
say "ok: file mode on the SD card's ext4 passes (mounted as ext4 under the Rust driver, e2fsck -fn clean), its file removed"
G
)
# the card: zero but for an ext4 with a journal at [4.5, 8) MiB (no partition table
# yet: the raw run's card is blank, its first 4 MiB zero)
command -v mkfs.ext4 > /dev/null || { echo "mkfs.ext4 missing (make setup: e2fsprogs)" >&2; exit 1; }
truncate -s 8M "$T/sd.img"
truncate -s 3584K "$T/part.img"
mkfs.ext4 -q -F -L sd-fc -J size=1 "$T/part.img"
dd if="$T/part.img" of="$T/sd.img" bs=512 seek=9216 conv=notrunc status=none
emu --board odroidc1 --driver none --sd-slot "$T/sd.img" --sd-slot-size 8 --timeout 600 "$g"
grep -E '^\[guest\]' "$T/serial.log" || true
log_checks "$T/serial.log" <<'P'
import re, sys
from board_log import markers, need, done
js, dt = markers(sys.argv[1], r"(\S+) (\S+)")
need(set(js) == {"raw", "bad", "file"}, "JSON of the three runs: %s" % sorted(js))
need(dt is not None and dt[0].endswith("/slot@1") and int(dt[1], 16) == 4, "the guest's reading of the slot's DT node: %s" % (dt,))
for k, d in js.items():
    need(d.get("controller") == "c1108c20.mmc" and d.get("controller_kind") == "sd-slot",
         "%s: the SD card slot's controller: %s, %s" % (k, d.get("controller"), d.get("controller_kind")))
    need(d["c_driver_version"].startswith("meson-mx-sdio of Linux ") and d["rust_driver_version"].startswith("meson_mx_sdio_rs "),
         "%s: the drivers: %s; %s" % (k, d["c_driver_version"], d["rust_driver_version"]))
    if dt:
        need(d["dt_node"] == dt[0] and d["dt_bus_width"] == 4, "%s: the DT node: %s, bus-width %s" % (k, d["dt_node"], d["dt_bus_width"]))
# what the raw run and file mode are checked for alike
for k in ("raw", "file"):
    d = js.get(k, {})
    p = d.get("patterns", {})
    need(d.get("result") == "pass" and d.get("mode") == k and d.get("mismatches") == 0, "%s: pass, no mismatch" % k)
    need(d.get("read_compare", {}).get("size") == 8 << 20 and d["read_compare"]["result"] == "same", "%s: the whole card compared, same" % k)
    need(p.get("rust_read_back") == "ok" and p.get("c_read_back") == "ok" and p.get("reads_compared") == "same",
         "%s: the patterns read back through both drivers: %s" % (k, p))
    need(d.get("max_req_size_from") == "queue limits" and d.get("max_req_size", 0) > 0 and d["max_req_size"] in p.get("sizes", []),
         "%s: max_req_size %s (%s) among the sizes" % (k, d.get("max_req_size"), d.get("max_req_size_from")))
    need(d.get("bytes_compared") == (8 << 20) + 2 * p.get("bytes", 0), "%s: bytes_compared = card + 2 x patterns" % k)
    need(d.get("stats", {}).get("from") == "debugfs" and d["stats"]["errors"] == 0 and d.get("kernel_log", {}).get("warnings") == 0,
         "%s: no driver error counted, no kernel warning: %s, %s" % (k, d.get("stats"), d.get("kernel_log")))
    need(d.get("ios") and d["ios"]["timing"] == "sd high-speed" and d["ios"]["bus_width"] == 4 and d["ios"]["clock_hz"] > 0,
         "%s: ios under the Rust driver: %s" % (k, d.get("ios")))
    need(d.get("phase") is None and d.get("message") is None, "%s: no phase, no message" % k)
need(js.get("raw", {}).get("backup") == "none (--no-backup)", "raw: backup %s" % js.get("raw", {}).get("backup"))
f = js.get("file", {})
need(re.fullmatch(r"/dev/mmcblk\d+p1", f.get("patterns", {}).get("file_system") or "") and 0 < f["patterns"]["bytes"] <= 1 << 20,
     "file: on p1, at most --file-size: %s, %s bytes" % (f.get("patterns", {}).get("file_system"), f.get("patterns", {}).get("bytes")))
need(f.get("backup") == {"file": "card.gz", "verified": "same-as-card"}, "file: the backup checked: %s" % f.get("backup"))
need(f.get("fsck_before") == "clean" and f.get("fsck") == "clean" and f.get("fsck_status") == 0
     and re.fullmatch(r"e2fsck -fn /dev/mmcblk\d+p1", f.get("fsck_command") or "")
     and re.search(r"\d+/\d+ files .*\d+/\d+ blocks", f.get("fsck_summary") or ""),
     "file: fsck clean before and after: %s, status %s: %s" % (f.get("fsck_command"), f.get("fsck_status"), f.get("fsck_summary")))
b = js.get("bad", {})
need(b.get("result") == "fail" and b.get("mode") == "read" and b.get("read_compare", {}).get("result") == "differ"
     and b.get("mismatches") == 1, "bad: fail, the read comparison differs: %s" % b.get("first_mismatch"))
done()
P
