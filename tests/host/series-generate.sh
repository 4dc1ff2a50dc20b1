#!/usr/bin/env bash
# The upstream series generates as a sender would send it (run-all:
# host-series-generate; scripts/make-series against the test kernel's tree):
#
#   1. without a git identity and without --author, the generator stops and
#      says how to give one; without --base-commit it stops too;
#   2. with a test identity and base: two series, each "[RFC PATCH n/N]"
#      numbered with its cover letter: 1-core (the fixes, the kernel crate's new
#      modules, kernel::mmc, the driver as a port of the C driver, last) and
#      2-followup (one driver patch per feature, in Kbuild's order, each after
#      the kernel-crate patches of what only it needs: kernel::mmc's timer,
#      debugfs files and SDIO interrupt signal, the workqueue modules of the
#      timer, debugfs's ScopedDir::from_raw(); none of those in 1-core; no
#      feature condition left; a driver patch changes no kernel-crate file,
#      a kernel-crate patch no driver file); the test identity as author, no trailer (no
#      Signed-off-by, no Assisted-by: the sender adds their own), Cc: lines from
#      get_maintainer.pl naming linux-mmc and rust-for-linux on every patch;
#      both cover letters say what ran them (QEMU's virt machine, the emulated
#      Meson8b board) and that no real board did; 1-core's ends with
#      base-commit:, 2-followup's names 1-core as its base (base-commit: and a
#      prerequisite-patch-id: per patch of 1-core); both apply in order with
#      git am to the pristine files they change;
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

# 2. The two series: the first posting (the fixes, the kernel crate's new modules,
# kernel::mmc, the port) and the follow-up (one patch per feature), each with its cover letter.
"$TOP/scripts/make-series" --author "$ME" --base-commit "$BASE" --out "$T/s" >/dev/null
[ -z "$(ls "$T"/s/*.patch 2>/dev/null)" ] || fail "patches outside the series' directories: $(ls "$T"/s/*.patch)"
mapfile -t C < <(ls "$T"/s/1-core/*.patch)
mapfile -t F < <(ls "$T"/s/2-followup/*.patch)
read -r -a FEATURES <<<"$(sed -n 's/^FEATURES *:= *//p' "$TOP/Kbuild")"
NC=$((${#C[@]} - 1))
NF=$((${#F[@]} - 1))
[ "$NC" -ge 2 ] || fail "expected a cover letter and at least 2 patches in 1-core, got: ${C[*]}"
[ "$NF" -ge "${#FEATURES[@]}" ] || fail "2-followup has $NF patches, Kbuild has ${#FEATURES[@]} features"
for d in 1-core 2-followup; do
    [ -f "$T/s/$d/0000-cover-letter.patch" ] || fail "no $d/0000-cover-letter.patch"
done
# The first posting ends with the driver as a port of the C driver; the follow-up is one driver
# patch per feature (Kbuild's FEATURES, in order), each after the kernel-crate patches it needs.
case "$(basename "${C[$NC]}")" in *-mmc-meson-mx-sdhc-add-a-Rust-driver.patch) ;;
    *) fail "the last patch of 1-core is not the port of the driver: $(basename "${C[$NC]}")" ;; esac
grep -q '^+++ b/rust/kernel/mmc.rs$' "${C[@]}" || fail "kernel::mmc is not in 1-core"
for f in rust/kernel/mmc/timer.rs rust/kernel/mmc/debugfs.rs rust/kernel/mmc/sdio.rs \
    rust/kernel/workqueue/alloc.rs rust/kernel/workqueue/rearm.rs; do
    grep -qxF "+++ b/$f" "${C[@]}" && fail "1-core adds $f, which only a feature needs"
    grep -qxF "+++ b/$f" "${F[@]}" || fail "2-followup does not add $f"
done
grep -qE '^\+.*(timer_expired|SdioIrqSignal|register_with_debugfs)' "${C[@]}" &&
    fail "1-core names a feature's kernel::mmc item: $(grep -hE '^\+.*(timer_expired|SdioIrqSignal|register_with_debugfs)' "${C[@]}" | head -2)"
grep -q '^+.*pub unsafe fn from_raw(dentry' "${F[@]}" || fail "2-followup does not add debugfs's ScopedDir::from_raw()"
grep -rqE 'foreign_dir' "${C[@]}" "${F[@]}" && fail "the out-of-tree debugfs stand-in (foreign_dir) is in the series"
grep -qE '^\+.*(TEST_KNOBS|test_knobs)' "${C[@]}" "${F[@]}" &&
    fail "the test knobs (out of tree only) are in the series: $(grep -hE '^\+.*(TEST_KNOBS|test_knobs)' "${C[@]}" "${F[@]}" | head -2)"
k=0
kernel_since=0
for ((i = 1; i <= NF; i++)); do
    files=$(sed -n 's|^+++ b/||p' "${F[$i]}")
    case "$(basename "${F[$i]}")" in
    *-mmc-meson-mx-sdhc-rs-*)
        grep -q '^rust/' <<<"$files" && fail "driver patch $(basename "${F[$i]}") changes the kernel crate"
        k=$((k + 1)); kernel_since=0 ;;
    *-rust-*)
        grep -qv '^rust/\|^MAINTAINERS$' <<<"$files" &&
            fail "kernel-crate patch $(basename "${F[$i]}") changes: $(grep -v '^rust/' <<<"$files" | head -2)"
        kernel_since=$((kernel_since + 1)) ;;
    *) fail "patch $i of 2-followup is neither the driver's nor the kernel crate's: $(basename "${F[$i]}")" ;;
    esac
done
[ "$k" = "${#FEATURES[@]}" ] || fail "2-followup has $k driver patches, Kbuild has ${#FEATURES[@]} features"
[ "$kernel_since" = 0 ] || fail "2-followup ends with a kernel-crate patch no feature uses"
P=("${C[@]}" "${F[@]}")
if grep -nE '^\+.*(cfg\((not\()?feature|// cfg\()' "${P[@]}"; then
    fail "a feature condition of the driver's sources is left in the series"
fi
echo "1-core: $NC patches, the port last; 2-followup: $NF patches, ${#FEATURES[@]} features (${FEATURES[*]}) each after its kernel-crate patches, no feature condition left"
check_series() { # name, patches (cover letter first)
    local name=$1 k=0 p n s w
    shift
    local N=$(($# - 1))
    w=${#N}
    for p in "$@"; do
        n=$name/$(basename "$p")
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
}
check_series 1-core "${C[@]}"
check_series 2-followup "${F[@]}"
# Each cover letter says what ran it (the emulated board) and what did not (a real board).
for c in "${C[0]}" "${F[0]}"; do
    n=$(basename "$(dirname "$c")")
    grep -q '^What was and was not run$' "$c" || fail "$n: the cover letter has no section 'What was and was not run'"
    grep -q 'emulated Meson8b board' "$c" || fail "$n: the cover letter does not name the emulated board"
    grep -q "QEMU's virt" "$c" || fail "$n: the cover letter does not say the board is QEMU's virt machine"
    grep -q 'Nothing in this series has been run on real hardware' "$c" ||
        fail "$n: the cover letter does not say that no real board ran it"
done
grep -q 'port of the C driver' "${C[0]}" || fail "1-core: the cover letter does not say what ran the port"
# The first ends with its base; the follow-up names the first as its base: the base commit and
# the patch id of each patch of the first (as git format-patch --base writes them).
tail -1 "${C[0]}" | grep -qxF "base-commit: $BASE" || fail "1-core: the cover letter does not end with base-commit"
grep -qxF "base-commit: $BASE" "${F[0]}" || fail "2-followup: the cover letter has no base-commit"
mapfile -t want < <(for p in "${C[@]:1}"; do git patch-id --stable < "$p" | cut -d' ' -f1; done)
mapfile -t got < <(sed -n 's/^prerequisite-patch-id: //p' "${F[0]}")
[ "${want[*]}" = "${got[*]}" ] || fail "2-followup: prerequisite-patch-id lines (${#got[@]}) are not the patch ids of 1-core's ${#want[@]} patches"
grep -q "based on \"\[RFC PATCH 0/$NC\] " "${F[0]}" || fail "2-followup: the cover letter does not name the first posting as its base"
echo "series: RFC subjects numbered per series, author given, no trailers, Cc on each; both cover letters say what ran and what did not; the follow-up's base is the first ($NC prerequisite-patch-id lines)"
# Both apply, in order, with git am to the pristine files they change.
SRC=$(readlink -f "$MESON_SDHC_CACHE/kernel/source" 2>/dev/null || true)
if [ -n "$SRC" ] && [ -f "$SRC/MAINTAINERS" ]; then
    G=(git -C "$T/tree" -c user.name=t -c user.email=t@localhost)
    mkdir -p "$T/tree"
    sed -n 's|^--- a/||p' "${C[@]:1}" "${F[@]:1}" | sort -u | while read -r f; do
        [ -e "$SRC/$f" ] && mkdir -p "$T/tree/$(dirname "$f")" && cp "$SRC/$f" "$T/tree/$f"
    done
    "${G[@]}" init -q && "${G[@]}" add -A && "${G[@]}" commit -qm base
    for p in "${C[@]:1}" "${F[@]:1}"; do
        "${G[@]}" am -q "$p" >/dev/null 2>&1 || fail "git am: $(basename "$(dirname "$p")")/$(basename "$p") does not apply"
    done
    echo "git am: 1-core then 2-followup apply to the pristine files ($(( NC + NF )) patches)"
else
    echo "(no pristine tree at $MESON_SDHC_CACHE/kernel/source: the git am check is not run)"
fi

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
