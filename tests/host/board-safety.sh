#!/usr/bin/env bash
# scripts/bench-board and scripts/switch-driver never destroy what they were
# not given (run-all: host-board-safety), on the build machine: a fake sysfs
# (BENCH_BOARD_SYSFS, SWITCH_DRIVER_SYSFS) with two SDHC controllers, each
# with a 64 MiB card whose disk image is a sparse file,
#   mmcblk1: an MBR, p1 = [1 MiB, 9 MiB), p2 = [9 MiB, 17 MiB);
#   mmcblk2: a GPT, p1 = [1 MiB, 33 MiB), the backup GPT in the last MiB;
#   mmcblk3: an MBR, p1 = [2 MiB, 10 MiB), p2 extended at 10 MiB (2 sectors
#      in sysfs), logical p5 = [11 MiB, 15 MiB) and p6 = [16 MiB, 20 MiB);
#   mmcblk4: an MBR, p1 = [8 MiB, 24 MiB); mmcblk5: no partition table, not
#      blank (a vendor layout); mmcblk6: no partition table, blank;
# mounts and swap from files (SWITCH_DRIVER_MOUNTINFO, SWITCH_DRIVER_SWAPS),
# and insmod, rmmod, modprobe and fio replaced by stubs that log their call
# and fail.  It checks that
#   1. a write region over a partition is refused (exit 3) naming the
#      partition and the region, and allowed when every overlapped partition
#      is named (--destroy-partitions), not when only some are;
#   2. a write region over the partition table area (everything before the
#      first partition and at least [0, 1 MiB), with a GPT the last MiB, all
#      of a disk with no table and no partitions that is not blank) is
#      refused unless --destroy-partition-table; a region between two
#      logical partitions overlaps their extended partition;
#   3. --scratch's default region starts after the partition table area and
#      ends before a GPT's backup, and still needs the partitions named;
#   4. --scratch does not override the in-use refusal: a mounted partition
#      and a root shown as /dev/root are refused with any options;
#   5. --dry-run fails with the same refusal wherever the run fails, also on
#      --variant values the module would refuse (check-board-config --params);
#   6. switch-driver reload is refused (exit 3, naming the user) while the
#      card is mounted, and has no --force;
#   7. switch-driver --controller sd-slot finds the SD card slot's card under
#      the slot's device, refuses a controller of the other kind, a mounted
#      card and, with --force, the root on it; an SDIO function of a card
#      under it with a driver bound is a user, refused unless --force;
# and that no module tool or fio was run.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/board-safety.XXXXXX")
trap 'rm -rf "$T"' EXIT
BB="$TOP/scripts/bench-board"
SW="$TOP/scripts/switch-driver"
MIB=1048576
ok=1
pass() { echo "  ok: $*"; }
failed() { echo "  FAILED: $*"; ok=0; }

# --- the fake board -----------------------------------------------------------
S=$T/sys
mkdir -p "$S/bus/platform/devices" "$S/bus/platform/drivers/meson-mx-sdhc" "$S/block" "$S/class/block" "$T/dev" "$T/bin"
# card CTRL DISK MAJMIN_BASE TABLE PART...: PART is "START_MIB SIZE_MIB"
card() {
    local ctrl=$1 disk=$2 base=$3 table=$4; shift 4
    local pd=$S/devices/platform/$ctrl
    local bd=$pd/mmc_host/mmc${disk#mmcblk}/mmc${disk#mmcblk}:0001/block/$disk
    mkdir -p "$pd/of_node" "$bd/holders"
    printf 'amlogic,meson8-sdhc\0amlogic,meson-mx-sdhc\0' > "$pd/of_node/compatible"
    echo "of:NmmcT(null)Camlogic,meson8-sdhcCamlogic,meson-mx-sdhc" > "$pd/modalias"
    ln -s "$pd" "$S/bus/platform/devices/$ctrl"
    ln -s "$bd" "$S/block/$disk"
    ln -s "$bd" "$S/class/block/$disk"
    echo $((64 * 2048)) > "$bd/size"
    echo "179:$base" > "$bd/dev"
    truncate -s 64M "$T/dev/$disk"
    local n=0 p
    for p in "$@"; do
        n=$((n + 1))
        set -- $p
        [ $# = 2 ] || { n=$3; set -- $1 $2; }
        mkdir -p "$bd/${disk}p$n/holders"
        echo $n > "$bd/${disk}p$n/partition"
        echo $(($1 * 2048)) > "$bd/${disk}p$n/start"
        echo $(($2 * 2048)) > "$bd/${disk}p$n/size"
        [ "$2" != 0 ] || echo 2 > "$bd/${disk}p$n/size"
        echo "179:$((base + n))" > "$bd/${disk}p$n/dev"
        ln -s "$bd/${disk}p$n" "$S/class/block/${disk}p$n"
    done
    case "$table" in
    MBR) printf '\000\376\377\377\203\376\377\377\000\010\000\000\000\100\000\000\000\376\377\377\203\376\377\377\000\110\000\000\000\100\000\000' |
            dd of="$T/dev/$disk" bs=1 seek=446 conv=notrunc 2>/dev/null ;;
    GPT) printf '\000\000\002\000\356\377\377\377\001\000\000\000\377\377\001\000' |
            dd of="$T/dev/$disk" bs=1 seek=446 conv=notrunc 2>/dev/null
        printf 'EFI PART' | dd of="$T/dev/$disk" bs=1 seek=512 conv=notrunc 2>/dev/null ;;
    esac
    [ "$table" = NONE ] || printf '\125\252' | dd of="$T/dev/$disk" bs=1 seek=510 conv=notrunc 2>/dev/null
}
card c1108e00.mmc mmcblk1 8 MBR "1 8" "9 8"
card d0000000.mmc mmcblk2 16 GPT "1 32"
card e0000000.mmc mmcblk3 24 MBR "2 8" "10 0" "11 4 5" "16 4 6"
card e1000000.mmc mmcblk4 32 MBR "8 16"
card e2000000.mmc mmcblk5 40 NONE
printf 'vendor' | dd of="$T/dev/mmcblk5" bs=1 seek=2097152 conv=notrunc 2>/dev/null
card e3000000.mmc mmcblk6 48 NONE
: > "$T/mountinfo"
printf 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n' > "$T/swaps"
for tool in insmod rmmod modprobe fio; do
    printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\nexit 1\n' "$tool" "$T" > "$T/bin/$tool"
    chmod +x "$T/bin/$tool"
done
: > "$T/calls"
: > "$T/fake.ko"
# this machine's own processes, namespaces and fstab stay out of it: an empty /proc
mkdir -p "$T/noproc/self/ns"; ln -s 'mnt:[1]' "$T/noproc/self/ns/mnt"; : > "$T/fstab"
export MESON_SDHC_TEST_HOOKS=1 BENCH_BOARD_SYSFS=$S SWITCH_DRIVER_SYSFS=$S SWITCH_DRIVER_MOUNTINFO=$T/mountinfo \
    SWITCH_DRIVER_SWAPS=$T/swaps SWITCH_DRIVER_PROC=$T/noproc SWITCH_DRIVER_FSTAB=$T/fstab SWITCH_DRIVER_UNITS=$T/units \
    SWITCH_DRIVER_DEV=$T/dev
export PATH="$T/bin:$PATH"

# bb [ENV=VALUE ...] -- ARGS: bench-board on the fake board; sets rc, out, err
bb() {
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    rc=0
    env "${envs[@]}" sh "$BB" --rust-module "$T/fake.ko" --json "$T/bb.json" "$@" > "$T/out" 2> "$T/err" || rc=$?
    out=$(cat "$T/out"); err=$(cat "$T/err")
}
# outcome WANT_RC FILE WORD WHAT PATTERN...: the last run exited WANT_RC and
# FILE (its stderr or stdout) has every (fixed-string) PATTERN
outcome() {
    local want=$1 f=$2 word=$3 what=$4 p; shift 4
    if [ "$rc" != "$want" ]; then failed "$what: exit status $rc, expected $want"; sed 's/^/    | /' "$T/err"; return; fi
    for p in "$@"; do
        grep -qF -- "$p" "$f" || { failed "$what: the output does not say '$p'"; sed 's/^/    | /' "$f"; return; }
    done
    pass "$what: $word"
}
refused() { outcome 3 "$T/err" refused "$@"; }   # WHAT PATTERN...: exit 3, stderr has them
allowed() { outcome 0 "$T/out" allowed "$@"; }   # WHAT PATTERN...: exit 0, stdout has them
# same_refusal WHAT ARGS...: the run and the dry run exit 3 with the same
# "refusing to run" line
same_refusal() {
    local what=$1; shift
    bb -- "$@"; local r1=$rc e1; e1=$(grep 'refusing to run' "$T/err" || true)
    bb -- "$@" --dry-run; local e2; e2=$(grep 'refusing to run' "$T/err" || true)
    if [ "$r1" = 3 ] && [ "$rc" = 3 ] && [ -n "$e1" ] && [ "$e1" = "$e2" ]; then
        pass "$what: the run and --dry-run both refuse (exit 3), the same words"
    else
        failed "$what: run exit $r1 ('$e1'), --dry-run exit $rc ('$e2')"
    fi
}
D1="--device $T/dev/mmcblk1"
D2="--device $T/dev/mmcblk2"
D3="--device $T/dev/mmcblk3"

echo "1. partitions"
bb -- $D1 --offset 4m --size 8m --dry-run
refused "[4, 12) MiB over p1 and p2" "refusing to run" "overlaps /dev/mmcblk1p1 [1048576, 9437184)" \
    "overlaps /dev/mmcblk1p2 [9437184, 17825792)" "the write region [4194304, 12582912)" \
    "--destroy-partitions mmcblk1p1,mmcblk1p2"
bb -- $D1 --offset 4m --size 8m --destroy-partitions mmcblk1p1 --dry-run
refused "[4, 12) MiB with only p1 named" "overlaps /dev/mmcblk1p2" "--destroy-partitions mmcblk1p2"
grep -q 'overlaps /dev/mmcblk1p1 \[1048576, 9437184)$' "$T/err" && failed "p1 named, yet listed as unnamed"
bb -- $D1 --offset 4m --size 8m --destroy-partitions /dev/mmcblk1p1,mmcblk1p2 --dry-run
allowed "[4, 12) MiB with p1 and p2 named" "overwrites: /dev/mmcblk1p1 /dev/mmcblk1p2" "region: [4194304, 12582912)"
bb -- $D1 --offset 20m --size 8m --dry-run
allowed "[20, 28) MiB, outside every partition" "writes: yes" "overwrites: no partition, not the partition table"
bb -- $D1 --offset 20m --size 8m --destroy-partitions mmcblk1p9 --dry-run
refused "--destroy-partitions naming no partition of the disk" "'mmcblk1p9' is not a partition of"
bb -- $D1 --offset 4m --size 8m --no-write --dry-run
allowed "[4, 12) MiB read-only" "writes: no"
bb -- $D1 --offset 4m --size 8m --jobs read-4k,randread-4k --dry-run
allowed "[4, 12) MiB with read jobs only" "job: read-4k"
bb -- $D1 --offset 20m --size 8m --user-rows --dry-run
outcome 1 "$T/err" refused "--user-rows with a fio that has no libaio engine (the stub lists none)" "fio has no libaio engine"
cp "$T/bin/fio" "$T/fio-stub"
printf '#!/bin/sh\necho "fio $*" >> "%s/calls"\n[ "$1" = --enghelp ] && { printf "Available IO engines:\\n\\tlibaio\\n\\tpsync\\n"; exit 0; }\nexit 1\n' "$T" > "$T/bin/fio"
bb -- $D1 --offset 20m --size 8m --user-rows --dry-run
allowed "--user-rows with a fio that has libaio" "job: aioread-128k"
cp "$T/fio-stub" "$T/bin/fio"

echo "2. the partition table area"
bb -- $D1 --offset 0 --size 1m --dry-run
refused "[0, 1 MiB) on the MBR card" "overlaps the partition table area [0, 1048576) (table: MBR"
bb -- $D1 --offset 0 --size 1m --destroy-partition-table --dry-run
allowed "[0, 1 MiB) with --destroy-partition-table" "overwrites: partition-table"
bb -- $D1 --offset 0 --size 2m --destroy-partition-table --dry-run
refused "[0, 2 MiB): the table named, p1 not" "overlaps /dev/mmcblk1p1" "--destroy-partitions mmcblk1p1"
bb -- $D2 --offset 60m --size 4m --dry-run
refused "[60, 64) MiB on the GPT card" "[66060288, 67108864) (table: GPT"
bb -- $D2 --offset 60m --dry-run
allowed "--offset 60m on the GPT card: the region ends before the backup" "region: [62914560, 66060288)"
bb -- $D1 --offset 60m --dry-run
allowed "--offset 60m on the MBR card: to the end" "region: [62914560, 67108864)"
bb -- $D3 --offset 1m --size 1m --dry-run
refused "[1, 2) MiB before a first partition at 2 MiB" "overlaps the partition table area [0, 2097152)"
bb -- $D3 --offset 15m --size 1m --dry-run
refused "[15, 16) MiB between two logical partitions" "overlaps /dev/mmcblk3p2 [10485760, 20971520)"
bb -- $D3 --offset 20m --size 1m --dry-run
allowed "[20, 21) MiB after the last logical partition" "overwrites: no partition"

echo "3. --scratch"
bb -- $D1 --scratch --dry-run
refused "--scratch on the MBR card" "overlaps /dev/mmcblk1p1" "overlaps /dev/mmcblk1p2" "the write region [1048576, 67108864)"
grep -qF "partition table area" "$T/err" && failed "--scratch's default region overlaps the partition table area"
bb -- $D2 --scratch --destroy-partitions mmcblk2p1 --dry-run
allowed "--scratch on the GPT card, p1 named" "region: [1048576, 66060288)" "overwrites: /dev/mmcblk2p1"
bb -- $D2 --scratch --user-rows --variant "bounce_size=524288 max_segs=128" --dry-run
refused "bench-board.rst's --scratch --user-rows --variant example on a card with a partition" "overlaps /dev/mmcblk2p1"

bb -- $D1 --no-write --variant "bounce_size=3000" --variant "max_seg=128" --dry-run
outcome 1 "$T/err" refused "--dry-run with --variant values the module refuses" "would refuse it" "bounce_size=3000: not 0 or a power of two"
bb -- $D1 --no-write --variant "max_segs=128 bounce_cached=0" --dry-run
allowed "--dry-run with --variant values the module takes" "dry run: nothing switched"
bb -- $D1 --no-write --variant "skip_clean_invalidate=2" --dry-run
outcome 1 "$T/err" refused "--dry-run with skip_clean_invalidate=2" "skip_clean_invalidate=2: not -1, 0 or 1"
bb -- $D1 --no-write --variant "skip_clean_invalidate=y" --dry-run
outcome 1 "$T/err" refused "--dry-run with skip_clean_invalidate=y (not a boolean)" "skip_clean_invalidate=y: not a number"
bb -- $D1 --no-write --variant "skip_clean_invalidate=-1" --variant "skip_clean_invalidate=0" --variant "skip_clean_invalidate=1" --dry-run
allowed "--dry-run with skip_clean_invalidate -1, 0 and 1" "dry run: nothing switched"

echo "4. a card in use, whatever the options"
echo "36 25 179:10 / /mnt rw,relatime shared:1 - ext4 /dev/mmcblk1p2 rw" > "$T/mounted"
echo "1 1 179:9 / / rw,relatime shared:1 - ext4 /dev/root rw" > "$T/root"
for f in mounted root; do
    case $f in mounted) says="/dev/mmcblk1p2 is mounted on /mnt" ;; root) says="/dev/mmcblk1p1 is mounted on / (as /dev/root)" ;; esac
    for args in "--scratch" "--scratch --destroy-partitions mmcblk1p1,mmcblk1p2 --destroy-partition-table" \
        "--offset 20m --size 8m" "--no-write"; do
        # shellcheck disable=SC2086 # words
        bb SWITCH_DRIVER_MOUNTINFO="$T/$f" -- $D1 $args --dry-run
        refused "$f, $args --dry-run" "$says" "no option overrides this"
        # shellcheck disable=SC2086
        bb SWITCH_DRIVER_MOUNTINFO="$T/$f" -- $D1 $args
        refused "$f, $args" "$says"
    done
done
grep -qE -- '--force|FORCE' "$BB" && failed "bench-board still has a way to pass --force"

echo "5. --dry-run refuses where the run refuses"
same_refusal "a partition" $D1 --offset 4m --size 8m
same_refusal "the partition table" $D1 --offset 0 --size 1m
same_refusal "the GPT backup" $D2 --offset 60m --size 4m
same_refusal "--scratch over partitions" $D1 --scratch

echo "6. switch-driver reload"
rc=0
SWITCH_DRIVER_MOUNTINFO=$T/mounted sh "$SW" reload c1108e00.mmc bounce_size=131072 > "$T/out" 2> "$T/err" || rc=$?
refused "reload while p2 is mounted" "switch-driver:   /dev/mmcblk1p2 is mounted on /mnt" "refusing to reload meson_mx_sdhc_rs"
rc=0
SWITCH_DRIVER_MOUNTINFO=$T/root sh "$SW" reload c1108e00.mmc --module "$T/fake.ko" max_segs=128 > "$T/out" 2> "$T/err" || rc=$?
refused "reload while p1 is the root (/dev/root)" "(as /dev/root)" "/etc/modprobe.d"
rc=0
SWITCH_DRIVER_MOUNTINFO=$T/mounted sh "$SW" reload c1108e00.mmc --force > "$T/out" 2> "$T/err" || rc=$?
if [ "$rc" != 0 ] && [ "$rc" != 3 ] && grep -q 'no --force' "$T/err"; then pass "reload --force: rejected ($rc)"
else failed "reload --force: exit $rc: $(cat "$T/err")"; fi
[ ! -e "$S/devices/platform/c1108e00.mmc/driver_override" ] && pass "the refusals left the controller alone" ||
    failed "a refusal wrote driver_override"
rc=0
sh "$SW" users c1108e00.mmc > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 0 ] && [ ! -s "$T/out" ] && pass "switch-driver users: nothing on the fake card when nothing is mounted" ||
    failed "switch-driver users on the free card: exit $rc, '$(cat "$T/out" "$T/err")'"

echo "partition table areas beyond 4 MiB; a disk without a partition table"
D4="--device $T/dev/mmcblk4"
D5="--device $T/dev/mmcblk5"
D6="--device $T/dev/mmcblk6"
bb -- $D4 --offset 2m --size 4m --dry-run
refused "[2, 6) MiB before a first partition at 8 MiB" "overlaps the partition table area [0, 8388608)" \
    "--destroy-partition-table"
bb -- $D4 --scratch --dry-run
refused "--scratch with a first partition at 8 MiB: the region starts after the area, over p1" \
    "the write region [8388608, 67108864)" "--destroy-partitions mmcblk4p1"
bb -- $D5 --scratch --dry-run
refused "--scratch on a disk with no partition table whose first 4 MiB are not blank" \
    "no partition table Linux reads" "--destroy-partition-table"
bb -- $D5 --offset 32m --size 8m --dry-run
refused "an explicit region on that disk" "table: none, not blank" "--destroy-partition-table"
bb -- $D5 --scratch --destroy-partition-table --dry-run
allowed "--scratch --destroy-partition-table on that disk: all of it" "region: [0, 67108864)" "overwrites: partition-table"
bb -- $D6 --scratch --dry-run
allowed "--scratch on a blank disk with no partition table: after the first MiB" "region: [1048576, 67108864)"

echo "what the run needs, --dry-run checks too"
mv "$S/bus/platform/drivers/meson-mx-sdhc" "$S/bus/platform/drivers/.c-away"
bb -- $D1 --no-write --dry-run
if [ "$rc" = 1 ] && grep -q 'the C driver (meson-mx-sdhc) is not registered' "$T/err"; then
    pass "--dry-run without the C driver registered or installed: fails as the run would"
else failed "--dry-run without the C driver: exit $rc: $(cat "$T/err")"; fi
bb -- $D1 --no-write --dry-run --c-module "$T/fake.ko"
[ "$rc" = 0 ] && pass "--dry-run with --c-module: goes on" || failed "--dry-run with --c-module: exit $rc: $(cat "$T/err")"
mkdir -p "$T/proc-bl"
cp -r "$T/noproc/self" "$T/proc-bl/"
echo 'console=ttyAML0,115200 root=UUID=1234 rootwait initcall_blacklist=meson_mx_sdhc_driver_init' > "$T/proc-bl/cmdline"
rc=0; SWITCH_DRIVER_PROC="$T/proc-bl" sh "$SW" c c1108e00.mmc > "$T/out" 2> "$T/err" || rc=$?
if [ "$rc" = 1 ] && grep -q 'kept off by initcall_blacklist=meson_mx_sdhc_driver_init on this boot.s command line.*boot the fallback entry' "$T/err" &&
    ! grep -q 'insmod' "$T/err"; then
    pass "switch-driver c with the C driver blacklisted on the command line: says so, not 'insmod'"
else failed "switch-driver c, C driver blacklisted: exit $rc: $(cat "$T/err")"; fi
rc=0; sh "$SW" c c1108e00.mmc > "$T/out" 2> "$T/err" || rc=$?
if [ "$rc" = 1 ] && grep -q 'not registered (insmod its module first)' "$T/err"; then
    pass "switch-driver c without the C driver, no blacklist: insmod its module"
else failed "switch-driver c without the C driver: exit $rc: $(cat "$T/err")"; fi
mv "$S/bus/platform/drivers/.c-away" "$S/bus/platform/drivers/meson-mx-sdhc"

echo "users that hold no device number: btrfs, loop, an open file; --force and the root"
mm1=$(cat "$S/class/block/mmcblk1p1/dev")
printf '40 1 0:45 / /mnt/b rw,relatime shared:9 - btrfs /dev/mmcblk1p2 rw\n' > "$T/mi-btrfs"
uses() { # WHAT PATTERN [ENV=VALUE...]: switch-driver users c1108e00.mmc names PATTERN
    local what=$1 pat=$2; shift 2
    env "$@" sh "$SW" users c1108e00.mmc > "$T/out" 2> "$T/err" || true
    grep -qF -- "$pat" "$T/out" && pass "users: $what" || failed "users: $what: '$(cat "$T/out" "$T/err")'"
}
uses "a btrfs mount (anonymous device number) by its source" "/dev/mmcblk1p2 is mounted on /mnt/b" SWITCH_DRIVER_MOUNTINFO="$T/mi-btrfs"
mkdir -p "$S/block/loop0/loop"; echo /dev/mmcblk1p1 > "$S/block/loop0/loop/backing_file"
uses "the backing file of a loop device" "/dev/mmcblk1p1 is the backing file of loop0"
rm -r "$S/block/loop0"
mkdir -p "$T/proc/4242/fd"; ln -s /dev/mmcblk1 "$T/proc/4242/fd/3"; echo holder > "$T/proc/4242/comm"
uses "a process holding the disk open" "/dev/mmcblk1 is open in process 4242 (holder)" SWITCH_DRIVER_PROC="$T/proc"
rc=0
SWITCH_DRIVER_PROC="$T/proc" sh "$SW" rust c1108e00.mmc > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 3 ] && grep -q 'open in process 4242' "$T/err" && pass "switch-driver rust refused while a process holds the disk" ||
    failed "switch-driver rust with the disk open: exit $rc: $(cat "$T/err")"
printf '1 1 %s / / rw,relatime shared:1 - ext4 /dev/root rw\n' "$mm1" > "$T/mi-root"
rc=0
SWITCH_DRIVER_MOUNTINFO="$T/mi-root" sh "$SW" rust c1108e00.mmc --force > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 3 ] && grep -q 'the root file system is on its card' "$T/err" &&
    pass "switch-driver rust --force refused for the root file system" ||
    failed "switch-driver rust --force with the root on the card: exit $rc: $(cat "$T/err")"
[ ! -e "$S/devices/platform/c1108e00.mmc/driver_override" ] && pass "those refusals left the controller alone" ||
    failed "a refusal wrote driver_override"

echo "a bind that fails gives the controller back"
card f0000000.mmc mmcblk7 56 NONE
FD=$S/devices/platform/f0000000.mmc
for drv in meson-mx-sdhc meson-mx-sdhc-rs; do mkdir -p "$S/bus/platform/drivers/$drv"; done
: > "$S/bus/platform/drivers/meson-mx-sdhc/bind"; : > "$S/bus/platform/drivers/meson-mx-sdhc/unbind"
mkdir -p "$S/bus/platform/drivers/meson-mx-sdhc-rs/bind"     # writing to it fails, as a bind that fails
ln -s "$S/bus/platform/drivers/meson-mx-sdhc" "$FD/driver"
rc=0
SWITCH_DRIVER_MOUNTINFO=$T/mountinfo sh "$SW" rust f0000000.mmc > "$T/out" 2> "$T/err" || rc=$?
if [ "$rc" = 1 ] && grep -q 'failed to bind f0000000.mmc.*meson-mx-sdhc holds it again' "$T/err" &&
    [ "$(cat "$FD/driver_override")" = meson-mx-sdhc ] &&
    grep -qx f0000000.mmc "$S/bus/platform/drivers/meson-mx-sdhc/bind"; then
    pass "switch-driver rust whose bind fails: exit 1, bound to the C driver again"
else
    failed "switch-driver rust whose bind fails: exit $rc, '$(cat "$T/err")', override '$(cat "$FD/driver_override" 2>/dev/null)'"
fi

echo "the SD card slot's controller (--controller sd-slot)"
# an Amlogic MX SDIO controller whose card is under the slot's device, as its drivers make it
SD=$S/devices/platform/c1108c20.mmc
sbd=$SD/c1108c20.mmc:slot@1/mmc_host/mmc0/mmc0:aaaa/block/mmcblk8
mkdir -p "$SD/of_node" "$sbd/holders"
echo "of:NmmcT(null)Camlogic,meson8b-sdio" > "$SD/modalias"
printf 'amlogic,meson8b-sdio\0' > "$SD/of_node/compatible"
ln -s "$SD" "$S/bus/platform/devices/c1108c20.mmc"
ln -s "$sbd" "$S/block/mmcblk8"; ln -s "$sbd" "$S/class/block/mmcblk8"
echo "179:64" > "$sbd/dev"; echo $((64 * 2048)) > "$sbd/size"
sw_sd() { rc=0; sh "$SW" "$@" > "$T/out" 2> "$T/err" || rc=$?; }
sw_sd disk --controller sd-slot
[ "$rc" = 0 ] && [ "$(cat "$T/out")" = /dev/mmcblk8 ] && pass "switch-driver disk --controller sd-slot: the card under the slot's device" ||
    failed "switch-driver disk --controller sd-slot: exit $rc, '$(cat "$T/out" "$T/err")'"
sw_sd status c1108c20.mmc
[ "$rc" = 0 ] && [ "$(cat "$T/out")" = "c1108c20.mmc: none" ] && pass "switch-driver status c1108c20.mmc: the name chooses the controller" ||
    failed "switch-driver status c1108c20.mmc: exit $rc, '$(cat "$T/out" "$T/err")'"
sw_sd rust c1108c20.mmc --controller sdhc
[ "$rc" = 1 ] && grep -q 'c1108c20.mmc is not an Amlogic MX SDHC' "$T/err" && pass "--controller sdhc with the SD card slot's controller: refused" ||
    failed "--controller sdhc c1108c20.mmc: exit $rc, '$(cat "$T/err")'"
sw_sd rust c1108e00.mmc --controller sd-slot
[ "$rc" = 1 ] && grep -q 'c1108e00.mmc is not an Amlogic MX SDIO' "$T/err" && pass "--controller sd-slot with an SDHC: refused" ||
    failed "--controller sd-slot c1108e00.mmc: exit $rc, '$(cat "$T/err")'"
printf '1 1 179:64 / /mnt/sd rw,relatime shared:1 - ext4 /dev/mmcblk8 rw\n' > "$T/mi-sd"
SWITCH_DRIVER_MOUNTINFO="$T/mi-sd" sw_sd rust --controller sd-slot
[ "$rc" = 3 ] && grep -q '^switch-driver:   /dev/mmcblk8 is mounted on /mnt/sd$' "$T/err" && pass "switch-driver rust --controller sd-slot refused while its card is mounted" ||
    failed "switch-driver rust --controller sd-slot with the card mounted: exit $rc, '$(cat "$T/err")'"
printf '1 1 179:64 / / rw,relatime shared:1 - ext4 /dev/root rw\n' > "$T/mi-sd"
SWITCH_DRIVER_MOUNTINFO="$T/mi-sd" sw_sd rust c1108c20.mmc --force
[ "$rc" = 3 ] && grep -q 'the root file system is on its card.*the root on the SD card' "$T/err" &&
    pass "switch-driver rust --force refused for the root on the SD card" ||
    failed "switch-driver rust --force with the root on the SD card: exit $rc, '$(cat "$T/err")'"
# an SDIO card (WiFi) in a second slot of the same controller: its function with a driver bound
sf=$SD/c1108c20.mmc:slot@1/mmc_host/mmc0/mmc0:0001/mmc0:0001:1
mkdir -p "$sf" "$S/bus/sdio/drivers/brcmfmac"
sw_sd users --controller sd-slot
[ "$rc" = 0 ] && [ ! -s "$T/out" ] && pass "switch-driver users: an SDIO function without a driver is no user" ||
    failed "switch-driver users with an unbound SDIO function: exit $rc, '$(cat "$T/out" "$T/err")'"
ln -s "$S/bus/sdio/drivers/brcmfmac" "$sf/driver"
sw_sd users --controller sd-slot
[ "$rc" = 0 ] && [ "$(cat "$T/out")" = "SDIO function mmc0:0001:1 is bound to driver brcmfmac" ] &&
    pass "switch-driver users: an SDIO function with a driver bound is a user" ||
    failed "switch-driver users with a bound SDIO function: exit $rc, '$(cat "$T/out" "$T/err")'"
sw_sd rust --controller sd-slot
[ "$rc" = 3 ] && grep -q '^switch-driver:   SDIO function mmc0:0001:1 is bound to driver brcmfmac$' "$T/err" &&
    pass "switch-driver rust --controller sd-slot refused while an SDIO function has a driver" ||
    failed "switch-driver rust --controller sd-slot with a bound SDIO function: exit $rc, '$(cat "$T/err")'"
[ ! -e "$SD/driver_override" ] && pass "those refusals left the SD card slot's controller alone" || failed "a refusal wrote the SD card slot's driver_override"
# --force goes past it (then stops: no Rust driver is registered here)
sw_sd rust --controller sd-slot --force
[ "$rc" = 1 ] && grep -q '^switch-driver: --force, although: SDIO function mmc0:0001:1 is bound to driver brcmfmac$' "$T/err" &&
    grep -q 'not registered' "$T/err" && [ ! -e "$SD/driver_override" ] &&
    pass "switch-driver rust --force: past the SDIO function, named" ||
    failed "switch-driver rust --force with a bound SDIO function: exit $rc, '$(cat "$T/err")'"
rm -r "$sf"

# --help prints the usage and exits 0, also where no SDHC exists (this host)
for tool in "$SW" "$(dirname "$SW")/check-board-config"; do
    rc=0
    env -u SWITCH_DRIVER_SYSFS "$tool" --help > "$T/out" 2> "$T/err" || rc=$?
    if [ "$rc" = 0 ] && grep -q '^usage\|^switch-driver: move\|^check-board-config' "$T/out" &&
        ! grep -q 'set -e' "$T/out" && [ ! -s "$T/err" ]; then pass "$(basename "$tool") --help: its usage, exit 0"
    else failed "$(basename "$tool") --help: exit $rc, '$(head -3 "$T/out" "$T/err")'"; fi
done

# (modprobe -n only asks whether a module is installed)
if grep -qvE '^(modprobe -n |fio --enghelp$)' "$T/calls"; then failed "module tools or fio were run:"; grep -vE '^(modprobe -n |fio --enghelp$)' "$T/calls" | sed 's/^/    | /'
else pass "no insmod, rmmod, modprobe (but modprobe -n) or fio (but fio --enghelp) was run"; fi
[ "$ok" = 1 ] && echo "board-safety: all passed" || { echo "board-safety: FAILED"; exit 1; }
