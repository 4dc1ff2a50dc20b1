#!/usr/bin/env bash
# Moving the SD card slot's live controller C -> Rust -> C with
# scripts/switch-driver --controller sd-slot (meson-mx-sdio <->
# meson-mx-sdio-rs) on the emulated Odroid-C1 with a 64 MiB SD card: the
# controller found by its compatible, or by its name (which chooses the
# controller; --controller sdhc with it is refused), the default still the
# SDHC; data written through one driver read back and verified through the
# other, the disk readable as soon as switch-driver returns; refused (exit
# 3, naming the mount, the controller left with the C driver) while a
# partition is mounted, reload too; reload max_segs=1 on a free card gives
# the Rust driver the controller with one segment a request, the data intact.
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -u
export MESON_SDHC_TEST_HOOKS=1
SDIO_RS=/lib/modules/meson_mx_sdio_rs.ko
insmod /lib/modules/meson-mx-sdio.ko || fail "insmod meson-mx-sdio"
insmod $SDIO_RS || fail "insmod meson_mx_sdio_rs"
w=0
until SD=$(slot_disk) && [ -b "$SD" ]; do
  w=$((w + 1)); [ $w -lt 100 ] || fail "no card in the SD slot after 10 s"; usleep 100000
done
sw() { switch-driver "$@" --controller sd-slot; }
holder() { sw status | cut -d' ' -f2; }
# switch_with FILE DISK SEEK FROM TO: 4 random MiB in FILE written to DISK at SEEK MiB
# through the FROM driver, then switch-driver TO; D: the card's disk, readable as soon
# as switch-driver returns
switch_with() {
  dd if=/dev/urandom of=$1 bs=1M count=4 2>/dev/null
  dd if=$1 of=$2 bs=1M seek=$3 oflag=direct 2>/dev/null || fail "write through the $4 driver"
  sw $5 || fail "switch-driver $5"
  D=$(sw disk) || fail "switch-driver $5 returned before the card was back"
  dd if="$D" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null || fail "$D not readable right after switch-driver $5"
}
# same FILE SKIP WHAT: the 4 MiB at SKIP MiB of $D are FILE's
same() {
  dd if=$D of=/tmp/back bs=1M skip=$2 count=4 iflag=direct 2>/dev/null
  cmp $1 /tmp/back || fail "$3"
}
st=$(sw status) || fail "switch-driver status --controller sd-slot"
[ "$st" = "c1108c20.mmc: c" ] || fail "status: '$st'"
[ "$(switch-driver status c1108c20.mmc)" = "c1108c20.mmc: c" ] || fail "status c1108c20.mmc: the device did not choose the controller"
[ "$(sw disk)" = "$SD" ] || fail "switch-driver disk: '$(sw disk)', the slot's card is $SD"
d=$(switch-driver status) && [ "${d%%:*}" = "$(sdhc_dev)" ] || fail "the default is not the SDHC: '$d'"
rc=0
switch-driver status c1108c20.mmc --controller sdhc 2> /tmp/e || rc=$?
[ $rc = 1 ] && grep -q 'not an Amlogic MX SDHC' /tmp/e || fail "--controller sdhc with the SD slot's controller: exit $rc"
say "found: $st, its card $SD; the SDHC stays the default; --controller sdhc c1108c20.mmc refused"

# a mounted partition refuses the switch and the reload
write_mbr $SD '\000\376\377\377\203\376\377\377\000\010\000\000\000\100\000\000' 1
mke2fs -q ${SD}p1 > /dev/null 2>&1 || mke2fs ${SD}p1 > /dev/null || fail "mke2fs"
mkdir -p /mnt/p1
mount -t ext4 ${SD}p1 /mnt/p1 || mount ${SD}p1 /mnt/p1 || fail "mount ${SD}p1"
for op in rust "reload --module $SDIO_RS max_segs=1"; do
  rc=0
  # shellcheck disable=SC2086 # the verb and its arguments
  sw $op > /tmp/o 2> /tmp/e || rc=$?
  sed 's/^/    /' /tmp/e
  [ $rc = 3 ] && grep -q "^switch-driver:   ${SD}p1 is mounted on /mnt/p1\$" /tmp/e ||
    fail "switch-driver $op with ${SD}p1 mounted: exit $rc, not refused naming the mount"
  [ "$(holder)" = c ] && [ -b ${SD}p1 ] || fail "switch-driver $op refused: the controller changed hands"
done
[ "$(sw users)" = "${SD}p1 is mounted on /mnt/p1" ] || fail "switch-driver users: '$(sw users)'"
umount /mnt/p1 || fail "umount"
say "ok: rust and reload refused while ${SD}p1 is mounted, the C driver kept the card"

# C -> Rust -> C, the data checked across the switches (past the partition)
switch_with /tmp/a $SD 32 C rust
drv=$(basename "$(readlink /sys/bus/platform/devices/c1108c20.mmc/driver)")
[ "$drv" = meson-mx-sdio-rs ] || fail "after switch-driver rust the controller is bound to '$drv'"
same /tmp/a 32 "data written by the C driver differs when read by the Rust driver"
say "C -> Rust: 4 MiB verified on $D"
switch_with /tmp/b $D 40 Rust c
[ "$(holder)" = c ] || fail "switch-driver c did not move the controller"
same /tmp/b 40 "data written by the Rust driver differs when read by the C driver"
same /tmp/a 32 "the first 4 MiB changed"
say "Rust -> C: 4 MiB verified, the first 4 MiB intact"

# reload on a free card: the Rust driver with the new parameter
rc=0
sw reload --module $SDIO_RS max_segs=1 > /tmp/o 2> /tmp/e || rc=$?
cat /tmp/o /tmp/e
[ $rc = 0 ] || fail "reload max_segs=1 on a free card: exit $rc"
grep -q '^  max_segments: 1$' /tmp/o || fail "reload: the limits it prints do not say max_segments: 1"
[ "$(holder)" = rust ] || fail "reload: the Rust driver does not hold the controller"
D=$(sw disk) || fail "reload: no card"
same /tmp/b 40 "data differs after the reload"
say "ok: reload max_segs=1: the Rust driver holds $D with one segment a request, data intact"
G
)
emu --board odroidc1 --driver none --sd-slot "$T/sd.img" --sd-slot-size 64 "$g"
grep -E '^\[guest\]' "$T/serial.log"
