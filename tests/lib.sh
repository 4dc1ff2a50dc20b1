# Helpers for host-side tests (sourced by tests/board/*.sh).
# shellcheck shell=bash
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EMU="$TOP/scripts/emu-run"
QMP="$TOP/scripts/qmp"
T=$(mktemp -d "${TMPDIR:-/tmp}/mmc-test.XXXXXX")
trap 'rm -rf "$T"' EXIT

# guest NAME: write the guest script from stdin to $T/NAME.sh and print its path
guest() {
    { echo '. /bin/emu-lib.sh'; cat; } > "$T/$1.sh"
    echo "$T/$1.sh"
}

# emu ARGS...: run the board quietly; the serial log of the last run is
# $T/serial.log, and every run's log is kept in build/test-logs/.
LOGDIR="${TEST_LOGDIR:-$TOP/build/test-logs}"
mkdir -p "$LOGDIR"
EMU_RUNS=0
emu() {
    EMU_RUNS=$((EMU_RUNS + 1))
    local keep="$LOGDIR/${TEST_NAME:-$(basename "$0" .sh)}.run$EMU_RUNS.serial.log"
    local rc=0
    "$EMU" --quiet --log "$T/serial.log" "$@" || rc=$?
    cp "$T/serial.log" "$keep" 2>/dev/null || true
    return $rc
}

check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then echo "  ok: $1"; else echo "  FAILED: $1"; return 1; fi
}

# log_checks ARGS...: runs the Python checks on stdin (python3 - ARGS...) with
# tests/board_log.py importable (markers, need, done: the serial log's @@JSON and
# @@DT lines, each check printed, the exit status)
log_checks() {
    PYTHONPATH="$TOP/tests" python3 -B - "$@"
}

# fault_host: write $T/host.sh, a --host-script for `host_sync` in the guest:
# "arm,KIND,opt=val,..." arms faults over QMP (scripts/qmp faults KIND opt=val ...),
# "stats" saves the model's counters to $T/stats.json.
fault_host() {
    cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm,*) IFS=, read -r -a a <<< "\$1"; "$QMP" "\$EMU_QMP" faults "\${a[@]:1}" ;;
stats) "$QMP" "\$EMU_QMP" stats > "$T/stats.json" ;;
esac
HOST
    chmod +x "$T/host.sh"
}

# sd_slot_host_script FAULT: $T/host.sh for the SD card slot's tests: one-read (one FAULT
# on a read), every-read (FAULT on every read), clear, lost-irq and lost-done (a lost
# interrupt and the soft reset after it), count-N (at least N faults injected),
# data-timeout-irq-0|1 (the model's reading of a data phase the card does not complete),
# hung-N (at least N commands left without CMD_INT), eject (the card out of the slot),
# insert-NAME (the card with the image $T/NAME.img into the slot)
sd_slot_host_script() {
    cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
one-read) "$QMP" "\$EMU_QMP" sdio-faults data-crc count=1 dir=read ;;
every-read) "$QMP" "\$EMU_QMP" sdio-faults $1 count=0 dir=read ;;
clear) "$QMP" "\$EMU_QMP" sdio-faults none ;;
lost-irq) "$QMP" "\$EMU_QMP" sdio get soft-resets > "$T/resets"
          "$QMP" "\$EMU_QMP" sdio-faults lost-irq count=1 dir=cmd ;;
lost-done) k=\$("$QMP" "\$EMU_QMP" sdio get fault-kind)
           [ "\$k" = none ] || { echo "host: the lost interrupt was not injected (\$k armed)"; exit 1; }
           n=\$("$QMP" "\$EMU_QMP" sdio get soft-resets)
           [ "\$n" -gt "\$(cat "$T/resets")" ] || { echo "host: no soft reset after the lost interrupt"; exit 1; } ;;
count-*) n=\$("$QMP" "\$EMU_QMP" sdio get faults-injected)
         [ "\$n" -ge "\${1#count-}" ] || { echo "host: faults-injected \$n < \${1#count-}"; exit 1; } ;;
data-timeout-irq-*) "$QMP" "\$EMU_QMP" sdio set data-timeout-irq "\${1#data-timeout-irq-}" ;;
hung-*) n=\$("$QMP" "\$EMU_QMP" sdio get hung-commands)
        [ "\$n" -ge "\${1#hung-}" ] || { echo "host: hung-commands \$n < \${1#hung-}"; exit 1; } ;;
eject) "$QMP" "\$EMU_QMP" sd-slot eject ;;
insert-*) "$QMP" "\$EMU_QMP" sd-slot insert "$T/\${1#insert-}.img" ;;
esac
HOST
    chmod +x "$T/host.sh"
}

# sd_slot_fs_test c|rust: ext4 on the SD card slot's card, and a card swapped under the
# mounted file system, on the in-tree C driver (meson-mx-sdio) or the Rust one
# (meson_mx_sdio_rs); the board's slot says broken-cd, so the MMC core finds a card gone
# or come by polling it once a second.  On the host: card A (64 MiB) and card B (32 MiB,
# files of known checksums) made with mkfs.ext4.  In the guest: on card A, files written
# through the file system, sync, umount, e2fsck -fn clean, mounted again and every file's
# checksum verified; then, with A mounted, A taken out over QMP: its disk goes, reads and
# an fsync on the old mount fail; B put in: a new disk of B's size, B's files verified
# against the host's checksums; the old mount unmounted; B taken out and A put back: A's
# disk passes e2fsck -fn and every file of A is intact, the write made while it was out
# is not on it.  The kernel log is checked by scripts/emu-run (no WARNING, BUG, Oops).
sd_slot_fs_test() {
    local mod
    case "$1" in
    c) mod=meson-mx-sdio.ko ;;
    rust) mod=meson_mx_sdio_rs.ko ;;
    *) echo "sd_slot_fs_test: c or rust, not '$1'"; return 2 ;;
    esac
    local mkfs=(mkfs.ext4 -q -F -E "lazy_itable_init=0,lazy_journal_init=0")
    truncate -s 64M "$T/a.img"
    "${mkfs[@]}" -L card-a "$T/a.img"
    mkdir -p "$T/b/dir"
    head -c 3000000 /dev/urandom > "$T/b/big"
    head -c 4097 /dev/urandom > "$T/b/odd"
    local i
    for i in 1 2 3 4 5 6 7 8; do head -c $((i * 1000)) /dev/urandom > "$T/b/dir/s$i"; done
    truncate -s 32M "$T/b.img"
    "${mkfs[@]}" -L card-b -d "$T/b" "$T/b.img"
    (cd "$T/b" && md5sum big odd dir/*) > "$T/b.md5"
    sd_slot_host_script data-crc
    local g
    g=$( { echo "MOD=$mod"; echo "B_MD5='$(cat "$T/b.md5")'"; cat; } <<'G' | guest t
set -e
insmod /lib/modules/$MOD
# wait_slot SECTORS WHAT: the card in the slot has a disk of SECTORS sectors ($SD)
wait_slot() {
  local w=0
  until SD=$(slot_disk) && [ -b "$SD" ] && [ "$(cat /sys/block/${SD#/dev/}/size)" = "$1" ]; do
    w=$((w + 1)); [ $w -lt 1200 ] || fail "no disk of $1 sectors in the SD slot after 120 s ($2)"
    usleep 100000
  done
}
# wait_gone WHAT: the slot's disk is gone
wait_gone() {
  local w=0
  while slot_disk > /dev/null; do
    w=$((w + 1)); [ $w -lt 1200 ] || fail "the SD slot's disk still there 120 s after $1"
    usleep 100000
  done
}
mounted() { grep -q " $1 " /proc/mounts; }
wait_slot 131072 "card A at boot"
say "card A: $SD, $(cat /sys/block/${SD#/dev/}/size) sectors, driver $(basename "$(readlink /sys/bus/platform/devices/c1108c20.mmc/driver)")"
e2fsck -fn "$SD" > /tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; fail "e2fsck -fn of card A's new file system"; }

# ext4 on card A: files through the file system, sync, umount, e2fsck, mount, verify
mkdir -p /mnt/a /mnt/b /tmp/src/dir
dd if=/dev/urandom of=/tmp/src/big bs=64k count=64 2>/dev/null
dd if=/dev/urandom of=/tmp/src/odd bs=1000 count=1037 2>/dev/null
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
  dd if=/dev/urandom of=/tmp/src/dir/s$i bs=$((i * 517)) count=1 2>/dev/null
done
(cd /tmp/src && md5sum big odd dir/*) > /tmp/a.md5
mount -t ext4 "$SD" /mnt/a || fail "mount card A"
cp -r /tmp/src/. /mnt/a/
sync
umount /mnt/a
e2fsck -fn "$SD" > /tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; fail "e2fsck -fn of card A after the files were written"; }
say "card A: $(wc -l < /tmp/a.md5) files written, synced, unmounted; e2fsck -fn clean: $(tail -1 /tmp/fsck.out)"
mount -t ext4 -o noatime "$SD" /mnt/a || fail "mount card A again"
(cd /mnt/a && md5sum -c /tmp/a.md5) > /tmp/md5.out 2>&1 || { cat /tmp/md5.out; fail "card A's files differ after the remount"; }
say "card A mounted again: every file's checksum verified"

# card A out with its file system mounted
t0=$(date +%s)
host_sync eject
wait_gone "card A was taken out"
say "card A out: its disk gone after $(( $(date +%s) - t0 )) s"
mounted /mnt/a || fail "the old mount went away by itself"
echo 3 > /proc/sys/vm/drop_caches
if cat /mnt/a/big > /dev/null 2>&1; then fail "a read on the old mount succeeded with the card out"; fi
if dd if=/dev/zero of=/mnt/a/new bs=4k count=8 conv=fsync 2>/dev/null; then
  fail "a write + fsync on the old mount succeeded with the card out"
fi
say "the old mount: the read and the write + fsync failed"

# card B in: a new disk with B's files
echo "$B_MD5" > /tmp/b.md5
host_sync insert-b
wait_slot 65536 "card B was put in"
mounted /mnt/a || fail "the old mount went away when card B came"
say "card B in: $SD, $(cat /sys/block/${SD#/dev/}/size) sectors, card A's old mount still there"
# The new card's disk has the old one's name (mmcblkN: the host's index), and ext4
# names its /sys/fs/ext4 entry after the disk: B mounts only once A's old mount is gone
# (else sysfs warns of a duplicate name and the mount fails with EEXIST).
umount /mnt/a || umount /mnt/a || true
! mounted /mnt/a || fail "the old mount of card A could not be unmounted"
say "the old mount of card A unmounted"
mount -t ext4 -o ro "$SD" /mnt/b || fail "mount card B"
(cd /mnt/b && md5sum -c /tmp/b.md5) > /tmp/md5.out 2>&1 || { cat /tmp/md5.out; fail "card B's files differ from the host's"; }
[ ! -e /mnt/b/big ] || [ ! -e /mnt/b/dir/s16 ] || fail "card B shows card A's files"
umount /mnt/b
say "card B: its $(wc -l < /tmp/b.md5) files match the host's checksums"

# card B out, card A back: intact
host_sync eject
wait_gone "card B was taken out"
host_sync insert-a
wait_slot 131072 "card A was put back"
e2fsck -fn "$SD" > /tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; fail "e2fsck -fn of card A put back"; }
mount -t ext4 -o ro "$SD" /mnt/a || fail "mount card A put back"
(cd /mnt/a && md5sum -c /tmp/a.md5) > /tmp/md5.out 2>&1 || { cat /tmp/md5.out; fail "card A's files differ after the swap"; }
[ ! -e /mnt/a/new ] || fail "card A has the file written while it was out"
umount /mnt/a
say "card A back: e2fsck -fn clean ($(tail -1 /tmp/fsck.out)), every file intact, nothing of the write made while it was out"
dmesg | grep -E 'mmc[0-9]|mmcblk|EXT4-fs' | tail -12
G
)
    emu --board odroidc1 --driver none --sd-slot "$T/a.img" --host-script "$T/host.sh" "$g"
}
