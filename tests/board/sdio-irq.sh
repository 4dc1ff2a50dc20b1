#!/usr/bin/env bash
# The SDIO card's interrupt on the Rust driver (--card sdio, board
# mxiii-plus), one boot:
#  1. interrupts through DAT1 (sdio_irq=1, the default): MMC_CAP_SDIO_IRQ in
#     the host's caps; sdio_test's irq case (raised idle and during 64 KiB
#     transfers): raised = delivered, none spurious, none late; while the
#     interrupt is claimed and the bus idle for a second, the card sees no
#     CMD52 (the core does not poll).
#  2. the fallback (sdio_irq=0): no MMC_CAP_SDIO_IRQ, the same irq case
#     passes by the core's polling, which sends CMD52s while idle.
#  3. teardown with the function driver bound, its interrupt claimed and one
#     pending: the host unbound, bound again and the driver removed (rmmod)
#     while the card asserts its interrupt; afterwards the driver loads
#     again and the irq case passes.  emu-run fails the run on any kernel
#     report; a hang fails it by its timeout.
. "$(dirname "$0")/../lib.sh"
cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
"$QMP" "\$EMU_QMP" card-stats > "$T/card-\$1.json"
HOST
chmod +x "$T/host.sh"
g=$(guest t <<'G'
set -e
d=/sys/kernel/debug/sdio_test
caps() { echo $(( $(cat /sys/kernel/debug/$(sdhc_host)/caps) & 8 )); }
irq_case() {  # irq_case PHASE N: sdio_test's irq case, N per kind
    echo "@@PHASE $1"
    insmod /lib/modules/sdio_test.ko run=irq irqs=$2 seed=$3
    rmmod sdio_test
}
idle_polls() {  # idle_polls PHASE: card stats around a second idle, claimed
    insmod /lib/modules/sdio_test.ko run=
    echo 1 > $d/claim
    host_sync "$1-before"
    sleep 1

    host_sync "$1-after"
    echo 0 > $d/claim
    rmmod sdio_test
}
raise_in() {  # raise_in US: the card's interrupt US microseconds from now
    echo "1 0x10008 $(($1 & 255))" > $d/cmd52
    echo "1 0x10009 $(($1 >> 8))" > $d/cmd52
    echo "1 0x1000c 1" > $d/cmd52
}
reload() {  # reload PARAMS...: the Rust driver again, with PARAMS
    rmmod meson_mx_sdhc_rs
    load_driver rust "$@"
    wait_card || fail "no SDIO card after loading the driver with $*"
}
# 1. interrupts
[ "$(caps)" = 8 ] || fail "sdio_irq=1: MMC_CAP_SDIO_IRQ not in the host's caps"
say "sdio_irq=1: MMC_CAP_SDIO_IRQ set"
irq_case irq 20 1
idle_polls irq
# 2. the core's polling
reload sdio_irq=0
[ "$(caps)" = 0 ] || fail "sdio_irq=0: MMC_CAP_SDIO_IRQ still in the host's caps"
say "sdio_irq=0: MMC_CAP_SDIO_IRQ clear"
irq_case poll 10 2
idle_polls poll
# 3. teardown with an interrupt pending
reload
insmod /lib/modules/sdio_test.ko run=
dev=$(sdhc_dev)
for delay in 0 300 900; do
    echo 1 > $d/claim
    raise_in $delay
    echo "$dev" > /sys/bus/platform/drivers/meson-mx-sdhc-rs/unbind
    say "unbound with an interrupt due ${delay} us after it was raised"
    echo "$dev" > /sys/bus/platform/drivers/meson-mx-sdhc-rs/bind
    wait_card || fail "no SDIO card after binding again"
    w=0; while [ ! -d $d ]; do w=$((w + 1)); [ $w -gt 50 ] && fail "sdio_test did not probe again"; usleep 100000; done
done
echo 1 > $d/claim
raise_in 200
rmmod meson_mx_sdhc_rs
say "removed with the function driver bound and an interrupt due"
rmmod sdio_test
load_driver rust
wait_card || fail "no SDIO card after loading the driver again"
irq_case after 5 3
say "@@SDIO-IRQ-TEST done"
G
)
emu --driver rust --card sdio --host-script "$T/host.sh" --timeout 900 "$g"
log="$T/serial.log"
rc=0
check "the guest script finished" grep -q '@@SDIO-IRQ-TEST done' "$log" || rc=1
for phase in irq poll after; do
    irq=$(sed -n "/@@PHASE $phase\$/,/@@SDIO-DONE/p" "$log" | grep -o '@@SDIO-IRQ .*' | tail -1)
    echo "  $phase: ${irq#@@SDIO-IRQ }"
    raised=$(sed -n 's/.* raised=\([0-9]*\).*/\1/p' <<< "$irq")
    delivered=$(sed -n 's/.* delivered=\([0-9]*\).*/\1/p' <<< "$irq")
    during=$(sed -n 's/.* during_transfers=\([0-9]*\).*/\1/p' <<< "$irq")
    check "$phase: raised $raised = delivered $delivered ($during during transfers), none spurious or late" \
        [ -n "$raised" ] && [ "$raised" -gt 0 ] && [ "$raised" = "$delivered" ] &&
        [ "${during:-0}" -gt 0 ] && grep -q ' spurious=0 timeouts=0 ' <<< "$irq" || rc=1
    check "$phase: sdio_test 0 mismatches, 0 errors" \
        sh -c "sed -n '/@@PHASE $phase\$/,/@@SDIO-DONE/p' '$log' | grep -q '@@SDIO-DONE tests=1 mismatches=0 errors=0\$'" || rc=1
done
python3 - "$T" <<'PY' || rc=1
import json, os, sys
t = sys.argv[1]
def cmd52(name):
    c = json.load(open(os.path.join(t, "card-%s.json" % name)))
    return c["cmd52_reads"] + c["cmd52_writes"]
irq = cmd52("irq-after") - cmd52("irq-before")
poll = cmd52("poll-after") - cmd52("poll-before")
ok = True
for what, cond in (("with interrupts, %d CMD52s in a second idle (no polling)" % irq, irq == 0),
                   ("polling, %d CMD52s in a second idle" % poll, poll > 10)):
    print("  %s: %s" % ("ok" if cond else "FAILED", what))
    ok = ok and cond
sys.exit(0 if ok else 1)
PY
exit $rc
