# Shared settings for the project's scripts.  Sourced, never run.
# shellcheck shell=bash

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${MESON_SDHC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meson-mx-sdhc-rs}
mkdir -p "$CACHE"

KVER_SERIES=7.3
LLVM_SUFFIX=-19
# shellcheck disable=SC2034 # for the scripts that source this one
QEMU_SERIES=10.0

# shellcheck source=toolchain.sh
. "$TOP/scripts/toolchain.sh"

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { printf '[%s] error: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

# find_rust_lib_src: the Rust standard library's sources (the kernel's
# RUST_LIB_SRC) for the machine's rustc (RUSTC, default rustc), or nothing:
# RUST_LIB_SRC from the environment; rustup's layout,
# $($RUSTC --print sysroot)/lib/rustlib/src/rust/library
# (the rust-src component); Debian's rust-src or rust-web-src package.  Building the kernel
# needs them; building the module against a prepared tree does not.
find_rust_lib_src() {
    local d
    if [ -n "${RUST_LIB_SRC:-}" ]; then
        echo "$RUST_LIB_SRC"
        return 0
    fi
    d="$("${RUSTC:-rustc}" --print sysroot 2>/dev/null)/lib/rustlib/src/rust/library"
    if [ -d "$d" ]; then
        echo "$d"
        return 0
    fi
    # Debian's sources are in /usr/src/rustc-X.Y.Z/library: only those of this rustc's
    # version (the kernel is built against the very core sources its rustc ships)
    local v
    v=$("${RUSTC:-rustc}" --version 2>/dev/null | awk '{print $2}')
    d=$( { dpkg -L rust-src 2>/dev/null; dpkg -L rust-web-src 2>/dev/null; } |
        grep -E "/rustc-${v:-none}/library\$" | head -1 || true)
    if [ -n "$d" ] && [ -d "$d" ]; then echo "$d"; fi
    return 0
}

# rust_lib_src: the same, for a kernel build: fails without them.
rust_lib_src() {
    local d
    d=$(find_rust_lib_src)
    [ -n "$d" ] || die "no Rust library sources: neither rustup's rust-src component ($("${RUSTC:-rustc}" --print sysroot 2>/dev/null)/lib/rustlib/src/rust/library) nor Debian's rust-src package (run 'make setup'), and no RUST_LIB_SRC"
    echo "$d"
}

# Path of the Debian linux-source tarball.
linux_tarball() {
    dpkg -L "linux-source-$KVER_SERIES" 2>/dev/null | grep -E '/linux-source-.*\.tar\.(xz|bz2|gz)$' | head -1
}

# Hash of files and strings given on stdin.
hash_inputs() { sha256sum | cut -c1-16; }

# llvm_config: the llvm-config of the LLVM toolchain that LLVM names, read as
# kbuild reads it: a directory ending in / (LLVM=/usr/lib/llvm-19/bin/) is
# the tools' prefix, -N (LLVM=-19) their version suffix, anything else
# (LLVM=1) the unversioned tools on PATH.  Default: LLVM_SUFFIX.
llvm_config() {
    local l=${LLVM:-$LLVM_SUFFIX}
    case "$l" in
    */) echo "${l}llvm-config" ;;
    -*) echo "llvm-config$l" ;;
    *) echo llvm-config ;;
    esac
}

# kbuild_env: PATH with the Rust toolchain and bindgen make setup chose first
# (scripts/toolchain.sh), and LIBCLANG_PATH (bindgen's libclang) from the LLVM
# toolchain LLVM names, unless LIBCLANG_PATH is set.
kbuild_env() {
    PATH="$(toolchain_path):$PATH"
    export PATH
    if [ -z "${LIBCLANG_PATH:-}" ]; then
        local lc
        lc=$(llvm_config)
        command -v "$lc" > /dev/null ||
            die "$lc not found (LLVM=${LLVM:-$LLVM_SUFFIX}: 1 for the unversioned tools on PATH, -N for a version suffix, DIR/ for a prefix); or set LIBCLANG_PATH"
        LIBCLANG_PATH=$("$lc" --libdir)
    fi
    export LIBCLANG_PATH
}

# The crate's module directories: x/ next to x.rs holding Rust files (logic/, bounce/), with
# their subdirectories.
module_dirs() {
    local d
    for d in "$TOP"/*/; do
        d=$(basename "$d")
        [ -f "$TOP/$d.rs" ] && compgen -G "$TOP/$d/*.rs" > /dev/null && echo "$d"
    done
    return 0
}

# mounted_under DIR [MOUNTINFO]: the mount points at DIR or below it, one a
# line, from mountinfo (default /proc/self/mountinfo), its octal escapes
# (\040 for a space) decoded; nothing if there are none
mounted_under() {
    local d=${1%/} mi=${2:-/proc/self/mountinfo}
    awk -v d="$d" '{ m = $5; o = ""
        while (match(m, /\\[0-7][0-7][0-7]/)) {
            c = substr(m, RSTART + 1, 3)
            o = o substr(m, 1, RSTART - 1) sprintf("%c", substr(c, 1, 1) * 64 + substr(c, 2, 1) * 8 + substr(c, 3, 1))
            m = substr(m, RSTART + 4) }
        m = o m
        if (m == d || index(m, d "/") == 1) print m }' "$mi"
}

# remove_tree DIR [MOUNTINFO]: rm -rf DIR, unless something is mounted at or
# below it (status 1, saying what), and never across a file system boundary
# (--one-file-system: a bind mount the check missed is left alone)
remove_tree() {
    local m
    [ -e "$1" ] || [ -L "$1" ] || return 0
    m=$(mounted_under "$1" "${2:-}")
    if [ -n "$m" ]; then
        log "not removing $1: mounted below it: $(echo "$m" | tr '\n' ' ')"
        return 1
    fi
    rm -rf --one-file-system "$1"
}
