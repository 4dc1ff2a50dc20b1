#!/usr/bin/env bash
# The test knobs (test_knobs.rs) are in the module the tests load and in no
# other (run-all: host-test-knobs): `make guest` builds build/module-test with
# TEST_KNOBS=1, whose .ko names the debugfs files; the module `make module`
# leaves in the repository top (the one `make install` and DKMS install, built
# as the bench module is) names none of them, but still has the files every
# build has (stats, limits).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
knobs="force_bounce read_flush_wait send_stall_ms watchdog_early_ms bounce_copy_in_faults"
# no build has a knob that changes what the driver does with memory after an error
gone="quiesce_on_error reset_drain_us"
fail() { echo "test-knobs: $*"; exit 1; }
has() { grep -c -a -F "$2" "$1" || true; }
check() { # ko want(0|1)
    local ko=$1 want=$2 k n
    [ -f "$ko" ] || fail "$ko is not built"
    [ "$(has "$ko" limits)" != 0 ] || fail "$ko: no 'limits' string (not the module?)"
    for k in $knobs; do
        n=$(has "$ko" "$k")
        if [ "$want" = 1 ] && [ "$n" = 0 ]; then fail "$ko has no knob $k"; fi
        if [ "$want" = 0 ] && [ "$n" != 0 ]; then fail "$ko has the knob $k"; fi
    done
    for k in $gone; do
        [ "$(has "$ko" "$k")" = 0 ] || fail "$ko has the knob $k"
    done
    echo "${ko#"$TOP"/}: knobs $([ "$want" = 1 ] && echo present || echo absent)"
}
check "$TOP/build/module-test/meson_mx_sdhc_rs.ko" 1
check "$TOP/meson_mx_sdhc_rs.ko" 0
