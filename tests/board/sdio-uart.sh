#!/usr/bin/env bash
# Linux's own sdio_uart (drivers/mmc/core/sdio_uart.c, not ours) bound to the
# SDIO card's function 2 (SDIO_CLASS_GPS, tuple 0x91 SUBTPL_SIOREG: a 16550
# at 0x100, 128 x 115200 Hz) on the in-tree C driver (the core polls the
# card's interrupt): the UART in loopback (TIOCMSET with TIOCM_LOOP), 64 KiB
# of a pattern through /dev/ttySDIO0 at 921600 baud and 4 KiB at 460800 and
# 230400, every byte back in order (tests/guest/sdio-uart-loop.c), the
# model's UART counters agreeing (every byte looped, no overrun, its
# interrupt raised).  SDIO_DRIVER=rust runs the same on the Rust driver.
# Slow: sdio_uart moves a byte with about 3.3 CMD52s (one to send, two to
# receive, plus its interrupt handling), 213000 CMD52s for the 64 KiB, and
# the core polls the interrupt every 10 ms; about 5 minutes of wall time on
# 2 shared cores, almost all of it the 64 KiB.
. "$(dirname "$0")/../lib.sh"
drv=${SDIO_DRIVER:-c}
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
"$QMP" "\$EMU_QMP" card-stats > "$T/card.json"
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
f2=$(sdio_func 2)
[ -n "$f2" ] || fail "no SDIO function 2"
say "function 2: $f2 class $(cat /sys/bus/sdio/devices/$f2/class)"
insmod /lib/modules/sdio_uart.ko
w=0
while [ ! -c /dev/ttySDIO0 ]; do
    w=$((w + 1)); [ $w -gt 50 ] && fail "no /dev/ttySDIO0"; usleep 100000
done
[ "$(basename "$(readlink /sys/bus/sdio/devices/$f2/driver)")" = sdio_uart ] || fail "sdio_uart did not bind function 2"
rc=0
sdio-uart-loop /dev/ttySDIO0 921600 65536 || rc=1
sdio-uart-loop /dev/ttySDIO0 460800 4096 || rc=1
sdio-uart-loop /dev/ttySDIO0 230400 4096 || rc=1
host_sync stats
exit $rc
G
)
emu --driver "$drv" --card sdio --host-script "$T/host.sh" --timeout 900 "$g"
log="$T/serial.log"
grep '@@UART' "$log" | sed 's/^.*@@/  @@/'
rc=0
n=$(grep -o '@@UART .*' "$log" |
    awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
         v["bytes"] == v["received"] && v["mismatches"] == 0 { n++ } END { print n + 0 }')
check "three rates, every byte back in order" [ "$n" = 3 ] || rc=1
python3 - "$T/card.json" <<'PY' || rc=1
import json, sys
u = json.load(open(sys.argv[1]))["uart"]
print("  model: uart %s" % u)
total = 65536 + 4096 + 4096
ok = u["looped"] == total and u["overruns"] == 0 and u["irqs"] > 0
print("  %s: the model looped %d of %d bytes, %d overruns, %d interrupts" %
      ("ok" if ok else "FAILED", u["looped"], total, u["overruns"], u["irqs"]))
sys.exit(0 if ok else 1)
PY
exit $rc
