#!/bin/sh
# dkms-make.sh KERNEL_SOURCE_DIR [clean] [ignored...]: the DKMS build (MAKE[0]
# and CLEAN in dkms.conf).  Builds with the LLVM toolchain the kernel was
# built with: LLVM=-N when clang-N is installed and the kernel's
# CONFIG_CC_VERSION_TEXT says clang N, else LLVM=1; set LLVM in the
# environment to choose.  DKMS 3.0 appends "CC=clang LD=ld.lld" to the make
# command of a clang-built kernel, naming the unversioned tools (on Debian 12
# another clang than the kernel's, or none): those arguments are ignored here.
set -eu
kdir=$1
shift
op=module
[ "${1:-}" = clean ] && op=clean
cfg="$kdir/.config"
if [ -z "${LLVM:-}" ]; then
    major=$(sed -n 's/^CONFIG_CLANG_VERSION=\([0-9]*\)[0-9][0-9][0-9][0-9]$/\1/p' "$cfg" 2>/dev/null || true)
    if [ -n "$major" ] && command -v "clang-$major" >/dev/null 2>&1; then
        LLVM=-$major
    else
        LLVM=1
    fi
fi
cd "$(dirname "$0")"
exec make "$op" KDIR="$kdir" ARCH=arm LLVM="$LLVM"
