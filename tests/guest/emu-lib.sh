# Helpers for guest test scripts (sourced).  shellcheck shell=sh

C_MOD=/lib/modules/meson-mx-sdhc.ko
RS_MOD=/lib/modules/meson_mx_sdhc_rs.ko
# the C driver with the RFC's bounce buffer (bench/c-rfc-bounce): the same
# platform driver name and compatibles as the C driver, a module of its own
RFC_MOD=/lib/modules/meson_mx_sdhc_rfc.ko

# sdhc_disk: the whole block device of the card on the SDHC, /dev/mmcblkN,
# found by its controller (the node compatible with amlogic,meson-mx-sdhc:
# scripts/switch-driver disk), never by its number, which the board's DT
# aliases choose (emu-run --board: mmcblk1 on the Odroid-C1).  Fails when
# there is no card.
sdhc_disk() { switch-driver disk 2>/dev/null; }
# sdhc_host: the SDHC's MMC host, mmcN (debugfs /sys/kernel/debug/mmcN)
sdhc_host() { basename "$(ls -d /sys/bus/platform/devices/"$(sdhc_dev)"/mmc_host/mmc* 2>/dev/null | head -1)"; }
# DEV: the card (set again by wait_card); empty while there is none
DEV=$(sdhc_disk) || DEV=""

say() { echo "[guest] $*"; }
fail() { echo "[guest] FAIL: $*"; exit 1; }

# load_driver c|c-rfc|rust [params...]
load_driver() {
    local drv=$1; shift
    case "$drv" in
    c) insmod "$C_MOD" "$@" ;;
    c-rfc) insmod "$RFC_MOD" "$@" ;;
    rust) insmod "$RS_MOD" "$@" ;;
    *) echo "unknown driver $drv"; return 2 ;;
    esac
}

# card_present: the SDHC's card is up (its disk, sdhc_disk; with --card
# sdio, the SDIO card's function 1 on the SDIO bus)
card_present() {
    if [ "${EMU_CARD:-}" = sdio ]; then
        ls -d /sys/bus/sdio/devices/*:1 >/dev/null 2>&1
    else
        local d
        d=$(sdhc_disk) && [ -b "$d" ]
    fi
}

# sdio_func N: the SDIO bus device of function N of the card (mmc0:0001:N)
sdio_func() { basename "$(ls -d /sys/bus/sdio/devices/*:"$1" 2>/dev/null | head -1)"; }

# wait_card [seconds]: wait for the SDHC's card (card_present; virtual
# time); sets DEV (empty with --card sdio: no disk)
wait_card() {
    local n=${1:-30} w=0
    while ! card_present; do
        w=$((w + 1))
        [ "$w" -gt $((n * 10)) ] && { echo "no card on the SDHC after ${n}s"; return 1; }
        usleep 100000
    done
    DEV=$(sdhc_disk) || DEV=""
    return 0
}

# wait_no_card [seconds]: wait until the SDHC has no card
wait_no_card() {
    local n=${1:-30} w=0
    while card_present; do
        w=$((w + 1))
        [ "$w" -gt $((n * 10)) ] && return 1
        usleep 100000
    done
    return 0
}

# kmemleak_check: scan twice (objects must age) and report suspects
kmemleak_check() {
    local f=/sys/kernel/debug/kmemleak
    [ -w "$f" ] || return 0
    sleep 6
    echo scan > "$f"
    echo scan > "$f"
    if [ -s "$f" ]; then
        echo "@@KMEMLEAK suspected leaks:"
        head -60 "$f"
        return 1
    fi
    return 0
}

# the platform device of the SDHC (its node is compatible with
# amlogic,meson-mx-sdhc; the SDIO controller's, the SD card slot's, is a
# *.mmc device too)
sdhc_dev() {
    local d
    for d in /sys/bus/platform/devices/*.mmc; do
        grep -qs meson-mx-sdhc "$d/of_node/compatible" && { basename "$d"; return 0; }
    done
    return 0
}

# which driver holds the controller now (c, c-rfc, rust or none); the C
# driver and the RFC's module share the driver name: the module tells them apart
sdhc_driver() {
    local d l
    d=$(sdhc_dev)
    l=$(readlink "/sys/bus/platform/devices/$d/driver" 2>/dev/null)
    case "$(basename "$l")" in
    meson-mx-sdhc) if [ -d /sys/module/meson_mx_sdhc_rfc ]; then echo c-rfc; else echo c; fi ;;
    meson-mx-sdhc-rs) echo rust ;;
    *) echo none ;;
    esac
}

# host_sync TAG: tell the host side (scripts/emu-run --host-script) we reached
# TAG and wait until it answers TAG on the console.
host_sync() {
    echo "@@SYNC $1"
    while read -r line < /dev/console; do
        [ "$line" = "$1" ] && return 0
    done
    return 1
}

# rs_debugfs: the Rust driver's debugfs directory of the SDHC (stats, limits,
# force_bounce)
rs_debugfs() { echo "/sys/kernel/debug/$(sdhc_host)"; }

# keep_data write|verify: 8 MiB at the start of the card with crc32c verify
# headers, written and read back, or only verified (data that must survive
# what a test does in between)
keep_data() {
    local mode=--do_verify=1
    [ "$1" = verify ] && mode=--verify_only=1
    fio --name=keep --filename="$DEV" --direct=1 --rw=write --bs=128k --size=8m \
        --verify=crc32c $mode --output-format=terse >/tmp/keep.out 2>&1 ||
        { cat /tmp/keep.out; return 1; }
}

# model_counters: the emulated controller's counters, read by the guest from
# the model's counter window (a node "sdhc-counters" of its own in the DT, not
# part of the controller; see qemu/meson_mx_sdhc.h; the kernel names its
# platform device by its physical address) with devmem, so no host round trip
# lets the virtual clock run on.  Prints
# "commands data_commands bytes_read bytes_written faults", counted since
# power-on (or the host's last reset-stats).
model_counters() {
    local base off lo hi out=""
    base=$(basename "$(ls -d /sys/bus/platform/devices/*.sdhc-counters 2>/dev/null | head -1)" .sdhc-counters)
    [ -n "$base" ] || { echo "model_counters: no sdhc-counters device in the device tree" >&2; return 1; }
    [ "$(devmem $((0x$base)) 32)" = 0x4D534443 ] ||
        { echo "model_counters: no counter window at 0x$base" >&2; return 1; }
    for off in 8 16 24 32 40; do
        lo=$(devmem $((0x$base + off)) 32)
        hi=$(devmem $((0x$base + off + 4)) 32)
        out="$out $((hi * 4294967296 + lo))"
    done
    echo $out
}

# model_counter NAME: one value of the model's counter window (version 2, see
# qemu/meson_mx_sdhc.h): commands data_commands bytes_read bytes_written
# faults lost_irq freeze late_dma rx_phase_freezes srst_resets late_dma_bytes
# late_dma_cancelled lost_irq_commands, or state (bit 0: interrupt lost until
# SRST, 1: frozen, 2: late DMA running); version 3: rx_window_crc_errors
# (reads sampled outside the model's rx-window).
model_counter() {
    local base off lo hi need=2
    case "$1" in
    commands) off=8 ;; data_commands) off=16 ;; bytes_read) off=24 ;;
    bytes_written) off=32 ;; faults) off=40 ;; lost_irq) off=48 ;;
    freeze) off=56 ;; late_dma) off=64 ;; rx_phase_freezes) off=72 ;;
    srst_resets) off=80 ;; late_dma_bytes) off=88 ;; late_dma_cancelled) off=96 ;;
    lost_irq_commands) off=104 ;; state) off=112 ;;
    rx_window_crc_errors) off=120; need=3 ;;
    *) echo "model_counter: no counter '$1'" >&2; return 1 ;;
    esac
    base=$(basename "$(ls -d /sys/bus/platform/devices/*.sdhc-counters 2>/dev/null | head -1)" .sdhc-counters)
    [ -n "$base" ] || { echo "model_counter: no sdhc-counters device in the device tree" >&2; return 1; }
    [ $(($(devmem $((0x$base + 4)) 32))) -ge $need ] ||
        { echo "model_counter: the counter window is older than version $need" >&2; return 1; }
    lo=$(devmem $((0x$base + off)) 32)
    hi=$(devmem $((0x$base + off + 4)) 32)
    echo $((hi * 4294967296 + lo))
}

# sdhc_reg OFFSET: a register of the SDHC itself (e.g. 0x10 CLKC, 0x38 CLK2),
# read with devmem (reads have no side effects on these)
sdhc_reg() {
    local base
    base=$(sdhc_dev); base=${base%%.*}
    [ -n "$base" ] || { echo "sdhc_reg: no SDHC platform device" >&2; return 1; }
    echo $(($(devmem $((0x$base + $1)) 32)))
}

# mmc_ios [HOST]: the MMC core's view of the bus (debugfs ios of host HOST,
# mmcN; without it the first host's, the SDHC's where the SD card slot's
# driver is not loaded), one "key=value" per line: clock actual_clock
# bus_width timing signal_voltage
mmc_ios() {
    local f
    # shellcheck disable=SC2086 # unquoted: the default is a pattern
    f=$(ls /sys/kernel/debug/${1:-mmc*}/ios 2>/dev/null | head -1)
    [ -n "$f" ] || { echo "mmc_ios: no debugfs ios" >&2; return 1; }
    sed -n -e 's/^clock:[[:space:]]*\([0-9]*\) Hz/clock=\1/p' \
        -e 's/^actual clock:[[:space:]]*\([0-9]*\) Hz/actual_clock=\1/p' \
        -e 's/^bus width:[[:space:]]*[0-9]* (\(.*\))/bus_width=\1/p' \
        -e 's/^timing spec:[[:space:]]*[0-9]* (\(.*\))/timing=\1/p' \
        -e 's/^signal voltage:[[:space:]]*[0-9]* (\(.*\))/signal_voltage=\1/p' "$f" |
        tr ' ' '_'
}

# fio_verify write|read SEED SIZE [BS]: a pattern (crc32c verify headers) written at the
# card's start, or read back and verified (O_DIRECT, BS default 128k); fio's output in
# /tmp/fio.out, its status returned. fio_bad: the verify failures it reported.
fio_verify() {
    if [ "$1" = write ]; then
        fio --name=w --filename=$DEV --direct=1 --rw=write --bs=${4:-128k} --size=$3 \
            --verify=crc32c --do_verify=0 --randseed=$2 --output-format=terse >/tmp/fio.out 2>&1
    else
        fio --name=r --filename=$DEV --direct=1 --rw=read --bs=${4:-128k} --size=$3 \
            --verify=crc32c --verify_only=1 --randseed=$2 --verify_fatal=0 \
            --output-format=terse >/tmp/fio.out 2>&1
    fi
}
fio_bad() { grep -ci 'verify: bad\|verify failed\|bad magic\|bad header\|crc32c' /tmp/fio.out || true; }

# write_mbr DEV ENTRIES N: an MBR on DEV whose partition table is ENTRIES (printf
# escapes, 16 bytes per partition), the partition table re-read, then waits up to 5 s for
# partition N; fails the run if any of it goes wrong.
write_mbr() {
    local w=0
    dd if=/dev/zero of=/tmp/mbr bs=512 count=1 2>/dev/null
    printf "$2" | dd of=/tmp/mbr bs=1 seek=446 conv=notrunc 2>/dev/null
    printf '\125\252' | dd of=/tmp/mbr bs=1 seek=510 conv=notrunc 2>/dev/null
    dd if=/tmp/mbr of="$1" bs=512 count=1 oflag=direct 2>/dev/null || fail "MBR write"
    blockdev --rereadpt "$1" || fail "re-reading the partition table"
    while [ ! -b "${1}p$3" ] && [ $w -lt 50 ]; do usleep 100000; w=$((w + 1)); done
    [ -b "${1}p$3" ] || fail "no ${1}p$3 after writing the MBR"
}

# slot_host: the MMC host of the SD card slot (the SDIO controller's slot@1),
# mmcN, or fails while its driver has registered none
slot_host() {
    local h
    for h in /sys/bus/platform/devices/*.mmc:slot@1/mmc_host/mmc*; do
        [ -e "$h" ] && { echo "${h##*/}"; return 0; }
    done
    return 1
}

# slot_disk: the block device of the card in the SD card slot (the SDIO controller's
# slot@1), or fails
slot_disk() {
    local b
    for b in /sys/bus/platform/devices/*.mmc:slot@1/mmc_host/mmc*/mmc*:*/block/mmcblk*; do
        [ -e "$b" ] && { echo "/dev/${b##*/}"; return 0; }
    done
    return 1
}

# mmc_test_broken: mmc_test's cases 15-18 (a data command the card answers without its data
# phase, or a single-block command given two blocks) under the SD card slot model's two
# readings of a data phase the card does not complete (host_sync data-timeout-irq-0|1 of
# tests/lib.sh's sd_slot_host_script): no CMD_INT, the command ends on the driver's timer
# (-ETIMEDOUT: "ERROR (-110)"); CMD_INT with the CRC16 status clear, as for a CRC error
# (-EILSEQ: "ERROR (-84)").  Neither is the data timeout with the command good that
# mmc_test wants; the card works on after each.  Leaves the model at data-timeout-irq=0.
mmc_test_broken() {
    local irq want n
    for irq in 0 1; do
        want=-110; [ $irq = 0 ] || want=-84
        host_sync data-timeout-irq-$irq
        mmc-test-run 15-18 > /tmp/mmc-test-broken.out
        cat /tmp/mmc-test-broken.out
        n=$(grep -c "|ERROR ($want)$" /tmp/mmc-test-broken.out || true)
        [ "$n" = 4 ] || fail "mmc_test 15-18 with data-timeout-irq=$irq: $n of 4 ended with ERROR ($want)"
        [ $irq = 1 ] || host_sync hung-4
    done
    host_sync data-timeout-irq-0
}
