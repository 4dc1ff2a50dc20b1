#!/usr/bin/env bash
# Build the meson_mx_sdhc_rs module out of tree.
#
#   scripts/build-module.sh          bindings + modules (meson_mx_sdhc_rs.ko in the repo top,
#                                    sdio/meson_mx_sdio_rs.ko: the SD card slot's driver)
#   scripts/build-module.sh check    rustfmt --check on our sources, then the build with CLIPPY=1
#   scripts/build-module.sh clean    remove the module build products and the generated bindings
#
# Variables (environment or make command line):
#   KDIR   kernel build directory (O=) of a Linux 7.3 tree with CONFIG_RUST
#          (default: the test kernel, $CACHE/kernel)
#   ARCH   default arm
#   LLVM   default -19; 1 for the unversioned tools on PATH, DIR/ for a
#          prefix (LIBCLANG_PATH follows it unless set: scripts/common.sh)
#   RUSTC  the Rust compiler (default: rustc on PATH)
#   RUST_LIB_SRC  passed on only when set or found (rustup's rust-src
#          component, Debian's rust-src): a prepared tree does not need it
#   TEST_KNOBS  1: build with CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS, the
#          debugfs knobs the tests turn (test_knobs.rs); default 0, the driver
#          as installed (make install, DKMS) and benchmarked
#   MODDIR where to build (default: the repo top); another directory gets a
#          copy of the sources, so that the module can be built for two
#          kernels side by side (make guest-bench: build/module-bench)
#
# The MMC host and clock-provider bindings are generated here with the very
# bindgen command line the kernel used for its own bindings (read from
# $KDIR/rust/bindings/.bindings_generated.rs.cmd), restricted to
# include/linux/mmc/ and include/linux/clk-provider.h (and the two functions of
# include/linux/of_platform.h that create and destroy a child node's
# device, from bindings/sd_slot_helper.h).  They go to build/, never into
# the source tree.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kbuild_env

KDIR=${KDIR:-$CACHE/kernel}
ARCH=${ARCH:-arm}
LLVM=${LLVM:-$LLVM_SUFFIX}
MODDIR=${MODDIR:-$TOP}
# One build at a time in a directory (make install, make check and a test may
# run side by side): kbuild and the bindings share the directory's files.
mkdir -p "$MODDIR/build"
exec 9> "$MODDIR/build/.build-module.lock"
flock 9
if [ "$MODDIR" != "$TOP" ]; then
    # A copy of the sources (mtimes kept: kbuild rebuilds only what changed).
    mkdir -p "$MODDIR/bindings"
    rm -f "$MODDIR"/*.rs "$MODDIR"/bindings/*
    cp -p "$TOP"/*.rs "$TOP/Kbuild" "$MODDIR/"
    cp -p "$TOP"/bindings/* "$MODDIR/bindings/"
    # The kernel crate's new modules, as in the kernel tree.
    rm -rf "$MODDIR/rust"
    cp -a "$TOP/rust" "$MODDIR/rust"
    # The module directories: x/ next to x.rs (logic/, bounce/), with their subdirectories.
    for d in $(module_dirs); do
        rm -rf "${MODDIR:?}/$d"
        cp -a "$TOP/$d" "$MODDIR/$d"
    done
    # The second module's directory (its build products stay), with its module directories
    # (sdio/logic/).
    mkdir -p "$MODDIR/sdio"
    rm -f "$MODDIR"/sdio/*.rs
    cp -p "$TOP"/sdio/*.rs "$TOP/sdio/Kbuild" "$MODDIR/sdio/"
    for d in $(TOP="$TOP/sdio" module_dirs); do
        rm -rf "${MODDIR:?}/sdio/$d"
        cp -a "$TOP/sdio/$d" "$MODDIR/sdio/$d"
    done
fi
GEN="$MODDIR/build/bindings"
# bindgen's input: bindings/mmc_helper.h (what the SDHC driver and the series use) and
# bindings/sd_slot_helper.h (what only the SD card slot driver's additions use), one header
# including both, written next to the output
# shellcheck disable=SC2034 # used in the eval of the bindgen command below
HDR="$GEN/helper.h"
OUT="$GEN/mmc_generated.rs"

# Our Rust sources: rustfmt follows the crate root's `mod` items to every
# module file, rust/kernel/ and bindings/mod.rs included (not into the generated
# file, which is include!()d).  Top-level files that are not modules are checked too.
rust_sources() {
    local f
    echo "$TOP/meson_mx_sdhc_rs.rs"
    echo "$TOP/sdio/meson_mx_sdio_rs.rs"
    for f in "$TOP"/*.rs; do
        grep -qE "^mod $(basename "$f" .rs);" "$TOP/meson_mx_sdhc_rs.rs" ||
            [ "$f" = "$TOP/meson_mx_sdhc_rs.rs" ] || echo "$f"
    done
}

check_kdir() {
    [ -d "$KDIR" ] || die "KDIR=$KDIR does not exist (run 'make kernel' or set KDIR)"
    [ -f "$KDIR/.config" ] || die "KDIR=$KDIR is not a configured kernel build directory"
    grep -qx 'CONFIG_RUST=y' "$KDIR/.config" || die "KDIR=$KDIR was not built with CONFIG_RUST=y"
    [ -f "$KDIR/rust/bindings/.bindings_generated.rs.cmd" ] ||
        die "KDIR=$KDIR has no rust/bindings (build the kernel first)"
}

# Names of the types (struct, union, enum, alias) a generated bindings file defines.
type_names() {
    grep -oE '^pub (struct|union|enum|type) [A-Za-z0-9_]+' "$1" | awk '{print $3}' | sort -u
}

# The kernel's bindgen command line, with our header, our output and our allowlist.
gen_bindings() {
    local cmdfile="$KDIR/rust/bindings/.bindings_generated.rs.cmd" cmd tmp
    cmd=$(sed -n 's|^savedcmd_rust/bindings/bindings_generated.rs := ||p' "$cmdfile")
    [ -n "$cmd" ] || die "cannot read the bindgen command from $cmdfile"
    # Drop the trailing post-processing, the dep-file flag and the enum
    # attributes that need #![feature(cfi_encoding)] (not allowed in modules).
    cmd=${cmd%%; sed *}
    cmd=$(sed -E \
        -e 's/ -Wp,-MMD,[^ ]+//' \
        -e "s/ --with-attribute-custom-enum=[^ ]+//g" \
        <<<"$cmd")
    case "$cmd" in "bindgen "*" -o rust/bindings/bindings_generated.rs"*" -- "*) ;;
        *) die "unexpected bindgen command in $cmdfile" ;;
    esac
    # bindgen <kernel header> ... -o <kernel output> ... -- <clang flags>
    local head=${cmd%% -- *} clang=${cmd#* -- }
    head=${head#bindgen }
    head=${head#* }                      # the kernel's bindings_helper.h
    head=${head/ -o rust\/bindings\/bindings_generated.rs/}
    mkdir -p "$GEN"
    printf '#include "%s"\n' "$TOP/bindings/mmc_helper.h" "$TOP/bindings/sd_slot_helper.h" > "$HDR.tmp"
    if cmp -s "$HDR.tmp" "$HDR"; then rm -f "$HDR.tmp"; else mv "$HDR.tmp" "$HDR"; fi
    tmp="$OUT.tmp"
    run_bindgen() {
        (
            cd "$KDIR"
            eval "bindgen \"\$HDR\" $head -o \"\$tmp\"" \
                "--allowlist-file '.*/include/linux/mmc/.*'" \
                "--allowlist-file '.*/include/linux/clk-provider.h'" \
                "--allowlist-file '.*/include/linux/pm_runtime.h'" \
                "--allowlist-function 'of_platform_device_(create|destroy)'" \
                "--allowlist-var 'RUST_CONST_HELPER_.*'" \
                "--no-recursive-allowlist" \
                "$*" \
                "-- $clang"
        ) || die "bindgen failed"
    }
    # Types our headers merely forward-declare (struct clk, struct regulator, ...)
    # come out as opaque copies; the kernel crate already has them, so a second
    # pass leaves them out and the kernel's types are used.
    run_bindgen
    local dup block=()
    for dup in $(comm -12 \
        <(type_names "$tmp") \
        <(type_names "$KDIR/rust/bindings/bindings_generated.rs")); do
        case "$dup" in __*) ;; *) block+=("--blocklist-type '^$dup\$'") ;; esac
    done
    [ ${#block[@]} = 0 ] || run_bindgen "${block[@]}"
    sed -Ei 's/pub const RUST_CONST_HELPER_([a-zA-Z0-9_]*)/pub const \1/g' "$tmp"
    grep -q 'pub struct mmc_host ' "$tmp" || die "generated bindings lack struct mmc_host"
    # Keep the old file (and its mtime) when nothing changed: no needless rebuilds.
    if cmp -s "$tmp" "$OUT"; then rm -f "$tmp"; else mv "$tmp" "$OUT"; fi
}

# RUST_LIB_SRC only when there are library sources: a prepared tree does not
# read them (the kernel's own default is rustup's layout)
RLS=$(find_rust_lib_src)
kmake() {
    local knobs=()
    [ "${TEST_KNOBS:-0}" = 1 ] && knobs=(CONFIG_MMC_MESON_MX_SDHC_RUST_TEST_KNOBS=y)
    make -C "$KDIR" M="$MODDIR" ARCH="$ARCH" LLVM="$LLVM" ${RLS:+RUST_LIB_SRC="$RLS"} ${RUSTC:+RUSTC="$RUSTC"} \
        -j"$(nproc)" "${knobs[@]}" "$@"
}

case "${1:-build}" in
build)
    check_kdir
    gen_bindings
    log "LLVM=$LLVM (LIBCLANG_PATH=$LIBCLANG_PATH), RUST_LIB_SRC=${RLS:-(none)}"
    kmake modules
    for ko in meson_mx_sdhc_rs.ko sdio/meson_mx_sdio_rs.ko; do
        [ -f "$MODDIR/$ko" ] || die "$ko was not produced"
        log "built $MODDIR/$ko"
    done
    ;;
check)
    check_kdir
    src=$(readlink -f "$KDIR/source" 2>/dev/null || echo "$KDIR")
    cfg=()
    [ -f "$src/.rustfmt.toml" ] && cfg=(--config-path "$src/.rustfmt.toml")
    mapfile -t files < <(rust_sources)
    rustfmt --check --edition 2021 "${cfg[@]}" "${files[@]}" || die "rustfmt: sources are not formatted"
    log "rustfmt clean"
    all=("$TOP"/*.rs "$TOP"/bindings/mod.rs)
    for d in $(module_dirs) sdio; do
        mapfile -t -O "${#all[@]}" all < <(find "$TOP/$d" -name '*.rs' | sort)
    done
    mapfile -t -O "${#all[@]}" all < <(find "$TOP/rust" -name '*.rs' | sort)
    RUSTFMT_CONFIG=${cfg[1]:-} "$TOP/scripts/vertical-imports" --check "${all[@]}" ||
        die "imports are not in the kernel's vertical style"
    log "imports vertical"
    gen_bindings
    # Force the crate to be recompiled under clippy.
    rm -f "$MODDIR/meson_mx_sdhc_rs.o" "$MODDIR/sdio/meson_mx_sdio_rs.o"
    kmake CLIPPY=1 modules
    log "clippy clean"
    # 32-bit ARM: the kernel gives Rust no 64-bit division (__aeabi_uldivmod panics), and
    # core's Display/Debug of u64/i64 divide: printing one oopses. Use logic::Dec instead.
    nm=$(command -v "llvm-nm${LLVM_SUFFIX:-}" || command -v llvm-nm-19 || command -v llvm-nm || true)
    if [ -n "$nm" ] && [ "${ARCH:-arm}" = arm ]; then
        bad=$("$nm" -u "$MODDIR/meson_mx_sdhc_rs.ko" "$MODDIR/sdio/meson_mx_sdio_rs.ko" |
            grep -E '4core3fmt3num3imp[xy]NtB[0-9a-z]+_(7Display|5Debug)' || true)
        [ -z "$bad" ] || die "the module prints a u64/i64 with core::fmt (64-bit division, oopses on 32-bit ARM): $bad"
        log "no 64-bit decimal formatting"
    fi
    ;;
clean)
    if [ -d "$KDIR" ]; then kmake clean; fi
    rm -rf "$GEN"
    ;;
*)
    die "usage: $0 [build|check|clean]"
    ;;
esac
