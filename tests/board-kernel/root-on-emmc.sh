#!/usr/bin/env bash
# The C driver built in, the root file system on the eMMC
# (Documentation/board.rst, 4. and 6.), on the board kernel (make kernel-board:
# the test configuration with CONFIG_MMC_MESON_MX_SDHC=y) and its guest (make
# guest-board: the Rust module built against it).
#
# The host makes a 64 MiB eMMC image with a DOS partition table (sfdisk) and
# one ext4 partition holding a small root (busybox, switch-driver, the guest
# helpers, /sbin/init = root-init), made from a directory with mkfs.ext4 -d.
# The same card then boots three times through the initramfs's init
# (initramfs-init as rdinit=: insmod meson_mx_sdhc_rs with its parameters,
# rootwait for root=/dev/mmcblk1p1, the eMMC's name on the Odroid-C1, whose
# DT has mmc1 = &sdhc (emu-run --board odroidc1, the default), mount,
# switch_root) and root-init on the eMMC (uses the root: earlier boots' files
# checked, new ones written, synced, read back past the page cache; remount
# read-only), and once without an initramfs:
#
#   1. no initcall_blacklist= (a board kernel as it comes, the Rust module
#      already in the initramfs): the built-in C driver owns the controller,
#      the Rust module loads, registers its driver and binds nothing; the
#      root works through the C driver; switch-driver rust is refused (the
#      root is mounted); rmmod of the Rust module is clean;
#   2. initcall_blacklist=meson_mx_sdhc_driver_init: the C driver is never
#      registered, the Rust driver owns the controller with the parameters
#      given (bounce_size=131072 max_segs=64, seen in the block queue limits),
#      reads what boot 1 wrote, and its statistics show the root's I/O;
#   3. the blacklist removed again (going back): the C driver reads what the
#      Rust driver wrote;
#   4. no initramfs (emu-run --no-initrd): the kernel mounts the root itself
#      through the built-in C driver, so /proc/mounts shows /dev/root;
#      root-init loads the Rust module from the root and switch-driver rust
#      must refuse (exit 3), naming the partition by its device number as
#      mounted on / as /dev/root.
#
# Afterwards, on the host: e2fsck -fn of the partition is clean, and every
# file the three boots wrote is read out with debugfs and matches its MD5SUMS.
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/common.sh"
. "$TOP/tests/root-card.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

[ -f "$CACHE/kernel-board/.done" ] || die "the board kernel is not built (make kernel-board)"
[ -f "$TOP/build/guest-board/initrd.gz" ] || die "no board guest (make guest-board)"
[ -f "$TOP/build/module-board/meson_mx_sdhc_rs.ko" ] || die "no module for the board kernel (make guest-board)"
root_card_tools
grep -qx 'CONFIG_MMC_MESON_MX_SDHC=y' "$CACHE/kernel-board/.config" || die "the board kernel does not build the C driver in"
# The initcall to blacklist is the one check-board-config --kdir finds in the
# board kernel's System.map (what board.rst tells owners to run).
"$TOP/scripts/check-board-config" --kdir "$CACHE/kernel-board" > "$T/config-check.out" 2>&1 ||
    { cat "$T/config-check.out"; die "check-board-config --kdir on the board kernel failed"; }
INITCALL=$(sed -nE 's/.*System.map: the initcall is ([A-Za-z0-9_]+): initcall_blacklist=.*/\1/p' "$T/config-check.out")
[ "$INITCALL" = meson_mx_sdhc_driver_init ] ||
    { cat "$T/config-check.out"; die "check-board-config --kdir gives the initcall '$INITCALL', expected meson_mx_sdhc_driver_init"; }
echo "  ok: check-board-config --kdir on the board kernel: initcall_blacklist=$INITCALL (from System.map)"

# --- the card: DOS partition table, one ext4 partition with the root ----------
MIB=64
R="$T/root"
root_tree "$R" "$HERE/root-init" "$TOP/build/module-board/meson_mx_sdhc_rs.ko" "tests/board-kernel/root-on-emmc.sh"
IMG="$T/card.img"
root_card "$IMG" "$MIB" emmc-root "$R"
echo "  ok: card $MIB MiB, partition 1 at sector $start, $size sectors, ext4 from $R"
sfdisk -l "$IMG" | sed 's/^/    /'

# --- three boots -------------------------------------------------------------
MODPARAMS="bounce_size=131072 max_segs=64"
ROOTDEV=/dev/mmcblk1p1
APPEND="rdinit=/test.sh root=$ROOTDEV rootfstype=ext4 rootwait"
BL="initcall_blacklist=$INITCALL"
boot() { # N DRIVER EXTRA-APPEND
    local n=$1 drv=$2 extra=$3 s=$SECONDS
    emu --kernel board --card emmc --image "$IMG" --driver "$drv" --modparams "$MODPARAMS" \
        --timeout 900 --append "$APPEND${extra:+ $extra}" "$HERE/initramfs-init" ||
        { tail -60 "$T/serial.log"; die "boot $n ($drv) failed"; }
    grep -E '^\[(initramfs|eMMC root)\]' "$T/serial.log" | sed 's/^/    /'
    grep -qE '^\[eMMC root\] \[[0-9.]+\] done: status 0' "$T/serial.log" || die "boot $n: root-init did not finish"
    echo "  ok: boot $n: ${extra:-no initcall_blacklist}: $drv driver, root on $ROOTDEV used ($((SECONDS - s)) s)"
}
boot 1 c ""
boot 2 rust "$BL"
boot 3 c ""
# 4. no initramfs: the kernel mounts the root (/dev/root) and runs root-init
# with the arguments after "--": driver c, root device /dev/root
s=$SECONDS
emu --kernel board --card emmc --image "$IMG" --timeout 900 --no-initrd \
    --append "root=$ROOTDEV rootfstype=ext4 rootwait rw init=/sbin/init -- c /dev/root" ||
    { tail -60 "$T/serial.log"; die "boot 4 (no initramfs) failed"; }
grep -E '^\[eMMC root\]' "$T/serial.log" | sed 's/^/    /'
grep -qE '^\[eMMC root\] \[[0-9.]+\] done: status 0' "$T/serial.log" || die "boot 4: root-init did not finish"
grep -qE "^\[eMMC root\] .*switch-driver rust \(refused\): .*${ROOTDEV}.* is mounted on / \(as /dev/root\)" "$T/serial.log" ||
    die "boot 4: switch-driver did not refuse naming $ROOTDEV mounted on / as /dev/root"
echo "  ok: boot 4: no initramfs, root /dev/root through the C driver; switch-driver rust refused ($((SECONDS - s)) s)"

# --- the file system afterwards, on the host ------------------------------------
root_card_fsck "$IMG"
sed 's/^/    /' "$T/boots"
printf "boot 1 driver=c modparams='%s'\nboot 2 driver=rust modparams='%s'\nboot 3 driver=c modparams='%s'\nboot 4 driver=c modparams=''\n" \
    "$MODPARAMS" "$MODPARAMS" "$MODPARAMS" | cmp -s - "$T/boots" || die "the boot log on the card is not boots 1-4 (c, rust, c, c)"
root_card_files 1 2 3 4
echo "ok: root on the eMMC through the built-in C driver and, with $BL, through the Rust driver"
