#!/usr/bin/env bash
# The board kit's installer (scripts/board-kit-install, the kit's ./install;
# Documentation/board.rst, "The board kit") run for real against an eMMC root
# file system, whose boot entries then boot on the emulated board (make
# test-board: the board kernel, the C driver built in, and its guest), with
# the JSON of a passing first contact for the kit's module.
#
# The root (ext4 on the eMMC's first partition, root=UUID=..., /sbin/init =
# root-init) holds what a Debian board with extlinux has before the kit: a
# kernel (the board kernel as /boot/vmlinuz-old), its initramfs
# (/boot/initrd.img-old, no Rust module in it) and /boot/extlinux/extlinux.conf
# with one entry, "debian", booting them.  A kit folder laid out as make
# board-kit lays it out, from the board kernel: a linux-image .deb (dpkg-deb:
# its zImage as vmlinuz, its config and its modules), this module built for it
# (make guest-board), the installer, hooks and scripts.  ./install runs on the
# host with ROOT= the root's folder and --cmdline, the real depmod and fdtget, and
# stand-ins first on PATH for dpkg (-i: dpkg-deb -x into the root) and
# update-initramfs (an initramfs from the root's /lib/modules/<release>,
# /etc/initramfs-tools/modules and modprobe.d, with kit-initramfs-init as its
# /init, laid out as initramfs-tools does it, then the post-update.d hooks).
# The installer's own checks (check-board-config --initramfs among them)
# judge what it built.  Then each entry of extlinux.conf boots as U-Boot would
# boot it (its INITRD and APPEND, the board kernel that its LINUX is):
#
#   1. the default entry, kit-rust (initcall_blacklist=): the initramfs
#      modprobes meson_mx_sdhc_rs, the Rust driver holds the SDHC and the
#      root goes through it (root-init: files written, synced, read back past
#      the page cache; the driver's statistics count them);
#   2. the fallback entry, debian (what booted before): the C driver, the
#      files the Rust driver wrote read back intact;
#   3. after ./install --undo: extlinux.conf is the one from before, byte for
#      byte, and its default boots the C driver.
#
# On the host afterwards: e2fsck -fn of the partition is clean.
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/common.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
KD="$CACHE/kernel-board"
[ -f "$KD/.done" ] || die "the board kernel is not built (make kernel-board)"
KO="$TOP/build/module-board/meson_mx_sdhc_rs.ko"
[ -f "$KO" ] || die "no module for the board kernel (make guest-board)"
BB="$CACHE/src/busybox-static/bin/busybox"
[ -x "$BB" ] || die "busybox-static (armhf) missing (make setup)"
for t in sfdisk mkfs.ext4 e2fsck dpkg-deb depmod cpio; do
    command -v "$t" >/dev/null || die "$t missing (make setup)"
done
REL=$(cat "$KD/include/config/kernel.release")
ZIMAGE="$KD/arch/arm/boot/zImage"
UUID=6b2d7f3e-5c1a-4e8b-9d2f-0a1b2c3d4e5f
CMDLINE="root=UUID=$UUID rootfstype=ext4 rootwait rw"

# --- the kit, from the board kernel ------------------------------------------------------
K="$T/kit" P="$T/pkg"
mkdir -p "$K/boot" "$K/sbin" "$K/etc/modprobe.d" "$K/etc/initramfs-tools/hooks" "$K/etc/kernel/postinst.d" \
    "$P/DEBIAN" "$P/boot" "$P/lib/modules/$REL/kernel"
cp "$ZIMAGE" "$P/boot/vmlinuz-$REL"
cp "$KD/.config" "$P/boot/config-$REL"
cp "$KD/.config" "$K/boot/config-$REL"
(cd "$KD" && find . -name '*.ko' -printf '%P\n') | while read -r m; do
    install -D -m 644 "$KD/$m" "$P/lib/modules/$REL/kernel/$m"
done
for f in modules.order modules.builtin modules.builtin.modinfo; do
    [ -f "$KD/$f" ] && cp "$KD/$f" "$P/lib/modules/$REL/"
done
mkdir -p "$K/lib/modules/$REL"
cp -r "$P/lib/modules/$REL/kernel" "$K/lib/modules/$REL/"
printf 'Package: linux-image-%s\nVersion: %s-1\nArchitecture: armhf\nMaintainer: test <t@t>\nDescription: the board kernel\n' \
    "$REL" "$REL" > "$P/DEBIAN/control"
dpkg-deb -Znone --build "$P" "$P.deb" > /dev/null
# as make board-kit makes it: the uInitrd hook in the package, u-boot-tools a dependency
"$TOP/scripts/board-kit-deb" "$P.deb" "$K/linux-image-${REL}_$REL-1_armhf.deb" "$TOP/contrib/kernel/zz-meson-sdhc-uinitrd"
rm -f "$P.deb"
cp "$KO" "$K/meson_mx_sdhc_rs.ko"
# U-Boot's FDT, which install reads (fdtget) against the DT first contact ran under (the JSON's
# dt_ fields below): an SDHC node as the Odroid-C1's; QEMU makes the board's DT
printf '/dts-v1/;\n/ { soc { bus@c1100000 { mmc@8e00 { compatible = "amlogic,meson-mx-sdhc"; max-frequency = <100000000>; bus-width = <8>; mmc-hs200-1_8v; }; }; }; };\n' |
    dtc -q -I dts -O dtb -o "$K/boot/meson8b-odroidc1.dtb" -
printf 'BOARD=odroidc1\nRELEASE=%s\nDTB=meson8b-odroidc1.dtb\n' "$REL" > "$K/KIT"
cp "$TOP/scripts/board-kit-install" "$K/install"
for s in switch-driver check-board-config first-contact bench-board board-region.sh board-report; do
    install -m 755 "$TOP/scripts/$s" "$K/sbin/"
done
cp "$TOP/contrib/modprobe.d/meson_mx_sdhc_rs.conf" "$K/etc/modprobe.d/"
cp "$TOP/contrib/initramfs-tools/hooks/meson_mx_sdhc_rs" "$K/etc/initramfs-tools/hooks/"
cp "$TOP/contrib/kernel/zz-meson-sdhc-uinitrd" "$K/etc/kernel/postinst.d/"
echo "  kit: linux-image-${REL} ($(du -k "$K/linux-image-${REL}_$REL-1_armhf.deb" | cut -f1) KiB, the board kernel's zImage and $(find "$P/lib/modules" -name '*.ko' | wc -l) modules), meson_mx_sdhc_rs.ko for $REL"

# --- stand-ins for dpkg and initramfs-tools -----------------------------------------------
S="$T/bin"; mkdir -p "$S"
cat > "$S/dpkg" <<'EOF'
#!/bin/sh
[ "$1" = -i ] && exec dpkg-deb -x "$2" "$ROOT/"
exit 0
EOF
cat > "$S/update-initramfs" <<EOF
#!/bin/bash
# update-initramfs -c|-u -k RELEASE: the root's modules, conf/modules and
# modprobe.d under kit-initramfs-init, as initramfs-tools lays them out
set -e
rel=\$3
w=\$(mktemp -d "$T/initramfs.XXXXXX")
mkdir -p "\$w/bin" "\$w/sbin" "\$w/conf" "\$w/etc" "\$w/lib/modules" "\$w/proc" "\$w/sys" "\$w/dev" "\$w/newroot"
cp "$BB" "\$w/bin/busybox"
cp "$HERE/kit-initramfs-init" "\$w/init"
cp "$TOP/tests/guest/emu-lib.sh" "$TOP/scripts/switch-driver" "\$w/bin/"
cp -r "\$ROOT/lib/modules/\$rel" "\$w/lib/modules/"
grep -v '^#' "\$ROOT/etc/initramfs-tools/modules" > "\$w/conf/modules" || true
cp -r "\$ROOT/etc/modprobe.d" "\$w/etc/" 2>/dev/null || true
(cd "\$w" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) | gzip > "\$ROOT/boot/initrd.img-\$rel"
rm -rf "\$w"
for h in "\$ROOT"/etc/initramfs/post-update.d/*; do
    [ -x "\$h" ] && "\$h" "\$rel" "/boot/initrd.img-\$rel"
done
exit 0
EOF
chmod +x "$S"/*

# --- the root before the kit: one kernel, its initramfs, extlinux.conf with one entry ----------
R="$T/root"
mkdir -p "$R"/{bin,sbin,dev,proc,sys,tmp,data,root,boot/extlinux,var/lib/board-test,etc/initramfs-tools,lib/modules}
cp "$BB" "$R/bin/busybox"
cp "$TOP/tests/guest/emu-lib.sh" "$TOP/scripts/switch-driver" "$R/bin/"
cp "$HERE/root-init" "$R/sbin/init"
cp "$KO" "$R/lib/modules/"          # root-init's insmod under the C driver
chmod 755 "$R/bin/busybox" "$R/bin/switch-driver" "$R/sbin/init"
echo "root file system of tests/board-kernel/kit-switch.sh" > "$R/etc/board-root"
printf '# modules for the initramfs\n' > "$R/etc/initramfs-tools/modules"
echo "console=ttyAMA0 $CMDLINE BOOT_IMAGE=/boot/vmlinuz-old" > "$R/proc/cmdline"
cp "$ZIMAGE" "$R/boot/vmlinuz-old"
mkdir -p "$R/lib/modules/old"
ROOT=$R "$S/update-initramfs" -c -k old
rm -rf "$R/lib/modules/old"
BEFORE='MENU TITLE Debian
TIMEOUT 5
DEFAULT debian
LABEL debian
    MENU LABEL Debian, the kernel before the kit
    LINUX /boot/vmlinuz-old
    INITRD /boot/initrd.img-old
    APPEND console=ttyAMA0 '"$CMDLINE"
echo "$BEFORE" > "$R/boot/extlinux/extlinux.conf"

# --- ./install ----------------------------------------------------------------------------
# the JSON of a first contact that passed (the fields install checks; first-contact itself
# runs in tests/board/first-contact.sh)
printf '{\n "tool": "first-contact",\n "result": "pass",\n "mode": "file",\n "rust_driver_version": "meson_mx_sdhc_rs md5 %s for %s",\n "kernel": "%s",\n "card_type": "MMC",\n "card_name": "QEMU!!",\n "device_bytes": 67108864,\n "max_req_size": 131072,\n "backup": {"file": "emmc.img.gz", "verified": "same-as-card"},\n "read_compare": {"offset": 0, "size": 67108864, "result": "same", "digest_c": "x", "digest_rust": "x"},\n "patterns": {"offset": null, "bytes": 4194304, "file_system": "/dev/mmcblk0p1", "sizes": [512, 131072, 263680], "buffer_offsets": [512, 1536, 3584], "rust_read_back": "ok", "c_read_back": "ok", "reads_compared": "same"},\n "fsck": "clean",\n "fsck_command": "e2fsck -fn /dev/mmcblk0p1",\n "fsck_status": 0,\n "fsck_summary": null,\n "dt_node": "/soc/bus@c1100000/mmc@8e00",\n "dt_max_frequency": 100000000,\n "dt_hs200_1_8v": true,\n "dt_bus_width": 8,\n "save_file": null\n}\n' \
    "$(md5sum < "$K/meson_mx_sdhc_rs.ko" | cut -d' ' -f1)" "$REL" "$REL" > "$T/first-contact.json"
# the SDHC's card as install finds it on a board (switch-driver disk and its sysfs
# entries: here a stand-in, the host has no SDHC), taken out of the image after
printf '#!/bin/sh\n[ "$1" = disk ] && echo /dev/mmcblk0\n' > "$T/switch-driver-disk"
chmod +x "$T/switch-driver-disk"
mkdir -p "$R/sys/block/mmcblk0/device"
echo 'QEMU!!' > "$R/sys/block/mmcblk0/device/name"
echo 131072 > "$R/sys/block/mmcblk0/size"
rc=0
PATH="$S:$PATH" ROOT=$R SWITCH_DRIVER="$T/switch-driver-disk" "$K/install" --first-contact "$T/first-contact.json" \
    --cmdline "console=ttyAMA0 $CMDLINE" > "$T/install.out" 2>&1 || rc=$?
rm -rf "$R/sys/block"
sed 's/^/    | /' "$T/install.out"
[ "$rc" = 0 ] || die "./install: exit status $rc"
CONF="$R/boot/extlinux/extlinux.conf"
sed 's/^/    extlinux.conf | /' "$CONF"
[ "$(awk 'toupper($1) == "DEFAULT" { print $2 }' "$CONF")" = kit-rust ] || die "DEFAULT is not kit-rust"
cmp -s "$ZIMAGE" "$R/boot/vmlinuz-$REL" || die "/boot/vmlinuz-$REL is not the board kernel's zImage"
echo "  ok: ./install: status 0, DEFAULT kit-rust, /boot/vmlinuz-$REL the board kernel's zImage"

# entry LABEL FIELD: a field of an entry of extlinux.conf (the rest of its line)
entry() {
    awk -v l="$1" -v f="$2" 'toupper($1) == "LABEL" { in_l = ($2 == l) }
        in_l && toupper($1) == f { $1 = ""; sub(/^ /, ""); print; exit }' "$CONF"
}
IMG="$T/card.img"
image() { # the card from the root's folder: DOS label, one ext4 partition with UUID
    truncate -s 0 "$IMG"; truncate -s 64M "$IMG"
    printf 'label: dos\nstart=2048, type=83\n' | sfdisk -q "$IMG"
    read -r start size < <(sfdisk -d "$IMG" | sed -nE 's/.*start= *([0-9]+), size= *([0-9]+).*/\1 \2/p')
    rm -f "$T/part.img"; truncate -s $((size * 512)) "$T/part.img"
    mkfs.ext4 -q -F -U "$UUID" -L emmc-root -d "$R" "$T/part.img"
    dd if="$T/part.img" of="$IMG" bs=512 seek="$start" conv=notrunc status=none
}
boot() { # N LABEL DRIVER: boot entry LABEL as U-Boot would
    local n=$1 l=$2 drv=$3 s=$SECONDS initrd append
    initrd=$(entry "$l" INITRD) append=$(entry "$l" APPEND)
    [ "$(entry "$l" LINUX)" ] || die "extlinux.conf has no entry $l"
    cmp -s "$ZIMAGE" "$R$(entry "$l" LINUX)" || die "entry $l: $(entry "$l" LINUX) is not the board kernel"
    emu --kernel board --card emmc --image "$IMG" --driver "$drv" --timeout 900 \
        --initrd "$R$initrd" --append "$append" ||
        { tail -60 "$T/serial.log"; die "boot $n (entry $l) failed"; }
    grep -E '^\[(kit initramfs|eMMC root)\]' "$T/serial.log" | sed 's/^/    /'
    grep -qE '^\[eMMC root\] \[[0-9.]+\] done: status 0' "$T/serial.log" || die "boot $n: root-init did not finish"
    echo "  ok: boot $n: entry $l ($initrd; $append): the $drv driver holds the SDHC, the root used ($((SECONDS - s)) s)"
}
image
boot 1 kit-rust rust
boot 2 debian c
dd if="$IMG" of="$T/part.img" bs=512 skip=2048 count=$(( $(stat -c %s "$T/part.img") / 512 )) status=none
e2fsck -fn "$T/part.img" > "$T/fsck.out" 2>&1 || { cat "$T/fsck.out"; die "e2fsck -fn found problems after boots 1 and 2"; }
echo "  ok: e2fsck -fn after boots 1 and 2: $(tail -1 "$T/fsck.out")"

# --- ./install --undo ---------------------------------------------------------------------
rc=0
PATH="$S:$PATH" ROOT=$R "$K/install" --undo > "$T/undo.out" 2>&1 || rc=$?
sed 's/^/    | /' "$T/undo.out"
[ "$rc" = 0 ] || die "./install --undo: exit status $rc"
[ "$(cat "$CONF")" = "$BEFORE" ] || die "extlinux.conf after --undo is not the one from before"
echo "  ok: ./install --undo: extlinux.conf is the one from before"
image
boot 3 "$(awk 'toupper($1) == "DEFAULT" { print $2 }' "$CONF")" c
echo "ok: the kit installed, its entry booted the Rust driver, the fallback and --undo the C driver"
