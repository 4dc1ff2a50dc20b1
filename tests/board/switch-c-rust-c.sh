#!/usr/bin/env bash
# Moving a live controller C -> Rust -> C with scripts/switch-driver: data
# written through one driver is read back and verified through the other.
# switch-driver returns only once the card is back: the disk it names is
# readable at once, with no wait of the test's own (as board.rst's
# root-on-eMMC procedure uses it: switch-driver c && sha256sum "$D").
. "$(dirname "$0")/../lib.sh"
g=$(guest t <<'G'
set -e
insmod $RS_MOD
[ "$(switch-driver status | cut -d' ' -f2)" = c ] || fail "expected the C driver first"
dd if=/dev/urandom of=/tmp/a bs=1M count=4 2>/dev/null
dd if=/tmp/a of=$DEV bs=1M oflag=direct 2>/dev/null
switch-driver rust
D=$(switch-driver disk) || fail "switch-driver rust returned before the card was back"
dd if="$D" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null || fail "$D not readable right after switch-driver rust"
[ "$(sdhc_driver)" = rust ] || fail "switch-driver rust did not move the controller"
dd if=$DEV of=/tmp/back bs=1M count=4 iflag=direct 2>/dev/null
cmp /tmp/a /tmp/back || fail "data written by the C driver differs when read by the Rust driver"
say "C -> Rust: 4 MiB verified"
dd if=/dev/urandom of=/tmp/b bs=1M count=4 2>/dev/null
dd if=/tmp/b of=$DEV bs=1M seek=4 oflag=direct 2>/dev/null
switch-driver c
D=$(switch-driver disk) || fail "switch-driver c returned before the card was back"
dd if="$D" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null || fail "$D not readable right after switch-driver c"
[ "$(sdhc_driver)" = c ] || fail "switch-driver c did not move the controller"
dd if=$DEV of=/tmp/back bs=1M skip=4 count=4 iflag=direct 2>/dev/null
cmp /tmp/b /tmp/back || fail "data written by the Rust driver differs when read by the C driver"
dd if=$DEV of=/tmp/back bs=1M count=4 iflag=direct 2>/dev/null
cmp /tmp/a /tmp/back || fail "the first 4 MiB changed"
say "Rust -> C: 4 MiB verified, first 4 MiB intact"
G
)
emu --card emmc --size 64 --driver c "$g"
