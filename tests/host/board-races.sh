#!/usr/bin/env bash
# What scripts/bench-board and scripts/switch-driver promise when interrupted,
# raced or given what they should refuse (run-all: host-board-races; no board,
# about 15 s), on a fake sysfs (MESON_SDHC_TEST_HOOKS=1) with stubs for
# insmod, rmmod, modprobe, modinfo, fio, fragmem and, for bench-board's runs,
# switch-driver (the holder in a file; it refuses, exit 3, while a "card in
# use" file is not empty; it waits a second while a "slow" file exists):
#   1. switch-driver: a device that is not the SDHC (a UART) or a path is
#      refused before anything is written; a bind that fails with no driver
#      to go back to leaves driver_override cleared;
#   2. switch-driver users: a mount in another mount namespace, an
#      automount point (an x-systemd.automount fstab line by UUID, a .mount
#      unit with its .automount) count, and bench-board refuses them;
#   3. bench-board's cleanup unloads nothing that holds a device: when
#      switch-driver c refuses at the end (the card went into use mid-run),
#      meson_mx_sdhc_rs stays loaded, and it says so;
#   4. a second Ctrl-C (INT to the process group) during the cleanup does
#      not cut it short: the start state (the Rust driver) comes back; nor
#      does a Ctrl-C with the output piped into a reader it ends (SIGPIPE);
#   5. Ctrl-C during a bufreadfrag job: fragmem's holder is killed; and the
#      real fragmem (built here) with -w PID leaves by itself once PID is gone;
#   6. switch-driver c|rust and reload: a Ctrl-C between unbind and bind
#      (a bind that blocks, a slow rmmod) does not stop it: the controller is
#      bound at the end; nor does a pipe without a reader for its messages
#      (reload ... 2>&1 | true, the new parameters refused);
#   7. bench-board: sizes that overflow are refused; a --json name that is a
#      link is refused, also one made a link to a folder during the run;
#      switch-driver, the module, fragmem and check-board-config are not
#      taken from the current folder or PATH; the test hooks are ignored
#      without MESON_SDHC_TEST_HOOKS=1 (both scripts).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/board-races.XXXXXX")
cleanup() {
    local p
    for p in $(cat "$T/pids" 2>/dev/null); do kill "$p" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT
BB="$TOP/scripts/bench-board"
SW="$TOP/scripts/switch-driver"
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
# waitfor FILE [TENTHS]: until FILE exists (default 10 s)
waitfor() { local i=0; while [ ! -e "$1" ]; do i=$((i + 1)); [ "$i" -le "${2:-100}" ] || return 1; sleep 0.1; done; }

# --- the fake board: one SDHC with a 64 MiB card (MBR, p1, p2), a UART --------
S=$T/sys
CT=c1108e00.mmc
PD=$S/devices/platform/$CT
BD=$PD/mmc_host/mmc1/mmc1:0001/block/mmcblk1
mkdir -p "$S/bus/platform/devices" "$S/bus/platform/drivers/meson-mx-sdhc" "$S/bus/platform/drivers/meson-mx-sdhc-rs" \
    "$S/block" "$S/class/block" "$S/module" "$T/dev/disk/by-uuid" "$T/bin" "$T/proc/self/ns" "$T/units" "$PD/of_node" "$BD"
printf 'amlogic,meson8-sdhc\0amlogic,meson-mx-sdhc\0' > "$PD/of_node/compatible"
echo "of:NmmcT(null)Camlogic,meson8-sdhcCamlogic,meson-mx-sdhc" > "$PD/modalias"
ln -s "$PD" "$S/bus/platform/devices/$CT"
ln -s "$BD" "$S/block/mmcblk1"; ln -s "$BD" "$S/class/block/mmcblk1"
echo $((64 * 2048)) > "$BD/size"; echo 179:8 > "$BD/dev"
for n in 1 2; do
    mkdir -p "$BD/mmcblk1p$n"
    echo $n > "$BD/mmcblk1p$n/partition"; echo $((n * 2048 * 8 - 2048 * 7)) > "$BD/mmcblk1p$n/start"
    echo $((8 * 2048)) > "$BD/mmcblk1p$n/size"; echo "179:$((8 + n))" > "$BD/mmcblk1p$n/dev"
    ln -s "$BD/mmcblk1p$n" "$S/class/block/mmcblk1p$n"
    : > "$T/dev/mmcblk1p$n"
done
truncate -s 64M "$T/dev/mmcblk1"
printf '\125\252' | dd of="$T/dev/mmcblk1" bs=1 seek=510 conv=notrunc 2>/dev/null
UP=$S/devices/platform/c81004c0.serial
mkdir -p "$UP" "$S/bus/platform/drivers/meson_uart"
echo "of:NserialT(null)Camlogic,meson8b-uartCamlogic,meson-ao-uart" > "$UP/modalias"
ln -s "$UP" "$S/bus/platform/devices/c81004c0.serial"
ln -s 'mnt:[4026531841]' "$T/proc/self/ns/mnt"
: > "$T/mountinfo"; : > "$T/fstab"
printf 'Filename\tType\tSize\tUsed\tPriority\n' > "$T/swaps"
mkdir -p "$T/proc/sys/vm"; : > "$T/proc/sys/vm/drop_caches"; echo "Node 0, zone Normal 1 2 3" > "$T/proc/buddyinfo"
export MESON_SDHC_TEST_HOOKS=1 BENCH_BOARD_SYSFS=$S BENCH_BOARD_PROC=$T/proc SWITCH_DRIVER_SYSFS=$S \
    SWITCH_DRIVER_MOUNTINFO=$T/mountinfo SWITCH_DRIVER_SWAPS=$T/swaps SWITCH_DRIVER_PROC=$T/proc \
    SWITCH_DRIVER_FSTAB=$T/fstab SWITCH_DRIVER_UNITS=$T/units SWITCH_DRIVER_DEV=$T/dev
# bind_to DRIVER|none: who holds the controller, as the kernel shows it
bind_to() {
    rm -f "$PD/driver" "$S/bus/platform/drivers"/*/"$CT"
    [ "$1" = none ] && return 0
    ln -s "$S/bus/platform/drivers/$1" "$PD/driver"
    ln -s "$PD" "$S/bus/platform/drivers/$1/$CT"
}

# stubs: each logs its call to $T/calls
stub() { { echo '#!/bin/sh'; echo "T='$T' S='$S' PD='$PD' CT='$CT'"; echo 'echo "'"$1"' $*" >> "$T/calls"'; cat; } > "$T/bin/$1"; chmod +x "$T/bin/$1"; }
stub insmod <<'E'
[ ! -f "$T/slow-rmmod" ] || sleep 1
mkdir -p "$S/module/meson_mx_sdhc_rs"
# the kernel binds the controller to a new driver that driver_override names
if [ "$(cat "$PD/driver_override" 2>/dev/null)" = meson-mx-sdhc-rs ] && [ ! -e "$PD/driver" ]; then
    ln -s "$S/bus/platform/drivers/meson-mx-sdhc-rs" "$PD/driver"; ln -s "$PD" "$S/bus/platform/drivers/meson-mx-sdhc-rs/$CT"
fi
E
stub rmmod <<'E'
if [ "$1" = meson_mx_sdhc_rs ]; then
    [ ! -e "$S/bus/platform/drivers/meson-mx-sdhc-rs/$CT" ] || echo "UNLOADED WHILE HOLDING $CT" >> "$T/calls"
    if [ -f "$T/slow-rmmod" ]; then touch "$T/in-rmmod"; sleep 1; fi
    rm -f "$PD/driver" "$S/bus/platform/drivers/meson-mx-sdhc-rs/$CT"
    rm -rf "$S/module/meson_mx_sdhc_rs"
fi
E
stub modprobe <<'E'
case "$1" in -n) exit 1 ;; esac
exit 1
E
stub modinfo <<'E'
exit 1
E
stub fio <<'E'
case "$*" in *--enghelp*) exit 0 ;; *--name=start-exit*) exit 0 ;; esac
h=$(cat "$T/holder" 2>/dev/null)
if [ -f "$T/fio-block" ]; then touch "$T/fio-running"; sleep 30; exit 1; fi
if [ -f "$T/fio-fail-rust" ] && [ "$h" = rust ]; then echo "/dev/mmcblk1p2 is automounted on /mnt (test)" > "$T/in-use"; exit 1; fi
awk 'BEGIN { printf "3;fio-3;job;0;0;0;4096;1024"; for (i = 9; i <= 130; i++) printf ";0"; print "" }'
E
# the switch-driver stub for bench-board's runs (status, disk, users, c, rust)
{ echo '#!/bin/sh'; echo "T='$T' S='$S' PD='$PD'"; cat <<'E'
echo "sw $*" >> "$T/calls"
op=$1; dev=${2:-c1108e00.mmc}
case "$op" in
status) echo "$dev: $(cat "$T/holder")" ;;
disk) echo "$T/dev/mmcblk1" ;;
users) cat "$T/in-use" 2>/dev/null || true ;;
c | rust)
    if [ -f "$T/slow" ]; then touch "$T/sw-waiting"; sleep 1; fi
    [ "$(cat "$T/holder")" != "$op" ] || { echo "$dev: already held"; exit 0; }
    if [ -s "$T/in-use" ]; then echo "switch-driver: refusing: $(cat "$T/in-use")" >&2; exit 3; fi
    drv=meson-mx-sdhc; [ "$op" = c ] || drv=meson-mx-sdhc-rs
    rm -f "$PD/driver" "$S/bus/platform/drivers"/*/c1108e00.mmc
    ln -s "$S/bus/platform/drivers/$drv" "$PD/driver"; ln -s "$PD" "$S/bus/platform/drivers/$drv/c1108e00.mmc"
    echo "$op" > "$T/holder"; echo "$dev: now held by $drv" ;;
esac
E
} > "$T/sw"; chmod +x "$T/sw"
: > "$T/calls"; : > "$T/fake.ko"
export PATH="$T/bin:$PATH"
# start STATE: c (the C driver, the Rust module not loaded) or rust (loaded, holding it)
start() {
    rm -f "$T/slow" "$T/slow-rmmod" "$T/fio-block" "$T/fio-running" "$T/fio-fail-rust" "$T/sw-waiting" "$T/in-use" "$T/in-rmmod"
    : > "$T/calls"; rm -rf "$S/module/meson_mx_sdhc_rs"; rm -f "$PD/driver_override"
    echo "$1" > "$T/holder"
    if [ "$1" = rust ]; then bind_to meson-mx-sdhc-rs; mkdir -p "$S/module/meson_mx_sdhc_rs"; else bind_to meson-mx-sdhc; fi
}
BBARGS=(--device "$T/dev/mmcblk1" --rust-module "$T/fake.ko" --switch-driver "$T/sw" --json "$T/bb.json" --no-write --job-size 1m --bounce-sizes '')
# as_fg COMMAND...: COMMAND as a terminal's foreground job sees it: its own
# process group (INT to the group is a Ctrl-C), SIGINT not ignored (a
# background job of a script starts with SIGINT ignored, and sh cannot undo that)
as_fg() {
    exec perl -e '$SIG{INT} = "DEFAULT"; setpgrp(0, 0); exec @ARGV or die "exec $ARGV[0]: $!"' "$@"
}
# bb_bg ARGS...: bench-board in its own process group, in the background; sets BGPID
bb_bg() {
    as_fg sh "$BB" "${BBARGS[@]}" "$@" > "$T/out" 2> "$T/err" &
    BGPID=$!; echo "$BGPID" >> "$T/pids"
}
# wait_pid PID [SECONDS]: until it is gone (default 20 s); status 1 if it is not
wait_pid() { local i=0; while kill -0 "$1" 2>/dev/null; do i=$((i + 1)); [ "$i" -le $((${2:-20} * 10)) ] || return 1; sleep 0.1; done; }
# sw ARGS...: switch-driver on the fake board; sets rc
sw() { rc=0; sh "$SW" "$@" > "$T/out" 2> "$T/err" || rc=$?; }

echo "1. switch-driver: only the SDHC"
start c
sw rust c81004c0.serial
[ "$rc" != 0 ] && grep -q 'not an Amlogic MX SDHC' "$T/err" && [ ! -e "$UP/driver_override" ] &&
    ok "a UART: refused, nothing written" || bad "a UART: exit $rc, override '$(cat "$UP/driver_override" 2>/dev/null)': $(cat "$T/err")"
sw rust ../../devices/platform/c1108e00.mmc
[ "$rc" != 0 ] && grep -q 'is not a platform device name' "$T/err" && ok "a path: refused" || bad "a path: exit $rc: $(cat "$T/err")"
bind_to none
mv "$S/bus/platform/drivers/meson-mx-sdhc-rs" "$T/rs-away"; mkdir -p "$S/bus/platform/drivers/meson-mx-sdhc-rs/bind"
sw rust "$CT"
[ "$rc" = 1 ] && [ -z "$(cat "$PD/driver_override")" ] && grep -q 'driver_override cleared' "$T/err" &&
    ok "a bind that fails, no driver before: driver_override cleared" ||
    bad "a failed bind: exit $rc, override '$(cat "$PD/driver_override" 2>/dev/null)': $(cat "$T/err")"
rm -rf "$S/bus/platform/drivers/meson-mx-sdhc-rs"; mv "$T/rs-away" "$S/bus/platform/drivers/meson-mx-sdhc-rs"

echo "2. mounts the start check did not see"
start c
mkdir -p "$T/proc/4242/ns"; ln -s 'mnt:[4026532999]' "$T/proc/4242/ns/mnt"; echo container > "$T/proc/4242/comm"
echo "80 70 179:10 / /srv rw,relatime shared:5 - ext4 /dev/mmcblk1p2 rw" > "$T/proc/4242/mountinfo"
sw users "$CT"
grep -q '/dev/mmcblk1p2 is mounted on /srv in the mount namespace of process 4242 (container)' "$T/out" &&
    ok "a mount in another mount namespace" || bad "another namespace's mount: '$(cat "$T/out" "$T/err")'"
rc=0; sh "$BB" "${BBARGS[@]}" --switch-driver "$SW" --jobs read-4k --dry-run > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 3 ] && grep -q 'mount namespace of process 4242' "$T/err" && ok "bench-board refuses it" || bad "bench-board: exit $rc: $(cat "$T/err")"
rm -rf "$T/proc/4242"
echo "40 1 0:50 / /mnt/card rw,relatime shared:9 - autofs systemd-1 rw,fd=51" > "$T/mountinfo"
echo "UUID=5a1e-0001 /mnt/card ext4 noauto,x-systemd.automount 0 2" > "$T/fstab"
ln -s ../../mmcblk1p2 "$T/dev/disk/by-uuid/5a1e-0001"
sw users "$CT"
grep -q "/dev/mmcblk1p2 is automounted on /mnt/card ($T/fstab): any access mounts it" "$T/out" &&
    ok "an x-systemd.automount point (fstab, by UUID)" || bad "automount (fstab): '$(cat "$T/out" "$T/err")'"
rc=0; sh "$BB" "${BBARGS[@]}" --switch-driver "$SW" --jobs read-4k --dry-run > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 3 ] && grep -q 'automounted on /mnt/card' "$T/err" && ok "bench-board refuses it" || bad "bench-board: exit $rc: $(cat "$T/err")"
sw rust "$CT"
[ "$rc" = 3 ] && ok "switch-driver rust refuses it (exit 3)" || bad "switch-driver rust with an automount point: exit $rc"
: > "$T/fstab"
echo "40 1 0:50 / /mnt/data rw,relatime shared:9 - autofs systemd-1 rw,fd=51" > "$T/mountinfo"
printf '[Mount]\nWhat=/dev/mmcblk1p1\nWhere=/mnt/data\nType=ext4\n' > "$T/units/mnt-data.mount"
printf '[Automount]\nWhere=/mnt/data\n' > "$T/units/mnt-data.automount"
sw users "$CT"
grep -q "/dev/mmcblk1p1 is automounted on /mnt/data ($T/units/mnt-data.mount)" "$T/out" &&
    ok "an automount unit's mount point" || bad "automount (unit): '$(cat "$T/out" "$T/err")'"
: > "$T/mountinfo"; rm -f "$T/units"/*

echo "3. the cleanup unloads nothing that holds a device"
start c
touch "$T/fio-fail-rust"
rc=0; sh "$BB" "${BBARGS[@]}" --jobs read-64k > "$T/out" 2> "$T/err" || rc=$?
if [ "$rc" != 0 ] && grep -q 'refusing' "$T/err" && ! grep -q '^rmmod meson_mx_sdhc_rs' "$T/calls" &&
   ! grep -q 'UNLOADED WHILE' "$T/calls" && grep -q 'not unloading meson_mx_sdhc_rs: it still holds c1108e00.mmc' "$T/err"; then
    ok "switch-driver c refused at the end (the card in use mid-run): meson_mx_sdhc_rs left loaded, said so"
else
    bad "the cleanup with the card in use: exit $rc, calls: $(grep -E '^(rmmod|insmod|sw c|sw rust|UNLOADED)' "$T/calls" | tr '\n' ';') err: $(tail -3 "$T/err")"
fi

echo "4. a second Ctrl-C during the cleanup"
start rust
touch "$T/fio-block"
bb_bg --jobs read-64k
waitfor "$T/fio-running" || bad "fio never ran: $(cat "$T/err")"
touch "$T/slow"
kill -INT -- -"$BGPID" 2>/dev/null || true
if waitfor "$T/sw-waiting"; then
    sleep 0.3
    kill -INT -- -"$BGPID" 2>/dev/null || true
fi
wait_pid "$BGPID" || bad "bench-board did not end"
if [ "$(cat "$T/holder")" = rust ] && [ -d "$S/module/meson_mx_sdhc_rs" ] && grep -q "restored: $CT held by 'rust'" "$T/err"; then
    ok "interrupted twice: the Rust driver holds the controller again, 'restored'"
else
    bad "interrupted twice: holder '$(cat "$T/holder")', module $([ -d "$S/module/meson_mx_sdhc_rs" ] && echo loaded || echo 'not loaded'): $(tail -3 "$T/err")"
fi

# the same with the output piped into a reader that the Ctrl-C ends (a
# tee): the cleanup's messages meet a closed pipe (SIGPIPE, EPIPE)
start rust
touch "$T/fio-block"
as_fg sh -c 'sh "$0" "$@" 2>&1 | cat > "$T/piped"' "$BB" "${BBARGS[@]}" --jobs read-64k &
BGPID=$!; echo "$BGPID" >> "$T/pids"
waitfor "$T/fio-running" || bad "fio never ran: $(cat "$T/piped")"
kill -INT -- -"$BGPID" 2>/dev/null || true
wait_pid "$BGPID" || bad "bench-board did not end"
sleep 0.5
if [ "$(cat "$T/holder")" = rust ] && [ -d "$S/module/meson_mx_sdhc_rs" ]; then
    ok "interrupted with its output piped into a reader that ends: the Rust driver holds the controller again"
else
    bad "interrupted, output piped: holder '$(cat "$T/holder")', module $([ -d "$S/module/meson_mx_sdhc_rs" ] && echo loaded || echo 'not loaded'), calls: $(tail -4 "$T/calls" | tr '\n' ';')"
fi

echo "5. fragmem's holder"
start c
{ echo '#!/bin/sh'; echo "echo \"fragmem \$*\" >> '$T/calls'"
  echo 'setsid sleep 60 < /dev/null > /dev/null 2>&1 &'; echo 'echo $!'; echo 'echo "fragmem: stub" >&2'; } > "$T/fragmem"
chmod +x "$T/fragmem"
touch "$T/fio-block"
bb_bg --jobs bufreadfrag-1m --fragmem "$T/fragmem"
waitfor "$T/fio-running" || bad "fio never ran: $(cat "$T/err")"
kill -INT -- -"$BGPID" 2>/dev/null || true
wait_pid "$BGPID" || bad "bench-board did not end"
grep -q "^fragmem -w [0-9]* -a 32$" "$T/calls" || bad "fragmem was not run with -w: $(grep fragmem "$T/calls")"
sleep 0.2
alive=""
for p in $(ps -eo pid,args | awk '$2 == "sleep" && $3 == "60" { print $1 }'); do
    [ "$(ps -o sid= -p "$p" | tr -d ' ')" = "$p" ] && alive="$alive $p" && echo "$p" >> "$T/pids"
done
[ -z "$alive" ] && ok "Ctrl-C during a bufreadfrag job: the holder is killed" || bad "the holder lives on:$alive"
if command -v gcc > /dev/null; then
    gcc -O2 -o "$T/fragmem-host" "$TOP/tests/guest/fragmem.c"
    sleep 2 & w=$!
    hp=$("$T/fragmem-host" -w "$w" 4 2>/dev/null) || bad "fragmem -w $w 4 failed"
    echo "$hp" >> "$T/pids"
    wait "$w"
    wait_pid "$hp" 4 && ok "fragmem -w PID: the holder leaves once PID is gone" || bad "fragmem -w: the holder $hp lives on"
else
    echo "  (no gcc: fragmem -w not run)"
fi

echo "6. switch-driver: Ctrl-C between unbind and bind"
start c
mkfifo "$T/bind-fifo"
rm -rf "$S/bus/platform/drivers/meson-mx-sdhc-rs/bind"; ln -s "$T/bind-fifo" "$S/bus/platform/drivers/meson-mx-sdhc-rs/bind"
as_fg sh "$SW" rust "$CT" > "$T/out" 2> "$T/err" &
p=$!; echo "$p" >> "$T/pids"
i=0; until [ "$(cat "$PD/driver_override" 2>/dev/null)" = meson-mx-sdhc-rs ] || [ $i -gt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.3
kill -INT -- -"$p" 2>/dev/null || true
sleep 0.3
# the kernel's bind: the driver there by the time the write returns
bind_to meson-mx-sdhc-rs
timeout 5 cat "$T/bind-fifo" > /dev/null || true
wait_pid "$p" 10 || bad "switch-driver rust did not end"
rc=0; wait "$p" || rc=$?
[ "$rc" = 0 ] && grep -q 'now held by meson-mx-sdhc-rs' "$T/out" && ok "c -> rust interrupted in the bind: it goes through" ||
    bad "c -> rust interrupted in the bind: exit $rc: $(cat "$T/out" "$T/err")"
rm -f "$S/bus/platform/drivers/meson-mx-sdhc-rs/bind"
start rust
mkdir -p "$S/kernel/debug/mmc1"; echo "bounce_size: 0" > "$S/kernel/debug/mmc1/limits"
touch "$T/slow-rmmod"
as_fg sh "$SW" reload "$CT" --module "$T/fake.ko" bounce_size=0 > "$T/out" 2> "$T/err" &
p=$!; echo "$p" >> "$T/pids"
waitfor "$T/in-rmmod" || bad "rmmod never ran: $(cat "$T/err")"
kill -INT -- -"$p" 2>/dev/null || true
wait_pid "$p" 10 || bad "switch-driver reload did not end"
rc=0; wait "$p" || rc=$?
[ "$rc" = 0 ] && [ -L "$PD/driver" ] && grep -q '^insmod ' "$T/calls" &&
    ok "reload interrupted while the module unloads: loaded again, the controller bound" ||
    bad "reload interrupted: exit $rc, driver $(readlink "$PD/driver" || echo none): $(cat "$T/err")"

# reload whose messages go to a pipe with no reader, the new parameters
# refused (insmod fails with any): the module is loaded again without them
start rust
mkdir -p "$S/kernel/debug/mmc1"; echo "bounce_size: 0" > "$S/kernel/debug/mmc1/limits"
cp "$T/bin/insmod" "$T/insmod.orig"
sed -i '3i [ $# -le 1 ] || exit 1' "$T/bin/insmod"
set +e
sh "$SW" reload "$CT" --module "$T/fake.ko" bounce_size=3 2>&1 | (exec true)
rc=${PIPESTATUS[0]}
set -e
cp "$T/insmod.orig" "$T/bin/insmod"
[ "$rc" = 1 ] && [ "$(readlink "$PD/driver" | sed 's|.*/||')" = meson-mx-sdhc-rs ] &&
    ok "reload with its messages into a closed pipe: exit 1, the controller bound again (not killed by SIGPIPE)" ||
    bad "reload into a closed pipe: exit $rc, driver '$(readlink "$PD/driver" || echo none)', driver_override '$(cat "$PD/driver_override" 2>/dev/null)'"

echo "7. bench-board's inputs"
start c
rc=0; sh "$BB" "${BBARGS[@]}" --offset 16777216t --dry-run > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "offset: '16777216t' is not a size" "$T/err" && ok "--offset 16777216t (2^64): refused" ||
    bad "--offset 16777216t: exit $rc: $(cat "$T/out" "$T/err")"
rc=0; sh "$BB" "${BBARGS[@]}" --size 99999999999999999999 --dry-run > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "is not a size" "$T/err" && ok "--size of 20 digits: refused" || bad "--size 20 digits: exit $rc"
echo precious > "$T/victim"; ln -s "$T/victim" "$T/link.json"
rc=0; sh "$BB" "${BBARGS[@]}" --json "$T/link.json" --dry-run > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'is a symbolic link' "$T/err" && [ "$(cat "$T/victim")" = precious ] &&
    ok "--json naming a link: refused" || bad "--json link: exit $rc: $(cat "$T/err")"
# the --json name made a link to a folder during the run (by whoever can
# write to its folder): refused, nothing written into that folder
start c
mkdir -p "$T/victimdir"; rm -f "$T/race.json"
cp "$T/bin/fio" "$T/fio.orig"
sed -i '2a [ -e "$T/race.json" ] || ln -s "$T/victimdir" "$T/race.json"' "$T/bin/fio"
rc=0; sh "$BB" "${BBARGS[@]}" --json "$T/race.json" --jobs read-64k > "$T/out" 2> "$T/err" || rc=$?
cp "$T/fio.orig" "$T/bin/fio"
[ "$rc" = 1 ] && grep -q 'became a symbolic link during the run' "$T/err" && [ -z "$(ls -A "$T/victimdir")" ] &&
    [ -L "$T/race.json" ] && ok "--json made a link to a folder mid-run: refused, nothing written through it" ||
    bad "--json link mid-run: exit $rc, in the folder: $(ls -A "$T/victimdir"): $(tail -2 "$T/err")"
rm -f "$T/race.json"
rc=0; sh "$BB" "${BBARGS[@]}" --json "$T/race.json" --jobs read-64k > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 0 ] && [ -f "$T/race.json" ] && [ ! -L "$T/race.json" ] && [ "$(stat -c %a "$T/race.json")" = 644 ] &&
    grep -q '"tool": "bench-board"' "$T/race.json" && [ -z "$(find "$T" -maxdepth 1 -name '.bench-board-json.*')" ] &&
    ok "--json: written, mode 644, no temporary file left next to it" || bad "--json write: exit $rc: $(tail -2 "$T/err")"
mkdir -p "$T/alone" "$T/cwd" "$T/path"
cp "$BB" "$T/alone/bench-board"; cp "$TOP/scripts/board-region.sh" "$T/alone/"
cp "$T/sw" "$T/cwd/switch-driver"; cp "$T/sw" "$T/path/switch-driver"; : > "$T/cwd/meson_mx_sdhc_rs.ko"
cp "$T/fragmem" "$T/path/fragmem"; cp "$T/fragmem" "$T/cwd/fragmem"
printf '#!/bin/sh\necho "cbc $*" >> %s/calls\n' "$T" > "$T/path/check-board-config"; chmod +x "$T/path"/*
: > "$T/calls"
rc=0; (cd "$T/cwd" && PATH="$T/path:$PATH" sh "$T/alone/bench-board" --device "$T/dev/mmcblk1" --rust-module "$T/fake.ko" --dry-run) > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'no switch-driver next to this script' "$T/err" && ok "switch-driver: not from PATH" ||
    bad "switch-driver from PATH: exit $rc: $(cat "$T/err")"
rc=0; (cd "$T/cwd" && PATH="$T/path:$PATH" sh "$T/alone/bench-board" --device "$T/dev/mmcblk1" --switch-driver "$T/sw" --dry-run) > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q 'no meson_mx_sdhc_rs.ko next to this script' "$T/err" && ok "the Rust module: not from the current folder" ||
    bad "the module from the current folder: exit $rc: $(cat "$T/out" "$T/err")"
rc=0; (cd "$T/cwd" && PATH="$T/path:$PATH" sh "$T/alone/bench-board" --device "$T/dev/mmcblk1" --switch-driver "$T/sw" \
    --rust-module "$T/fake.ko" --no-write --jobs read-4k,bufreadfrag-1m --variant max_segs=64 --dry-run) > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 0 ] && grep -q 'bufreadfrag-1m skipped: no fragmem' "$T/err" && ! grep -q '^cbc ' "$T/calls" &&
    ok "fragmem and check-board-config: not from PATH or the current folder" ||
    bad "fragmem/check-board-config from PATH: exit $rc, calls $(grep -c '^cbc' "$T/calls"): $(cat "$T/err")"
rc=0; env -u MESON_SDHC_TEST_HOOKS sh "$BB" "${BBARGS[@]}" --jobs read-4k --dry-run > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" != 0 ] && grep -q 'ignoring BENCH_BOARD_SYSFS' "$T/err" && ! grep -q 'dry run' "$T/out" &&
    ok "bench-board: BENCH_BOARD_SYSFS ignored without MESON_SDHC_TEST_HOOKS=1" || bad "bench-board hooks without the flag: exit $rc: $(cat "$T/out" "$T/err")"
rc=0; env -u MESON_SDHC_TEST_HOOKS sh "$SW" status "$CT" > "$T/out" 2> "$T/err" || rc=$?
grep -q 'ignoring SWITCH_DRIVER_SYSFS' "$T/err" && ! grep -q "^$CT: c" "$T/out" &&
    ok "switch-driver: SWITCH_DRIVER_SYSFS ignored without MESON_SDHC_TEST_HOOKS=1" || bad "switch-driver hooks without the flag: exit $rc: $(cat "$T/out" "$T/err")"

echo "($SECONDS s)"
[ "$fail" = 0 ] || { echo "board-races: FAILED"; exit 1; }
echo "board-races: all passed"
