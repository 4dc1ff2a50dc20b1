#!/usr/bin/env bash
# make guest: the guest initramfs for the emulated board: busybox, fio
# (cross-built static from Debian's source, cached), e2fsck (Debian's
# e2fsck-static, as /sbin/e2fsck), the kernel modules
# (C driver, the C driver with the RFC's bounce buffer, mmc_test, our Rust
# modules when built: the SDHC's and, from sdio/ next to it, the SD card
# slot's) and the guest helpers.
# KERNEL_VARIANT=bench (make guest-bench): the same for the bench kernel, with
# the module from build/module-bench, into build/guest-bench.
# KERNEL_VARIANT=board (make guest-board): for the board kernel (the C driver
# built in, so no meson-mx-sdhc.ko), with the module from build/module-board,
# into build/guest-board.
# GUEST_KDIR, RSKO, GUEST_OUT: another kernel build directory, Rust module
# (.ko) and output directory (used by scripts/series-test); GUEST_EXTRA_KO:
# more modules for the guest's /lib/modules (series-test: the Rust debugfs samples).
set -euo pipefail
. "$(dirname "$0")/common.sh"

case "${KERNEL_VARIANT:-test}" in
test) KDIR="$CACHE/kernel"; OUT="$TOP/build/guest"; DEF_RSKO="$TOP/build/module-test/meson_mx_sdhc_rs.ko" ;;
bench) KDIR="$CACHE/kernel-bench"; OUT="$TOP/build/guest-bench"
       DEF_RSKO="$TOP/build/module-bench/meson_mx_sdhc_rs.ko" ;;
board) KDIR="$CACHE/kernel-board"; OUT="$TOP/build/guest-board"
       DEF_RSKO="$TOP/build/module-board/meson_mx_sdhc_rs.ko" ;;
*) die "KERNEL_VARIANT must be test, bench or board" ;;
esac
# Another kernel build, Rust module or output (make series-test: the kernel
# and module built in-tree from the upstream series); unset: the above.
KDIR=${GUEST_KDIR:-$KDIR}
OUT=${GUEST_OUT:-$OUT}
RSKO=${RSKO:-$DEF_RSKO}
[ -f "$KDIR/.done" ] || die "the ${KERNEL_VARIANT:-test} kernel is not built (run 'make kernel' / 'make kernel-bench' / 'make kernel-board')"
BB="$CACHE/src/busybox-static/bin/busybox"
[ -x "$BB" ] || die "busybox-static (armhf) missing (run 'make setup')"
E2FSCK="$CACHE/src/e2fsck-static/sbin/e2fsck.static"
[ -x "$E2FSCK" ] || die "e2fsck-static (armhf) missing (run 'make setup')"

# --- fio -------------------------------------------------------------------
fio_orig=$(ls "$CACHE"/src/fio_*.orig.tar.{gz,xz,bz2} 2>/dev/null | sort -V | tail -1 || true)
[ -n "$fio_orig" ] || die "no fio source in $CACHE/src (run 'make setup')"
AIO="$CACHE/src/libaio-armhf"
[ -f "$AIO/usr/lib/arm-linux-gnueabihf/libaio.a" ] || die "libaio-dev (armhf) missing (run 'make setup')"
fkey=$( { basename "$fio_orig"; arm-linux-gnueabihf-gcc --version | head -1; sed -n '/^# --- fio/,/^# --- initramfs/p' "$0"
          sha256sum "$AIO/usr/lib/arm-linux-gnueabihf/libaio.a"; } | hash_inputs)
FIO="$CACHE/fio-$fkey"
if [ ! -x "$FIO/fio" ]; then
    log "cross-building fio from $(basename "$fio_orig")"
    rm -rf "$FIO.tmp"; mkdir -p "$FIO.tmp"
    tar -xf "$fio_orig" -C "$FIO.tmp" --strip-components=1
    (cd "$FIO.tmp" && LDFLAGS="-L$AIO/usr/lib/arm-linux-gnueabihf" ./configure \
        --cc=arm-linux-gnueabihf-gcc --build-static --disable-native \
        --extra-cflags="-I$AIO/usr/include -L$AIO/usr/lib/arm-linux-gnueabihf" \
        >configure.log 2>&1 && make -j"$(nproc)" >make.log 2>&1) ||
        { tail -20 "$FIO.tmp"/make.log "$FIO.tmp"/configure.log 2>/dev/null; die "fio build failed"; }
    grep -q 'CONFIG_LIBAIO' "$FIO.tmp/config-host.h" || die "fio was configured without libaio (see $FIO.tmp/configure.log)"
    arm-linux-gnueabihf-strip "$FIO.tmp/fio"
    mkdir -p "$FIO"; mv "$FIO.tmp/fio" "$FIO/fio"; rm -rf "$FIO.tmp"
fi

# --- initramfs -----------------------------------------------------------
# --- guest helpers in C (tests/guest/*.c) ---------------------------------
# Static like fio, each cached by a hash of its source: fragmem (make bench's
# fragmented-memory rows).  Here, after the initramfs line, so that fio's key
# (the fio section) stays as it was.
HELPERS=()
for src in "$TOP"/tests/guest/*.c; do
    [ -f "$src" ] || continue
    name=$(basename "$src" .c)
    hkey=$( { cat "$src"; arm-linux-gnueabihf-gcc --version | head -1
              sed -n '/^# --- guest helpers/,/^# --- end of guest helpers/p' "$0"; } | hash_inputs)
    HBIN="$CACHE/guest-helper-$name-$hkey"
    if [ ! -x "$HBIN" ]; then
        log "cross-building $name"
        arm-linux-gnueabihf-gcc -static -O2 -Wall -Werror -o "$HBIN.tmp" "$src" ||
            die "building tests/guest/$name.c failed"
        arm-linux-gnueabihf-strip "$HBIN.tmp"
        mv "$HBIN.tmp" "$HBIN"
    fi
    HELPERS+=("$name:$HBIN")
done
# --- end of guest helpers
ROOT="$OUT/root"
rm -rf "$ROOT"; mkdir -p "$ROOT"/{bin,sbin,dev,proc,sys,tmp,mnt,lib/modules,etc,root}
cp "$BB" "$ROOT/bin/busybox"
cp "$FIO/fio" "$ROOT/bin/fio"
cp "$E2FSCK" "$ROOT/sbin/e2fsck"
kver=$(cat "$KDIR/include/config/kernel.release")
for m in drivers/mmc/host/meson-mx-sdhc.ko drivers/mmc/core/mmc_test.ko \
         drivers/mmc/core/sdio_uart.ko drivers/mmc/host/meson-mx-sdio.ko; do
    # the board kernel has the C driver built in
    if [ "${KERNEL_VARIANT:-test}" = board ] && [ "$m" = drivers/mmc/host/meson-mx-sdhc.ko ]; then
        grep -qx 'CONFIG_MMC_MESON_MX_SDHC=y' "$KDIR/.config" || die "the board kernel does not build the C driver in"
        continue
    fi
    [ -f "$KDIR/$m" ] || die "module $m missing from the kernel build"
    cp "$KDIR/$m" "$ROOT/lib/modules/"
done
if [ -f "$RSKO" ]; then
    cp "$RSKO" "$ROOT/lib/modules/"
fi
# The SD card slot's Rust driver, built with the SDHC's (sdio/ of the same build).
SDIO_KO="$(dirname "$RSKO")/sdio/meson_mx_sdio_rs.ko"
if [ -f "$SDIO_KO" ]; then
    cp "$SDIO_KO" "$ROOT/lib/modules/"
fi
for m in ${GUEST_EXTRA_KO:-}; do cp "$m" "$ROOT/lib/modules/"; done
find "$TOP/tests/guest" -maxdepth 1 -type f ! -name '*.c' -exec cp {} "$ROOT/bin/" \;
# guest kernel modules in C (tests/guest/*/Kbuild: sdio_test), built out of
# tree against the kernel in a copy of their directory
for kb in "$TOP"/tests/guest/*/Kbuild; do
    [ -f "$kb" ] || continue
    mdir="$OUT/modules/$(basename "$(dirname "$kb")")"
    rm -rf "$mdir"; mkdir -p "$mdir"
    cp "$(dirname "$kb")"/* "$mdir/"
    log "building $(basename "$mdir") against $(basename "$(readlink -f "$KDIR")")"
    make -C "$KDIR" M="$mdir" ARCH=arm LLVM="$LLVM_SUFFIX" W=1 modules > "$mdir/build.log" 2>&1 ||
        { tail -30 "$mdir/build.log"; die "building tests/guest/$(basename "$mdir") failed"; }
    if grep -q 'warning:' "$mdir/build.log"; then
        grep 'warning:' "$mdir/build.log"; die "tests/guest/$(basename "$mdir") has warnings"
    fi
    cp "$mdir"/*.ko "$ROOT/lib/modules/"
done
# The C driver with the RFC's bounce buffer (bench/c-rfc-bounce: the kernel's
# meson-mx-sdhc sources, patched in a copy, as meson_mx_sdhc_rfc.ko), for the
# test and bench kernels (the board kernel has the C driver built in; another
# kernel build, GUEST_KDIR, gets none)
if [ "${KERNEL_VARIANT:-test}" != board ] && [ -z "${GUEST_KDIR:-}" ]; then
    rdir="$OUT/modules/c-rfc-bounce"
    log "building meson_mx_sdhc_rfc against $(basename "$(readlink -f "$KDIR")")"
    make -s -C "$TOP/bench/c-rfc-bounce" KDIR="$KDIR" BUILD="$rdir" LLVM="$LLVM_SUFFIX" >&2 ||
        die "building bench/c-rfc-bounce (meson_mx_sdhc_rfc.ko) failed"
    cp "$rdir/drivers/mmc/host/meson_mx_sdhc_rfc.ko" "$ROOT/lib/modules/"
fi
for h in ${HELPERS[@]+"${HELPERS[@]}"}; do cp "${h#*:}" "$ROOT/bin/${h%%:*}"; done
cp "$TOP/scripts/switch-driver" "$TOP/scripts/bench-board" "$TOP/scripts/board-region.sh" \
    "$TOP/scripts/first-contact" "$TOP/scripts/sdhc-pack-probe" "$TOP/scripts/board-report" "$ROOT/bin/"
# busybox init runs our rc (no need for binfmt_script in the kernel)
mv "$ROOT/bin/init" "$ROOT/etc/rc.emu"
ln -s bin/busybox "$ROOT/init"
printf '::sysinit:/bin/busybox sh /etc/rc.emu\n' > "$ROOT/etc/inittab"
chmod +x "$ROOT"/bin/*
echo "$kver" > "$ROOT/etc/kernel-release"
(cd "$ROOT" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1 > "$OUT/initrd.gz")
log "guest ready: $OUT/initrd.gz ($(du -h "$OUT/initrd.gz" | cut -f1))"
