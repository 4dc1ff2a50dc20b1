#!/usr/bin/env bash
# make install: install meson_mx_sdhc_rs.ko like any out-of-tree module, with
# the kernel's own `modules_install` (M=): into
# $INSTALL_MOD_PATH/lib/modules/<KDIR's release>/$INSTALL_MOD_DIR (defaults:
# the running system's /, and "updates"), then depmod when KDIR has System.map.
#
#   make install [KDIR=...] [INSTALL_MOD_PATH=...] [INSTALL_MOD_DIR=...]
#
# The module is built first (make module).  The modprobe.d example is not
# installed: see contrib/modprobe.d/meson_mx_sdhc_rs.conf.
set -euo pipefail
. "$(dirname "$0")/common.sh"
kbuild_env
KDIR=${KDIR:-$CACHE/kernel}
[ -f "$KDIR/include/config/kernel.release" ] || die "KDIR=$KDIR is not a prepared kernel build tree"
[ -f "$TOP/meson_mx_sdhc_rs.ko" ] || die "no meson_mx_sdhc_rs.ko (make module)"
rel=$(cat "$KDIR/include/config/kernel.release")
make -C "$KDIR" M="$TOP" ARCH="${ARCH:-arm}" LLVM="${LLVM:-$LLVM_SUFFIX}" modules_install
log "installed meson_mx_sdhc_rs.ko for $rel under ${INSTALL_MOD_PATH:-}/lib/modules/$rel/${INSTALL_MOD_DIR:-updates}"
