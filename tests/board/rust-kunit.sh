#!/usr/bin/env bash
# The KUnit tests of the MMC host layer (rust/kernel/mmc/caps.rs, ios.rs, request.rs: a request
# completed by done() and one dropped, on a real host of a faux device; the debugfs stand-in
# rust/kernel/debugfs/foreign_dir.rs (a directory another subsystem owns, as the series'
# ScopedDir::from_raw()), and the non-coherent
# pages' rust/kernel/dma/noncoherent/dirty/tests.rs, and their CPU views in
# rust/kernel/dma/cpu_copy.rs), of the workqueue extension
# (rust/kernel/workqueue/rearm.rs: arming and cancelling delayed work; timer.rs: the timer with
# a queue of its own that the driver's watchdog is), of runtime PM (rust/kernel/pm/tests.rs: each
# state type finds its own devres node, also when two types' release functions are one) and of
# the driver's
# pure logic (logic/tests.rs, and the bounce buffer's bounce/policy/tests.rs and
# bounce/slots/tests.rs; the four pure suites are also the host's cargo tests) run in the guest
# when the
# module is loaded: every suite must report "ok", none "not ok", and at least the suites we
# know of must have run (a module built without them would otherwise pass silently).
. "$(dirname "$0")/../lib.sh"
g=$(guest kunit <<'G'
load_driver rust
wait_card
dmesg | grep -E '^\[[ 0-9.]+\] +(not )?ok [0-9]+ (meson_mx_sdhc_rs|rust_kernel)_|# ((meson_mx_sdhc_rs|rust_kernel)_[a-z_]+|Totals): pass' > /tmp/kunit || true
cat /tmp/kunit
grep -q 'not ok' /tmp/kunit && fail "a KUnit suite of the module failed"
for s in rust_kernel_mmc_caps rust_kernel_mmc_ios meson_mx_sdhc_rs_bounce_policy \
         meson_mx_sdhc_rs_bounce_slots rust_kernel_dma_noncoherent_dirty \
         rust_kernel_workqueue_rearm rust_kernel_workqueue_timer meson_mx_sdhc_rs_logic \
         rust_kernel_dma_cpu_copy \
         meson_mx_sdhc_rs_debugfs_foreign_dir rust_kernel_mmc_request rust_kernel_pm \
         rust_kernel_dma_noncoherent; do
  grep -qE "] +ok [0-9]+ $s\$" /tmp/kunit || fail "KUnit suite $s did not run or did not pass"
done
# rust_kernel_mmc_request drops a request without done(): the layer's one warning for it
dmesg | grep -q 'a request was dropped without done(): completed as failed' ||
  fail "a dropped request completed without the layer's warning"
say "KUnit suites of the MMC layer and of the driver's pure logic passed"
G
)
# KUnit is built in but off by default (allnoconfig): enable it for this boot only.
emu --card emmc --size 16 --driver none --append "kunit.enable=1 kunit.autorun=1" "$g"
