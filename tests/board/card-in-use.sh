#!/usr/bin/env bash
# switch-driver never unbinds a card in use, and bench-board refuses the same
# card through the same check (switch-driver users).  One boot, C driver, a
# 32 MiB eMMC with two partitions; switch-driver rust must refuse (exit 3,
# the controller left with the C driver) naming the user, for:
#   1. p1 mounted (ext2, on /mnt/p1);
#   2. p2 as swap: swapon when the kernel has swap (/proc/swaps), else a
#      swaps file the check is pointed at (SWITCH_DRIVER_SWAPS): the test
#      kernel is built without CONFIG_SWAP;
#   3. a device-mapper holder of p2 and an md holder of the disk: a copy of
#      the card's /sys/class/block entries with holders/dm-0 (dm/name) and
#      holders/md0 (SWITCH_DRIVER_CLASS_BLOCK): the test kernel has no
#      CONFIG_BLK_DEV_DM or CONFIG_MD;
#   4. p1 as the root mounted by the kernel itself, /dev/root in mountinfo,
#      found by its device number (a mountinfo file, SWITCH_DRIVER_MOUNTINFO);
#      bench-board --dry-run is refused (exit 3) with the same line;
# then --force does not override 4. (the root file system) but overrides
# the same mount on /mnt/x (a mountinfo file, nothing really mounted), and
# with nothing in use the switch to Rust and back goes through.  Last,
# switch-driver reload bounce_size=65536: refused (exit 3, naming the
# mount; the controller and the module left alone) while p1 is mounted,
# done when it is not (the Rust driver holds the card, debugfs limits says
# bounce_size: 65536), and an invalid value puts the module back at its
# defaults (exit 1, bounce_size: 131072).
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -u
# switch-driver and bench-board take the files below only from a test
export MESON_SDHC_TEST_HOOKS=1
insmod $RS_MOD || fail "insmod"
D=$DEV
N=${D#/dev/}
say "the card: $D"
# an MBR: p1 = [1 MiB, 9 MiB), p2 = [9 MiB, 17 MiB), both type 83
write_mbr $D '\000\376\377\377\203\376\377\377\000\010\000\000\000\100\000\000\000\376\377\377\203\376\377\377\000\110\000\000\000\100\000\000' 2

# refused WHAT PATTERN [ENV=VALUE...]: switch-driver rust must exit 3 with a
# line matching PATTERN and leave the controller to the C driver
refused() {
    what=$1 pat=$2; shift 2
    rc=0
    env "$@" switch-driver rust > /tmp/o 2> /tmp/e || rc=$?
    sed 's/^/    /' /tmp/e
    [ $rc = 3 ] || fail "$what: switch-driver rust exit status $rc, expected 3 (refused)"
    grep -q "$pat" /tmp/e || fail "$what: the refusal does not name '$pat'"
    [ "$(sdhc_driver)" = c ] || fail "$what: the controller changed hands"
    say "ok: $what: refused"
}

# 1. a mounted partition
mke2fs -q ${D}p1 > /dev/null 2>&1 || mke2fs ${D}p1 > /dev/null || fail "mke2fs"
mkdir -p /mnt/p1
mount -t ext4 ${D}p1 /mnt/p1 || mount ${D}p1 /mnt/p1 || fail "mount ${D}p1"
refused "p1 mounted" "^switch-driver:   ${D}p1 is mounted on /mnt/p1\$"
[ "$(switch-driver users)" = "${D}p1 is mounted on /mnt/p1" ] || fail "switch-driver users: '$(switch-driver users)'"
umount /mnt/p1 || fail "umount"

# 2. swap
if [ -e /proc/swaps ]; then
    mkswap ${D}p2 > /dev/null && swapon ${D}p2 || fail "swapon ${D}p2"
    refused "p2 swap (swapon)" "${D}p2 is in use as swap"
    swapoff ${D}p2 || fail "swapoff"
else
    say "no /proc/swaps (kernel without CONFIG_SWAP): p2 as swap through a swaps file"
    printf 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n%s\tpartition\t8188\t\t0\t\t-2\n' "${D}p2" > /tmp/swaps
    refused "p2 swap (swaps file)" "${D}p2 is in use as swap" SWITCH_DRIVER_SWAPS=/tmp/swaps
fi

# 3. device-mapper and md holders (a copy of the card's sysfs block entries)
F=/tmp/class-block
for b in $N ${N}p1 ${N}p2; do
    mkdir -p $F/$b/holders
    cp /sys/class/block/$b/dev $F/$b/dev
done
[ -z "$(ls /sys/class/block/${N}p2/holders)" ] || fail "p2 has real holders already"
mkdir -p $F/${N}p2/holders/dm-0/dm
echo vg0-data > $F/${N}p2/holders/dm-0/dm/name
refused "p2 held by dm-linear" "${D}p2 is held by dm-0 (device mapper: vg0-data)" SWITCH_DRIVER_CLASS_BLOCK=$F
rm -r $F/${N}p2/holders/dm-0
mkdir $F/$N/holders/md0
refused "the disk held by md" "$D is held by md0 (md)" SWITCH_DRIVER_CLASS_BLOCK=$F

# 4. the root as the kernel mounts it without an initramfs: /dev/root
mm=$(cat /sys/class/block/${N}p1/dev)
{ cat /proc/self/mountinfo; echo "1 1 $mm / / rw,relatime shared:1 - ext4 /dev/root rw"; } > /tmp/mountinfo
refused "p1 as /dev/root" "${D}p1 is mounted on / (as /dev/root)" SWITCH_DRIVER_MOUNTINFO=/tmp/mountinfo
rc=0
SWITCH_DRIVER_MOUNTINFO=/tmp/mountinfo bench-board --rust-module $RS_MOD --c-module $C_MOD --dry-run > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e
[ $rc = 3 ] && grep -q "^bench-board:   ${D}p1 is mounted on / (as /dev/root)\$" /tmp/e ||
    fail "bench-board --dry-run with /dev/root: exit $rc, not refused with the same line"
say "ok: bench-board refuses through the same check"
rc=0
SWITCH_DRIVER_MOUNTINFO=/tmp/mountinfo switch-driver rust --force > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 3 ] && grep -q 'the root file system is on its card' /tmp/e && [ "$(sdhc_driver)" = c ] ||
    { cat /tmp/e; fail "--force with the root on the card: exit $rc, not refused"; }
say "ok: --force does not override the root file system"
{ cat /proc/self/mountinfo; echo "1 1 $mm / /mnt/x rw,relatime shared:1 - ext4 /dev/root rw"; } > /tmp/mountinfo-x
SWITCH_DRIVER_MOUNTINFO=/tmp/mountinfo-x switch-driver rust --force > /tmp/o 2> /tmp/e ||
    { cat /tmp/e; fail "--force did not override"; }
grep -q -- "--force, although: ${D}p1 is mounted on /mnt/x (as /dev/root)" /tmp/e || fail "--force: no warning"
wait_card 30 && [ "$(sdhc_driver)" = rust ] || fail "--force: the Rust driver does not hold the card"
switch-driver c > /dev/null || fail "switch-driver c"
wait_card 30 && [ "$(sdhc_driver)" = c ] || fail "back to the C driver"
say "ok: --force overrides"

# nothing in use: the switch goes through
[ -z "$(switch-driver users)" ] || fail "switch-driver users on a free card: $(switch-driver users)"
switch-driver rust > /dev/null || fail "switch-driver rust on a free card"
wait_card 30 && [ "$(sdhc_driver)" = rust ] || fail "no card under the Rust driver"
switch-driver c > /dev/null || fail "switch-driver c on a free card"
wait_card 30 && [ "$(sdhc_driver)" = c ] || fail "no card under the C driver"
say "ok: a free card switches both ways"

# switch-driver reload: never while the card is in use
mount -t ext4 ${D}p1 /mnt/p1 || mount ${D}p1 /mnt/p1 || fail "mount ${D}p1 again"
rc=0
switch-driver reload --module $RS_MOD bounce_size=65536 > /tmp/o 2> /tmp/e || rc=$?
sed 's/^/    /' /tmp/e
[ $rc = 3 ] && grep -q "^switch-driver:   ${D}p1 is mounted on /mnt/p1\$" /tmp/e &&
    grep -q 'refusing to reload meson_mx_sdhc_rs' /tmp/e || fail "reload while mounted: exit $rc, not refused naming the mount"
[ "$(sdhc_driver)" = c ] && [ -d /sys/module/meson_mx_sdhc_rs ] && [ -b ${D}p1 ] ||
    fail "reload while mounted: the controller or the module changed"
rc=0
switch-driver reload --module $RS_MOD bounce_size=65536 --force > /tmp/o 2> /tmp/e || rc=$?
[ $rc = 1 ] && grep -q 'no --force' /tmp/e && [ "$(sdhc_driver)" = c ] || fail "reload --force: exit $rc, not rejected"
say "ok: reload refused while ${D}p1 is mounted, no --force"
umount /mnt/p1 || fail "umount"
rc=0
switch-driver reload --module $RS_MOD bounce_size=65536 > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/o /tmp/e
[ $rc = 0 ] || fail "reload on a free card: exit $rc"
grep -q '^  bounce_size: 65536$' /tmp/o || fail "reload: the limits it prints do not say bounce_size: 65536"
[ "$(sdhc_driver)" = rust ] || fail "reload: the Rust driver does not hold the controller"
grep -qx 'bounce_size: 65536' "$(rs_debugfs)/limits" || fail "debugfs limits: $(cat "$(rs_debugfs)/limits")"
wait_card 30 || fail "reload: no card under the Rust driver"
rc=0
switch-driver reload --module $RS_MOD bounce_size=12345 > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/e
[ $rc = 1 ] && grep -q 'loading it without them' /tmp/e || fail "reload with an invalid value: exit $rc"
[ "$(sdhc_driver)" = rust ] && grep -qx 'bounce_size: 131072' "$(rs_debugfs)/limits" ||
    fail "reload with an invalid value: the module is not back at its defaults"
wait_card 30 || fail "reload with an invalid value: no card"
say "ok: reload sets bounce_size=65536 on a free card, an invalid value falls back to the defaults"
G
)
emu --card emmc --size 32 --driver c --timeout 600 "$g"
grep -E '^\[guest\]' "$T/serial.log"
