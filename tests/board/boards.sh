#!/usr/bin/env bash
# The boards' &sdhc nodes (emu-run --board; odroidc1 is the default every
# other test runs, here too for the figures): one boot per board,
# the card under the C driver and then, moved with switch-driver, under the
# Rust driver.  Both must end in the same bus state (debugfs ios: timing,
# actual clock, bus width, signal voltage), that state must follow the DT
# (8 bits as bus-width says; HS200 exactly when the node has
# mmc-hs200-1_8v; the core's clock not above max-frequency, the actual clock
# not above the core's), and 4 MiB written and read back through each driver
# must verify; the card's name follows the board's mmc aliases (mmcblk1 on
# the Odroid-C1).  The figures (and vqmmc's microvolts from
# /sys/class/regulator) are printed for Documentation/board.rst.
. "$(dirname "$0")/../lib.sh"

g=$(guest boards <<'G'
set -e
insmod $RS_MOD
[ "$(sdhc_driver)" = c ] || fail "expected the C driver first"
wait_card 30 || fail "no card under the C driver"
of=/sys/bus/platform/devices/$(sdhc_dev)/of_node
cell() { set -- $(od -An -tu1 "$of/$1"); echo $(( ($1 << 24) | ($2 << 16) | ($3 << 8) | $4 )); }
maxf=$(cell max-frequency); width=$(cell bus-width)
hs200=no; [ -e "$of/mmc-hs200-1_8v" ] && hs200=yes
nonrem=no; [ -e "$of/non-removable" ] && nonrem=yes
vq=""
for r in /sys/class/regulator/regulator.*; do
    [ "$(cat $r/name 2>/dev/null)" = sdhc-vqmmc ] && vq=$(cat $r/microvolts)
done
say "DT: $(tr '\000' ' ' < $of/compatible)max-frequency=$maxf bus-width=$width hs200-1_8v=$hs200 non-removable=$nonrem vqmmc=${vq}uV"
[ "$(od -An -tx1 $of/reg | tr -d ' \n' | tail -c 8)" = 00000042 ] || fail "the node's reg size is not meson.dtsi's 0x42"

# check_bus DRIVER: the ios against the DT, saved to /tmp/ios.DRIVER
check_bus() {
    mmc_ios > /tmp/ios.$1
    say "$1: $(tr '\n' ' ' < /tmp/ios.$1)"
    . /tmp/ios.$1
    [ "$bus_width" = "${width}_bits" ] || fail "$1: bus width $bus_width, the DT says $width"
    case "$timing" in
    mmc_HS200) [ $hs200 = yes ] || fail "$1: HS200 without mmc-hs200-1_8v" ;;
    *) [ $hs200 = no ] || fail "$1: $timing, not HS200, although the DT asks for it" ;;
    esac
    [ "$clock" -le "$maxf" ] || fail "$1: the core asked for $clock Hz, above max-frequency $maxf"
    [ "$actual_clock" -gt 0 ] && [ "$actual_clock" -le "$clock" ] ||
        fail "$1: actual clock $actual_clock Hz for a request of $clock Hz"
}
# rw DRIVER OFFSET_MIB: 4 MiB written and read back
rw() {
    dd if=/dev/urandom of=/tmp/w bs=1M count=4 2>/dev/null
    dd if=/tmp/w of=$DEV bs=1M seek=$2 oflag=direct 2>/dev/null || fail "$1: write failed"
    dd if=$DEV of=/tmp/r bs=1M skip=$2 count=4 iflag=direct 2>/dev/null || fail "$1: read failed"
    cmp /tmp/w /tmp/r || fail "$1: 4 MiB read back differ"
    say "$1: 4 MiB written and verified"
}
check_bus c
rw c 0
cp /tmp/w /tmp/w.c
switch-driver rust
wait_card 30 || fail "no card under the Rust driver"
check_bus rust
dd if=$DEV of=/tmp/r bs=1M count=4 iflag=direct 2>/dev/null
cmp /tmp/w.c /tmp/r || fail "the C driver's 4 MiB differ under the Rust driver"
rw rust 4
! dmesg | grep -q 'meson-mx-sdhc-rs.*failed to map' || fail "the Rust driver could not map the 0x42 window"
if ! cmp /tmp/ios.c /tmp/ios.rust; then
    fail "the drivers left the bus in different states"
fi
say "C and Rust: the same bus state"
echo "@@IOS $EMU_BOARD $(tr '\n' ' ' < /tmp/ios.rust)vqmmc=${vq}uV"
echo "@@CARD $EMU_BOARD $DEV $(sdhc_host) alias=$(tr -d '\000' < /proc/device-tree/aliases/$(sdhc_host) 2>/dev/null)"
G
)

# The reg size: every boot here (and every other test) has meson.dtsi's
# 0x42, which Linux 7.3's IoMem cannot map (not a multiple of 4; the Rust
# driver maps it with the fixed IoMem's stand-in).  One more boot
# with 0x40: both drivers must take that too, and the Rust driver must have
# mapped its window in both (no "failed to map" in the log).
g40=$(guest reg40 <<'G'
set -e
insmod $RS_MOD
of=/sys/bus/platform/devices/$(sdhc_dev)/of_node
[ "$(od -An -tx1 $of/reg | tr -d ' \n' | tail -c 8)" = 00000040 ] || fail "the node's reg size is not 0x40"
for drv in c rust; do
    [ $drv = c ] || switch-driver rust >/dev/null || fail "switch-driver rust, reg size 0x40"
    wait_card 30 || fail "no card under the $drv driver with reg size 0x40"
    [ "$(sdhc_driver)" = $drv ] || fail "the $drv driver does not hold the controller (reg size 0x40)"
    dd if=/dev/urandom of=/tmp/w bs=1M count=1 2>/dev/null
    dd if=/tmp/w of=$DEV bs=1M oflag=direct 2>/dev/null
    dd if=$DEV of=/tmp/r bs=1M count=1 iflag=direct 2>/dev/null
    cmp /tmp/w /tmp/r || fail "$drv driver, reg size 0x40: 1 MiB read back differs"
    say "$drv driver, reg size 0x40: 1 MiB verified"
done
G
)

rc=0
s=$SECONDS
if emu --card emmc --size 64 --driver c --reg-size 0x40 "$g40"; then
    echo "  ok: reg size 0x40: both drivers work ($((SECONDS - s)) s)"
else
    echo "  FAILED: reg size 0x40 ($((SECONDS - s)) s)"; rc=1
fi
# The card's number follows the board's DT aliases (scripts/emu-run): the
# Odroid-C1 and the OneCloud have mmc1 = &sdhc, the Fernsehfee 3 mmc0, the
# EC100 no mmc alias (virt's only MMC host: number 0).
declare -A NUM=([odroidc1]=1 [onecloud]=1 [fernsehfee3]=0 [ec100]=0)
declare -A CARD
for b in "${!NUM[@]}"; do CARD[$b]=/dev/mmcblk${NUM[$b]}; done
for board in odroidc1 ec100 onecloud fernsehfee3; do
    s=$SECONDS
    if emu --card emmc --size 64 --driver c --board "$board" "$g"; then
        echo "  ok: $board: $(sed -n 's/.*@@IOS [^ ]* //p' "$T/serial.log" | tr -d '\r') ($((SECONDS - s)) s)"
        card=$(sed -n 's/.*@@CARD [^ ]* //p' "$T/serial.log" | tr -d '\r')
        if [ "${card%% *}" = "${CARD[$board]}" ]; then
            echo "  ok: $board: the card is ${CARD[$board]} as on the board ($card)"
        else
            echo "  FAILED: $board: the card is '$card', expected ${CARD[$board]}"; rc=1
        fi
    else
        echo "  FAILED: $board ($((SECONDS - s)) s)"; rc=1
    fi
done
exit $rc
