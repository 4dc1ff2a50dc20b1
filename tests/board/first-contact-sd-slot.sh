#!/usr/bin/env bash
# scripts/first-contact --controller sd-slot on the emulated Odroid-C1, one
# boot, a 16 MiB SD card in the slot, the C driver (meson-mx-sdio) holding
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
#      disk, and a mounted partition of the card.
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
blank_raw_run "raw mode on a blank SD card" 16777216
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
write_mbr $D '\000\376\377\377\203\376\377\377\000\010\000\000\000\100\000\000' 1
mke2fs -q ${D}p1 > /dev/null 2>&1 || mke2fs ${D}p1 > /dev/null || fail "mke2fs"
mkdir -p /mnt/p1
mount -t ext4 ${D}p1 /mnt/p1 || mount ${D}p1 /mnt/p1 || fail "mount ${D}p1"
expect 3 "${D}p1 is mounted on /mnt/p1" "a mounted partition" --read-size 1m
drivers_unchanged "a mounted partition"
umount /mnt/p1
say "ok: refused: --controller sdhc with the SD card's disk, a mounted partition"
G
)
emu --board odroidc1 --driver none --sd-slot "$T/sd.img" --sd-slot-size 16 --timeout 600 "$g"
grep -E '^\[guest\]' "$T/serial.log" || true
log_checks "$T/serial.log" <<'P'
import sys
from board_log import markers, need, done
js, dt = markers(sys.argv[1], r"(\S+) (\S+)")
need(set(js) == {"raw", "bad"}, "JSON of the two runs: %s" % sorted(js))
need(dt is not None and dt[0].endswith("/slot@1") and int(dt[1], 16) == 4, "the guest's reading of the slot's DT node: %s" % (dt,))
for k, d in js.items():
    need(d.get("controller") == "c1108c20.mmc" and d.get("controller_kind") == "sd-slot",
         "%s: the SD card slot's controller: %s, %s" % (k, d.get("controller"), d.get("controller_kind")))
    need(d["c_driver_version"].startswith("meson-mx-sdio of Linux ") and d["rust_driver_version"].startswith("meson_mx_sdio_rs "),
         "%s: the drivers: %s; %s" % (k, d["c_driver_version"], d["rust_driver_version"]))
    if dt:
        need(d["dt_node"] == dt[0] and d["dt_bus_width"] == 4, "%s: the DT node: %s, bus-width %s" % (k, d["dt_node"], d["dt_bus_width"]))
r = js.get("raw", {})
need(r.get("result") == "pass" and r.get("mode") == "raw" and r.get("mismatches") == 0, "raw: pass, no mismatch")
need(r.get("read_compare", {}).get("size") == 16 << 20 and r["read_compare"]["result"] == "same", "raw: the whole card compared, same")
p = r.get("patterns", {})
need(p.get("rust_read_back") == "ok" and p.get("c_read_back") == "ok" and p.get("reads_compared") == "same",
     "raw: the patterns read back through both drivers: %s" % p)
need(r.get("max_req_size_from") == "queue limits" and r.get("max_req_size", 0) > 0 and r["max_req_size"] in p.get("sizes", []),
     "raw: max_req_size %s (%s) among the sizes" % (r.get("max_req_size"), r.get("max_req_size_from")))
need(r.get("stats", {}).get("from") == "debugfs" and r["stats"]["errors"] == 0 and r.get("kernel_log", {}).get("warnings") == 0,
     "raw: no driver error counted, no kernel warning: %s, %s" % (r.get("stats"), r.get("kernel_log")))
need(r.get("ios") and r["ios"]["timing"] == "sd high-speed" and r["ios"]["bus_width"] == 4 and r["ios"]["clock_hz"] > 0,
     "raw: ios under the Rust driver: %s" % r.get("ios"))
need(r.get("backup") == "none (--no-backup)", "raw: backup %s" % r.get("backup"))
b = js.get("bad", {})
need(b.get("result") == "fail" and b.get("mode") == "read" and b.get("read_compare", {}).get("result") == "differ"
     and b.get("mismatches") == 1, "bad: fail, the read comparison differs: %s" % b.get("first_mismatch"))
done()
P
