#!/usr/bin/env bash
# The upstream series generates as a sender would send it (run-all:
# host-series-generate; scripts/make-series against the test kernel's tree):
#
#   1. without a git identity and without --author, the generator stops and
#      says how to give one; without --base-commit it stops too;
#   2. with a test identity and base: "[RFC PATCH n/N]" subjects (a cover
#      letter, the kernel crate's new modules, kernel::mmc, the driver), the test
#      identity as author, the driver as a port of the C driver followed by
#      one patch per feature with no feature condition left, no trailer (no Signed-off-by, no Assisted-by: the
#      sender adds their own), a base-commit: line in the cover letter, Cc:
#      lines from get_maintainer.pl naming linux-mmc and rust-for-linux on
#      every patch;
#   3. no commit message, cover letter or added line speaks of this
#      repository: its test names, scripts, make targets or documents;
#   4. Clk::round_rate(), which 7.3's Clk lacks, is a patch of its own
#      adding the method to rust/kernel/clk.rs, without a Fixes: tag, after
#      the fixes and before the clock providers' patch; the extension trait that stands in for it
#      out of tree (RoundRate, kernel_ext::clk::round_rate) is in no patch.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "series-generate: $*"; exit 1; }
BASE=0123456789abcdef0123456789abcdef01234567
export MESON_SDHC_CACHE=${MESON_SDHC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/meson-mx-sdhc-rs}
ME="Jane Sender <jane.sender@example.org>"

# 1. The stops.  No global or system git configuration, no SERIES_* variables.
noid() { env -u SERIES_AUTHOR -u SERIES_BASE HOME="$T/home" GIT_CONFIG_GLOBAL=/dev/null \
    GIT_CONFIG_NOSYSTEM=1 "$TOP/scripts/make-series" --out "$T/none" "$@" 2>&1; }
mkdir -p "$T/home"
if git -C "$TOP" config --local user.name >/dev/null; then
    echo "(this clone has a local git identity: the no-identity stop is not checked)"
else
    out=$(noid --base-commit "$BASE") && fail "generated without an identity"
    grep -q "no author: set your git identity" <<<"$out" || fail "no-identity message: $out"
    echo "no identity: stops: ${out#*error: }"
fi
out=$(noid --author "$ME") && fail "generated without a base commit"
grep -q "no base commit" <<<"$out" || fail "no-base message: $out"
out=$(noid --author "$ME" --base-commit v7.3) && fail "accepted base commit 'v7.3'"
echo "no base: stops; a tag name instead of a hash: stops"

# 2. The series.
"$TOP/scripts/make-series" --author "$ME" --base-commit "$BASE" --out "$T/s" >/dev/null
mapfile -t P < <(ls "$T"/s/*.patch)
N=$((${#P[@]} - 1))
[ "$N" -ge 2 ] || fail "expected a cover letter and at least 2 patches, got: ${P[*]}"
# The driver as a port of the C driver, then one patch per feature (Kbuild's FEATURES).
read -r -a FEATURES <<<"$(sed -n 's/^FEATURES *:= *//p' "$TOP/Kbuild")"
port=${P[$((N - ${#FEATURES[@]}))]}
case "$(basename "$port")" in *-mmc-meson-mx-sdhc-add-a-Rust-driver.patch) ;;
    *) fail "patch $((N - ${#FEATURES[@]})) is not the port of the driver: $(basename "$port")" ;; esac
for ((i = N - ${#FEATURES[@]} + 1; i <= N; i++)); do
    case "$(basename "${P[$i]}")" in *-mmc-meson-mx-sdhc-rs-*) ;;
        *) fail "patch $i is not a feature of the driver: $(basename "${P[$i]}")" ;; esac
done
if grep -nE '^\+.*(cfg\((not\()?feature|// cfg\()' "${P[@]}"; then
    fail "a feature condition of the driver's sources is left in the series"
fi
echo "driver: the port, then ${#FEATURES[@]} features (${FEATURES[*]}), no feature condition left"
w=${#N}
k=0
for p in "${P[@]}"; do
    n=$(basename "$p")
    s=$(printf "%0${w}d/%d" "$k" "$N")
    grep -qE "^Subject: \[RFC PATCH $s\] " "$p" || fail "$n: subject is not [RFC PATCH $s]"
    k=$((k + 1))
    grep -qxF "From: $ME" "$p" || fail "$n: author is not the given identity"
    if grep -nE '^(Signed-off-by|Assisted-by|Co-developed-by|Reviewed-by):' "$p"; then
        fail "$n: has a trailer"
    fi
    for l in linux-mmc@vger.kernel.org rust-for-linux@vger.kernel.org; do
        sed -n '/^Cc:/,/^$/p' "$p" | grep -qF "$l" || fail "$n: no Cc: $l"
    done
    if sed -n '/^Cc:/,/^$/p' "$p" | grep -qF "jane.sender@example.org"; then
        fail "$n: the author is in Cc"
    fi
done
tail -1 "${P[0]}" | grep -qxF "base-commit: $BASE" || fail "the cover letter does not end with base-commit"
echo "series: ${#P[@]} files, RFC subjects, author given, no trailers, Cc on each, base-commit"

# 3. Words of this repository.  The message (up to ---) and the added lines.
tests=$(cd "$TOP/tests/board" && ls -- *.sh | sed 's/\.sh$//' | paste -sd'|')
for p in "${P[@]}"; do
    awk '/^---$/ { body = 1 } !body || (/^\+/ && !/^\+\+\+ /)' "$p"
done > "$T/said"
hits=$(grep -nP "(?<![\w-])($tests)(?![\w-])|tests/(host|board)|scripts/(bench|make-series|series-test|emu-run)|make (bench|test|series)|make-series|series-test|\b(bench|driver|reliability|board|emulated-board|upstream|cache-maintenance)\.rst\b|\b[Ss]essions? [0-9]|\b[Ii]ssue [0-9]" "$T/said" || true)
[ -z "$hits" ] || { echo "$hits" | head -20; fail "the series speaks of this repository (above)"; }
echo "no test names, scripts, make targets or documents of this repository in $(wc -l < "$T/said") lines"

# 4. Clk::round_rate(): a method the series adds to 7.3's Clk, not a fix.
rr=$(grep -lE '^Subject: \[RFC PATCH [0-9]+/[0-9]+\] rust: clk: add Clk::round_rate\(\)$' "${P[@]}" || true)
[ -n "$rr" ] || fail "no patch 'rust: clk: add Clk::round_rate()'"
lastfix=$( (grep -l '^Fixes:' "${P[@]}" || true) | tail -1)
[ -z "$lastfix" ] || [[ "$(basename "$lastfix")" < "$(basename "$rr")" ]] ||
    fail "Clk::round_rate() comes before a fix ($(basename "$lastfix"))"
prov=$(grep -lE '^Subject: \[RFC PATCH [0-9]+/[0-9]+\] rust: clk: add basic clock providers$' "${P[@]}" ||
    true)
[ -n "$prov" ] || fail "no patch 'rust: clk: add basic clock providers'"
[[ "$(basename "$rr")" < "$(basename "$prov")" ]] || fail "Clk::round_rate() comes after the clock providers"
if grep -n '^Fixes:' "$rr"; then fail "$(basename "$rr"): a Fixes: tag on an addition"; fi
[ "$(sed -n 's|^+++ b/||p' "$rr")" = rust/kernel/clk.rs ] ||
    fail "$(basename "$rr") changes other files than rust/kernel/clk.rs: $(sed -n 's|^+++ b/||p' "$rr" | paste -sd' ')"
grep -qxF '+        pub fn round_rate(&self, rate: Hertz) -> Result<Hertz> {' "$rr" ||
    fail "$(basename "$rr") does not add the method to Clk"
if grep -nE '^\+.*(\bRoundRate\b|\bround_rate::)' "${P[@]}"; then
    fail "the out-of-tree stand-in of Clk::round_rate() is in the series (above)"
fi
echo "Clk::round_rate(): $(basename "$rr" | cut -c1-4), rust/kernel/clk.rs only, no Fixes:, after the fixes and before the clock providers; no stand-in left"
