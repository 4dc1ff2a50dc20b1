#!/usr/bin/env bash
# scripts/first-contact on the emulated board, one boot, an 8 MiB eMMC:
#   0. --help says that --no-backup checks a raw region's first 4 MiB only;
#   1. blank (its first 4 MiB zero; random data at 4, 5 and 6 MiB): a byte of
#      data at 2 MiB, no table: --no-backup refused; the walk-through's raw
#      run on a blank card (--offset 0 --destroy-partition-table
#      --no-backup) passes with a read comparison of the whole card
#      (progress lines with a rate), --restore makes it blank again;
#   then an MBR: p1 = [1, 5) MiB with an ext2, p2 = [5, 6) MiB, [6, 8)
#   MiB outside the partitions (raw runs there save and restore it);
#   2. refusals and bad input, nothing switched: a mounted p1 (also for
#      the read comparison alone), a raw region over p1 or over the
#      partition table area unless named, sizes that are not sizes,
#      --offset without --size, --fs naming no partition of the card,
#      --restore of no file; file mode on a partition with no file system
#      it can check (p2's random bytes), on p2 as vfat without fsck.vfat
#      (the guest has none), on p1's ext2 without e2fsck on PATH; file
#      mode and a destroying raw run without --backup or --no-backup,
#      --no-backup on the card with an MBR and in file mode, --backup of
#      no file, both;
#   3. file mode on p1 with --backup (dd | gzip -1 of the card), the copy
#      checked against the whole-card read comparison's digests, e2fsck
#      -fn (Debian's e2fsck-static) clean before and after, the file gone
#      afterwards, progress lines; the same copy, stale once file mode
#      wrote to p1, and a truncated copy refused before anything is
#      written (JSON: "result": "refused", "phase": "backup-check");
#   4. the ext2 damaged before the run (the root directory's link count,
#      inode 2, set to 7 with dd): refused (exit 3, phase fsck-before, the
#      repair named), p1's bytes unchanged;
#   5. the test hook failing at rust-write (exit 1, JSON "result":
#      "error", its phase and message; the region unchanged, so nothing
#      was written); one data CRC error on a read (the
#      model's faults data-crc limit=1) before the Rust driver's read-back:
#      the core retries, the data match, the driver counts error_data_crc:
#      "pass-with-warnings", exit 6 (the region left as written; the
#      raw runs below restore to that);
#   6. the model's corrupt-read-byte-now (one byte of one read flipped, no
#      error) armed over QMP by the test hook just before the Rust
#      driver's read comparison and its read-back (raw mode, one run), and
#      before its read comparison in file mode: first-contact fails (exit
#      4) naming the chunk, or the bad block, the byte and both values; the
#      card itself holds the right data (the C driver's read-back passes);
#      in file mode a read comparison that differs writes nothing (p1's
#      bytes unchanged);
#   7. the model's corrupt-write-byte-now (one byte of one write flipped on
#      its way to the card, no error) armed just before the Rust driver's
#      pattern writes: exit 4, both drivers' read-backs bad and the same,
#      --restore puts the region back;
#   8. file mode, one run on one copy of the card: a read corrupted before
#      the Rust driver's read-back (exit 4, the bad block named with its
#      byte, the C driver's read-back ok), and the ext2's metadata damaged
#      after the C driver's read-back and the unmount (the same link
#      count, by the test hook at c-unmounted): e2fsck -fn finds the wrong
#      count, "fsck": "errors" in its JSON, and first-contact.dat is left
#      on the file system (not mounted writable).
# Every run's JSON: no driver error counted and no kernel warning (but the
# CRC run's), ios at HS200, 8 bits, and the dt_* fields as the guest reads
# the SDHC's node itself (found by its compatible string).
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
corrupt) "$QMP" "\$EMU_QMP" set corrupt-read-byte-now 40000 ;;
corrupt-write) "$QMP" "\$EMU_QMP" set corrupt-write-byte-now 40000 ;;
crc) "$QMP" "\$EMU_QMP" faults data-crc ppm=1000000 limit=1 dir=read ;;
stats) "$QMP" "\$EMU_QMP" stats > "$T/stats.json" ;;
esac
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -u
D=$DEV
N=${D#/dev/}
FC="first-contact --c-module $C_MOD --rust-module $RS_MOD"
# the card (zero from emu-run): [0, 4) MiB left blank, 256 random KiB at 4
# MiB (in the blank card's read comparison), 5 MiB (p2's start: no file
# system) and 6 MiB (where the raw runs write); the rest zero, which keeps
# the card's gzip'd copies and their checks short
dd if=/dev/urandom of=/tmp/pat bs=256k count=1 2>/dev/null
for i in 4 5 6; do
    dd if=/tmp/pat of=$D bs=256k count=1 seek=$((i * 4)) oflag=direct 2>/dev/null || fail "pattern write at MiB $i"
done
p1sum() { dd if=${D}p1 bs=1M iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1; }
regsum() { dd if=$D bs=1M skip=$1 count=$2 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1; }
# 0. --help: --no-backup checks only the first 4 MiB of a raw region for being blank
$FC --help | tr -s ' \n' '  ' | grep -q -- "--no-backup .* of a raw region only its first 4 MiB are checked for being blank" ||
    fail "--help does not say that --no-backup checks only a raw region's first 4 MiB"
drivers_unchanged() { [ "$(sdhc_driver)" = c ] && [ ! -d /sys/module/meson_mx_sdhc_rs ] || fail "$1: the drivers changed"; }
. /bin/first-contact-lib.sh
# the SDHC's DT node, found here by its compatible string (first-contact
# goes through the card's host): path, max-frequency, mmc-hs200-1_8v, bus-width
B=/sys/firmware/devicetree/base
node=""
for c in $(find $B -name compatible); do
    if tr '\000' '\n' < "$c" | grep -qx 'amlogic,meson-mx-sdhc'; then node=${c%/compatible}; break; fi
done
hexprop() { if [ -f "$node/$1" ]; then od -An -v -tx1 "$node/$1" | tr -d ' \n'; else echo none; fi; }
[ -n "$node" ] || fail "no node with compatible amlogic,meson-mx-sdhc under $B"
echo "@@DT ${node#$B} $(hexprop max-frequency) $([ -e "$node/mmc-hs200-1_8v" ] && echo yes || echo no) $(hexprop bus-width)"

# 1. a blank card: its first 4 MiB zero (board.rst's check), no table
cmp -n 4194304 /dev/zero $D || fail "the card's first 4 MiB are not zero"
printf x | dd of=$D bs=1 seek=2097152 conv=notrunc 2>/dev/null
expect 3 "--no-backup is for a blank card, and $D is not blank: it has no partition table Linux reads, but its first 4 MiB hold data" \
    "--no-backup on a card with data and no table" --offset 0 --size 2m --destroy-partition-table --no-backup
dd if=/dev/zero of=$D bs=4096 seek=512 count=1 oflag=direct 2>/dev/null
drivers_unchanged "not blank, no table"
blank_raw_run "raw mode on a blank card, healthy" 8388608 \
    "read comparison, Rust driver: 100 % (8.0 of 8.0 MiB) in [0-9.]* s, [0-9.]* MiB/s"
[ ! -e /tmp/fc.save ] || fail "--restore left its file"
say "ok: a blank card: raw mode with --no-backup passes, --restore puts the region back; data without a table refused"

# the card: an MBR with p1 = [1, 5) MiB (ext2), p2 = [5, 6) MiB; [6, 8) MiB free
write_mbr $D '\000\376\377\377\203\376\377\377\000\010\000\000\000\040\000\000\000\376\377\377\203\376\377\377\000\050\000\000\000\010\000\000' 2
mke2fs -q ${D}p1 > /dev/null 2>&1 || mke2fs ${D}p1 > /dev/null || fail "mke2fs"
mkdir -p /mnt/p1
FREE=$(regsum 6 2)

# 2. refusals and bad input
mount -o ro ${D}p1 /mnt/p1 || fail "mount ${D}p1"
expect 3 "${D}p1 is mounted on /mnt/p1" "mounted, raw" --offset 6m --size 2m
expect 3 "${D}p1 is mounted on /mnt/p1" "mounted, read comparison only"
drivers_unchanged "mounted"
umount /mnt/p1
expect 3 "overlaps ${D}p1 \[1048576, 5242880)" "over p1" --offset 4m --size 2m --destroy-partitions ${N}p2 --no-backup
expect 3 "the partition table area \[0, 1048576) (table: MBR" "over the MBR" --offset 0 --size 1m
expect 3 "name them: --destroy-partitions ${N}p2" "p2 not named" --offset 5m --size 1m
expect 1 "--offset: '12x' is not a size" "a bad size" --offset 12x --size 2m
expect 1 "needs both --offset and --size" "--offset alone" --offset 6m
expect 3 "file mode writes into the file system of ${N}p1, through a driver not yet trusted with this card: give --backup FILE" "file mode without --backup" --fs ${N}p1
expect 3 "this raw run writes over what --destroy-partitions.*give --backup FILE" "a destroying raw run without --backup" --offset 5m --size 1m --destroy-partitions ${N}p2
expect 3 "--no-backup is for a blank card, and $D is not blank: its first 4 MiB are not all zero (partition table: MBR).*with --backup FILE" \
    "--no-backup on a card with an MBR" --offset 5m --size 1m --destroy-partitions ${N}p2 --no-backup
expect 3 "--no-backup is for a blank card, and $D is not blank: .*with --backup FILE" "--no-backup in file mode" --fs ${N}p1 --no-backup
expect 1 "--backup: no file /tmp/none.gz" "--backup of no file" --fs ${N}p1 --backup /tmp/none.gz
expect 1 "exclude each other" "--backup with --no-backup" --fs ${N}p1 --backup /tmp/none.gz --no-backup
expect 1 "--fs: '${N}p7' is not a partition of $D" "--fs on no partition" --fs ${N}p7 --no-backup
expect 1 "exclude each other" "--fs with --offset" --fs ${N}p1 --offset 6m --size 2m
expect 1 "no file /tmp/none" "--restore of no file" --restore /tmp/none
expect 1 "belong to raw mode" "--destroy-partitions in file mode" --fs ${N}p1 --destroy-partitions ${N}p2
expect 1 "/dev/${N}p2 holds no ext2, ext3, ext4 or vfat file system" "--fs on random bytes" --fs ${N}p2 --no-backup
mkdosfs ${D}p2 > /dev/null || fail "mkdosfs ${D}p2"
expect 1 "fsck.vfat is missing (Debian: apt install dosfstools): file mode checks the vfat file system on /dev/${N}p2" "--fs on vfat, no fsck.vfat" --fs ${N}p2 --no-backup
rc=0
PATH=/bin $FC --fs ${N}p1 --no-backup > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 1 ] && grep -q "e2fsck is missing (Debian: apt install e2fsprogs): file mode checks the ext file system on /dev/${N}p1" /tmp/e ||
    { cat /tmp/o /tmp/e; fail "--fs on ext2 without e2fsck: exit $rc"; }
drivers_unchanged "refusals"
say "ok: refusals and bad input, nothing switched"

# 3. file mode, healthy: the owner's copy of the whole card (board.rst,
# step 2), checked against the whole-card read comparison before the first write
dd if=$D bs=1M iflag=direct 2>/dev/null | gzip -1 > /tmp/card.gz || fail "the card's copy"
rc=0
$FC --fs ${N}p1 --file-size 2m --backup /tmp/card.gz --json /tmp/file.json > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e /tmp/o
[ $rc = 0 ] || fail "file mode, healthy: exit $rc"
grep -q '^first-contact: PASS (file mode)' /tmp/o || fail "file mode: no PASS line"
grep -q "the backup is the card, byte for byte" /tmp/e || fail "file mode: the backup not checked"
grep -q "the backup decompressed: 100 % (8.0 of 8.0 MiB) in [0-9.]* s, [0-9.]* MiB/s" /tmp/e || fail "file mode: no progress of the backup's check"
grep -q "read comparison, C driver: [1-9][0-9] % ([0-9.]* of 8.0 MiB) in [0-9.]* s, [0-9.]* MiB/s" /tmp/e || fail "file mode: no progress line on the way"
grep -q "file system check, before the first write: clean" /tmp/e || fail "file mode: no check before the first write"
! grep -q "reading the whole card through the C driver for the backup" /tmp/e || fail "file mode: the whole card read again for the backup"
echo "@@JSON file $(tr -d '\n' < /tmp/file.json)"
mount -o ro ${D}p1 /mnt/p1 || fail "mount ${D}p1 after file mode"
[ ! -e /mnt/p1/first-contact.dat ] || fail "file mode left first-contact.dat"
umount /mnt/p1
drivers_unchanged "file mode"
say "ok: file mode passes, its file removed"

# the copy no longer the card (file mode wrote to p1), a short copy: refused before any write
rc=0
$FC --fs ${N}p1 --file-size 1m --read-size 0 --backup /tmp/card.gz --json /tmp/stale.json > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 3 ] && grep -q "the backup /tmp/card.gz is not the card as the C driver reads it now: [0-9]* chunks of 1 MiB differ, the first at byte 1048576" /tmp/e ||
    { cat /tmp/o /tmp/e; fail "a stale backup: exit $rc"; }
echo "@@JSON stale $(tr -d '\n' < /tmp/stale.json)"
head -c 100000 /tmp/card.gz > /tmp/short.gz
expect 3 "the backup /tmp/short.gz decompresses to fewer bytes than the card's 8388608 (it ends in the chunk at byte [0-9]*) (gzip: " "a short backup" --fs ${N}p1 --read-size 0 --backup /tmp/short.gz
rm -f /tmp/short.gz
mount -o ro ${D}p1 /mnt/p1 || fail "mount ${D}p1 after the refused backups"
[ ! -e /mnt/p1/first-contact.dat ] || fail "a refused backup: first-contact.dat written"
umount /mnt/p1
drivers_unchanged "refused backups"
say "ok: a stale and a short backup refused before anything is written"

# 4. the file system not clean before the run: refused before anything is written
cat > /tmp/damage <<'H'
#!/bin/sh
# the root directory's link count (inode 2's i_links_count) set to 7 on the
# unmounted ext2 of $FC_PART, through the C driver
P=$FC_PART
le() { dd if=$P bs=1 skip=$1 count=$2 2>/dev/null | od -An -tu$2 | tr -d ' \n'; }
bs=$((1024 << $(le 1048 4)))            # s_log_block_size (superblock at 1024)
fdb=$(le 1044 4)                        # s_first_data_block
isz=$(le 1112 2)                        # s_inode_size
itab=$(le $(((fdb + 1) * bs + 8)) 4)    # group 0's bg_inode_table
off=$((itab * bs + isz + 26))           # inode 2 (the second), i_links_count
echo "damage: the root inode's link count $(le $off 2) at byte $off of $P set to 7"
printf '\007\000' | dd of=$P bs=1 seek=$off conv=notrunc 2>/dev/null
sync
[ "$(le $off 2)" = 7 ] || { echo "damage: the link count did not change"; exit 1; }
H
chmod +x /tmp/damage
FC_PART=${D}p1 /tmp/damage || fail "damaging p1"
echo 3 > /proc/sys/vm/drop_caches
P1=$(p1sum)
rc=0
$FC --fs ${N}p1 --file-size 1m --read-size 0 --backup /tmp/card.gz --json /tmp/fsck-before.json > /tmp/o 2> /tmp/e || rc=$?
sed 's/WARNING:/Warning:/' /tmp/e /tmp/o
[ $rc = 3 ] || fail "a file system with errors before the run: exit $rc, expected 3"
grep -q "refusing to run: the file system on ${D}p1 is not clean before the first write (e2fsck -fn ${D}p1 through the C driver: errors, status 4: .*Inode 2 ref count is 7.*Repair it through the C driver first (e2fsck -f ${D}p1), then run first-contact again; the Rust driver has not written anything" /tmp/e ||
    fail "a file system with errors before the run: not refused with the repair named"
echo 3 > /proc/sys/vm/drop_caches
[ "$(p1sum)" = "$P1" ] || fail "a file system with errors before the run: p1 changed"
echo "@@JSON fsck-before $(tr -d '\n' < /tmp/fsck-before.json)"
drivers_unchanged "a file system with errors before the run"
e2fsck -fy ${D}p1 > /dev/null 2>&1 || true
e2fsck -fn ${D}p1 > /dev/null 2>&1 || fail "p1 not clean after e2fsck -fy"
rm -f /tmp/card.gz
say "ok: a file system with errors before the run refused (exit 3), nothing written"

# 5. an error once the run began (the test hook fails at rust-write): the JSON says error, where and why
cat > /tmp/hook-fail <<'H'
#!/bin/sh
[ "$1" != rust-write ] || exit 1
H
chmod +x /tmp/hook-fail
rc=0
MESON_SDHC_TEST_HOOKS=1 FIRST_CONTACT_HOOK=/tmp/hook-fail $FC --offset 6m --size 2m --read-size 0 --save /tmp/fc-e.save --json /tmp/error.json > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 1 ] && grep -q "the test hook failed at rust-write" /tmp/e || { cat /tmp/o /tmp/e; fail "an error after the start: exit $rc"; }
echo "@@JSON error $(tr -d '\n' < /tmp/error.json)"
drivers_unchanged "an error after the start"
# the hook failed before the first write: the region is as it was, no --restore needed
[ "$(regsum 6 2)" = "$FREE" ] || fail "an error before the first write: [6, 8) MiB changed"
rm -f /tmp/fc-e.save
say "ok: an error after the start writes a JSON with result error, its phase and message, and nothing was written"
# one data CRC error on a read under the Rust driver, retried by the core: the data match,
# the driver's counters say it: pass-with-warnings, exit 6
cat > /tmp/hook-crc <<'H'
#!/bin/sh
. /bin/emu-lib.sh
[ "$1" != rust-verify ] || host_sync crc > /dev/console
H
chmod +x /tmp/hook-crc
rc=0
MESON_SDHC_TEST_HOOKS=1 FIRST_CONTACT_HOOK=/tmp/hook-crc $FC --offset 6m --size 2m --read-size 0 --save /tmp/fc-w.save --json /tmp/warn.json > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e /tmp/o
[ $rc = 6 ] || fail "a recovered CRC error: exit $rc, expected 6"
grep -q '^first-contact: PASS-WITH-WARNINGS (raw mode)' /tmp/o || fail "a recovered CRC error: no PASS-WITH-WARNINGS line"
grep -q "the Rust driver's error counters: [1-9][0-9]* (.*error_data_crc [1-9]" /tmp/o || fail "a recovered CRC error: not counted"
echo "@@JSON warn $(tr -d '\n' < /tmp/warn.json)"
drivers_unchanged "a recovered CRC error"
# left as the run wrote it (its save removed): the runs below save and restore this
rm -f /tmp/fc-w.save
WRITTEN=$(regsum 6 2)
[ "$WRITTEN" != "$FREE" ] || fail "a recovered CRC error: [6, 8) MiB did not change"
say "ok: a recovered CRC error under the Rust driver: pass-with-warnings (exit 6)"

# 6. one byte of one read corrupted under the Rust driver
cat > /tmp/hook <<'H'
#!/bin/sh
. /bin/emu-lib.sh
case " $FC_ARM " in *" $1 "*) host_sync "${FC_TAG:-corrupt}" > /dev/console ;; esac
H
chmod +x /tmp/hook
bad() { # LABEL PHASES ARGS...: first-contact with the fault armed before each of PHASES
    lab=$1 arm=$2 js=/tmp/$1.json; shift 2
    rc=0
    MESON_SDHC_TEST_HOOKS=1 FIRST_CONTACT_HOOK=/tmp/hook FC_ARM=$arm $FC "$@" --json "$js" > /tmp/o 2> /tmp/e || rc=$?
    cat /tmp/e /tmp/o
    [ $rc = 4 ] || fail "corrupted before $arm ($*): exit $rc, expected 4"
    grep -q '^first-contact: FAIL' /tmp/o || fail "corrupted before $arm: no FAIL line"
    echo "@@JSON $lab $(tr -d '\n' < "$js")"
    drivers_unchanged "corrupted before $arm"
}
# the read comparison and raw mode's read-back in one run: a read corrupted before each
bad raw-bad "rust-read rust-verify" --offset 6m --size 2m --read-offset 4m --read-size 2m --save /tmp/fc.save
grep -q "MISMATCH: the read comparison (the Rust driver's read against the C driver's): the chunk at byte 4194304 differs" /tmp/e ||
    fail "read comparison, corrupted: the chunk is not named"
grep -q "MISMATCH: the Rust driver's read-back: the 65024-byte block at card byte [0-9]*: byte [0-9]* (byte 40000 of the block): written 0x\(..\), read 0x" /tmp/e ||
    fail "raw mode, corrupted: the mismatch is not named with its byte"
grep -q "read back: Rust driver bad, C driver ok" /tmp/o || fail "raw mode, corrupted: the C driver's read-back did not pass"
expect 0 "restored" "--restore after the corrupted run" --restore /tmp/fc.save
[ "$(regsum 6 2)" = "$WRITTEN" ] || fail "--restore after the corrupted run: [6, 8) MiB is not as it was"
# file mode: a copy of the card as it is now
dd if=$D bs=1M iflag=direct 2>/dev/null | gzip -1 > /tmp/card.gz || fail "the card's copy"
# the read comparison differs in file mode: nothing is written through the Rust driver
before=$(p1sum)
bad file-readbad rust-read --fs ${N}p1 --file-size 2m --backup /tmp/card.gz --read-offset 0 --read-size 2m
grep -q "nothing is written through it" /tmp/e || fail "file mode, the read comparison differs: no word that nothing is written"
! grep -q "^  patterns:" /tmp/o || fail "file mode, the read comparison differs: patterns were written"
[ "$(p1sum)" = "$before" ] || fail "file mode, the read comparison differs: the partition changed"
# 7. one byte of one write corrupted on its way to the card under the Rust driver
export FC_TAG=corrupt-write
bad write-bad rust-write --offset 6m --size 2m --read-size 0 --save /tmp/fc2.save
unset FC_TAG
grep -q "read back: Rust driver bad, C driver bad; the two reads same" /tmp/o ||
    fail "raw mode, a corrupted write: not both read-backs bad with the same data"
expect 0 "restored" "--restore after the corrupted write" --restore /tmp/fc2.save
[ "$(regsum 6 2)" = "$WRITTEN" ] || fail "--restore after the corrupted write: [6, 8) MiB is not as it was"
say "ok: one corrupted byte fails raw mode and the read comparison in both modes, and a corrupted write"

# 8. file mode, on the copy of the card above (the run with the read comparison that
# differed wrote nothing): a read corrupted before the Rust driver's read-back, and the
# file system's metadata damaged between the C driver's read-back and the check
cat > /tmp/hook-both <<'H'
#!/bin/sh
. /bin/emu-lib.sh
case "$1" in
rust-verify) host_sync corrupt > /dev/console ;;
c-unmounted) /tmp/damage ;;
esac
H
chmod +x /tmp/hook-both
rc=0
MESON_SDHC_TEST_HOOKS=1 FIRST_CONTACT_HOOK=/tmp/hook-both FC_PART=${D}p1 $FC --fs ${N}p1 --file-size 2m --backup /tmp/card.gz --read-size 0 --json /tmp/file-bad.json > /tmp/o 2> /tmp/e || rc=$?
# e2fsck's "WARNING: Filesystem still has errors" shown as "Warning:" here:
# emu-run takes a "WARNING:" on the console for a kernel report
sed 's/WARNING:/Warning:/' /tmp/e /tmp/o
[ $rc = 4 ] || fail "file mode, a corrupted read-back and metadata damaged: exit $rc, expected 4"
grep -q '^first-contact: FAIL (file mode)' /tmp/o || fail "file mode, corrupted: no FAIL line"
grep -q "MISMATCH: the Rust driver's read-back: the 65024-byte block at file offset [0-9]*: byte [0-9]* (byte 40000 of the block)" /tmp/e ||
    fail "file mode, corrupted: the mismatch is not named with its byte"
grep -q "read back: Rust driver bad, C driver ok" /tmp/o || fail "file mode, corrupted: the C driver's read-back did not pass"
grep -q "e2fsck: .*WARNING: Filesystem still has errors" /tmp/e || fail "metadata damaged: e2fsck's output not shown"
grep -q "file system check: e2fsck -fn ${D}p1 through the C driver, unmounted: errors (status 4)" /tmp/o ||
    fail "metadata damaged: the summary has no fsck errors"
grep -q "e2fsck: Inode 2 ref count is 7, should be" /tmp/e || fail "metadata damaged: e2fsck's finding not shown"
grep -q "first-contact.dat is left on ${D}p1" /tmp/e || fail "metadata damaged: not said that the file is left"
echo "@@JSON file-bad $(tr -d '\n' < /tmp/file-bad.json)"
drivers_unchanged "metadata damaged"
mount -o ro ${D}p1 /mnt/p1 || fail "mount ${D}p1 after the damaged run"
[ -e /mnt/p1/first-contact.dat ] || fail "metadata damaged: first-contact.dat was removed"
umount /mnt/p1
say "ok: file mode: a corrupted read-back fails (exit 4); metadata damaged after the read-backs found (fsck errors), the file left"
host_sync stats
G
)
emu --card emmc --size 8 --driver c --timeout 600 --host-script "$T/host.sh" "$g"
grep -E '^\[guest\]' "$T/serial.log" || true
log_checks "$T/serial.log" "$T/stats.json" <<'P'
import json, re, sys
from board_log import markers, need, done
js, dt = markers(sys.argv[1], r"(\S+) (\S+) (yes|no) (\S+)")
need(set(js) == {"raw", "file", "stale", "fsck-before", "error", "warn", "raw-bad", "file-readbad", "file-bad", "write-bad"},
     "JSON of the ten runs: %s" % sorted(js))
for k, d in js.items():
    for f in ("result", "mode", "phase", "message", "bytes_compared", "mismatches", "c_driver_version", "rust_driver_version",
              "max_req_size", "backup", "ios", "stats", "kernel_log", "fsck_before", "fsck", "fsck_command", "fsck_status",
              "fsck_summary", "dt_node", "dt_max_frequency", "dt_hs200_1_8v", "dt_bus_width"):
        need(f in d, "%s: has %s" % (k, f))
# the device tree the run had, as the guest reads it itself (the node found by its compatible string)
need(dt is not None, "the guest's reading of the SDHC's DT node: %s" % (dt,))
if dt:
    want = {"dt_node": dt[0], "dt_max_frequency": None if dt[1] == "none" else int(dt[1], 16),
            "dt_hs200_1_8v": dt[2] == "yes", "dt_bus_width": None if dt[3] == "none" else int(dt[3], 16)}
    need(want["dt_node"].startswith("/") and want["dt_max_frequency"] and want["dt_bus_width"], "the DT node has max-frequency and bus-width: %s" % want)
    for k, d in js.items():
        got = {f: d.get(f) for f in want}
        need(got == want, "%s: the DT node and its properties: %s" % (k, got))
for k in ("raw", "file", "raw-bad", "file-readbad", "file-bad", "write-bad"):
    d = js[k]
    need(d["stats"]["from"] == "debugfs" and d["stats"]["errors"] == 0 and d["kernel_log"]["warnings"] == 0,
         "%s: no driver error counted, no kernel warning: %s, %s" % (k, d["stats"], d["kernel_log"]))
    need(d["ios"] and d["ios"]["timing"] == "mmc HS200" and d["ios"]["bus_width"] == 8 and d["ios"]["clock_hz"] > 0,
         "%s: ios under the Rust driver: %s" % (k, d["ios"]))
    need(d["phase"] is None and d["message"] is None, "%s: no phase, no message" % k)
copy = {"file": "card.gz", "verified": "same-as-card"}
for k, b in (("raw", "none (--no-backup)"), ("raw-bad", None), ("write-bad", None), ("file-readbad", copy), ("file-bad", copy)):
    need(js[k]["backup"] == b, "%s: backup %s" % (k, js[k]["backup"]))
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
need(r["fsck"] == "not-run" and r["fsck_before"] == "not-run" and r["fsck_command"] is None and r["fsck_status"] is None,
     "raw: fsck not-run")
f = js["file"]
need(f["backup"] == copy, "file: the backup checked: %s" % f["backup"])
need(f["read_compare"]["size"] == 8 << 20 and f["read_compare"]["result"] == "same", "file: the whole card compared, same")
s = js["stale"]
need(s["result"] == "refused" and s["phase"] == "backup-check" and "is not the card as the C driver reads it now" in (s["message"] or "")
     and s["backup"] == {"file": "card.gz", "verified": "not-yet"} and s["patterns"]["rust_read_back"] == "skipped",
     "stale: refused at backup-check, nothing written: %s" % s["message"])
fb = js["fsck-before"]
need(fb["result"] == "refused" and fb["phase"] == "fsck-before" and fb["fsck_before"] == "errors" and fb["fsck"] == "not-run"
     and "not clean before the first write" in (fb["message"] or "") and "the Rust driver has not written anything" in (fb["message"] or "")
     and fb["patterns"]["rust_read_back"] == "skipped" and fb["bytes_compared"] == 0,
     "fsck-before: refused before the first write, fsck_before errors: %s" % fb["message"])
e = js["error"]
need(e["result"] == "error" and e["phase"] == "rust-write" and e["message"] == "the test hook failed at rust-write"
     and e["max_req_size"] == 131072, "error: result error at rust-write, its message: %s, %s" % (e["phase"], e["message"]))
w = js["warn"]
need(w["result"] == "pass-with-warnings" and w["mismatches"] == 0 and w["patterns"]["reads_compared"] == "same"
     and w["stats"]["errors"] >= 1 and w["stats"]["counters"].get("error_data_crc", 0) >= 1,
     "warn: pass-with-warnings, the CRC error counted: %s, kernel log %s" % (w["stats"], w["kernel_log"]))
need(f["result"] == "pass" and f["mode"] == "file" and f["patterns"]["file_system"].endswith("p1"), "file: pass, on p1")
need(f["fsck_before"] == "clean", "file: the file system clean before the first write")
need(f["fsck"] == "clean" and f["fsck_status"] == 0 and re.fullmatch(r"e2fsck -fn /dev/mmcblk\d+p1", f["fsck_command"] or "")
     and re.search(r"\d+/\d+ files .*\d+/\d+ blocks", f["fsck_summary"] or ""),
     "file: fsck clean: %s, status %s: %s" % (f["fsck_command"], f["fsck_status"], f["fsck_summary"]))
b = js["file-bad"]
need(b["patterns"]["rust_read_back"] == "bad" and b["patterns"]["c_read_back"] == "ok",
     "file-bad: the Rust driver's read-back bad, the C driver's ok: %s" % b["patterns"])
need(b["fsck_before"] == "clean" and b["fsck"] == "errors" and b["fsck_status"] == 4 and "Inode 2 ref count is 7" in (b["fsck_summary"] or ""),
     "file-bad: clean before, fsck errors after, status 4: %s" % b["fsck_summary"])
need(js["raw-bad"]["read_compare"]["result"] == "differ" and js["raw-bad"]["patterns"]["rust_read_back"] == "bad"
     and js["raw-bad"]["patterns"]["c_read_back"] == "ok" and js["raw-bad"]["mismatches"] >= 2,
     "raw-bad: the read comparison and the Rust driver's read-back both caught: %s" % js["raw-bad"]["first_mismatch"])
fr = js["file-readbad"]
need(fr["read_compare"]["result"] == "differ" and fr["patterns"]["rust_read_back"] == "skipped"
     and fr["patterns"]["c_read_back"] == "skipped" and fr["fsck"] == "not-run",
     "file-readbad: the read comparison differs, nothing written, no check after: %s" % fr["patterns"])
for k in ("raw-bad", "file-readbad", "file-bad", "write-bad"):
    need(js[k]["result"] == "fail" and js[k]["mismatches"] >= 1 and js[k]["first_mismatch"], "%s: fail, the mismatch named" % k)
st = json.load(open(sys.argv[2]))
need(st.get("corrupted_reads") == 4, "the model corrupted 4 reads: %s" % st.get("corrupted_reads"))
need(st.get("corrupted_writes") == 1, "the model corrupted 1 write: %s" % st.get("corrupted_writes"))
done()
P
