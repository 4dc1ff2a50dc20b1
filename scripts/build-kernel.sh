#!/usr/bin/env bash
# make kernel: build the test kernel (zImage + modules) out of tree from the
# Debian linux-source tarball.  Cached by a hash of every input.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kbuild_env

tarball=$(linux_tarball)
[ -n "$tarball" ] || die "linux-source-$KVER_SERIES is not installed (run 'make setup')"
RLS=$(rust_lib_src)

key=$( {
    echo "tarball $(basename "$tarball") $(stat -c %s "$tarball")"
    dpkg-query -W -f='${Version}\n' "linux-source-$KVER_SERIES" rust-src
    cat "$TOP/scripts/kernel.fragment" "$TOP/scripts/build-kernel.sh"
    rustc --version; bindgen --version; clang$LLVM_SUFFIX --version | head -1
} | hash_inputs)
KOUT="$CACHE/kernel-$key"
SRC="$CACHE/linux-src-$(echo "$(basename "$tarball") $(stat -c %s "$tarball")" | hash_inputs)"

if [ -f "$KOUT/.done" ]; then
    log "kernel cached: $KOUT"
    ln -sfn "$KOUT" "$CACHE/kernel"
    exit 0
fi

if [ ! -f "$SRC/.done" ]; then
    log "unpacking $(basename "$tarball")"
    rm -rf "$SRC"; mkdir -p "$SRC"
    tar -xf "$tarball" -C "$SRC" --strip-components=1
    touch "$SRC/.done"
fi

KMAKE=(make -C "$SRC" O="$KOUT" ARCH=arm LLVM="$LLVM_SUFFIX" RUST_LIB_SRC="$RLS" -j"$(nproc)")
mkdir -p "$KOUT"
"${KMAKE[@]}" -s rustavailable >/dev/null || { "${KMAKE[@]}" rustavailable; die "Rust is not available to the kernel build"; }
"${KMAKE[@]}" -s allnoconfig KCONFIG_ALLCONFIG="$TOP/scripts/kernel.fragment"
# Every line of the fragment must have survived Kconfig.
bad=0
while IFS= read -r line; do
    case "$line" in CONFIG_*=y|CONFIG_*=m|CONFIG_*=[0-9]*)
        grep -qx "$line" "$KOUT/.config" || { log "config did not take: $line"; bad=1; } ;;
    esac
done < "$TOP/scripts/kernel.fragment"
[ "$bad" = 0 ] || die "the kernel config fragment does not apply cleanly"
log "building kernel in $KOUT"
"${KMAKE[@]}" -s zImage modules
touch "$KOUT/.done"
ln -sfn "$KOUT" "$CACHE/kernel"
log "kernel ready: $KOUT/arch/arm/boot/zImage"
