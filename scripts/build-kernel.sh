#!/usr/bin/env bash
# make kernel: build the test kernel (zImage + modules) out of tree from the
# Debian linux-source tarball.  Cached by a hash of every input.
#
# KERNEL_VARIANT=bench (make kernel-bench): the same configuration without the
# run-time checkers (lockdep, DMA-API debugging, kmemleak, atomic-sleep
# checks, UBSAN, KFENCE) and without full preemption (CONFIG_PREEMPT), like the
# kernels real boards run; make bench measures on it.  The
# checkers cost the guest more per request than the whole driver does, and
# lockdep switches itself off at the first report (the C driver's), which
# would compare the two drivers on different kernels.
# >>> board variant
#
# KERNEL_VARIANT=board (make kernel-board): the test configuration with the
# in-tree C driver built in (CONFIG_MMC_MESON_MX_SDHC=y, as multi_v7_defconfig
# has it), for tests/board-kernel/ (the root file system on the eMMC through
# the Rust driver, the C driver kept off with initcall_blacklist=).  Its lines
# are between these markers: the cache key hashes this script without them, so
# adding the variant left the keys of the test and bench kernels as they were;
# the board kernel's key hashes them too.
# <<< board variant
# >>> swiotlb variant
#
# KERNEL_VARIANT=swiotlb (make kernel-swiotlb): the test configuration with
# CONFIG_ARM_LPAE=y, which selects SWIOTLB (the only way 32-bit ARM builds it
# besides XEN), for make test-swiotlb: booted with swiotlb=force, every
# streaming mapping is bounced, and skip_clean_invalidate's default must
# resolve to off.  Its lines are between these markers, keyed as the board
# variant's: the other kernels' keys stay as they are.
# <<< swiotlb variant
#
# The source is the tarball with kernel-patches/*.patch applied in name order
# (patch -p1; a patch that does not apply stops the build).  The unpacked tree
# is cached by the tarball and the patches' hash, and every kernel's key
# includes that hash, so changing a patch rebuilds every kernel.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kbuild_env

tarball=$(linux_tarball)
[ -n "$tarball" ] || die "linux-source-$KVER_SERIES is not installed (run 'make setup')"
RLS=$(rust_lib_src)
shopt -s nullglob
PATCHES=("$TOP"/kernel-patches/*.patch)
shopt -u nullglob
patches_hash=$(cat /dev/null "${PATCHES[@]}" | sha256sum | cut -c1-16)
VARIANT=${KERNEL_VARIANT:-test}
CHECKERS='^CONFIG_(DEBUG_KERNEL|DMA_API_DEBUG|PROVE_LOCKING|PROVE_RAW_LOCK_NESTING|DEBUG_ATOMIC_SLEEP|DEBUG_KMEMLEAK[A-Z_]*|PREEMPT|UBSAN[A-Z_]*|KFENCE)='
FRAGMENT=$(mktemp); trap 'rm -f "$FRAGMENT"' EXIT
case "$VARIANT" in
test) cp "$TOP/scripts/kernel.fragment" "$FRAGMENT"; NAME=kernel ;;
bench) grep -vE "$CHECKERS" "$TOP/scripts/kernel.fragment" > "$FRAGMENT"; NAME=kernel-bench ;;
# >>> board variant
board) sed 's/^CONFIG_MMC_MESON_MX_SDHC=m$/CONFIG_MMC_MESON_MX_SDHC=y/' "$TOP/scripts/kernel.fragment" > "$FRAGMENT"
       grep -qx 'CONFIG_MMC_MESON_MX_SDHC=y' "$FRAGMENT" || die "scripts/kernel.fragment has no CONFIG_MMC_MESON_MX_SDHC=m to build in"
       NAME=kernel-board ;;
# <<< board variant
# >>> swiotlb variant
swiotlb) sed 's/^CONFIG_ARM_LPAE=n$/CONFIG_ARM_LPAE=y/' "$TOP/scripts/kernel.fragment" > "$FRAGMENT"
       grep -qx 'CONFIG_ARM_LPAE=y' "$FRAGMENT" || die "scripts/kernel.fragment has no CONFIG_ARM_LPAE=n to turn on"
       NAME=kernel-swiotlb ;;
# <<< swiotlb variant
*) die "KERNEL_VARIANT must be test or bench, not '$VARIANT'" ;;
esac

# >>> board variant
hash_inputs() { sed '/^# >>> [a-z]* variant$/,/^# <<< [a-z]* variant$/d' | sha256sum | cut -c1-16; }
# <<< board variant
key=$( {
    echo "tarball $(basename "$tarball") $(stat -c %s "$tarball")"
    echo "kernel-patches $patches_hash"
    dpkg-query -W -f='${Version}\n' "linux-source-$KVER_SERIES" rust-src
    echo "variant $VARIANT"
    cat "$FRAGMENT" "$TOP/scripts/build-kernel.sh"
    rustc --version; bindgen --version; clang$LLVM_SUFFIX --version | head -1
} | hash_inputs)
# >>> board variant
if [ "$VARIANT" = board ]; then
    key=$( { echo "$key"; sed -n '/^# >>> board variant/,/^# <<< board variant/s/^/board: /p' "$TOP/scripts/build-kernel.sh"; } | hash_inputs)
fi
# <<< board variant
# >>> swiotlb variant
if [ "$VARIANT" = swiotlb ]; then
    key=$( { echo "$key"; sed -n '/^# >>> swiotlb variant/,/^# <<< swiotlb variant/s/^/swiotlb: /p' "$TOP/scripts/build-kernel.sh"; } | hash_inputs)
fi
# <<< swiotlb variant
KOUT="$CACHE/$NAME-$key"
SRC="$CACHE/linux-src-$(echo "$(basename "$tarball") $(stat -c %s "$tarball") patches $patches_hash" | hash_inputs)"

if [ -f "$KOUT/.done" ]; then
    log "kernel cached: $KOUT"
    ln -sfn "$KOUT" "$CACHE/$NAME"
    exit 0
fi

if [ ! -f "$SRC/.done" ]; then
    log "unpacking $(basename "$tarball")"
    rm -rf "$SRC"; mkdir -p "$SRC"
    tar -xf "$tarball" -C "$SRC" --strip-components=1
    for p in "${PATCHES[@]}"; do
        log "applying kernel-patches/$(basename "$p")"
        patch -p1 -s -d "$SRC" --batch --forward --no-backup-if-mismatch < "$p" ||
            die "kernel-patches/$(basename "$p") does not apply to $(basename "$tarball") (tree left in $SRC)"
    done
    touch "$SRC/.done"
fi

KMAKE=(make -C "$SRC" O="$KOUT" ARCH=arm LLVM="$LLVM_SUFFIX" RUST_LIB_SRC="$RLS" -j"$(nproc)")
mkdir -p "$KOUT"
"${KMAKE[@]}" -s rustavailable >/dev/null || { "${KMAKE[@]}" rustavailable; die "Rust is not available to the kernel build"; }
"${KMAKE[@]}" -s allnoconfig KCONFIG_ALLCONFIG="$FRAGMENT"
# Every line of the fragment must have survived Kconfig.
bad=0
while IFS= read -r line; do
    case "$line" in CONFIG_*=y|CONFIG_*=m|CONFIG_*=[0-9]*)
        grep -qx "$line" "$KOUT/.config" || { log "config did not take: $line"; bad=1; } ;;
    esac
done < "$FRAGMENT"
if [ "$VARIANT" = bench ] && grep -qE "${CHECKERS%=}=y" "$KOUT/.config"; then
    die "a checker is still on in the bench kernel: $(grep -E "${CHECKERS%=}=y" "$KOUT/.config" | tr '\n' ' ')"
fi
[ "$bad" = 0 ] || die "the kernel config fragment does not apply cleanly"
# >>> board variant
if [ "$VARIANT" = board ]; then
    grep -qx 'CONFIG_MMC_MESON_MX_SDHC=y' "$KOUT/.config" || die "the board kernel does not build the C driver in"
    grep -qx 'CONFIG_KALLSYMS=y' "$KOUT/.config" || die "the board kernel needs CONFIG_KALLSYMS for initcall_blacklist="
fi
# <<< board variant
# >>> swiotlb variant
if [ "$VARIANT" = swiotlb ]; then
    grep -qx 'CONFIG_SWIOTLB=y' "$KOUT/.config" || die "the swiotlb kernel has no CONFIG_SWIOTLB"
fi
# <<< swiotlb variant
log "building kernel in $KOUT"
"${KMAKE[@]}" -s zImage modules
touch "$KOUT/.done"
ln -sfn "$KOUT" "$CACHE/$NAME"
log "kernel ready: $KOUT/arch/arm/boot/zImage"
