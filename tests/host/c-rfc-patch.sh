#!/usr/bin/env bash
# The RFC design's patch (bench/c-rfc-bounce, run-all: host-c-rfc-patch) is a
# git format-patch mail against Linux 7.3's drivers/mmc/host/meson-mx-sdhc-mmc.c:
#
#   1. one patch, "[PATCH] mmc: meson-mx-sdhc: ..." with a commit message,
#      touching that one file, and it applies (git apply --check) to the file
#      as the test kernel's source has it;
#   2. scripts/checkpatch.pl --strict reports nothing but MISSING_SIGN_OFF:
#      the patch carries no trailer, as the project's patches for upstream
#      (the sender adds theirs; this one is a bench peer, never sent).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${MESON_SDHC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meson-mx-sdhc-rs}
fail() { echo "c-rfc-patch: $*"; exit 1; }
mapfile -t patches < <(ls "$TOP"/bench/c-rfc-bounce/*.patch)
[ "${#patches[@]}" = 1 ] || fail "expected one patch in bench/c-rfc-bounce, found ${#patches[@]}"
P=${patches[0]}
head -1 "$P" | grep -qE '^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001$' || fail "not a format-patch mail"
grep -q '^Subject: \[PATCH\] mmc: meson-mx-sdhc: ' "$P" || fail "no 'Subject: [PATCH] mmc: meson-mx-sdhc: ...'"
files=$(grep -E '^diff --git ' "$P" | awk '{print $3}')
[ "$files" = a/drivers/mmc/host/meson-mx-sdhc-mmc.c ] || fail "touches $files, not meson-mx-sdhc-mmc.c alone"
msg=$(sed -n '/^Subject:/,/^---$/p' "$P" | sed '1d;$d' | grep -c '[a-z]' || true)
[ "$msg" -ge 5 ] || fail "a commit message of $msg lines"
SRC=$(readlink -f "$CACHE/kernel/source" 2>/dev/null || true)
[ -f "$SRC/drivers/mmc/host/meson-mx-sdhc-mmc.c" ] || fail "no test kernel source at $CACHE/kernel/source (make kernel)"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/drivers/mmc/host"
cp "$SRC/drivers/mmc/host/meson-mx-sdhc-mmc.c" "$T/drivers/mmc/host/"
git -C "$T" apply --check "$P" || fail "does not apply to $SRC/drivers/mmc/host/meson-mx-sdhc-mmc.c"
echo "c-rfc-patch: $(basename "$P") applies to $(basename "$SRC")"
out=$(cd "$SRC" && { perl scripts/checkpatch.pl --strict --show-types "$P" 2>&1 || true; })
types=$(grep -oE '^(ERROR|WARNING|CHECK):[A-Z_]+' <<<"$out" | sort -u | tr '\n' ' ')
grep -q '^total: ' <<<"$out" || { echo "$out"; fail "checkpatch did not run"; }
[ "$types" = "ERROR:MISSING_SIGN_OFF " ] || { echo "$out"; fail "checkpatch --strict: $types"; }
echo "c-rfc-patch: checkpatch --strict: $(grep '^total: ' <<<"$out") (MISSING_SIGN_OFF only: no trailer)"
