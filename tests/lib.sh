# Helpers for host-side tests (sourced by tests/board/*.sh).
# shellcheck shell=bash
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EMU="$TOP/scripts/emu-run"
QMP="$TOP/scripts/qmp"
T=$(mktemp -d "${TMPDIR:-/tmp}/mmc-test.XXXXXX")
trap 'rm -rf "$T"' EXIT

# guest NAME: write the guest script from stdin to $T/NAME.sh and print its path
guest() {
    { echo '. /bin/emu-lib.sh'; cat; } > "$T/$1.sh"
    echo "$T/$1.sh"
}

# emu ARGS...: run the board quietly; the serial log of the last run is
# $T/serial.log, and every run's log is kept in build/test-logs/.
LOGDIR="${TEST_LOGDIR:-$TOP/build/test-logs}"
mkdir -p "$LOGDIR"
EMU_RUNS=0
emu() {
    EMU_RUNS=$((EMU_RUNS + 1))
    local keep="$LOGDIR/${TEST_NAME:-$(basename "$0" .sh)}.run$EMU_RUNS.serial.log"
    local rc=0
    "$EMU" --quiet --log "$T/serial.log" "$@" || rc=$?
    cp "$T/serial.log" "$keep" 2>/dev/null || true
    return $rc
}

check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then echo "  ok: $1"; else echo "  FAILED: $1"; return 1; fi
}

# fault_host: write $T/host.sh, a --host-script for `host_sync` in the guest:
# "arm,KIND,opt=val,..." arms faults over QMP (scripts/qmp faults KIND opt=val ...),
# "stats" saves the model's counters to $T/stats.json.
fault_host() {
    cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
arm,*) IFS=, read -r -a a <<< "\$1"; "$QMP" "\$EMU_QMP" faults "\${a[@]:1}" ;;
stats) "$QMP" "\$EMU_QMP" stats > "$T/stats.json" ;;
esac
HOST
    chmod +x "$T/host.sh"
}

# sd_slot_host_script FAULT: $T/host.sh for the SD card slot's tests: one-read (one FAULT
# on a read), every-read (FAULT on every read), clear, lost-irq and lost-done (a lost
# interrupt and the soft reset after it), count-N (at least N faults injected)
sd_slot_host_script() {
    cat > "$T/host.sh" <<HOST
#!/usr/bin/env bash
set -e
case "\$1" in
one-read) "$QMP" "\$EMU_QMP" sdio-faults data-crc count=1 dir=read ;;
every-read) "$QMP" "\$EMU_QMP" sdio-faults $1 count=0 dir=read ;;
clear) "$QMP" "\$EMU_QMP" sdio-faults none ;;
lost-irq) "$QMP" "\$EMU_QMP" sdio get soft-resets > "$T/resets"
          "$QMP" "\$EMU_QMP" sdio-faults lost-irq count=1 dir=cmd ;;
lost-done) k=\$("$QMP" "\$EMU_QMP" sdio get fault-kind)
           [ "\$k" = none ] || { echo "host: the lost interrupt was not injected (\$k armed)"; exit 1; }
           n=\$("$QMP" "\$EMU_QMP" sdio get soft-resets)
           [ "\$n" -gt "\$(cat "$T/resets")" ] || { echo "host: no soft reset after the lost interrupt"; exit 1; } ;;
count-*) n=\$("$QMP" "\$EMU_QMP" sdio get faults-injected)
         [ "\$n" -ge "\${1#count-}" ] || { echo "host: faults-injected \$n < \${1#count-}"; exit 1; } ;;
esac
HOST
    chmod +x "$T/host.sh"
}
