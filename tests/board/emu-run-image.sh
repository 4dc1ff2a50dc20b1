#!/usr/bin/env bash
# scripts/emu-run --image: a card written in one boot is read back in the next.
. "$(dirname "$0")/../lib.sh"
# --image: a card written in one boot is read back in the next
g1=$(guest w <<'G'
echo "meson-image-marker" | dd of=$DEV bs=512 seek=100 conv=sync 2>/dev/null
G
)
g2=$(guest r <<'G'
dd if=$DEV bs=512 skip=100 count=1 2>/dev/null | grep -q meson-image-marker || fail "marker not on the reused image"
say "marker found on the reused image"
G
)
emu --card sd --size 16 --driver c --image "$T/card.img" "$g1"
emu --card sd --size 16 --driver c --image "$T/card.img" "$g2"
echo "ok: --image reused"
