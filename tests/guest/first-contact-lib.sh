# Helpers for the guest scripts of tests/board/first-contact*.sh (sourced after
# emu-lib.sh).  shellcheck shell=sh
# They run $FC (first-contact with its controller and modules) on the card $D,
# with stdout in /tmp/o and stderr in /tmp/e, and call the test's
# drivers_unchanged WHAT (fails unless the C driver still holds the controller).

# expect RC PATTERN WHAT ARGS...: first-contact ARGS exits RC, stderr/stdout has PATTERN
expect() {
    want=$1 pat=$2 what=$3; shift 3
    rc=0
    $FC "$@" > /tmp/o 2> /tmp/e || rc=$?
    [ $rc = "$want" ] && grep -q -- "$pat" /tmp/e /tmp/o ||
        { cat /tmp/o /tmp/e; fail "$what: exit $rc (expected $want), no '$pat'"; }
}

# blank_raw_run WHAT BYTES [PROGRESS]: the walk-through's raw run on a blank card of
# BYTES (--offset 0 --size 2m --destroy-partition-table --no-backup) passes (WHAT names
# it if it exits non-zero), its read comparison of the whole card the same (and a line
# matching PROGRESS on stderr); its JSON printed as "@@JSON raw", nothing switched, the
# region written; --restore then makes the card's first 4 MiB blank again
blank_raw_run() {
    rc=0
    $FC --offset 0 --size 2m --destroy-partition-table --no-backup --save /tmp/fc.save --json /tmp/raw.json > /tmp/o 2> /tmp/e || rc=$?
    cat /tmp/e /tmp/o
    [ $rc = 0 ] || fail "$1: exit $rc"
    grep -q '^first-contact: PASS (raw mode)' /tmp/o || fail "raw mode: no PASS line"
    grep -q "read comparison: \[0, $2): same" /tmp/o || fail "raw mode: the read comparison is not 'same'"
    [ -z "${3:-}" ] || grep -q "$3" /tmp/e || fail "raw mode: no progress line with a rate"
    echo "@@JSON raw $(tr -d '\n' < /tmp/raw.json)"
    drivers_unchanged "raw mode"
    if cmp -n 2097152 /dev/zero "$D" > /dev/null 2>&1; then fail "raw mode: the region did not change"; fi
    expect 0 "restored \[0," "--restore" --restore /tmp/fc.save
    cmp -n 4194304 /dev/zero "$D" || fail "--restore: the card's start is not blank again"
}
