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

# emu ARGS...: run the board quietly, keeping the serial log in $T/serial.log
emu() {
    "$EMU" --quiet --log "$T/serial.log" "$@"
}

check() { # check DESCRIPTION COMMAND...
    if "${@:2}"; then echo "  ok: $1"; else echo "  FAILED: $1"; return 1; fi
}
