#!/usr/bin/env bash
# make qemu: qemu-system-arm from Debian's qemu 10.0.x source with our
# meson-mx-sdhc and meson-mx-sdio models (qemu/).  Cached by a hash of every
# input.
set -euo pipefail
. "$(dirname "$0")/common.sh"

orig=$(ls "$CACHE"/src/qemu_${QEMU_SERIES}.*.orig.tar.{gz,xz,bz2} 2>/dev/null | sort -V | tail -1 || true)
[ -n "$orig" ] || die "no qemu $QEMU_SERIES source in $CACHE/src (run 'make setup')"
[ -x "$TOOLS_VENV/bin/python3" ] || die "no Python tools in $TOOLS_VENV (run 'make setup')"

key=$( {
    basename "$orig"; stat -c %s "$orig"
    cat "$TOP"/qemu/* "$TOP/scripts/build-qemu.sh"
    gcc --version | head -1
    "$TOOLS_VENV/bin/python3" -c 'import mesonbuild.coredata as c; print(c.version)'
} | hash_inputs)
QOUT="$CACHE/qemu-$key"
if [ -x "$QOUT/build/qemu-system-arm" ] && [ -f "$QOUT/.done" ]; then
    log "qemu cached: $QOUT"
    ln -sfn "$QOUT" "$CACHE/qemu"
    exit 0
fi

rm -rf "$QOUT"; mkdir -p "$QOUT"
log "unpacking $(basename "$orig")"
tar -xf "$orig" -C "$QOUT"
SRC=$(ls -d "$QOUT"/qemu-*/ | head -1)
cp "$TOP/qemu/meson_mx_sdhc.c" "$SRC/hw/sd/"
cp "$TOP/qemu/meson_mx_sdhc.h" "$SRC/include/hw/sd/"
cp "$TOP/qemu/sdio_card.c" "$SRC/hw/sd/"
cp "$TOP/qemu/meson_mx_sdio.c" "$SRC/hw/sd/"
cp "$TOP/qemu/meson_mx_sdio.h" "$SRC/include/hw/sd/"
cp "$TOP/qemu/meson-virt.mak" "$SRC/configs/devices/arm-softmmu/"
# the SDHC's wiring, then the SDIO controller's (the SD card slot) on top
for p in qemu-10.0.patch qemu-10.0-sdio.patch; do
    (cd "$SRC" && patch -p1 -s < "$TOP/qemu/$p") || die "qemu/$p does not apply"
done
# the SDIO card (qemu/sdio_card.c) is built with the SDHC model
echo "system_ss.add(when: 'CONFIG_MESON_MX_SDHC', if_true: files('sdio_card.c'))" \
    >> "$SRC/hw/sd/meson.build"
mkdir -p "$QOUT/build"
cd "$QOUT/build"
log "configuring qemu"
"$SRC/configure" --python="$TOOLS_VENV/bin/python3" --target-list=arm-softmmu --without-default-features \
    --without-default-devices --with-devices-arm=meson-virt --enable-fdt=system \
    --disable-docs --enable-tcg --disable-install-blobs --disable-werror \
    --disable-tools > configure.log 2>&1 || { tail -30 configure.log; die "qemu configure failed"; }
log "building qemu (a few minutes)"
ninja qemu-system-arm > ninja.log 2>&1 || { grep -B5 -A20 -m3 'error' ninja.log; die "qemu build failed"; }
touch "$QOUT/.done"
ln -sfn "$QOUT" "$CACHE/qemu"
log "qemu ready: $QOUT/build/qemu-system-arm"
