#!/usr/bin/env bash
# scripts/emu-run itself: the guest script's status comes back, and a kernel
# WARNING or UBSAN report in the log fails the run even when the script succeeds.
. "$(dirname "$0")/../lib.sh"
g=$(guest status <<'G'
exit 3
G
)
set +e
emu --driver none "$g"; rc=$?
[ "$rc" = 3 ] || { echo "FAILED: guest status 3 came back as $rc"; exit 1; }
g=$(guest warn <<'G'
echo "WARNING: CPU: 0 PID: 1 at fake/location.c:1 injected by the test" > /dev/kmsg
exit 0
G
)
emu --driver none "$g"; rc=$?
[ "$rc" != 0 ] || { echo "FAILED: a WARNING in the kernel log did not fail the run"; exit 1; }
g=$(guest ubsan <<'G'
echo "UBSAN: array-index-out-of-bounds in fake/location.c:1:2 injected by the test" > /dev/kmsg
exit 0
G
)
emu --driver none "$g"; rc=$?
[ "$rc" != 0 ] || { echo "FAILED: a UBSAN report in the kernel log did not fail the run"; exit 1; }
echo "ok: status passed through, WARNING and UBSAN reports detected"
