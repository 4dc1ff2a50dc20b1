#!/usr/bin/env bash
# The board kit's boot entries run by a real U-Boot (run-all: host-uboot-script;
# a few seconds): the boot.cmd (Armbian's OneCloud, boot.scr) and the boot.ini
# (HardKernel's Odroid-C1) that scripts/board-kit-install writes, taken from
# tests/host/board-kit-install.sh (KIT_SCRIPTS_OUT: its fake roots r-scr and
# r-ini, right after each install; it makes those two installs only),
# run by Debian's U-Boot for QEMU's virt board (u-boot-qemu, the qemu_arm
# build) under the project's own qemu-system-arm, the one emu-run runs (make
# qemu: virt with virtio-blk, qemu/meson-virt.mak; UBOOT_QEMU names another).
#
# The board: ${bootdev} is "virtio 0", a virtio-blk disk with one FAT
# partition holding the script, the kit's three files and the previous
# entry's files (armbianEnv.txt too), every file the script's fatload lines
# name.  The uImages and uInitrds are legacy images (the real mkimage) around
# a 68-byte ARM payload that writes the device tree bootm hands it to the
# serial port and powers QEMU off (PSCI); the DTBs are tiny ones whose model
# says whose they are.  U-Boot's environment (flash at 0x04000000, a
# mkenvimage image) has bootdelay=0, bootdev and a bootcmd that loads
# /boot.scr and runs it with source (as OneCloud's U-Boot runs boot.scr with
# autoscr), then powers off if the script returns.
#
# Changed for the virt board, and only this: the load addresses, in one sed
# (virt_addr): 0x2XXXXXXX and 0x0XXXXXXX become 0x4XXXXXXX (virt's RAM starts
# at 0x40000000, the Meson8b's at 0; the boot.ini's previous uImage loads at
# 0x00208000); in the boot.ini "mmc 0:1" becomes "virtio 0:1", and its first
# line (ODROIDC-UBOOT-CONFIG, which HardKernel's U-Boot checks and skips) is
# left out; both are compiled with mkimage -T script.
#
#   1. boot.cmd, every file there: U-Boot's bootm boots the kit's uImage at
#      the kit's address, the ramdisk from the kit's uInitrd address, the DTB
#      from the kit's DTB address, and the kernel gets the kit's bootargs
#      (with initcall_blacklist=meson_mx_sdhc_driver_init) and the kit's DTB;
#   2. boot.cmd without the kit's uInitrd on the FAT: no bootm at the kit's
#      address; the previous script runs and boots the previous uImage,
#      uInitrd and DTB at its addresses with its bootargs;
#   3. boot.cmd with the line that sets kit_rust "1" commented out, as the
#      kit's comment tells the owner (compiled again): the previous script
#      boots;
#   4. and 5. the boot.ini: as 1 and 2;
#   6. and 7. boot.cmd and boot.ini, every file there, U-Boot's environment
#      with kit_off=1 (as "setenv kit_off 1" at the prompt leaves it): the
#      previous script or entry boots;
#   and that the checks bite: a kit line with "; setenv kit_ok" for
#   "&& setenv kit_ok" and the uInitrd missing fails check 2; a boot.cmd
#   that sets kit_rust "1" without the kit_off guard, kit_off=1, fails
#   check 6;
#   in every case: no "syntax error", "Unknown command" or the like from U-Boot.
#
# Not checked: the boards' own U-Boots.  This is mainline U-Boot 2023.01 and
# its hush parser; HardKernel's (Odroid-C1) and hzyitc's (OneCloud) are
# 2011-era Amlogic U-Boots whose parser, commands and failure handling may
# differ (HardKernel's runs boot.ini by its cfgload command, not with source;
# OneCloud's runs boot.scr with autoscr).  Nor the addresses themselves on
# the boards' memory maps (rewritten here), nor whether a real-sized uImage
# overlaps the DTB or uInitrd (the images here are 132 bytes;
# board-kit-install.sh checks the installer's arithmetic), nor a real kernel
# or initramfs booting (the payload only shows what bootm handed over).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/scripts/common.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/uboot-script.XXXXXX")
trap 'rm -rf "$T"' EXIT
start=$SECONDS
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
die() { echo "uboot-script: $*"; echo FAILED; exit 1; }

UBOOT=/usr/lib/u-boot/qemu_arm/u-boot.bin
QEMU=${UBOOT_QEMU:-$("$TOP/scripts/emu-run" --which-qemu)}
[ -f "$UBOOT" ] || die "$UBOOT missing (make setup installs u-boot-qemu)"
for t in mkimage mkenvimage mkfs.vfat mcopy mmd sfdisk dtc timeout; do
    command -v "$t" > /dev/null || die "$t missing (make setup)"
done
"$QEMU" -device help 2>/dev/null | grep -q '"virtio-blk-device"' ||
    die "no qemu-system-arm with virtio-blk at $QEMU (make qemu builds it; UBOOT_QEMU names another)"
export MTOOLS_SKIP_CHECK=1

# --- the kit's scripts, as the installer writes them ---------------------------------------
mkdir -p "$T/gen"
KIT_SCRIPTS_OUT="$T/gen" "$TOP/tests/host/board-kit-install.sh" > "$T/board-kit-install.log" 2>&1 ||
    { sed 's/^/    | /' "$T/board-kit-install.log" | tail -30; die "tests/host/board-kit-install.sh failed"; }
if [ ! -s "$T/gen/boot.cmd" ] || [ ! -s "$T/gen/boot.ini" ]; then
    die "tests/host/board-kit-install.sh gave no boot.cmd and boot.ini (KIT_SCRIPTS_OUT)"
fi

# virt_addr: the load addresses on virt's RAM (0x40000000 up), the one change to the addresses
virt_addr() { sed -E 's/\<0x[02]([0-9a-fA-F]{7})\>/0x4\1/g'; }
virt_addr < "$T/gen/boot.cmd" > "$T/scr.cmd"
[ "$(sed -n 1p "$T/gen/boot.ini")" = ODROIDC-UBOOT-CONFIG ] || die "boot.ini does not start with ODROIDC-UBOOT-CONFIG"
tail -n +2 "$T/gen/boot.ini" | virt_addr | sed 's/\<mmc 0:1\>/virtio 0:1/g' > "$T/ini.cmd"

# --- the files on the FAT ------------------------------------------------------------------
# the payload: ARM code (position-independent) that writes the DTB at r2 (bootm's
# third argument, after its fix-ups) byte for byte to the PL011 at 0x09000000, then
# PSCI SYSTEM_OFF:
# (immediates without their "#"):
#   mov r4, r2; ldr r5, [r4, 4]; rev r5, r5           @ the DTB's totalsize
#   mov r6, 0x09000000
#   loop: cmp r5, 0; beq off
#   wait: ldr r7, [r6, 0x18]; tst r7, 0x20; bne wait  @ UARTFR.TXFF
#   ldrb r7, [r4], 1; str r7, [r6]; sub r5, r5, 1; b loop
#   off: movw r0, 8; movt r0, 0x8400; hvc 0; b .
I="$T/img"; mkdir -p "$I"
for w in e1a04002 e5945004 e6bf5f35 e3a06409 e3550000 0a000006 e5967018 e3170020 1afffffc \
         e4d47001 e5867000 e2455001 eafffff6 e3000008 e3480400 e1400070 eafffffe; do
    printf '%b' "\\x${w:6:2}\\x${w:4:2}\\x${w:2:2}\\x${w:0:2}"
done > "$I/payload"
for who in kit previous; do
    mkimage -A arm -O linux -T kernel -C none -a 0x40008000 -e 0x40008000 -n "$who uImage" -d "$I/payload" "$I/$who-uImage" > /dev/null
    mkimage -A arm -O linux -T ramdisk -C none -a 0 -e 0 -n "$who uInitrd" -d "$I/payload" "$I/$who-uInitrd" > /dev/null
    printf '/dts-v1/;\n/ { #address-cells = <1>; #size-cells = <1>; model = "%s dtb"; chosen { }; };\n' "$who" |
        dtc -q -I dts -O dtb -o "$I/$who-dtb" -
done
printf 'rootdev=UUID=1234\n' > "$I/armbianEnv.txt"

# loads FILE: the files a script's fatload lines name
loads() { grep -oE 'fatload [^;&|]+' "$1" | awk '{ print $NF }'; }
# the kit's two if lines as they begin (U-Boot's variables, literally)
# shellcheck disable=SC2016
RUST_IF='if test "${kit_rust}" = "1"; then ' OK_IF='if test "${kit_ok}" = "1"; then '
# kit_part / prev_part SCRIPT: the kit's line that loads, the previous script
kit_part() { grep -F "$RUST_IF" "$1" || true; }
prev_part() { sed -n '/^# <<< /,$p' "$1"; }
# image WHO NAME: the test's file for NAME
image() {
    case "$2" in
    */armbianEnv.txt|armbianEnv.txt) echo "$I/armbianEnv.txt" ;;
    *uImage*) echo "$I/$1-uImage" ;;
    *uInitrd*) echo "$I/$1-uInitrd" ;;
    *.dtb) echo "$I/$1-dtb" ;;
    *) return 1 ;;
    esac
}
# disk NAME SCRIPT [FILE]: $T/NAME.disk, one FAT partition with SCRIPT compiled as
# /boot.scr and every file SCRIPT loads but FILE
disk() {
    local n=$1 s=$2 skip=${3:-} who f src fat="$T/$1.fat"
    mkimage -C none -A arm -T script -n "$n" -d "$s" "$T/$n.scr" > /dev/null
    mkfs.vfat -C "$fat" 8192 > /dev/null
    mcopy -i "$fat" "$T/$n.scr" ::/boot.scr
    for who in kit previous; do
        for f in $(if [ "$who" = kit ]; then kit_part "$s"; else prev_part "$s"; fi | loads /dev/stdin); do
            [ "$f" != "$skip" ] || continue
            src=$(image "$who" "$f") || { echo "    the script loads $f, which this test does not know"; return 1; }
            case "$f" in */*/*|[!/]*/*) mmd -i "$fat" "::/$(dirname "${f#/}")" 2>/dev/null || true ;; esac
            mcopy -o -i "$fat" "$src" "::/${f#/}"
        done
    done
    head -c 1048576 /dev/zero > "$T/$n.disk"
    cat "$fat" >> "$T/$n.disk"
    printf 'start=2048, type=c\n' | sfdisk -q "$T/$n.disk" > /dev/null 2>&1
}
# the environment: U-Boot loads /boot.scr from ${bootdev} and runs it
# shellcheck disable=SC2016 # U-Boot's variables
printf 'bootdelay=0\nbootdev=virtio 0\nbootcmd=fatload ${bootdev} 0x40800000 /boot.scr && source 0x40800000; echo "uboot-script: the script returned"; poweroff\n' > "$T/env.txt"
mkenvimage -s 0x40000 -o "$T/env.img" "$T/env.txt"
truncate -s 64M "$T/env.img"
# the same with kit_off=1, as the owner sets it at the U-Boot prompt before the script runs
{ cat "$T/env.txt"; echo 'kit_off=1'; } > "$T/env-off.txt"
mkenvimage -s 0x40000 -o "$T/env-off.img" "$T/env-off.txt"
truncate -s 64M "$T/env-off.img"

# boot NAME [ENV]: U-Boot on $T/NAME.disk (its environment $T/ENV.img, default env); its
# serial output in $T/NAME.log
boot() {
    local rc=0 env=${2:-env}
    timeout -k 5 30 "$QEMU" -M virt -cpu cortex-a15 -m 1024 -nodefaults -display none -monitor none \
        -no-reboot -serial "file:$T/$1.log" -bios "$UBOOT" \
        -drive "if=pflash,unit=1,format=raw,readonly=on,file=$T/$env.img" \
        -drive "if=none,id=disk,format=raw,readonly=on,file=$T/$1.disk" -device virtio-blk-device,drive=disk \
        > "$T/$1.qemu" 2>&1 < /dev/null || rc=$?
    [ "$rc" = 0 ] || echo "QEMU status $rc$( [ "$rc" = 124 ] && echo ' (timed out)')" >> "$T/$1.log"
}

# expand TEXT: U-Boot's ${name} from armbianEnv.txt (env import), else empty
expand() {
    local s=$1 n
    while [[ $s =~ \$\{([A-Za-z_]+)\} ]]; do
        n=${BASH_REMATCH[1]}
        s=${s//"\${$n}"/$(sed -n "s/^$n=//p" "$I/armbianEnv.txt")}
    done
    printf '%s' "$s"
}
# hex 0x4...: as U-Boot prints an address
hex() { printf '%08x' "$1"; }
why=""
problem() { why="${why:+$why; }$*"; }
# verify NAME kit|previous SCRIPT: what $T/NAME.log shows U-Boot and the payload did
verify() {
    local log="$T/$1.log" k i d want_args other kk booted dts got model off ia=-
    why=""
    if [ "$2" = kit ]; then
        read -r k i d <<< "$(grep -F "${OK_IF}bootm " "$3" | sed -n 's/.*then bootm \(0x[0-9a-fA-F]*\) \([^ ]*\) \(0x[0-9a-fA-F]*\); fi$/\1 \2 \3/p')"
        want_args=$(grep -F "${OK_IF}setenv bootargs \"" "$3" | sed -n 's/^.*then setenv bootargs "\(.*\)"; fi$/\1/p')
    else
        read -r k i d <<< "$(prev_part "$3" | sed -n 's/^bootm \([^ ]*\) \([^ ]*\) \([^ ]*\)$/\1 \2 \3/p' | tail -n 1)"
        want_args=$(expand "$(prev_part "$3" | sed -n 's/^setenv bootargs "\(.*\)"$/\1/p' | tail -n 1)")
    fi
    if [ -z "$k" ] || [ -z "$d" ] || [ -z "$want_args" ]; then problem "no $2 bootm line in the script"; return 1; fi
    # the kit's bootm address, which the previous entry must not reach
    kk=$(sed -n 's/.*; bootm \(0x[0-9a-fA-F]*\) .*; fi$/\1/p' <<< "$(grep -F "$OK_IF" "$3")")
    other=$(grep -aE 'syntax error|Unknown command|not allowed|[Bb]ad (header|data) ?CRC|Wrong Image|ERROR|Could not find|Abort|QEMU status' "$log" | tr -d '\r' | sort -u | paste -sd '|' -)
    [ -z "$other" ] || problem "U-Boot: $other"
    booted=$(grep -a '^## Booting kernel from Legacy Image at ' "$log" | tr -d '\r' | sed 's/.* at \([0-9a-f]*\) .*/\1/' | paste -sd ' ' -)
    [ "$booted" = "$(hex "$k")" ] || problem "bootm booted the image at '${booted:-nothing}', not $(hex "$k")"
    if [ "$2" = previous ] && grep -aq "Legacy Image at $(hex "$kk")" "$log"; then problem "the kit's bootm ran (Legacy Image at $(hex "$kk"))"; fi
    grep -aq "Image Name: *$2 uImage" "$log" || problem "not the $2 uImage"
    if [ "$i" != - ]; then
        grep -aq "^## Loading init Ramdisk from Legacy Image at $(hex "$i") " "$log" || problem "no ramdisk from $(hex "$i")"
    fi
    grep -aq "^## Flattened Device Tree blob at $(hex "$d")" "$log" || problem "no DTB from $(hex "$d")"
    grep -aq '^Starting kernel' "$log" || problem "no 'Starting kernel'"
    # the DTB the payload wrote: from its magic on
    off=$(LC_ALL=C grep -obUa "$(printf '\320\r\376\355')" "$log" | head -n 1 | cut -d: -f1 || true)
    if [ -n "$off" ] && tail -c +$((off + 1)) "$log" > "$T/$1.dtb" && dts=$(dtc -q -I dtb -O dts "$T/$1.dtb" 2>/dev/null); then
        got=$(sed -n 's/^[[:space:]]*bootargs = "\(.*\)";$/\1/p' <<< "$dts")
        model=$(sed -n 's/^[[:space:]]*model = "\(.*\)";$/\1/p' <<< "$dts")
        [ "$got" = "$want_args" ] || problem "the kernel's bootargs '$got', not '$want_args'"
        [ "$model" = "$2 dtb" ] || problem "the kernel's DTB is '$model', not the $2 one"
    else
        problem "no DTB from the payload"
    fi
    [ -n "$why" ] && return 1
    [ "$i" = - ] || ia=$(hex "$i")
    summary="bootm $(hex "$k") $ia $(hex "$d"), the $2 uImage and DTB, bootargs '$got'"
}
# case_ NAME kit|previous SCRIPT FILE WHAT [ENV]: the disk without FILE (none if empty), booted
# (with U-Boot's environment ENV), verified
case_() {
    local n=$1 want=$2 s=$3 skip=${4:-} what=$5 env=${6:-env}
    summary=""
    if ! disk "$n" "$s" "$skip" > "$T/$n.disk.out" 2>&1; then
        bad "$what: the FAT image: $(cat "$T/$n.disk.out")"; return
    fi
    boot "$n" "$env"
    if verify "$n" "$want" "$s"; then ok "$what: $summary"; else
        bad "$what: $why"; tr -d '\r' < "$T/$n.log" | grep -a -v '^[[:space:]]*$' | LC_ALL=C sed 's/[^[:print:]].*//' | head -n 60 | sed 's/^/    | /'
    fi
}

kit_initrd() { kit_part "$1" | loads /dev/stdin | grep uInitrd; }
echo "  U-Boot: $(LC_ALL=C grep -ao 'U-Boot 20[0-9][0-9]\.[0-9][0-9][^ ]*' "$UBOOT" | head -n 1) ($UBOOT); QEMU: $("$QEMU" --version | head -n 1) ($QEMU)"
case_ scr-kit kit "$T/scr.cmd" "" "1. boot.cmd (boot.scr), every file there: the kit's entry"
case_ scr-noinitrd previous "$T/scr.cmd" "$(kit_initrd "$T/scr.cmd")" "2. boot.cmd, the kit's $(kit_initrd "$T/scr.cmd") missing: the previous script"
# the line the kit's comment says to put a # before
GUARD='if test "x${kit_off}" != "x1"; then setenv kit_rust "1"; fi'
sed "s/^$(sed 's/[][\.*^$/]/\\&/g' <<< "$GUARD")\$/# &/" "$T/scr.cmd" > "$T/scr-off.cmd"
if grep -qxF "# $GUARD" "$T/scr-off.cmd"; then
    case_ scr-off previous "$T/scr-off.cmd" "" "3. boot.cmd with '# $GUARD' (compiled again): the previous script"
else bad "3. boot.cmd has no line '$GUARD' to comment out"; fi
case_ ini-kit kit "$T/ini.cmd" "" "4. boot.ini, every file there: the kit's entry"
case_ ini-noinitrd previous "$T/ini.cmd" "$(kit_initrd "$T/ini.cmd")" "5. boot.ini, the kit's $(kit_initrd "$T/ini.cmd") missing: the previous entry"
case_ scr-kitoff previous "$T/scr.cmd" "" "6. boot.cmd, every file there, kit_off=1 in U-Boot's environment: the previous script" env-off
case_ ini-kitoff previous "$T/ini.cmd" "" "7. boot.ini, every file there, kit_off=1 in U-Boot's environment: the previous entry" env-off
# the guard bites: the kit's kit_rust set without it, kit_off=1: the kit's entry boots
grep -vxF "$GUARD" "$T/scr.cmd" | sed 's/^setenv kit_rust "0"$/setenv kit_rust "1"/' > "$T/scr-noguard.cmd"
disk scr-noguard "$T/scr-noguard.cmd" > "$T/scr-noguard.disk.out" 2>&1 && boot scr-noguard env-off
if ! grep -qx 'setenv kit_rust "1"' "$T/scr-noguard.cmd"; then bad "the guard bites: no kit_rust line to make unconditional"
elif ! verify scr-noguard previous "$T/scr-noguard.cmd"; then ok "the guard bites: kit_rust set without it, kit_off=1: not the previous script ($why)"
else bad "the guard bites: a kit_rust without the kit_off guard passed check 6"; fi
# the checks bite: "; setenv kit_ok" where the kit has "&& setenv kit_ok", the uInitrd missing
sed 's/ && setenv kit_ok "1"; fi$/; setenv kit_ok "1"; fi/' "$T/scr.cmd" > "$T/scr-broken.cmd"
disk scr-broken "$T/scr-broken.cmd" "$(kit_initrd "$T/scr.cmd")" > "$T/scr-broken.disk.out" 2>&1 && boot scr-broken
if cmp -s "$T/scr.cmd" "$T/scr-broken.cmd"; then bad "the checks bite: no '&& setenv kit_ok' line to break"
elif ! verify scr-broken previous "$T/scr-broken.cmd"; then ok "the checks bite: a kit line with '; setenv kit_ok', the uInitrd missing: $why"
else bad "the checks bite: a broken kit line passed check 2"; fi

echo "uboot-script: $((SECONDS - start))s"
[ "$fail" = 0 ] || { echo "FAILED"; exit 1; }
echo "ok: a real U-Boot (2023.01, qemu_arm) runs the kit's boot.cmd and boot.ini: the kit's entry, the fallback"
