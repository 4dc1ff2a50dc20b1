#!/usr/bin/env bash
# Installing the module like other out-of-tree modules, on the test kernel's
# tree, into temporary roots (never the system's):
#  1. `make install INSTALL_MOD_PATH=...`: the kernel's modules_install puts
#     the module under lib/modules/<release>/updates and depmod indexes it;
#  2. the modprobe.d example (contrib/modprobe.d/meson_mx_sdhc_rs.conf): with
#     the test kernel's own modules installed too, udev's `modprobe -b` of
#     the SDHC's DT alias loads both drivers without it and only
#     meson_mx_sdhc_rs with it; its options are parameters the module has;
#  3. DKMS (Debian's dkms, make setup): `make dkms-source`, then dkms add,
#     build, install and remove against the test kernel's tree, with its
#     trees (--sourcetree, --dkmstree, --installtree) in a temp dir and
#     --no-depmod (dkms would run depmod on the system's /lib/modules).
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/common.sh"
KDIR="$CACHE/kernel"
rel=$(cat "$KDIR/include/config/kernel.release")
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
MOD=meson_mx_sdhc_rs
CONF="$TOP/contrib/modprobe.d/$MOD.conf"

# --- 1. make install --------------------------------------------------------------
s=$SECONDS
R="$T/root"
make -C "$TOP" --no-print-directory install KDIR="$KDIR" INSTALL_MOD_PATH="$R" > "$T/install.log" 2>&1 ||
    { cat "$T/install.log"; bad "make install failed"; exit 1; }
ko="$R/lib/modules/$rel/updates/$MOD.ko"
if [ -f "$ko" ] && cmp -s "$ko" "$TOP/$MOD.ko"; then ok "make install: $ko (the built module) in $((SECONDS - s))s"
else bad "make install: no $ko, or not the built module"; ls -lR "$R" | head -20; fi
grep -q "^updates/$MOD.ko:" "$R/lib/modules/$rel/modules.dep" && ok "depmod: updates/$MOD.ko in modules.dep" ||
    bad "depmod: $MOD not in modules.dep"
vm=$(modinfo -b "$R" -k "$rel" -F vermagic "$MOD" 2>/dev/null || true)
[ "${vm%% *}" = "$rel" ] && ok "modinfo by name: vermagic $vm" || bad "modinfo -b: vermagic '$vm' (want $rel)"
# depmod in a root holding only this module misses the kernel's index files: expected
if grep -i 'warning\|error' "$T/install.log" |
        grep -vqE "depmod: WARNING: could not open modules\.(order|builtin|builtin\.modinfo) at "; then
    bad "make install printed warnings:"; sed 's/^/    /' "$T/install.log"
fi

# --- 2. the modprobe.d example ----------------------------------------------------
make -C "$KDIR" -s modules_install INSTALL_MOD_PATH="$R" ARCH=arm LLVM="$LLVM_SUFFIX" > "$T/kinst.log" 2>&1 ||
    { cat "$T/kinst.log"; bad "the test kernel's modules_install failed"; exit 1; }
# the in-tree modules_install replaced modules.dep: our module must still be in it
grep -q "^updates/$MOD.ko:" "$R/lib/modules/$rel/modules.dep" || bad "$MOD lost from modules.dep by the kernel's modules_install"
# the alias the SDHC's DT node raises (compatible = "amlogic,meson8-sdhc", "amlogic,meson-mx-sdhc")
alias='of:NmmcT(null)Camlogic,meson8-sdhcCamlogic,meson-mx-sdhc'
mkdir -p "$T/none.d" "$T/conf.d"
sed 's/^#options /options /' "$CONF" > "$T/conf.d/$MOD.conf"
# what udev's `modprobe -b MODALIAS` would load
resolve() {
    modprobe -d "$R" -S "$rel" -C "$1" -b --show-depends "$alias" 2>/dev/null |
        sed -n 's|^insmod .*/\([^/]*\)\.ko.*|\1|p' | tr - _ | sort | tr '\n' ' '
}
without=$(resolve "$T/none.d")
with=$(resolve "$T/conf.d")
[ "$without" = "meson_mx_sdhc meson_mx_sdhc_rs " ] && ok "without the example: $alias -> $without" ||
    bad "without the example the alias resolves to '$without' (want both drivers)"
[ "$with" = "meson_mx_sdhc_rs " ] && ok "with the example: -> $with(meson_mx_sdhc blacklisted)" ||
    bad "with the example the alias resolves to '$with' (want meson_mx_sdhc_rs only)"
# explicit loading of the C driver still works (going back: switch-driver c)
modprobe -d "$R" -S "$rel" -C "$T/conf.d" --show-depends meson_mx_sdhc 2>&1 | grep -q 'meson-mx-sdhc.ko' &&
    ok "modprobe meson_mx_sdhc by name still resolves with the example" || bad "meson_mx_sdhc by name does not resolve"
line=$(modprobe -d "$R" -S "$rel" -C "$T/conf.d" --show-depends "$MOD" 2>&1 | tail -1)
[[ "$line" == "insmod $ko "*"bounce_size=65536"* ]] && ok "options applied: $line" || bad "options: '$line'"
parms=$(modinfo -F parm "$ko" | cut -d: -f1 | tr '\n' ' ')
for p in $(sed -n "s/^#\{0,1\}options $MOD //p" "$CONF" | tr ' ' '\n' | cut -d= -f1 | sort -u); do
    [[ " $parms" == *" $p "* ]] && ok "option $p is a parameter of the module" || bad "option $p: not a parameter ($parms)"
done

# --- 3. DKMS ------------------------------------------------------------------------
s=$SECONDS
command -v dkms >/dev/null || { bad "dkms missing (make setup)"; exit 1; }
D="$T/dkms"
mkdir -p "$D/src" "$D/tree"
# a system with the test kernel installed: its modules under $D/root/lib/modules
make -C "$KDIR" -s modules_install INSTALL_MOD_PATH="$D/root" ARCH=arm LLVM="$LLVM_SUFFIX" > "$T/kinst2.log" 2>&1 ||
    { cat "$T/kinst2.log"; bad "the test kernel's modules_install failed"; exit 1; }
ver=0.1+test
src=$(DKMS_VERSION=$ver make -C "$TOP" -s --no-print-directory dkms-source DKMS_SOURCE="$D/src")
[ -f "$src/dkms.conf" ] || { bad "make dkms-source made no dkms.conf ($src)"; exit 1; }
# dkms's depmod would run on the system's /lib/modules: --no-depmod, and depmod -b here
DK=(dkms --sourcetree "$D/src" --dkmstree "$D/tree" --installtree "$D/root/lib/modules" --no-depmod)
dk() { # step args...
    local step=$1; shift
    if "${DK[@]}" "$step" -m "$MOD" -v "$ver" "$@" > "$T/dkms-$step.log" 2>&1; then
        ok "dkms $step $* ($((SECONDS - s))s)"
    else
        bad "dkms $step:"; sed 's/^/    /' "$T/dkms-$step.log"
        find "$D/tree" -name make.log -exec sh -c 'echo "    --- $1"; tail -30 "$1" | sed "s/^/    /"' _ {} \;
        return 1
    fi
}
if dk add && dk build -k "$rel/armv7l" --kernelsourcedir "$KDIR" &&
   dk install -k "$rel/armv7l" --kernelsourcedir "$KDIR"; then
    dko=$(find "$D/root/lib/modules/$rel" -name "$MOD.ko*" | head -1)
    if [ -n "$dko" ] && [ "$(modinfo -F vermagic "$dko" | cut -d' ' -f1)" = "$rel" ]; then
        ok "dkms installed ${dko#"$D/root"} for $rel"
    else
        bad "dkms install left no $MOD.ko for $rel"; find "$D/root/lib/modules/$rel" | head
    fi
    depmod -b "$D/root" -F "$KDIR/System.map" -e "$rel"
    modprobe -d "$D/root" -S "$rel" --show-depends "$MOD" | grep -q "updates/dkms/$MOD.ko" &&
        ok "depmod -b: modprobe finds the DKMS module" || bad "modprobe does not find the DKMS module"
    "${DK[@]}" status -m "$MOD" 2>&1 | sed 's/^/    dkms status: /'
    dk remove --all || true
    [ -z "$(find "$D/root/lib/modules" -name "$MOD.ko*")" ] && ok "dkms remove took the module away" ||
        bad "dkms remove left the module installed"
fi
echo "dkms: $((SECONDS - s))s"

[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: make install, the modprobe.d example and DKMS"
