#!/usr/bin/env bash
# Linux's own sdio_uart (drivers/mmc/core/sdio_uart.c, not ours) bound to the
# SDIO card's function 2 (SDIO_CLASS_GPS, tuple 0x91 SUBTPL_SIOREG: a 16550
# at 0x100, 128 x 115200 Hz), in one boot on each of:
#   c              the in-tree C driver, the referee (the core polls the
#                  card's interrupt)
#   rust           the Rust driver with the card's interrupt (sdio_irq=1)
#   rust-poll      the Rust driver with the core's polling (sdio_irq=0)
# For each: the UART in loopback (TIOCMSET with TIOCM_LOOP), 64 KiB of a
# pattern through /dev/ttySDIO0 at 921600 baud and 4 KiB at 460800 and
# 230400, every byte back in order (tests/guest/sdio-uart-loop.c), and the
# model's UART counters agreeing (every byte looped, no overrun, its
# interrupt raised).  SDIO_UART_DRIVERS="..." runs a subset.
# sdio_uart moves a byte with about 3.3 CMD52s (one to send, two to
# receive, plus its interrupt handling): 240000 CMD52s per driver.
. "$(dirname "$0")/../lib.sh"
drivers=${SDIO_UART_DRIVERS:-c rust rust-poll}
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
"$QMP" "\$EMU_QMP" card-stats > "$T/card-\$1.json"
HOST
chmod +x "$T/host.sh"
g=$( { echo "set -e; DRIVERS='$drivers'"; cat <<'G'
use_driver() {  # use_driver c|rust|rust-poll: bind the SDHC to it
    if [ "$1" = c ]; then
        lsmod | grep -q '^meson_mx_sdhc ' || load_driver c
        [ "$(sdhc_driver)" = c ] || switch-driver c
    else
        if lsmod | grep -q '^meson_mx_sdhc_rs '; then rmmod meson_mx_sdhc_rs; fi
        if [ "$1" = rust-poll ]; then load_driver rust sdio_irq=0; else load_driver rust; fi
        [ "$(sdhc_driver)" = rust ] || switch-driver rust
    fi
    wait_card || fail "$1: no SDIO card"
}
first=$(echo $DRIVERS | cut -d' ' -f1)
for drv in $DRIVERS; do
    [ "$drv" = "$first" ] && [ "$drv" != rust-poll ] || use_driver "$drv"
    echo "@@UART-DRIVER $drv"
    f2=$(sdio_func 2)
    [ -n "$f2" ] || fail "$drv: no SDIO function 2"
    insmod /lib/modules/sdio_uart.ko
    w=0
    while [ ! -c /dev/ttySDIO0 ]; do
        w=$((w + 1)); [ $w -gt 50 ] && fail "$drv: no /dev/ttySDIO0"; usleep 100000
    done
    [ "$(basename "$(readlink /sys/bus/sdio/devices/$f2/driver)")" = sdio_uart ] ||
        fail "$drv: sdio_uart did not bind function 2"
    sdio-uart-loop /dev/ttySDIO0 921600 65536 || true
    sdio-uart-loop /dev/ttySDIO0 460800 4096 || true
    sdio-uart-loop /dev/ttySDIO0 230400 4096 || true
    rmmod sdio_uart
    host_sync "$drv"
done
say "@@UART-TEST done"
G
} | guest t)
emu --driver "$(echo "$drivers" | cut -d' ' -f1 | sed 's/-poll$//')" \
    ${SDIO_UART_EMU_ARGS:-} --card sdio --host-script "$T/host.sh" --timeout 1500 "$g"
log="$T/serial.log"
rc=0
check "the guest script finished" grep -q '@@UART-TEST done' "$log" || rc=1
for drv in $drivers; do
    sed -n "/@@UART-DRIVER $drv\$/,/@@SYNC $drv\$/p" "$log" | grep -o '@@UART .*' |
        sed "s/^@@UART/  $drv:/"
    n=$(sed -n "/@@UART-DRIVER $drv\$/,/@@SYNC $drv\$/p" "$log" | grep -o '@@UART .*' |
        awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
             v["bytes"] == v["received"] && v["mismatches"] == 0 { n++ } END { print n + 0 }')
    check "$drv: three rates, every byte back in order" [ "$n" = 3 ] || rc=1
done
python3 - "$T" $drivers <<'PY' || rc=1
import json, os, sys
t, drivers = sys.argv[1], sys.argv[2:]
total = 65536 + 4096 + 4096
ok = True
prev = {"looped": 0, "overruns": 0, "irqs": 0}
for drv in drivers:
    u = json.load(open(os.path.join(t, "card-%s.json" % drv)))["uart"]
    d = {k: u[k] - prev[k] for k in prev}
    prev = u
    good = d["looped"] == total and d["overruns"] == 0 and d["irqs"] > 0
    print("  %s: %s: the model looped %d of %d bytes, %d overruns, %d interrupts" %
          ("ok" if good else "FAILED", drv, d["looped"], total, d["overruns"], d["irqs"]))
    ok = ok and good
sys.exit(0 if ok else 1)
PY
exit $rc
