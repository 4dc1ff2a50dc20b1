# Shared settings for the project's scripts.  Sourced, never run.
# shellcheck shell=bash

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${MESON_SDHC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meson-mx-sdhc-rs}
mkdir -p "$CACHE"

KVER_SERIES=7.3
LLVM_SUFFIX=-19
QEMU_SERIES=10.0

log() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }
die() { printf '[%s] error: %s\n' "$(basename "$0")" "$*" >&2; exit 1; }

# The rust-src library folder matching the machine's rustc.
rust_lib_src() {
    local d
    d=$(dpkg -L rust-src 2>/dev/null | grep -E '/library$' | head -1)
    [ -n "$d" ] || die "rust-src is not installed (run 'make setup')"
    echo "$d"
}

# Path of the Debian linux-source tarball.
linux_tarball() {
    dpkg -L "linux-source-$KVER_SERIES" 2>/dev/null | grep -E '/linux-source-.*\.tar\.(xz|bz2|gz)$' | head -1
}

# Hash of files and strings given on stdin.
hash_inputs() { sha256sum | cut -c1-16; }

kbuild_env() {
    export LIBCLANG_PATH
    LIBCLANG_PATH=$(llvm-config$LLVM_SUFFIX --libdir)
    export PATH="$HOME/.cargo/bin:$PATH"
}
