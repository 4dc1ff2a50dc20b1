#!/usr/bin/env bash
# RX-phase tuning against the model's rx-window (Documentation/emulated-board.rst):
# above 52 MHz the model samples the card's data correctly only at the RX
# phases inside the window, elsewhere reads and tuning blocks get data CRC
# errors.  One boot (odroidc1: HS200 at 94.4 MHz, CLKC divider 8, phases
# 0-8); the host sets the window over QMP, then the card is initialised
# again under the Rust and under the C driver (switch-driver):
#  - windows at the start, middle and end of the range: both drivers pick the
#    same phase (CLK2, read by the guest), the middle of the window as the
#    window's percentages give it, tuning met the window's edges (the model's
#    rx_window_crc_errors grew), and 2 MiB written and read back at HS200
#    verify;
#  - a window that wraps (75-25: the last phases and the first ones, the RX
#    phase counting within one SD clock period): the Rust driver picks the
#    middle of the whole window, across the wrap; the C driver, which does
#    not merge the wrap, the middle of the longer half (0-25); I/O
#    verifies under both;
#  - no window: the card's initialisation fails (the core's "tuning execution
#    failed: -5"; the Rust driver's own error naming clock and divider),
#    within a bound of virtual time, and the driver stays responsive: unbind
#    and rmmod return within 10 s each; then, the window back to "all", both
#    drivers bind again and the card works.
# emu-run fails the run on any WARNING/BUG/lockdep/DMA-API report.
. "$(dirname "$0")/../lib.sh"

cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
win,*) "$QMP" "\$EMU_QMP" set rx-window "\${1#win,}" ;;
esac
HOST
chmod +x "$T/host.sh"

g=$(guest rxwin <<'G'
set -e
insmod $RS_MOD
[ "$(sdhc_driver)" = c ] || fail "expected the C driver first"
wait_card 30 || fail "no card at boot (window all)"
now() { cut -d' ' -f1 /proc/uptime; }
# in a command substitution: the message to the console, not the variable
fail2() { echo "[guest] FAIL: $*" >&2; exit 1; }
# ms_since T0: virtual milliseconds since T0 (from /proc/uptime)
ms_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%d", (b - a) * 1000 }'; }
# rw NAME OFFSET_MIB: 2 MiB written and read back
rw() {
    dd if=/dev/urandom of=/tmp/w bs=1M count=2 2>/dev/null
    dd if=/tmp/w of=$DEV bs=1M seek=$2 oflag=direct 2>/dev/null || fail "$1: write failed"
    dd if=$DEV of=/tmp/r bs=1M skip=$2 count=2 iflag=direct 2>/dev/null || fail "$1: read failed"
    cmp /tmp/w /tmp/r || fail "$1: 2 MiB read back differ"
}
# expect LO HI DIV WRAP: the middle of the longest run of phases inside the
# window (LO > HI: it wraps), start + len / 2 modulo the phases, the first
# of equal runs; WRAP=1 counts the run through the last phase and phase 0
# as one (the Rust driver), WRAP=0 does not (the C driver); "none" if no
# phase is inside
expect() {
    awk -v lo=$1 -v hi=$2 -v div=$3 -v wrap=$4 'BEGIN {
        n = div + 1; bs = 0; bl = 0; cs = 0; cl = 0; fl = 0
        for (p = 0; p < n; p++) {
            x = p * 100
            if (lo <= hi) ok = x >= lo * n && x <= hi * n
            else ok = x >= lo * n || x <= hi * n
            if (ok) { if (cl == 0) cs = p; cl++; continue }
            if (cl == 0) continue
            if (cs == 0) fl = cl
            if (cl > bl) { bs = cs; bl = cl }
            cl = 0
        }
        if (wrap && cl > 0 && cs > 0) cl += fl
        if (cl > bl) { bs = cs; bl = cl }
        if (bl == 0) print "none"; else print (bs + int(bl / 2)) % n
    }'
}

off=0
for w in 0-25 40-60 75-100 75-25; do
    host_sync "win,$w"
    lo=${w%-*}; hi=${w#*-}
    for d in rust c; do
        wrap=0
        [ $d = c ] || wrap=1
        crc0=$(model_counter rx_window_crc_errors)
        switch-driver $d >/dev/null
        wait_card 30 || fail "$d, window $w: no card"
        mmc_ios > /tmp/ios
        . /tmp/ios
        [ "$timing" = mmc_HS200 ] || fail "$d, window $w: $timing, expected HS200"
        div=$(($(sdhc_reg 0x10) & 0xfff))
        ph=$(($(sdhc_reg 0x38) & 0xfff))
        crc1=$(model_counter rx_window_crc_errors)
        exp=$(expect $lo $hi $div $wrap)
        say "window $w%: $d chose RX phase $ph of 0-$div at $actual_clock Hz (expected $exp); $((crc1 - crc0)) tuning/read blocks outside the window"
        [ $((crc1 - crc0)) -gt 0 ] || fail "$d, window $w: tuning never met the window's edge"
        [ "$ph" = "$exp" ] || fail "$d, window $w: phase $ph, expected $exp"
        rw "$d, window $w" $off
        off=$((off + 2))
        eval "ph_$d=$ph"
    done
    # the same phase unless the window wraps (the C driver does not merge it)
    [ "$lo" -gt "$hi" ] || [ "$ph_rust" = "$ph_c" ] || fail "window $w: Rust chose $ph_rust, C $ph_c"
    echo "@@PHASE $w $ph_c $ph_rust $div"
done

# no window at all
host_sync win,none
dev=$(sdhc_dev)
# settle D T0: wait until the core has given up (no new "error -5 whilst
# initialising" line for 3 s), at most 120 s; prints the ms from T0 to the
# last such line (kernel log time stamps)
settle() {
    local t0=$2 n last=-1 same=0
    while [ $same -lt 30 ]; do
        n=$(dmesg | grep -c "error -5 whilst initialising MMC card" || true)
        if [ "$n" = "$last" ] && [ "$n" -gt 0 ]; then same=$((same + 1)); else same=0; fi
        last=$n
        [ $(ms_since $t0) -lt 120000 ] || fail2 "$1: the card's initialisation still runs after 120 s"
        usleep 100000
    done
    dmesg | grep "error -5 whilst initialising MMC card" | tail -1 |
        sed 's/^\[ *\([0-9.]*\)\].*/\1/' | awk -v a="$t0" '{ printf "%d", ($1 - a) * 1000 }'
}
# within10 WHAT CMD...: CMD in the background; fails if it takes over 10 s
# or fails
within10() {
    local what=$1 i=0
    shift
    "$@" &
    while kill -0 $! 2>/dev/null; do
        i=$((i + 1))
        [ $i -le 100 ] || fail2 "$what hangs (10 s)"
        usleep 100000
    done
    wait $! || fail2 "$what failed"
}
# timed DRIVER_NAME MODULE: unbind the SDHC from the driver and rmmod the
# module, each within 10 s (the C module cannot go while bound: its clocks
# hold a reference to it); prints the ms taken
timed() {
    local t0
    t0=$(now)
    within10 "unbind from $1" sh -c "echo $dev > /sys/bus/platform/drivers/$1/unbind"
    within10 "rmmod $2" rmmod $2
    echo $(ms_since $t0)
}
for d in rust c; do
    dmesg -c >/dev/null
    crc0=$(model_counter rx_window_crc_errors)
    t0=$(now)
    # no card is to come back: switch-driver's wait for it would fail after 0 s
    SWITCH_DRIVER_CARD_WAIT=0 switch-driver $d >/dev/null 2>&1 || true
    ms=$(settle $d $t0)
    ! sdhc_disk > /dev/null || fail "$d: a card without any RX phase window: $(sdhc_disk)"
    [ "$(sdhc_driver)" = $d ] || fail "$d: the driver let go of the controller"
    tries=$(dmesg | grep -c "error -5 whilst initialising MMC card" || true)
    tf=$(dmesg | grep -c "tuning execution failed: -5" || true)
    [ "$tf" -gt 0 ] || fail "$d: no 'tuning execution failed: -5' from the core"
    own=$(dmesg | grep -c "RX phase tuning failed: no phase 0-[0-9]* works at [0-9]* Hz (CLKC divider [0-9]*)" || true)
    if [ $d = rust ]; then
        [ "$own" = "$tf" ] || fail "rust: $own own error(s) for $tf tuning failure(s)"
        dmesg | grep "RX phase tuning failed" | head -1
    else
        [ "$own" = 0 ] || fail "c: the Rust driver's message under the C driver"
    fi
    crc=$(($(model_counter rx_window_crc_errors) - crc0))
    if [ $d = c ]; then rm_ms=$(timed meson-mx-sdhc meson_mx_sdhc)
    else rm_ms=$(timed meson-mx-sdhc-rs meson_mx_sdhc_rs); fi
    say "no window, $d: $tf tuning failure(s), $tries failed initialisation(s), the last ${ms} ms after the bind; $crc blocks outside the window; unbind + rmmod in ${rm_ms} ms"
    echo "@@NOWIN $d $tf $tries $ms $rm_ms"
done

# the window back: both drivers bind again and the card works
host_sync win,all
insmod $C_MOD
wait_card 30 || fail "no card under the C driver after the window came back"
[ "$(sdhc_driver)" = c ] || fail "expected the C driver after its insmod"
rw "c, window all again" 0
insmod $RS_MOD
switch-driver rust >/dev/null
wait_card 30 || fail "no card under the Rust driver after the window came back"
rw "rust, window all again" 2
say "window all again: both drivers bind, 2 MiB verified with each"
G
)

rc=0
emu --card emmc --size 64 --driver c --host-script "$T/host.sh" "$g" || rc=1
sed -n 's/.*\(@@PHASE\|@@NOWIN\)/\1/p' "$T/serial.log" | tr -d '\r' | sed 's/^/  /'
[ $rc = 0 ] && echo "  ok: rx-window start/middle/end: same phase for C and Rust, I/O verified; wrapped: Rust in its middle; none: both fail cleanly, rmmod works"
exit $rc
