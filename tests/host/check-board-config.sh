#!/usr/bin/env bash
# scripts/check-board-config on small hand-made configurations and trees
# (run-all: host-check-board-config; no kernel needed, about a second):
#
#   1. the C driver's case in plain words: built in (initcall_blacklist=
#      needed), a module (the modprobe.d blacklist is enough), absent;
#   2. the toolchain checks skip themselves on the board (CBC_MACHINE=armv7l
#      stands for uname -m there) and say so, and run on the build machine
#      and with --toolchain;
#   3. --kdir refuses a tree whose host programs (scripts/mod/modpost,
#      scripts/basic/fixdep, rust/libmacros.so) are for another machine: a
#      fake tree with a 32-bit ARM ELF header in each, checked as on an
#      x86-64 build machine (refused, naming the machines) and as on the
#      board (accepted); a copy of a program of this machine is accepted here.
# tests/board/board-config.sh checks real configurations and trees.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CBC="$TOP/scripts/check-board-config"
T=$(mktemp -d "${TMPDIR:-/tmp}/check-board-config.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
# run NAME ARGS...: output in $T/NAME.out, status in RC
run() { local n=$1; shift; RC=0; "$CBC" "$@" > "$T/$n.out" 2>&1 || RC=$?; }
has() { grep -qE -- "$2" "$T/$1.out"; }
show() { sed 's/^/    /' "$T/$1.out"; }

base='CONFIG_ARM=y
CONFIG_CPU_32v7=y
CONFIG_CPU_LITTLE_ENDIAN=y
CONFIG_HAVE_RUST=y
CONFIG_RUST_IS_AVAILABLE=y
CONFIG_RUST=y
CONFIG_RUSTC_VERSION_TEXT="rustc 1.95.0 (test)"
CONFIG_MODULES=y
CONFIG_MODULE_UNLOAD=y
CONFIG_MMC=y
CONFIG_MMC_BLOCK=y
CONFIG_OF=y
CONFIG_COMMON_CLK=y
CONFIG_HAS_DMA=y
CONFIG_REGULATOR=y
CONFIG_KALLSYMS=y
CONFIG_BLK_DEV_INITRD=y'
printf '%s\nCONFIG_MMC_MESON_MX_SDHC=y\n' "$base" > "$T/y.config"
printf '%s\nCONFIG_MMC_MESON_MX_SDHC=m\n' "$base" > "$T/m.config"
printf '%s\n# CONFIG_MMC_MESON_MX_SDHC is not set\n' "$base" > "$T/n.config"

# --- 1. the C driver's case ----------------------------------------------------------
run y --no-toolchain "$T/y.config"
has y '^the C driver is BUILT IN .*initcall_blacklist=meson_mx_sdhc_driver_init on the kernel command line' &&
    ok "=y: $(grep "^the C driver" "$T/y.out" | cut -c1-100)" || { bad "=y not said"; show y; }
run m --no-toolchain "$T/m.config"
has m '^the C driver is a MODULE .*the modprobe.d blacklist .* is enough' &&
    ok "=m: $(grep '^the C driver' "$T/m.out" | cut -c1-100)" || { bad "=m not said"; show m; }
run n --no-toolchain "$T/n.config"
has n '^the C driver is ABSENT' && ok "off: $(grep '^the C driver' "$T/n.out" | cut -c1-100)" || { bad "off not said"; show n; }

# --- 2. the toolchain on the board -------------------------------------------------------
RC=0; CBC_MACHINE=armv7l "$CBC" "$T/y.config" > "$T/board.out" 2>&1 || RC=$?
if [ "$RC" = 0 ] && has board 'NOTE +not checked: run on the board \(this machine is armv7l\)' && ! has board 'rustc:'; then
    ok "on the board (armv7l): toolchain checks skipped, said so, nothing missing"
else bad "on the board (status $RC)"; show board; fi
RC=0; CBC_MACHINE=x86_64 RUSTC=/nonexistent "$CBC" "$T/y.config" > "$T/build.out" 2>&1 || RC=$?
[ "$RC" = 1 ] && has build "MISSING +rustc: the kernel was configured with 'rustc 1.95.0 \(test\)'" &&
    ok "on the build machine (x86_64): the rustc is checked" || { bad "build machine (status $RC)"; show build; }
RC=0; CBC_MACHINE=armv7l RUSTC=/nonexistent "$CBC" --toolchain "$T/y.config" > "$T/forced.out" 2>&1 || RC=$?
[ "$RC" = 1 ] && has forced 'MISSING +rustc:' && ok "--toolchain on the board: checked" || { bad "--toolchain"; show forced; }

# --- 3. --kdir host programs for another machine --------------------------------------------
fake_elf() { # FILE MACHINE-LOW MACHINE-HIGH (octal bytes): a 32-bit little-endian ELF header
    printf '\177ELF\001\001\001\000\000\000\000\000\000\000\000\000\003\000'"\\$2\\$3"'\001\000\000\000' > "$1"
    head -c 100 /dev/zero >> "$1"
}
K="$T/kdir"
mkdir -p "$K/scripts/mod" "$K/scripts/basic" "$K/rust/bindings" "$K/include/generated" "$K/include/config"
cp "$T/y.config" "$K/.config"
touch "$K/include/generated/autoconf.h" "$K/rust/libkernel.rmeta" "$K/rust/bindings/.bindings_generated.rs.cmd"
echo 7.3.0-test > "$K/include/config/kernel.release"
for f in scripts/mod/modpost scripts/basic/fixdep rust/libmacros.so; do fake_elf "$K/$f" 050 000; done
RC=0; CBC_MACHINE=x86_64 "$CBC" --no-toolchain --kdir "$K" > "$T/foreign.out" 2>&1 || RC=$?
if [ "$RC" = 1 ] && has foreign 'MISSING +scripts/mod/modpost is built for 32-bit ARM, this machine is x86_64 \(uname -m\)' &&
   has foreign 'MISSING +scripts/basic/fixdep is built for 32-bit ARM' && has foreign 'MISSING +rust/libmacros.so is built for 32-bit ARM'; then
    ok "a tree prepared on an ARM board, checked on x86-64: refused ($(grep -c MISSING "$T/foreign.out") missing)"
else bad "foreign tree (status $RC)"; show foreign; fi
RC=0; CBC_MACHINE=armv7l "$CBC" --no-toolchain --kdir "$K" > "$T/native.out" 2>&1 || RC=$?
[ "$RC" = 0 ] && has native 'ok +scripts/mod/modpost: a host program for 32-bit ARM, this machine \(armv7l\)' &&
    ok "the same tree on the board (armv7l): accepted" || { bad "native tree (status $RC)"; show native; }
for f in scripts/mod/modpost scripts/basic/fixdep rust/libmacros.so; do cp /bin/true "$K/$f"; done
RC=0; "$CBC" --no-toolchain --kdir "$K" > "$T/here.out" 2>&1 || RC=$?
[ "$RC" = 0 ] && has here "ok +scripts/mod/modpost: a host program for .*this machine \\($(uname -m)\\)" &&
    ok "programs of this machine ($(uname -m)): accepted" || { bad "this machine's programs (status $RC)"; show here; }

[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: check-board-config"
