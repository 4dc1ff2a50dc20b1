#!/usr/bin/env bash
# contrib/dts/meson8b-onecloud.dts against Linux 7.3 (run-all:
# host-onecloud-dts; no board): preprocessed with cpp against the 7.3 tree's
# includes as kbuild does, compiled with dtc (no warnings about the SDHC
# node), the SDHC node's properties read back (100 MHz, 8-bit,
# non-removable, no HS200 and a 3.3 V vqmmc by default (HS200 needs a 1.8 V
# VCCQ that no OneCloud schematic here confirms: the lines for it are there,
# commented out), the upstream compatibles), the USB nodes read back (both
# DWC2 controllers and both PHYs okay, each controller's phys the enabled
# PHY, usb0 OTG with a role switch starting as host, usb1 host), the
# Ethernet node read back (ethmac okay, phy-mode "rgmii-rxid" with a 2 ns MAC
# TX delay, phy-handle the RTL8211F at address 0 in the mdio sub-node, the
# PHY's reset-gpios GPIOH_4 active low with its assert/deassert times and its
# interrupt gpio_intc 17 level low), and validated with dt-validate against
# the tree's own bindings: 0 errors on the SDHC node, on the USB controllers
# and PHYs and on the ethmac node, its mdio node and its PHY, and broken
# copies (bus-width 3; role-switch-default-mode "sideways"; phy-mode
# "rgmii-sideways") have errors there (the check bites).  Errors on other
# nodes (meson8b.dtsi's own, and the board compatible "xunlei,onecloud",
# which no binding lists) are counted and printed, not failed on.
#
# The CPU's operating points read back: none above 720 MHz (the DT has no
# cpu-supply, so cpufreq-dt would change the clock at U-Boot's voltage).
#
# The schema is scripts/dt-schema's, which tests/board/dt-validate.sh uses
# too (made once, about 90 s, and cached; the venv $CACHE/venv-dtschema from
# make setup).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/scripts/common.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/onecloud-dts.XXXXXX")
trap 'rm -rf "$T"' EXIT
DTS="$TOP/contrib/dts/meson8b-onecloud.dts"
VENV="$CACHE/venv-dtschema"
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
for t in "$VENV/bin/dt-validate"; do
    [ -x "$t" ] || die "$t missing (run 'make setup')"
done
for t in dtc fdtget cpp; do command -v "$t" >/dev/null || die "$t missing (make setup: device-tree-compiler, cpp)"; done
start=$SECONDS

# --- the 7.3 tree: the test kernel's source, the unpacked one, else the tarball --
src=$(readlink -f "$CACHE/kernel/source" 2>/dev/null || true)
[ -n "$src" ] && [ -f "$src/arch/arm/boot/dts/amlogic/meson8b.dtsi" ] || src=$(ls -d "$CACHE"/linux-src-* 2>/dev/null | head -1)
if [ -z "$src" ] || [ ! -f "$src/arch/arm/boot/dts/amlogic/meson8b.dtsi" ]; then
    tarball=$(linux_tarball)
    [ -n "$tarball" ] || die "no Linux $KVER_SERIES source (run 'make setup')"
    src="$T/linux"; mkdir -p "$src"
    tar -xf "$tarball" -C "$src" --strip-components=1 --wildcards '*/arch/arm/boot/dts/amlogic' \
        '*/include/dt-bindings' '*/scripts/dtc/include-prefixes' '*/Documentation/devicetree/bindings'
fi
echo "Linux tree: $src"

# --- compile as kbuild does (scripts/Makefile.dtbs: cpp -nostdinc -undef -D__DTS__) --
compile() { # DTS DTB
    cpp -nostdinc -undef -x assembler-with-cpp -D__DTS__ -I "$src/include" \
        -I "$src/arch/arm/boot/dts/amlogic" -I "$src/scripts/dtc/include-prefixes" "$1" > "$T/pp.dts"
    dtc -I dts -O dtb -o "$2" "$T/pp.dts" 2> "$T/dtc.err"
}
compile "$DTS" "$T/onecloud.dtb" || { cat "$T/dtc.err"; die "dtc failed"; }
if grep -q 'mmc@8e00' "$T/dtc.err"; then bad "dtc warns about the SDHC node:"; grep 'mmc@8e00' "$T/dtc.err"
else ok "cpp + dtc: compiled ($(grep -c . "$T/dtc.err" || true) dtc warnings, none about the SDHC node)"; fi
P=$(for b in $(fdtget -l "$T/onecloud.dtb" /soc); do
        for n in $(fdtget -l "$T/onecloud.dtb" "/soc/$b" 2>/dev/null); do
            case "$n" in mmc@8e00) echo "/soc/$b/$n" ;; esac
        done
    done | head -1)
[ -n "$P" ] || die "no SDHC node (mmc@8e00) in the DTB"
prop() { fdtget "$T/onecloud.dtb" "$P" "$@" 2>/dev/null || true; }
[ "$(prop max-frequency)" = 100000000 ] && ok "$P: max-frequency 100000000" || bad "max-frequency is '$(prop max-frequency)'"
[ "$(prop bus-width)" = 8 ] && ok "bus-width 8" || bad "bus-width is '$(prop bus-width)'"
[ "$(prop status)" = okay ] && ok "status okay" || bad "status is '$(prop status)'"
fdtget -p "$T/onecloud.dtb" "$P" | grep -qx non-removable && ok "non-removable" || bad "not non-removable"
! fdtget -p "$T/onecloud.dtb" "$P" | grep -qx mmc-hs200-1_8v && ok "no mmc-hs200-1_8v (high speed by default)" || bad "mmc-hs200-1_8v is on by default"
grep -q '^[[:space:]]*\*[[:space:]]*mmc-hs200-1_8v;' "$DTS" && ok "the HS200 line is there, commented out" || bad "no commented HS200 line"
prop compatible | grep -q 'amlogic,meson-mx-sdhc' && ok "compatible: $(prop compatible)" || bad "compatible '$(prop compatible)'"
vq=$(prop vqmmc-supply)
uv=""
for n in $(fdtget -l "$T/onecloud.dtb" /); do
    [ "$(fdtget "$T/onecloud.dtb" "/$n" phandle 2>/dev/null)" = "$vq" ] && uv=$(fdtget "$T/onecloud.dtb" "/$n" regulator-min-microvolt 2>/dev/null || true)
done
[ "$uv" = 3300000 ] && ok "vqmmc-supply: the fixed 3.3 V regulator" || bad "vqmmc-supply is not the 3.3 V regulator ('$uv')"
ALIAS=$(fdtget "$T/onecloud.dtb" /aliases mmc1 2>/dev/null || true)
[ "$ALIAS" = "$P" ] && ok "aliases: mmc1 = $P (the eMMC is mmcblk1)" || bad "mmc1 alias is '$ALIAS'"

# --- USB: usb0/usb1 and their PHYs (meson.dtsi: /soc/usb@c9040000, /soc/usb@c90c0000,
# the PHYs under the cbus at 0x8800 and 0x8820) --------------------------------------
node() { # NAME: the path of the node named NAME, two levels under /soc at most
    local b n
    for b in $(fdtget -l "$T/onecloud.dtb" /soc); do
        [ "$b" = "$1" ] && { echo "/soc/$b"; return 0; }
        for n in $(fdtget -l "$T/onecloud.dtb" "/soc/$b" 2>/dev/null); do
            [ "$n" = "$1" ] && { echo "/soc/$b/$n"; return 0; }
        done
    done
    return 0
}
for pair in usb@c9040000:phy@8800 usb@c90c0000:phy@8820; do
    u=$(node "${pair%%:*}"); ph=$(node "${pair##*:}")
    [ -n "$u" ] && [ -n "$ph" ] || { bad "no node ${pair%%:*} or ${pair##*:}"; continue; }
    st=$(fdtget "$T/onecloud.dtb" "$u" status 2>/dev/null || true)
    pst=$(fdtget "$T/onecloud.dtb" "$ph" status 2>/dev/null || true)
    [ "$st" = okay ] && [ "$pst" = okay ] && ok "$u and $ph: okay" || bad "$u status '$st', $ph status '$pst'"
    [ "$(fdtget "$T/onecloud.dtb" "$u" phys 2>/dev/null)" = "$(fdtget "$T/onecloud.dtb" "$ph" phandle 2>/dev/null)" ] &&
        ok "$u: phys = $ph" || bad "$u: phys is not $ph"
done
U0=$(node usb@c9040000); U1=$(node usb@c90c0000)
if [ -n "$U0" ] && [ "$(fdtget "$T/onecloud.dtb" "$U0" dr_mode 2>/dev/null)" = otg ] &&
    fdtget -p "$T/onecloud.dtb" "$U0" | grep -qx usb-role-switch &&
    [ "$(fdtget "$T/onecloud.dtb" "$U0" role-switch-default-mode 2>/dev/null)" = host ]; then
    ok "usb0: dr_mode otg, usb-role-switch, role-switch-default-mode host"
else bad "usb0 is not OTG with a role switch starting as host"; fi
[ -n "$U1" ] && [ "$(fdtget "$T/onecloud.dtb" "$U1" dr_mode 2>/dev/null)" = host ] && ok "usb1: dr_mode host" ||
    bad "usb1 is not host"

# --- Ethernet: ethmac (meson.dtsi: /soc/ethernet@c9410000), its mdio sub-node and the
# RTL8211F at address 0; the GPIO bank (meson8b.dtsi: gpio: bank@80 in pinctrl@8030)
# and gpio_intc (meson.dtsi: interrupt-controller@9880) by their phandles ------------
E=$(node ethernet@c9410000)
[ -n "$E" ] || die "no ethmac node (ethernet@c9410000) in the DTB"
EPHY="$E/mdio/ethernet-phy@0"
eprop() { fdtget "$T/onecloud.dtb" "$@" 2>/dev/null || true; }
[ "$(eprop "$E" status)" = okay ] && ok "$E: status okay" || bad "$E: status is '$(eprop "$E" status)'"
[ "$(eprop "$E" phy-mode)" = rgmii-rxid ] && ok "$E: phy-mode rgmii-rxid" ||
    bad "$E: phy-mode is '$(eprop "$E" phy-mode)'"
[ "$(eprop "$E" amlogic,tx-delay-ns)" = 2 ] && ok "$E: amlogic,tx-delay-ns 2 (the MAC's TX delay)" ||
    bad "$E: amlogic,tx-delay-ns is '$(eprop "$E" amlogic,tx-delay-ns)'"
[ "$(eprop "$E/mdio" compatible)" = snps,dwmac-mdio ] && ok "$E/mdio: compatible snps,dwmac-mdio" ||
    bad "$E/mdio: compatible is '$(eprop "$E/mdio" compatible)'"
ph=$(eprop "$EPHY" phandle)
[ -n "$ph" ] && [ "$(eprop "$E" phy-handle)" = "$ph" ] && [ "$(eprop "$EPHY" reg)" = 0 ] &&
    ok "$E: phy-handle = $EPHY (reg 0)" || bad "$E: phy-handle is not $EPHY (reg 0)"
gpioh4=$(sed -n 's/^#define[[:space:]]\+GPIOH_4[[:space:]]\+\([0-9]\+\).*/\1/p' "$src/include/dt-bindings/gpio/meson8b-gpio.h")
GB=""
for n in $(fdtget -l "$T/onecloud.dtb" /soc/bus@c1100000 2>/dev/null); do
    case "$n" in pinctrl@8030) GB="/soc/bus@c1100000/$n/bank@80" ;; esac
done
rg=$(eprop "$EPHY" reset-gpios)
[ -n "$gpioh4" ] && [ -n "$GB" ] && [ "$rg" = "$(eprop "$GB" phandle) $gpioh4 1" ] &&
    ok "$EPHY: reset-gpios GPIOH_4 ($gpioh4) active low on $GB" || bad "$EPHY: reset-gpios is '$rg' (GPIOH_4 = '$gpioh4', bank '$GB')"
[ "$(eprop "$EPHY" reset-assert-us)" = 10000 ] && [ "$(eprop "$EPHY" reset-deassert-us)" = 80000 ] &&
    ok "$EPHY: reset-assert-us 10000, reset-deassert-us 80000" ||
    bad "$EPHY: reset-assert-us '$(eprop "$EPHY" reset-assert-us)', reset-deassert-us '$(eprop "$EPHY" reset-deassert-us)'"
[ "$(eprop "$EPHY" interrupt-parent)" = "$(eprop /soc/bus@c1100000/interrupt-controller@9880 phandle)" ] &&
    [ "$(eprop "$EPHY" interrupts)" = "17 8" ] && ok "$EPHY: interrupts 17 level low (GPIOH_3) on gpio_intc" ||
    bad "$EPHY: interrupts '$(eprop "$EPHY" interrupts)', interrupt-parent '$(eprop "$EPHY" interrupt-parent)'"

# --- the CPU's operating points: none above 720 MHz (no cpu-supply in this DT) ----
opps=$(fdtget -l "$T/onecloud.dtb" /opp-table 2>/dev/null || true)
maxhz=0
for o in $opps; do
    read -r hi lo <<< "$(fdtget -t x "$T/onecloud.dtb" "/opp-table/$o" opp-hz)"   # /bits/ 64: two cells
    hz=$(( (16#$hi << 32) + 16#$lo ))
    [ "$hz" -gt "$maxhz" ] && maxhz=$hz
done
if [ -n "$opps" ] && [ "$maxhz" -le 720000000 ]; then ok "CPU operating points: $(echo "$opps" | wc -w), the highest $((maxhz / 1000000)) MHz (no cpu-supply: none above what U-Boot runs)"
else bad "CPU operating points: '$opps', the highest $maxhz Hz"; fi

# --- the schema (scripts/dt-schema: made once, cached, shared with dt-validate) ---
s=$SECONDS
SCHEMA=$("$TOP/scripts/dt-schema") || die "scripts/dt-schema failed"
echo "schema: $SCHEMA ($((SECONDS - s)) s)"

# validate DTB: SDHC-node lines to $T/node.err (count NERR), USB-node lines to $T/usb.err
# (UERR), ethmac/mdio/PHY lines to $T/eth.err (EERR), all others counted in NOTHER
validate() {
    local rc=0
    "$VENV/bin/dt-validate" -m -s "$SCHEMA" "$1" > "$T/validate.out" 2>&1 || rc=$?
    if grep -qE '^Traceback' "$T/validate.out" || [ "$rc" -gt 1 ]; then
        cat "$T/validate.out"; die "dt-validate failed to run (status $rc)"
    fi
    grep -F "$P: failed to match any schema" "$T/validate.out" && die "no schema matched the SDHC node"
    grep -F -e "$P:" -e ": mmc@8e00:" -e ": mmc@8e00 (" "$T/validate.out" > "$T/node.err" || true
    NERR=$(grep -c . "$T/node.err" || true)
    grep -E '(usb@c9040000|usb@c90c0000|phy@8800|phy@8820)[:( ]' "$T/validate.out" > "$T/usb.err" || true
    UERR=$(grep -c . "$T/usb.err" || true)
    grep -F "$E: failed to match any schema" "$T/validate.out" && die "no schema matched the ethmac node"
    grep -E "$ETHRE" "$T/validate.out" > "$T/eth.err" || true
    EERR=$(grep -c . "$T/eth.err" || true)
    NOTHER=$(grep -vF -e "$P:" -e ": mmc@8e00:" -e ": mmc@8e00 (" "$T/validate.out" |
        grep -vE '(usb@c9040000|usb@c90c0000|phy@8800|phy@8820)[:( ]' | grep -vcE "$ETHRE" || true)
}
# the ethmac node, by name or path, its mdio node ("mdio (snps,dwmac-mdio):") and the PHY
ETHRE='(ethernet@c9410000|ethernet-phy@0)[:( /]|: mdio[:( ]'
validate "$T/onecloud.dtb"
if [ "$NERR" = 0 ]; then ok "dt-validate: 0 errors on the SDHC node"
else bad "dt-validate: $NERR errors on the SDHC node:"; cat "$T/node.err"; fi
if [ "$UERR" = 0 ]; then ok "dt-validate: 0 errors on the USB controllers and PHYs"
else bad "dt-validate: $UERR errors on the USB nodes:"; cat "$T/usb.err"; fi
if [ "$EERR" = 0 ]; then ok "dt-validate: 0 errors on the ethmac node, its mdio node and its PHY"
else bad "dt-validate: $EERR errors on the Ethernet nodes:"; cat "$T/eth.err"; fi
echo "  dt-validate on the other nodes (meson8b.dtsi's, the board compatible; not failed on): $NOTHER lines"
sed 's/^/    | /' "$T/validate.out" | grep -vF "$P" | head -8 || true
sed 's/bus-width = <8>;/bus-width = <3>;/' "$DTS" > "$T/broken.dts"
compile "$T/broken.dts" "$T/broken.dtb" || { cat "$T/dtc.err"; die "dtc failed on the broken copy"; }
validate "$T/broken.dtb"
[ "$NERR" -gt 0 ] && ok "a copy with bus-width 3: $NERR errors on the SDHC node ($(head -1 "$T/node.err" | sed 's/.*mmc@8e00[^:]*: //' | cut -c1-60))" ||
    bad "a copy with bus-width 3 passes dt-validate (the check does not bite)"

sed 's/role-switch-default-mode = "host";/role-switch-default-mode = "sideways";/' "$DTS" > "$T/broken-usb.dts"
grep -q sideways "$T/broken-usb.dts" || bad "no role-switch-default-mode line to break"
compile "$T/broken-usb.dts" "$T/broken-usb.dtb" || { cat "$T/dtc.err"; die "dtc failed on the broken USB copy"; }
validate "$T/broken-usb.dtb"
[ "$UERR" -gt 0 ] && ok "a copy with role-switch-default-mode \"sideways\": $UERR errors on the USB nodes" ||
    bad "a copy with role-switch-default-mode \"sideways\" passes dt-validate (the USB check does not bite)"

sed 's/phy-mode = "rgmii-rxid";/phy-mode = "rgmii-sideways";/' "$DTS" > "$T/broken-eth.dts"
grep -q rgmii-sideways "$T/broken-eth.dts" || bad "no phy-mode line to break"
compile "$T/broken-eth.dts" "$T/broken-eth.dtb" || { cat "$T/dtc.err"; die "dtc failed on the broken Ethernet copy"; }
validate "$T/broken-eth.dtb"
[ "$EERR" -gt 0 ] && ok "a copy with phy-mode \"rgmii-sideways\": $EERR errors on the ethmac node ($(head -1 "$T/eth.err" | sed 's/.*ethernet@c9410000[^:]*: //' | cut -c1-60))" ||
    bad "a copy with phy-mode \"rgmii-sideways\" passes dt-validate (the Ethernet check does not bite)"

echo "($((SECONDS - start)) s)"
[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: onecloud-dts"
