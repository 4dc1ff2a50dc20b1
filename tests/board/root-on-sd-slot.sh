#!/usr/bin/env bash
# The root file system on the SD card in the slot of the emulated Odroid-C1,
# mounted through the initramfs (Documentation/board.rst, the root on the
# SD card), on the test kernel, whose meson-mx-sdio is a module: what the
# board's C driver kept off leaves (the initramfs loads only the module its
# /etc/initramfs-tools/modules names).
#
# The host makes a 32 MiB SD card image with a DOS partition table (sfdisk)
# and one ext4 partition holding a small root (busybox, switch-driver, the
# guest helpers, the Rust module, /sbin/init), made with mkfs.ext4 -d.  The
# card then boots twice through an initramfs init (rdinit=: load the
# slot's driver, wait for root=/dev/mmcblk0p1, the SD card's name on the
# Odroid-C1, whose DT has mmc0 = &sd_card_slot, mount, switch_root):
#   1. the Rust driver: meson_mx_sdio_rs max_segs=32 loaded, meson-mx-sdio
#      never registered, the root found on the slot's card held by
#      meson-mx-sdio-rs, max_segs seen in the block queue; on the root
#      /sbin/init writes files, syncs, reads them back past the page cache,
#      the driver's statistics show the root's I/O and no error, and
#      switch-driver --controller sd-slot c is refused (exit 3) naming the
#      root, with --force too;
#   2. going back: the C driver (meson-mx-sdio) loaded instead reads what
#      the Rust driver wrote and writes its own; the Rust module loaded from
#      the root binds nothing, switch-driver rust is refused naming the root.
# Afterwards, on the host: e2fsck -fn of the partition is clean, and every
# file both boots wrote is read out with debugfs and matches its MD5SUMS.
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/common.sh"
. "$TOP/tests/root-card.sh"
SDR="$TOP/build/module-test/sdio/meson_mx_sdio_rs.ko"
[ -f "$SDR" ] || die "no $SDR (make guest)"
root_card_tools

# --- the initramfs's init: load the slot's driver, wait for root=, switch_root ---
cat > "$T/initramfs-init.in" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug
. /bin/emu-lib.sh
want=@WANT@
say() { echo "[initramfs] [$(cut -d" " -f1 /proc/uptime)] $*"; }
stop() { # never return: PID 1 must not exit
    echo "[initramfs] FAIL: $*"
    dmesg | grep -iE 'mmc|sdio|ext4' | tail -30
    echo "@@EMU-EXIT 1"
    sync
    poweroff -f
    sleep 60
}
root="" rootfstype=auto rootwait=0
for arg in $(cat /proc/cmdline); do
    case "$arg" in
    root=*) root=${arg#root=} ;;
    rootfstype=*) rootfstype=${arg#rootfstype=} ;;
    rootwait) rootwait=1 ;;
    esac
done
[ -n "$root" ] || stop "no root= on the kernel command line"
sw() { switch-driver "$@" --controller sd-slot; }
# what /etc/initramfs-tools/modules loads: the slot's driver, parameters and all
if [ "$want" = rust ]; then
    say "insmod meson_mx_sdio_rs.ko max_segs=32"
    insmod /lib/modules/meson_mx_sdio_rs.ko max_segs=32 || stop "insmod meson_mx_sdio_rs failed"
    [ ! -d /sys/bus/platform/drivers/meson-mx-sdio ] || stop "the C driver meson-mx-sdio is registered"
else
    say "insmod meson-mx-sdio.ko"
    insmod /lib/modules/meson-mx-sdio.ko || stop "insmod meson-mx-sdio failed"
fi
n=0
while [ ! -b "$root" ]; do
    n=$((n + 1))
    [ "$rootwait" = 1 ] && [ "$n" -le 300 ] || stop "root device $root did not appear"
    usleep 100000
done
held=$(sw status | cut -d' ' -f2)
disk=$(sw disk) || stop "no card in the SD card slot (switch-driver disk --controller sd-slot)"
say "root device $root is there after $((n / 10)).$((n % 10)) s; $(sw status)"
case "$root" in
"${disk}p"[0-9]*) say "$root is on the SD card slot's card $disk" ;;
*) stop "root= $root is not on the SD card slot's card $disk" ;;
esac
[ "$held" = "$want" ] || stop "the SD card slot's controller is held by '$held', expected '$want'"
if [ "$want" = rust ]; then
    segs=$(cat "/sys/block/${disk#/dev/}/queue/max_segments")
    [ "$segs" = 32 ] || stop "max_segs=32: max_segments is $segs"
    say "max_segs=32: max_segments = $segs"
fi
# no RTC: set the date, as a board's RTC or NTP would (e2fsck reads a 1970 dtime badly)
date -s '2026-01-01 00:00:00' > /dev/null || stop "date -s"
mkdir -p /newroot
mount -t "$rootfstype" -o rw "$root" /newroot || stop "mount $root on /newroot failed"
[ -x /newroot/sbin/init ] || stop "$root has no /sbin/init"
say "$root mounted, switch_root"
for m in /dev /proc /sys; do mount --move "$m" "/newroot$m" || stop "mount --move $m"; done
exec switch_root /newroot /sbin/init "$want" "$root"
stop "switch_root failed"
INIT

# --- /sbin/init on the SD card: use the root, check the driver, power off ---
cat > "$T/root-init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
grep -q ' /sys/kernel/debug debugfs ' /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug
. /bin/emu-lib.sh
want=$1 rootdev=$2
say() { echo "[SD root] [$(cut -d" " -f1 /proc/uptime)] $*"; }
rc=0
bad() { echo "[SD root] FAIL: $*"; rc=1; }
sw() { switch-driver "$@" --controller sd-slot; }
line=$(awk '$2 == "/"' /proc/mounts)
say "/ is: $line"
case "$line" in "$rootdev / ext4 rw,"*) ;; *) bad "/ is not $rootdev as ext4 rw" ;; esac
[ -f /etc/board-root ] || bad "no /etc/board-root: not the root file system made by the test"
held=$(sw status | cut -d' ' -f2)
say "switch-driver status --controller sd-slot: $(sw status)"
[ "$held" = "$want" ] || bad "the SD card slot's controller is held by '$held', expected '$want'"
mkdir -p /var/lib/board-test /data
boot=$(($(wc -l 2> /dev/null < /var/lib/board-test/boots || echo 0) + 1))
for d in /data/boot-*; do
    [ -f "$d/MD5SUMS" ] || continue
    (cd "$d" && md5sum -c -s MD5SUMS) || bad "$d changed since it was written"
    say "$d ($(wc -l < "$d/MD5SUMS") files, written by the $(cat "$d/DRIVER") driver) intact"
done
d=/data/boot-$boot
mkdir -p "$d/small"
dd if=/dev/urandom of="$d/big.bin" bs=1M count=4 conv=fsync 2> /dev/null || bad "writing $d/big.bin"
i=0
while [ $i -lt 32 ]; do
    dd if=/dev/urandom of="$d/small/f$i" bs=1k count=$((i % 16 + 1)) 2> /dev/null || bad "writing $d/small/f$i"
    i=$((i + 1))
done
echo "$want" > "$d/DRIVER"
(cd "$d" && find . -type f ! -name MD5SUMS ! -name DRIVER | sort | xargs md5sum > MD5SUMS)
echo "boot $boot driver=$want" >> /var/lib/board-test/boots
sync
echo 3 > /proc/sys/vm/drop_caches
(cd "$d" && md5sum -c -s MD5SUMS) || bad "$d read back from the card differs"
say "wrote and read back $d: $(du -sk "$d" | cut -f1) KiB in $(wc -l < "$d/MD5SUMS") files"
if [ "$want" = rust ]; then
    s=/sys/kernel/debug/$(slot_host)/stats
    if [ -r "$s" ]; then
        w=$(sed -n 's/^bytes_written: //p' "$s")
        r=$(sed -n 's/^bytes_read: //p' "$s")
        e=$(grep '^error' "$s" | awk '{ n += $2 } END { print n + 0 }')
        say "the Rust driver's stats: bytes_written $w, bytes_read $r, errors $e"
        [ "${w:-0}" -ge $((4 << 20)) ] || bad "the Rust driver wrote only ${w:-0} bytes"
        [ "${r:-0}" -ge $((4 << 20)) ] || bad "the Rust driver read only ${r:-0} bytes"
        [ "$e" = 0 ] || bad "the Rust driver counted $e errors"
    else
        bad "no $s"
    fi
    other=c
else
    [ -d /sys/module/meson_mx_sdio_rs ] || insmod /lib/modules/meson_mx_sdio_rs.ko || bad "insmod meson_mx_sdio_rs"
    other=rust
fi
for force in "" --force; do
    rc_sw=0
    sw $other $force > /tmp/sw 2>&1 || rc_sw=$?
    [ "$rc_sw" = 3 ] || bad "switch-driver $other $force: exit status $rc_sw with the root on the card (expected 3, refused)"
    grep -Eq " is mounted on /( |$)" /tmp/sw || bad "switch-driver $other $force did not name the root as what uses the card"
    say "switch-driver $other $force (refused): $(tr '\n' ' ' < /tmp/sw)"
done
if [ "$want" = c ]; then
    rmmod meson_mx_sdio_rs || bad "rmmod meson_mx_sdio_rs"
fi
[ "$(sw status | cut -d' ' -f2)" = "$want" ] || bad "the controller changed hands: $(sw status)"
echo 3 > /proc/sys/vm/drop_caches
(cd "$d" && md5sum -c -s MD5SUMS) || bad "$d differs on a last read"
dmesg | grep -E 'EXT4-fs (error|warning)|I/O error|mmc[0-9]+: .*(error|timeout)' && bad "errors in the kernel log"
# kmemleak's scan is the slowest part of a boot: the Rust driver's boot only
[ "$want" != rust ] || kmemleak_check || rc=99
mount -o remount,ro / || bad "remount / read-only"
sync
say "done: status $rc"
echo "@@EMU-EXIT $rc"
poweroff -f
sleep 60
INIT

# --- the card: DOS partition table, one ext4 partition with the root ----------
R="$T/root"
root_tree "$R" "$T/root-init" "$SDR" "the root-on-sd-slot test"
IMG="$T/sd.img"
root_card "$IMG" 32 sd-root "$R"
echo "  ok: SD card 32 MiB, partition 1 at sector $start, $size sectors, ext4 from $R"

# --- two boots -------------------------------------------------------------------
ROOTDEV=/dev/mmcblk0p1
for n in 1 2; do
    want=rust
    [ $n = 1 ] || want=c
    sed "s/@WANT@/$want/" "$T/initramfs-init.in" > "$T/initramfs-init-$want"
    chmod 755 "$T/initramfs-init-$want"
    s=$SECONDS
    emu --board odroidc1 --driver none --sd-slot "$IMG" --timeout 600 \
        --append "rdinit=/test.sh root=$ROOTDEV rootfstype=ext4 rootwait" "$T/initramfs-init-$want" ||
        { tail -60 "$T/serial.log"; die "boot $n ($want) failed"; }
    grep -E '^\[(initramfs|SD root)\]' "$T/serial.log" | sed 's/^/    /'
    grep -qE '^\[SD root\] \[[0-9.]+\] done: status 0' "$T/serial.log" || die "boot $n: /sbin/init on the SD card did not finish"
    echo "  ok: boot $n: the $want driver from the initramfs, root on $ROOTDEV used ($((SECONDS - s)) s)"
done

# --- the file system afterwards, on the host ----------------------------------------
root_card_fsck "$IMG"
printf 'boot 1 driver=rust\nboot 2 driver=c\n' | cmp -s - "$T/boots" ||
    { cat "$T/boots"; die "the boot log on the card is not boots 1-2 (rust, c)"; }
root_card_files 1 2
echo "ok: root on the SD card through the Rust driver of the SD card slot from the initramfs, and back through the C driver"
