#!/usr/bin/env bash
# scripts/check-board-config --initramfs on the board kernel's initramfs
# (Documentation/board.rst, 4.: the check before the command line changes),
# on the host, no boot:
#
#   accepted: the board guest's initramfs (make guest-board) with the Rust
#   module built against the board kernel laid out as initramfs-tools does it
#   (lib/modules/<release>/updates/meson_mx_sdhc_rs.ko, modules.dep from
#   depmod -b for that release, conf/modules, the modprobe.d file), gzip- and
#   zstd-compressed, after an uncompressed early archive, and as a uInitrd
#   (mkimage -A arm -O linux -T ramdisk -C none, when u-boot-tools is
#   installed);
#   refused: the same without the module, and the board guest's initrd.gz as
#   the emulated board boots it (its modules are flat in /lib/modules, for
#   insmod, not under a release: nothing there for modprobe or udev).
#
# BOARD_KDIR, BOARD_GUEST and BOARD_MODULE point it at another kernel tree,
# guest initramfs and module (e.g. the test kernel's, to try the test without
# the board kernel).
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/common.sh"
KD=${BOARD_KDIR:-$CACHE/kernel-board}
GUEST=${BOARD_GUEST:-$TOP/build/guest-board/initrd.gz}
KO=${BOARD_MODULE:-$TOP/build/module-board/meson_mx_sdhc_rs.ko}
CBC="$TOP/scripts/check-board-config"
[ -f "$KD/include/config/kernel.release" ] || die "no kernel tree in $KD (make kernel-board)"
[ -f "$GUEST" ] || die "no $GUEST (make guest-board)"
[ -f "$KO" ] || die "no $KO (make guest-board)"
command -v depmod >/dev/null || die "depmod missing (kmod)"
REL=$(cat "$KD/include/config/kernel.release")
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }

# the board guest's initramfs, unpacked, plus the module as initramfs-tools installs it
R="$T/root"
mkdir -p "$R"
(cd "$R" && gzip -dc "$GUEST" | cpio -i -d --quiet)
M="$R/lib/modules/$REL"
mkdir -p "$M/updates" "$R/conf" "$R/etc/modprobe.d"
cp "$KO" "$M/updates/"
for f in modules.order modules.builtin modules.builtin.modinfo; do
    [ -f "$KD/$f" ] && cp "$KD/$f" "$M/"
done
depmod -b "$R" "$REL" 2>"$T/depmod.err" || { cat "$T/depmod.err"; die "depmod -b failed"; }
echo "meson_mx_sdhc_rs bounce_size=131072 max_segs=64" > "$R/conf/modules"
cp "$TOP/contrib/modprobe.d/meson_mx_sdhc_rs.conf" "$R/etc/modprobe.d/"
echo "  the board guest's initramfs with lib/modules/$REL/updates/meson_mx_sdhc_rs.ko, depmod -b: $(grep -c . "$M/modules.dep") lines in modules.dep"
cpio_of() { (cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0); }
mkdir -p "$T/early/kernel/x86/microcode"; head -c 2000 /dev/urandom > "$T/early/kernel/x86/microcode/GenuineIntel.bin"

expect() { # NAME accept|refuse FILE
    local rc=0
    "$CBC" --initramfs "$3" > "$T/$1.out" 2>&1 || rc=$?
    cp "$T/$1.out" "$LOGDIR/initramfs-check.$1.out"
    if { [ "$2" = accept ] && [ "$rc" = 0 ]; } || { [ "$2" = refuse ] && [ "$rc" = 1 ] && grep -q '^result: REFUSED' "$T/$1.out"; }; then
        ok "$1: $( [ "$2" = accept ] && echo accepted || echo refused)$( [ "$2" = refuse ] && echo ": $(grep -m1 MISSING "$T/$1.out" | sed 's/^ *MISSING *//' | cut -c1-100)")"
    else
        bad "$1: expected $2, status $rc:"; sed 's/^/    /' "$T/$1.out"
    fi
}
cpio_of "$R" | gzip > "$T/initrd.img-$REL"
expect board-gzip accept "$T/initrd.img-$REL"
grep -q "ok .*lib/modules/$REL/updates/meson_mx_sdhc_rs.ko (release $REL)" "$T/board-gzip.out" &&
    ok "the module found for release $REL" || bad "the module not reported for $REL"
cpio_of "$R" | zstd -q > "$T/zstd.img"
expect board-zstd accept "$T/zstd.img"
{ cpio_of "$T/early"; cpio_of "$R" | gzip; } > "$T/early.img"
expect board-early accept "$T/early.img"
if command -v mkimage >/dev/null; then
    mkimage -A arm -O linux -T ramdisk -C none -d "$T/early.img" "$T/uInitrd" > /dev/null
    expect board-uinitrd accept "$T/uInitrd"
else
    echo "  (no mkimage here, u-boot-tools: the uInitrd case is in tests/host/initramfs-check.sh)"
fi
rm "$M/updates/meson_mx_sdhc_rs.ko"
depmod -b "$R" "$REL" 2>/dev/null
{ cpio_of "$T/early"; cpio_of "$R" | gzip; } > "$T/without.img"
expect board-without-module refuse "$T/without.img"
expect board-guest-as-booted refuse "$GUEST"

[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: check-board-config --initramfs on the board kernel's initramfs"
