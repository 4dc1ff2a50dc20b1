#!/usr/bin/env bash
# make series-test only (not a tests/board test: it needs the kernel built from
# the upstream series, EMU_KERNEL/EMU_GUEST): the KUnit suites the series adds
# (kernel::mmc's and those of its fixes to the kernel crate), built into that
# kernel, and kernel::mmc's doc test (the example of rust/kernel/mmc.rs in
# the kernel crate's rust_doctests_kernel suite) run at boot and pass.  SUITES:
# the suite names (scripts/series-test takes them from the series).
. "$(dirname "$0")/../lib.sh"
[ -n "${EMU_KERNEL:-}" ] || { echo "EMU_KERNEL is not set: run scripts/series-test"; exit 2; }
: "${SUITES:?the KUnit suite names}"
re=$(echo $SUITES | tr ' ' '|')
g=$(guest kunit <<G
dmesg | grep -E '^\[[ 0-9.]+\] +(not )?ok [0-9]+ ($re|rust_doctest_kernel_mmc)|# ($re|Totals): pass' > /tmp/kunit || true
cat /tmp/kunit
grep -q 'not ok' /tmp/kunit && fail "a KUnit suite of the series or doc test of kernel::mmc failed"
grep -qE '] +ok [0-9]+ rust_doctest_kernel_mmc_rs_0$' /tmp/kunit || fail "the doc test of kernel::mmc did not run or did not pass"
for s in $SUITES; do
  grep -qE "] +ok [0-9]+ \$s\\\$" /tmp/kunit || fail "KUnit suite \$s did not run or did not pass"
done
say "KUnit suites of the series passed: $SUITES"
G
)
# KUnit is built in but off by default (allnoconfig): enable it for this boot only.
rc=0
emu --card emmc --size 16 --driver none --append "kunit.enable=1 kunit.autorun=1" "$g" || rc=1
grep -E '\[guest\]' "$T/serial.log" | sort -u
exit $rc
