#!/usr/bin/env bash
# scripts/check-board-config on real configurations: the test kernel's tree
# (nothing missing), multi_v7_defconfig as it comes (CONFIG_RUST missing, the
# built-in C driver and its initcall_blacklist= name), multi_v7_defconfig with
# CONFIG_RUST=y (nothing missing; the C driver said to be built in), and
# broken copies of the test .config
# (big-endian, KASAN, no KALLSYMS with the C driver built in, another rustc):
# each is reported missing.  The C driver's initcall name is checked against
# the 7.3 source and the object multi_v7_defconfig builds in (a module has
# only init_module: initcall_blacklist= is for the built-in driver).  No
# board boots.
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/common.sh"
CBC="$TOP/scripts/check-board-config"
KDIR="$CACHE/kernel"
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }

# run NAME ARGS...: check-board-config's output in $T/NAME.out, status in RC
run() {
    local name=$1; shift
    RC=0
    "$CBC" "$@" > "$T/$name.out" 2>&1 || RC=$?
    cp "$T/$name.out" "$LOGDIR/board-config.$name.out"
}
has() { grep -qE -- "$2" "$T/$1.out"; }
missing_count() { sed -n 's/^result: \([0-9]*\) missing.*/\1/p' "$T/$1.out"; }

# --- the C driver's initcall name --------------------------------------------
name=$(sed -n 's/^C_INITCALL=//p' "$CBC")
src=$(readlink -f "$KDIR/source")
drv=$(sed -n 's/^module_platform_driver(\([a-z0-9_]*\));/\1/p' "$src/drivers/mmc/host/meson-mx-sdhc-mmc.c")
if [ "${drv}_init" = "$name" ]; then
    ok "the 7.3 source registers module_platform_driver($drv): initcall ${drv}_init"
else
    bad "check-board-config says $name, the source has module_platform_driver($drv)"
fi
# The object as multi_v7_defconfig builds it in (C only, make prepare cached):
# its device initcall is the function the blacklist names.
fn=$("$TOP/scripts/check-builds" --initcall multi_v7_defconfig) || fn="(none)"
if [ "$fn" = "$name" ]; then
    ok "multi_v7_defconfig's built-in meson-mx-sdhc-mmc.o: device initcall $fn"
else
    bad "multi_v7_defconfig's built-in meson-mx-sdhc-mmc.o: device initcall '$fn', check-board-config says $name"
fi
# Any cached kernel with the C driver built in: the name is in its System.map.
for d in "$CACHE"/kernel*/; do
    [ -f "$d/System.map" ] && grep -qx 'CONFIG_MMC_MESON_MX_SDHC=y' "$d/.config" 2>/dev/null || continue
    if grep -qE " t $name\$" "$d/System.map"; then ok "$name in $(basename "$d")/System.map (built in)"
    else bad "$name not in $(basename "$d")/System.map (C driver built in)"; fi
done

# --- the test kernel's tree ----------------------------------------------------
run test --kdir "$KDIR"
if [ "$RC" = 0 ] && has test '^result: nothing missing' && has test 'ok +CONFIG_RUST=y' &&
   has test 'ok +rustc: ' && has test 'ok +rust/libkernel.rmeta' &&
   has test 'NOTE +CONFIG_MMC_MESON_MX_SDHC=m' && has test '^the C driver is a MODULE' &&
   has test "ok +scripts/mod/modpost: a host program for .*this machine \\($(uname -m)\\)" &&
   has test 'ok +rust/libmacros.so: a host program for'; then
    ok "test kernel: nothing missing, rustc matches, C driver =m said, host programs for $(uname -m)"
else
    bad "test kernel (status $RC):"; sed 's/^/    /' "$T/test.out"
fi
has test 'BOARD +CONFIG_MACH_MESON8' && ok "test kernel: the Meson8b board support it lacks is listed" ||
    bad "test kernel: no BOARD line for MACH_MESON8"

# the same .config gzipped, as a board's /proc/config.gz
gzip -c "$KDIR/.config" > "$T/config.gz"
run gz "$T/config.gz"
if [ "$RC" = 0 ] && has gz '^result: nothing missing' && has gz 'ok +CONFIG_RUST=y'; then
    ok "the test .config gzipped (/proc/config.gz): nothing missing"
else
    bad "gzipped .config (status $RC):"; sed 's/^/    /' "$T/gz.out"
fi

# --- multi_v7_defconfig, as it comes and with CONFIG_RUST=y --------------------
cfg=$("$TOP/scripts/check-builds" --config multi_v7_defconfig)
run mv7 "$cfg/.config"
if [ "$RC" = 1 ] && [ "$(missing_count mv7)" = 1 ] && has mv7 'MISSING +CONFIG_RUST=y' &&
   has mv7 "initcall_blacklist=$name" && has mv7 'ok +  CONFIG_KALLSYMS=y' &&
   has mv7 "^the C driver is BUILT IN .*initcall_blacklist=$name on the kernel command line"; then
    ok "multi_v7_defconfig: only CONFIG_RUST missing; C driver built in: initcall_blacklist=$name"
else
    bad "multi_v7_defconfig (status $RC):"; sed 's/^/    /' "$T/mv7.out"
fi
cfg=$("$TOP/scripts/check-builds" --config multi_v7_rust)
run mv7r "$cfg/.config"
if [ "$RC" = 0 ] && has mv7r '^result: nothing missing' && has mv7r "initcall_blacklist=$name"; then
    ok "multi_v7_defconfig + CONFIG_RUST=y: nothing missing"
else
    bad "multi_v7_defconfig + CONFIG_RUST=y (status $RC):"; sed 's/^/    /' "$T/mv7r.out"
fi

# --- broken copies: each must be reported --------------------------------------
broken() { # name expect-regex sed-script
    sed -e "$3" "$KDIR/.config" > "$T/$1.config"
    run "$1" --no-toolchain "$T/$1.config"
    if [ "$RC" = 1 ] && has "$1" "$2"; then ok "$1: $(grep -m1 -E -- "$2" "$T/$1.out" | sed 's/^ *//')"
    else bad "$1 not reported (status $RC)"; sed 's/^/    /' "$T/$1.out"; fi
}
broken big-endian 'MISSING +CONFIG_CPU_LITTLE_ENDIAN' \
    's/^CONFIG_CPU_LITTLE_ENDIAN=y/# CONFIG_CPU_LITTLE_ENDIAN is not set\nCONFIG_CPU_BIG_ENDIAN=y/'
broken kasan 'MISSING +CONFIG_KASAN must be off' '$a CONFIG_KASAN=y'
broken no-rust 'MISSING +CONFIG_RUST=y' 's/^CONFIG_RUST=y/# CONFIG_RUST is not set/'
broken builtin-no-kallsyms 'MISSING +  CONFIG_KALLSYMS=y' \
    's/^CONFIG_MMC_MESON_MX_SDHC=m/CONFIG_MMC_MESON_MX_SDHC=y/; s/^CONFIG_KALLSYMS=y/# CONFIG_KALLSYMS is not set/'
broken no-common-clk 'MISSING +CONFIG_COMMON_CLK=y' 's/^CONFIG_COMMON_CLK=y/# CONFIG_COMMON_CLK is not set/'
# --kdir with a System.map (a kernel with the C driver built in): the name is
# taken from it, also the LTO stub's; a System.map without it is reported
sysmap() { # name system.map-line lto(y/n): a fake --kdir
    mkdir -p "$T/$1"
    sed 's/^CONFIG_MMC_MESON_MX_SDHC=m/CONFIG_MMC_MESON_MX_SDHC=y/' "$KDIR/.config" > "$T/$1/.config"
    [ "$3" = n ] || echo 'CONFIG_LTO_CLANG=y' >> "$T/$1/.config"
    printf 'c0008000 T _text\n%s\nc0f00000 T _end\n' "$2" > "$T/$1/System.map"
    run "$1" --no-toolchain --kdir "$T/$1"
}
sysmap map-plain "c0e1a2b4 t $name" n
has map-plain "ok +  System.map: the initcall is $name: initcall_blacklist=$name\$" &&
    ok "System.map: $name found" || { bad "System.map with $name:"; sed 's/^/    /' "$T/map-plain.out"; }
stub="__initstub__kmod_meson_mx_sdhc__123_904_${name}6"
sysmap map-lto "c0e1a2b4 t $stub" y
has map-lto "initcall_blacklist=$stub\$" && has map-lto 'NOTE +  CONFIG_LTO_CLANG=y' &&
    ok "System.map with LTO: the stub $stub" || { bad "System.map with LTO:"; sed 's/^/    /' "$T/map-lto.out"; }
sysmap map-none "c0e1a2b4 t some_other_init" n
[ "$RC" = 1 ] && has map-none "MISSING +  no $name in" && ok "System.map without it: reported" ||
    { bad "System.map without $name:"; sed 's/^/    /' "$T/map-none.out"; }

# another rustc: with the toolchain check on
sed 's/^CONFIG_RUSTC_VERSION_TEXT=.*/CONFIG_RUSTC_VERSION_TEXT="rustc 1.78.0 (9b00956e5 2024-04-29)"/' \
    "$KDIR/.config" > "$T/rustc.config"
run rustc "$T/rustc.config"
if [ "$RC" = 1 ] && has rustc 'MISSING +rustc: the kernel was configured with .rustc 1.78.0'; then
    ok "another rustc: reported"
else
    bad "another rustc not reported (status $RC)"; sed 's/^/    /' "$T/rustc.out"
fi

[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: check-board-config"
