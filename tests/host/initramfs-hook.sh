#!/usr/bin/env bash
# contrib/initramfs-tools/hooks/meson_mx_sdhc_rs as mkinitramfs runs it ($version set, the
# hook functions sourced; here a stand-in that records manual_add_modules), on a fake
# /lib/modules (run-all: host-initramfs-hook; no board, under a second):
#   the modprobe.d file blacklists the C driver and depmod indexed the module: exit 0, the
#     module added (relative and absolute modules.dep paths, .ko.xz);
#   blacklist, no module for that kernel (another kernel has one; modules.dep lists it but
#     the file is gone; no modules.dep): exit 1 naming the kernel, nothing added;
#   no modprobe.d file, or its blacklist line commented out: exit 0, nothing added;
#   the C driver kept off the ways kmod reads (modprobe -c) and the module there: added,
#     for "blacklist meson-mx-sdhc", a trailing comment, the line in another file, an
#     install line running /bin/false, ":" or another module, and the same read by the
#     hook without modprobe or when modprobe -c fails;
#   the test hooks without MESON_SDHC_TEST_HOOKS=1: not honoured (nothing added here);
#   the SD card slot's modprobe.d file (blacklist meson_mx_sdio): its Rust module
#     meson_mx_sdio_rs added, or exit 1 naming it when that kernel has none; both files:
#     both modules added.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
HOOK="$TOP/contrib/initramfs-tools/hooks/meson_mx_sdhc_rs"
T=$(mktemp -d "${TMPDIR:-/tmp}/initramfs-hook.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
echo 'manual_add_modules() { echo "$*" >> "$ADDED"; }' > "$T/hook-functions"
command -v modprobe > /dev/null || { echo "  FAILED: no modprobe (kmod: make setup)"; exit 1; }
# modprobe.d folders, as MESON_SDHC_MODPROBE_D: conf NAME FILE LINE...
conf() { local d="$T/$1.d"; mkdir -p "$d"; shift; local f=$1; shift; printf '%s\n' "$@" > "$d/$f"; }
mkdir -p "$T/blacklist.d" "$T/none.d"
cp "$TOP/contrib/modprobe.d/meson_mx_sdhc_rs.conf" "$T/blacklist.d/"
grep -q '^blacklist meson_mx_sdhc$' "$T/blacklist.d/meson_mx_sdhc_rs.conf" || { echo "  FAILED: the modprobe.d file has no blacklist line"; exit 1; }
conf commented meson_mx_sdhc_rs.conf "$(sed 's/^blacklist meson_mx_sdhc$/# blacklist meson_mx_sdhc/' "$T/blacklist.d/meson_mx_sdhc_rs.conf")"
conf dash meson_mx_sdhc_rs.conf 'blacklist meson-mx-sdhc'
conf comment meson_mx_sdhc_rs.conf 'blacklist meson_mx_sdhc # the C driver'
conf otherfile local.conf 'options mmc_core use_spi_crc=0' 'blacklist   meson_mx_sdhc'
conf install meson_mx_sdhc_rs.conf 'install meson_mx_sdhc /bin/false'
conf install-rs meson_mx_sdhc_rs.conf 'install meson_mx_sdhc /sbin/modprobe meson_mx_sdhc_rs'
conf install-colon meson_mx_sdhc_rs.conf 'install meson_mx_sdhc :'
# a PATH with what the hook runs but modprobe
mkdir -p "$T/nomodprobe"
for t in sh sed awk cat head; do ln -s "$(command -v $t)" "$T/nomodprobe/$t"; done
# a PATH whose modprobe fails (modprobe -c on a file it cannot parse)
mkdir -p "$T/badmodprobe"
printf '#!/bin/sh\necho "modprobe: ERROR: cannot parse" >&2\nexit 1\n' > "$T/badmodprobe/modprobe"; chmod +x "$T/badmodprobe/modprobe"

# base NAME MODULES.DEP-LINE [FILE]: a root with lib/modules/7.3.4/ (and 7.3.0 with the module)
base() {
    local b="$T/$1" m="$T/$1/lib/modules/7.3.4"
    mkdir -p "$m/updates" "$b/lib/modules/7.3.0/updates"
    : > "$b/lib/modules/7.3.0/updates/meson_mx_sdhc_rs.ko"
    echo "updates/meson_mx_sdhc_rs.ko:" > "$b/lib/modules/7.3.0/modules.dep"
    [ "$2" = none ] || printf '%s\n' "kernel/drivers/mmc/core/pwrseq_emmc.ko:" "$2" > "$m/modules.dep"
    [ -z "${3:-}" ] || { mkdir -p "$(dirname "$b/$3")"; : > "$b/$3"; }
}
# run CASE MODPROBE.D BASE WANT-RC WANT-ADDED [MESSAGE]; $env: more VAR=VALUE
env=()
run() {
    local rc=0
    ADDED="$T/$1.added"; : > "$ADDED"
    env ADDED="$ADDED" version=7.3.4 MESON_SDHC_TEST_HOOKS=1 MESON_SDHC_HOOK_FUNCTIONS="$T/hook-functions" \
        MESON_SDHC_MODPROBE_D="$2" MESON_SDHC_MODULES_BASE="$T/$3" ${env[@]+"${env[@]}"} \
        sh "$HOOK" > "$T/$1.out" 2>&1 || rc=$?
    local added; added=$(cat "$ADDED")
    if { [ "$rc" = "$4" ] || [ "$4" = '*' ]; } && [ "$added" = "$5" ] && { [ -z "${6:-}" ] || grep -q -- "$6" "$T/$1.out"; }; then
        echo "  ok: $1: exit $rc${added:+, added $added}"
    else
        echo "  FAILED: $1: exit $rc (want $4), added '$added' (want '$5'): $(cat "$T/$1.out")"
        fail=1
    fi
}
base present "updates/meson_mx_sdhc_rs.ko: kernel/drivers/mmc/core/pwrseq_emmc.ko" lib/modules/7.3.4/updates/meson_mx_sdhc_rs.ko
base absolute "/lib/modules/7.3.4/updates/meson_mx_sdhc_rs.ko:" lib/modules/7.3.4/updates/meson_mx_sdhc_rs.ko
base xz "updates/meson_mx_sdhc_rs.ko.xz:" lib/modules/7.3.4/updates/meson_mx_sdhc_rs.ko.xz
base missing "kernel/drivers/mmc/host/meson-mx-sdhc.ko:"
base gone "updates/meson_mx_sdhc_rs.ko:"
base nodep none
run present "$T/blacklist.d" present 0 meson_mx_sdhc_rs
run absolute-path "$T/blacklist.d" absolute 0 meson_mx_sdhc_rs
run compressed "$T/blacklist.d" xz 0 meson_mx_sdhc_rs
run no-module "$T/blacklist.d" missing 1 "" "kernel 7.3.4 has no meson_mx_sdhc_rs module"
run file-gone "$T/blacklist.d" gone 1 "" "kernel 7.3.4 has no meson_mx_sdhc_rs module"
run no-modules-dep "$T/blacklist.d" nodep 1 "" "kernel 7.3.4 has no meson_mx_sdhc_rs module"
run no-conf "$T/none.d" missing 0 ""
run commented-blacklist "$T/commented.d" missing 0 ""
run blacklist-dashes "$T/dash.d" present 0 meson_mx_sdhc_rs
run no-module-dashes "$T/dash.d" missing 1 "" "blacklist meson_mx_sdhc"
run trailing-comment "$T/comment.d" present 0 meson_mx_sdhc_rs
run another-file "$T/otherfile.d" present 0 meson_mx_sdhc_rs
run install-false "$T/install.d" present 0 meson_mx_sdhc_rs
run install-other-module "$T/install-rs.d" present 0 meson_mx_sdhc_rs
run install-colon "$T/install-colon.d" present 0 meson_mx_sdhc_rs
run install-colon-no-module "$T/install-colon.d" missing 1 "" "install meson_mx_sdhc :"
env=(PATH="$T/badmodprobe:$PATH")
run modprobe-fails "$T/dash.d" present 0 meson_mx_sdhc_rs
run modprobe-fails-no-module "$T/blacklist.d" missing 1 "" "kernel 7.3.4 has no meson_mx_sdhc_rs module"
env=(PATH="$T/nomodprobe")
run no-modprobe-dashes "$T/dash.d" present 0 meson_mx_sdhc_rs
run no-modprobe-commented "$T/commented.d" present 0 ""
env=(MESON_SDHC_TEST_HOOKS=)
run hooks-without-flag "$T/blacklist.d" present '*' ""
env=()
# the SD card slot's C driver kept off
mkdir -p "$T/sd.d" "$T/both.d"
cp "$TOP/contrib/modprobe.d/meson_mx_sdio_rs.conf" "$T/sd.d/"
grep -q '^blacklist meson_mx_sdio$' "$T/sd.d/meson_mx_sdio_rs.conf" || { echo "  FAILED: the SD card slot's modprobe.d file has no blacklist line"; exit 1; }
cp "$TOP/contrib/modprobe.d/meson_mx_sdio_rs.conf" "$TOP/contrib/modprobe.d/meson_mx_sdhc_rs.conf" "$T/both.d/"
base sd "updates/meson_mx_sdio_rs.ko:" lib/modules/7.3.4/updates/meson_mx_sdio_rs.ko
base sd-both "updates/meson_mx_sdhc_rs.ko:
updates/meson_mx_sdio_rs.ko:" lib/modules/7.3.4/updates/meson_mx_sdio_rs.ko
: > "$T/sd-both/lib/modules/7.3.4/updates/meson_mx_sdhc_rs.ko"
run sd-slot "$T/sd.d" sd 0 meson_mx_sdio_rs
run sd-slot-no-module "$T/sd.d" present 1 "" "kernel 7.3.4 has no meson_mx_sdio_rs module, .*no driver for the SD card slot"
run sd-slot-and-emmc "$T/both.d" sd-both 0 "meson_mx_sdhc_rs
meson_mx_sdio_rs"
run emmc-only-sd-module "$T/blacklist.d" sd 1 "" "kernel 7.3.4 has no meson_mx_sdhc_rs module"
[ "$(sh "$HOOK" prereqs)" = "" ] && echo "  ok: prereqs: none" || { echo "  FAILED: prereqs"; fail=1; }
exit $fail
