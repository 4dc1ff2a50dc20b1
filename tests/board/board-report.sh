#!/usr/bin/env bash
# scripts/board-report: its fields, and nothing private in it.
#
# 1. On the build machine, against a made-up board (a fake /proc, /sys and
#    /etc under MESON_SDHC_TEST_HOOKS=1: an Odroid-C1 with the Rust driver on
#    its eMMC, a kernel log and a first-contact JSON file): the report has the
#    board, kernel, configuration (MMC/DMA/RUST lines only), module,
#    controller (driver, DT node, host), card, block device, debugfs, kernel
#    log and JSON sections; planted private data is masked: a MAC address,
#    the machine's and the card's serial numbers and CID, the host name, a
#    user's name and home, a UUID, a PARTUUID, an IP address, file names in
#    the JSON and the log, the JSON file's own name; the configuration is
#    read from /boot/config-<release> without /proc/config.gz; a file that is
#    not JSON and an --output that is a link are refused; the hooks are
#    ignored without MESON_SDHC_TEST_HOOKS=1.
# 2. On the emulated board (eMMC, Rust driver): the report of the real
#    /proc, /sys and debugfs has the board's model and compatible, the
#    kernel's release, the driver, the host and its ios, stats, limits and
#    bounce files, the card and the kernel log's card line; a MAC address,
#    host name, user and file name planted in /etc, the hostname and the
#    kernel log are masked, and the card's serial number and CID are absent.
. "$(dirname "$0")/../lib.sh"
BR="$TOP/scripts/board-report"
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
has() { grep -qF -- "$2" "$1"; }
want() { # FILE TEXT: the report holds TEXT (a fixed string)
    if has "$1" "$2"; then ok "has '$2'"; else bad "no '$2' in the report"; fi
}
wantx() { # FILE LINE: the report holds LINE as a whole line
    if grep -qxF -- "$2" "$1"; then ok "line '$2'"; else bad "no line '$2' in the report"; fi
}
never() { # FILE TEXT WHAT: TEXT (private) is not in the report
    if has "$1" "$2"; then bad "$3 ('$2') is in the report: $(grep -nF -- "$2" "$1" | head -2 | tr '\n' ' ')"
    else ok "$3 masked"; fi
}

# --- 1. a made-up board ---------------------------------------------------------
R=$T/root
REL=$(uname -r)
mkdir -p "$R/proc/device-tree" "$R/proc/sys/kernel" "$R/etc" "$R/boot" "$R/sys/module/meson_mx_sdhc_rs" \
    "$R/sys/kernel/debug/mmc1" "$R/sys/bus/platform/drivers/meson-mx-sdhc-rs"
printf 'Hardkernel ODROID-C1\0' > "$R/proc/device-tree/model"
printf 'hardkernel,odroid-c1\0amlogic,meson8b\0' > "$R/proc/device-tree/compatible"
echo planted-host-7c3a > "$R/proc/sys/kernel/hostname"
printf 'root:x:0:0::/root:/bin/sh\nodroid:x:1000:1000::/home/odroid:/bin/sh\nalicia:x:1001:1001::/home/alicia:/bin/sh\n' > "$R/etc/passwd"
printf 'processor\t: 0\nSerial\t\t: 1b2c3d4e5f607182\n' > "$R/proc/cpuinfo"
printf 'CONFIG_MMC=y\nCONFIG_MMC_MESON_MX_SDHC=y\n# CONFIG_MMC_TEST is not set\nCONFIG_RUST=y\nCONFIG_HAS_DMA=y\nCONFIG_DEBUG_FS=y\nCONFIG_CMDLINE="root=/dev/sda"\nCONFIG_NET=y\n' > "$T/config"
gzip -c "$T/config" > "$R/proc/config.gz"
echo 5a6b7c8d > "$R/sys/module/meson_mx_sdhc_rs/srcversion"
D=$R/sys/bus/platform/devices/c1108e00.mmc
C=$D/mmc_host/mmc1/mmc1:0001
mkdir -p "$D/of_node" "$C/block/mmcblk1/mmcblk1p1"
ln -s ../../../bus/platform/drivers/meson-mx-sdhc-rs "$D/driver"
echo 'of:NmmcT(null)Camlogic,meson8-sdhcCamlogic,meson-mx-sdhc' > "$D/modalias"
printf 'amlogic,meson8-sdhc\0amlogic,meson-mx-sdhc\0' > "$D/of_node/compatible"
printf '\0\0\0\010' > "$D/of_node/bus-width"
printf '\005\365\341\0' > "$D/of_node/max-frequency"
: > "$D/of_node/non-removable"
echo MMC > "$C/type"; echo 8GTF4R > "$C/name"; echo 0x000015 > "$C/manfid"; echo '06/2016' > "$C/date"
echo 150100384754463452c0a1b2c3d4e5f6 > "$C/cid"
echo 0xa1b2c3d4 > "$C/serial"
echo 15269888 > "$C/block/mmcblk1/size"
echo 1 > "$C/block/mmcblk1/mmcblk1p1/partition"
echo 2048 > "$C/block/mmcblk1/mmcblk1p1/start"
echo 15267840 > "$C/block/mmcblk1/mmcblk1p1/size"
printf 'clock:\t\t100000000 Hz\ntiming spec:\t9 (mmc HS200)\n' > "$R/sys/kernel/debug/mmc1/ios"
printf 'commands: 5\n' > "$R/sys/kernel/debug/mmc1/stats"
printf 'bounce_size: 131072\n' > "$R/sys/kernel/debug/mmc1/limits"
cat > "$T/dmesg" <<'E'
[    0.000000] Booting Linux on physical CPU 0x0
[    0.000000] Kernel command line: console=ttyAML0,115200 root=PARTUUID=1234abcd-02 rootwait ip=192.168.1.50::192.168.1.1:255.255.255.0:planted-host-7c3a:eth0:off mmcblk.perdev_minors=8
[    1.100000] mmc1: new HS200 MMC card at address 0001
[    1.200000] mmcblk1: mmc1:0001 8GTF4R 7.28 GiB
[    1.300000] EXT4-fs (mmcblk1p2): mounted filesystem 0f3a2b1c-1111-2222-3333-444455556666 r/w with ordered data mode
[    1.400000] mmc1: planted 02:11:22:33:44:55 on planted-host-7c3a by alicia from /home/alicia/private.img, card a1b2c3d4
[    1.500000] meson-mx-sdhc-rs c1108e00.mmc: machine 1b2c3d4e5f607182 cid 150100384754463452c0a1b2c3d4e5f6
[    1.600000] eth0: link up 00:1e:06:aa:bb:cc
E
mkdir -p "$T/alicia-files"
FCJ=$T/alicia-files/fc-mine.json
echo '{"tool": "first-contact", "file": "/mnt/root/home/alicia/fc-area.img", "device": "/dev/mmcblk1", "result": "pass"}' > "$FCJ"
run() { # OUT ARGS...: board-report on the made-up board
    local out=$1; shift
    MESON_SDHC_TEST_HOOKS=1 BOARD_REPORT_ROOT="$R" BOARD_REPORT_DMESG="$T/dmesg" "$BR" --output "$out" "$@"
}
echo "1. a made-up Odroid-C1 (fake /proc, /sys, /etc)"
( cd "$T" && run "$T/r1.txt" --first-contact "$FCJ" ) 2> "$T/r1.err" || { cat "$T/r1.err"; bad "board-report failed"; }
F=$T/r1.txt
for l in "model: Hardkernel ODROID-C1" "compatible: hardkernel,odroid-c1, amlogic,meson8b" "release: $REL" \
    "config: /proc/config.gz" "  CONFIG_MMC_MESON_MX_SDHC=y" "  # CONFIG_MMC_TEST is not set" "  CONFIG_RUST=y" \
    "  CONFIG_HAS_DMA=y" "  CONFIG_DEBUG_FS=y" "meson_mx_sdhc_rs: loaded" "  srcversion: 5a6b7c8d" \
    "== controller c1108e00.mmc ==" "driver: meson-mx-sdhc-rs" "  compatible: amlogic,meson8-sdhc, amlogic,meson-mx-sdhc" \
    "  bus-width: 0x00000008 (8)" "  max-frequency: 0x05f5e100 (100000000)" "  properties: non-removable" \
    "host: mmc1" "card: mmc1:0001" "  type: MMC" "  name: 8GTF4R" "  date: 06/2016" \
    "  cid: 150100384754463452xxxxxxxxxxxxxx (serial number and CRC masked)" "  serial: (masked)" \
    "  block: /dev/mmcblk1, 7818182656 bytes" "    /dev/mmcblk1p1: start 2048, 7817134080 bytes" \
    "--- debugfs mmc1/ios ---" "timing spec:	9 (mmc HS200)" "--- debugfs mmc1/stats ---" "--- debugfs mmc1/limits ---" \
    "[    1.100000] mmc1: new HS200 MMC card at address 0001" "== first-contact ==" "== bench-board ==" "(not given)"; do
    wantx "$F" "$l"
done
want "$F" '"result": "pass"'
want "$F" '"device": "/dev/mmcblk1"'
want "$F" "rootwait"
if has "$F" "CONFIG_NET=" || has "$F" "CONFIG_CMDLINE"; then bad "configuration lines other than MMC/DMA/RUST"; else ok "no other configuration lines"; fi
if has "$F" "Booting Linux"; then bad "kernel log lines without mmc/sdhc"; else ok "only the mmc/sdhc lines of the kernel log"; fi
never "$F" "02:11:22:33:44:55" "a MAC address"
never "$F" "00:1e:06:aa:bb:cc" "a line without mmc (eth0's MAC address)"
never "$F" "a1b2c3d4" "the card's serial number"
never "$F" "150100384754463452c0a1b2c3d4e5f6" "the card's CID"
never "$F" "1b2c3d4e5f607182" "the machine's serial number"
never "$F" "planted-host-7c3a" "the host name"
never "$F" "alicia" "a user's name"
never "$F" "private.img" "a file name in the kernel log"
never "$F" "fc-area" "a file name in the first-contact JSON"
never "$F" "fc-mine" "the JSON file's own name"
never "$F" "0f3a2b1c-1111-2222-3333-444455556666" "a file system UUID"
never "$F" "1234abcd-02" "a PARTUUID"
never "$F" "192.168.1.50" "an IP address"
if has "$F" "hardkernel,odroid-c1" && grep -q 'odroid' "$T/dmesg"; then ok "the board's name kept (user 'odroid' is the board's word)"; fi

rm "$R/proc/config.gz"; cp "$T/config" "$R/boot/config-$REL"
run "$T/r2.txt" 2> /dev/null || bad "board-report failed without /proc/config.gz"
wantx "$T/r2.txt" "config: /boot/config-$REL"
wantx "$T/r2.txt" "  CONFIG_MMC=y"
echo "not json" > "$T/x.json"
if run "$T/r3.txt" --bench-board "$T/x.json" 2> "$T/r3.err"; then bad "a --bench-board file that is not JSON accepted"
elif grep -q 'not a JSON object' "$T/r3.err"; then ok "not JSON: refused ($(cat "$T/r3.err"))"; else bad "refused, but: $(cat "$T/r3.err")"; fi
ln -s "$T/elsewhere" "$T/link.txt"
if run "$T/link.txt" 2> "$T/r4.err"; then bad "--output through a symbolic link"
elif [ ! -e "$T/elsewhere" ] && grep -q 'symbolic link' "$T/r4.err"; then ok "--output a link: refused"; else bad "link: $(cat "$T/r4.err")"; fi
if BOARD_REPORT_ROOT="$R" "$BR" --output "$T/r5.txt" 2> "$T/r5.err" && grep -q 'ignoring BOARD_REPORT_ROOT' "$T/r5.err" &&
    ! has "$T/r5.txt" "ODROID-C1"; then ok "hooks ignored without MESON_SDHC_TEST_HOOKS=1"
else bad "hooks without MESON_SDHC_TEST_HOOKS=1: $(cat "$T/r5.err")"; fi
[ "$fail" = 0 ] || { echo "FAILED (made-up board)"; exit 1; }

# --- 2. the emulated board --------------------------------------------------------
echo "2. the emulated board, Rust driver"
g=$(guest t <<'G'
set -u
[ -b "$DEV" ] || fail "no card"
H=$(sdhc_host)
[ "$(sdhc_driver)" = rust ] || fail "the Rust driver does not hold the SDHC"
hostname planted-host-7c3a
[ -f /etc/passwd ] || echo 'root:x:0:0::/root:/bin/sh' > /etc/passwd
echo 'alicia:x:1001:1001::/home/alicia:/bin/sh' >> /etc/passwd
echo "mmc9: planted 02:11:22:33:44:55 on planted-host-7c3a by alicia from /home/alicia/private.img" > /dev/kmsg
mkdir -p /tmp/alicia-files
echo "{\"tool\": \"first-contact\", \"file\": \"/home/alicia/fc-area.img\", \"device\": \"$DEV\", \"result\": \"pass\"}" > /tmp/alicia-files/fc-mine.json
echo "{\"tool\": \"bench-board\", \"device\": \"$DEV\", \"results\": {}}" > /tmp/alicia-files/bb-mine.json
cd /tmp
board-report --first-contact /tmp/alicia-files/fc-mine.json --bench-board /tmp/alicia-files/bb-mine.json \
    --output /tmp/report.txt || fail "board-report failed"
F=/tmp/report.txt
chk() { grep -qxF -- "$1" $F || fail "no line '$1' in the report"; }
chk "model: $(tr '\000' '\n' < /proc/device-tree/model | head -1)"
grep -q '^compatible: .' $F || fail "no compatible"
chk "release: $(uname -r)"
if [ -r /proc/config.gz ]; then chk "config: /proc/config.gz"; grep -q '^  CONFIG_RUST=y' $F || fail "no CONFIG_RUST line"; fi
chk "meson_mx_sdhc_rs: loaded"
chk "driver: meson-mx-sdhc-rs"
chk "host: $H"
grep -q '^  type: MMC' $F || fail "no card type"
grep -q '^  cid: .*xxxxxxxx (serial number and CRC masked)' $F || fail "no masked CID"
grep -q "^  block: /dev/${DEV#/dev/}, [0-9]* bytes" $F || fail "no block device line"
for f in ios stats limits bounce; do chk "--- debugfs $H/$f ---"; done
grep -q '^bounce_size: ' $F || fail "no limits contents"
grep -q "$H: new .* card at address" $F || fail "no card line of the kernel log"
grep -q '"result": "pass"' $F || fail "no first-contact JSON"
grep -q '"tool": "bench-board"' $F || fail "no bench-board JSON"
say "fields: model, compatible, release, driver, host $H, card, block, debugfs ios/stats/limits/bounce, kernel log, JSON"
C=$(ls -d /sys/bus/platform/devices/$(sdhc_dev)/mmc_host/$H/$H:* | head -1)
SER=$(cat $C/serial); CID=$(cat $C/cid)
for p in 02:11:22:33:44:55 planted-host-7c3a alicia private.img fc-area fc-mine bb-mine "$CID" "$SER" "${SER#0x}"; do
    ! grep -qF -- "$p" $F || fail "'$p' is in the report: $(grep -nF -- "$p" $F | head -2)"
done
grep -q 'mmc9: planted xx:xx:xx:xx:xx:xx on <hostname> by <user> from <path>' $F || fail "the planted kernel log line is not there masked"
say "masked: MAC, host name, user, file names, card serial $SER and CID"
sed "s/^/[report] /" $F
G
)
emu --card emmc --size 64 --driver rust "$g"
echo "ok: board-report"
