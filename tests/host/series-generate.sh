#!/usr/bin/env bash
# The upstream series generates as a sender would send it (run-all:
# host-series-generate; scripts/make-series against the test kernel's tree):
#
#   1. without a git identity and without --author, the generator stops and
#      says how to give one; without --base-commit it stops too;
#   2. with a test identity and base: one series, "[RFC PATCH n/N]" numbered
#      with its cover letter, one patch per line of series/series in that
#      order: the fixes (each with a Fixes: tag) first, the driver last; a
#      patch that adds a kernel-crate module adds its files under rust/kernel/
#      and none of the driver's, the driver's patch nothing under rust/; no
#      feature condition, no out-of-tree stand-in and no test knob in it; the
#      test identity as author, no trailer (no Signed-off-by, no Assisted-by:
#      the sender adds their own), Cc: lines from get_maintainer.pl naming
#      linux-mmc and rust-for-linux on every patch; the cover letter says what
#      ran it (QEMU's virt machine, the emulated Meson8b board) and that no
#      real board did, and ends with base-commit:; the patches apply in order
#      with git am to the pristine files they change;
#   3. the generator rewrites no prose: each commit message is its file's,
#      the cover letter's text is series/cover-letter's, and every comment
#      line of a Rust file the series adds is a comment line of the file of
#      this repository it comes from, in the same order; the generator is at
#      most 600 lines;
#   4. no commit message, cover letter or added line speaks of this
#      repository: its test names, scripts, make targets or documents;
#   5. Clk::round_rate(), which 7.3's Clk lacks, is a patch of its own adding
#      the method to rust/kernel/clk.rs as the out-of-tree stand-in has it,
#      without a Fixes: tag, after the fixes and before the clock providers'
#      patch.
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
mapfile -t L < <(sed 's/#.*//' "$TOP/series/series" | awk 'NF')
N=$((${#P[@]} - 1))
[ "$N" = "${#L[@]}" ] || fail "$N patches, series/series has ${#L[@]} lines"
[ "$(basename "${P[0]}")" = 0000-cover-letter.patch ] || fail "no 0000-cover-letter.patch"
w=${#N}
for ((i = 0; i <= N; i++)); do
    p=${P[$i]} n=$(basename "${P[$i]}")
    grep -qE "^Subject: \[RFC PATCH $(printf "%0${w}d/%d" "$i" "$N")\] " "$p" ||
        fail "$n: subject is not [RFC PATCH $(printf "%0${w}d/%d" "$i" "$N")]"
    grep -qxF "From: $ME" "$p" || fail "$n: author is not the given identity"
    if grep -nE '^(Signed-off-by|Assisted-by|Co-developed-by|Reviewed-by):' "$p"; then
        fail "$n: has a trailer"
    fi
    for l in linux-mmc@vger.kernel.org rust-for-linux@vger.kernel.org; do
        sed -n '/^Cc:/,/^$/p' "$p" | grep -qF "$l" || fail "$n: no Cc: $l"
    done
    ! sed -n '/^Cc:/,/^$/p' "$p" | grep -qF jane.sender@example.org || fail "$n: the author is in Cc"
    [ "$i" = 0 ] && continue
    read -r file what <<<"${L[$((i - 1))]}"
    files=$(sed -n 's|^+++ b/||p' "$p")
    case "$file" in kernel-fixes/*) grep -q '^Fixes: ' "$p" || fail "$n: a fix without Fixes:" ;; esac
    case "$what" in
    kernel::*)
        m=${what#kernel::}
        grep -qx "rust/kernel/${m//:://}.rs" <<<"$files" || fail "$n does not add rust/kernel/${m//:://}.rs"
        ! grep -q '^drivers/mmc/host/' <<<"$files" || fail "$n: a kernel-crate patch changes the driver" ;;
    driver)
        [ "$i" = "$N" ] || fail "the driver is not the last patch"
        grep -qx 'drivers/mmc/host/meson_mx_sdhc_rs/meson_mx_sdhc_rs.rs' <<<"$files" || fail "$n does not add the driver"
        ! grep -q '^rust/' <<<"$files" || fail "$n: the driver's patch changes the kernel crate" ;;
    esac
done
if grep -nE '^\+.*(cfg\((not\()?feature|cfg_attr\(.*feature)' "${P[@]}"; then
    fail "a feature condition is in the series (above)"
fi
if grep -nE '^\+.*(kernel_ext|out_of_tree|foreign_dir|RoundRate|ClkFromRaw|DeviceAsRaw|FlagsAsRaw)' "${P[@]}"; then
    fail "an out-of-tree stand-in is in the series (above)"
fi
if grep -nE '^\+.*(TEST_KNOBS|test_knobs)' "${P[@]}"; then
    fail "the test knobs (out of tree only) are in the series (above)"
fi
grep -q '^What was and was not run$' "${P[0]}" || fail "the cover letter has no section 'What was and was not run'"
grep -q 'emulated Meson8b board' "${P[0]}" || fail "the cover letter does not name the emulated board"
grep -q "QEMU's virt" "${P[0]}" || fail "the cover letter does not say the board is QEMU's virt machine"
grep -q 'Nothing in this series has been run on real hardware' "${P[0]}" ||
    fail "the cover letter does not say that no real board ran it"
tail -1 "${P[0]}" | grep -qxF "base-commit: $BASE" || fail "the cover letter does not end with base-commit"
echo "series: $N patches in series/series' order, fixes first, the driver last; RFC subjects, author given, no trailers, Cc on each; no feature condition, stand-in or test knob; the cover letter says what ran and ends with base-commit"
SRC=$(readlink -f "$MESON_SDHC_CACHE/kernel/source" 2>/dev/null || true)
if [ -n "$SRC" ] && [ -f "$SRC/MAINTAINERS" ]; then
    G=(git -C "$T/tree" -c user.name=t -c user.email=t@localhost)
    mkdir -p "$T/tree"
    sed -n 's|^--- a/||p' "${P[@]:1}" | sort -u | while read -r f; do
        [ -e "$SRC/$f" ] && mkdir -p "$T/tree/$(dirname "$f")" && cp "$SRC/$f" "$T/tree/$f"
    done
    "${G[@]}" init -q && "${G[@]}" add -A && "${G[@]}" commit -qm base
    for p in "${P[@]:1}"; do
        "${G[@]}" am -q "$p" >/dev/null 2>&1 || fail "git am: $(basename "$p") does not apply"
    done
    echo "git am: the $N patches apply to the pristine files"
else
    echo "(no pristine tree at $MESON_SDHC_CACHE/kernel/source: the git am check is not run)"
fi

# 3. No prose rewritten.
python3 - "$TOP" "$T/s" <<'PY' || fail "the generator rewrote prose (above)"
import email.parser, glob, os, re, sys

top, out = sys.argv[1], sys.argv[2]
bad = 0
lines = [ln.split("#")[0].split() for ln in open(top + "/series/series")]
lines = [ln for ln in lines if ln]
patches = sorted(glob.glob(out + "/0*.patch"))
for (rel, *what), p in zip(lines, patches[1:]):
    msg = email.parser.Parser().parse(open(p, encoding="utf-8"))
    subject = re.sub(r"^\[[^]]*\] ", "", re.sub(r"\s*\n\s*", " ", msg["Subject"]))
    body = msg.get_payload().split("\n---\n", 1)[0].strip("\n")
    want = open(os.path.join(top, rel), encoding="utf-8").read().split("\n---\n", 1)[0]
    if subject + "\n\n" + body != want.strip("\n"):
        print("%s: the commit message is not %s's" % (os.path.basename(p), rel))
        bad = 1
cover = open(patches[0], encoding="utf-8").read()
subject, _, blurb = open(top + "/series/cover-letter", encoding="utf-8").read().partition("\n\n")
if "] " + subject.strip() not in re.sub(r"\n\s+", " ", cover) or blurb.strip() not in cover:
    print("the cover letter is not series/cover-letter's")
    bad = 1
# The Rust files the series adds, each as it is at the end of the series, and where it comes from.
added = {}
for p in patches[1:]:
    for m in re.finditer(r"^\+\+\+ b/(\S+\.rs)\n@@ -0,0 \+1,\d+ @@\n((?:\+.*\n?)*)", open(p).read(), re.M):
        added[m.group(1)] = [ln[1:] for ln in m.group(2).split("\n") if ln.startswith("+")]
def comments(lines):
    return [ln.strip() for ln in lines if ln.strip().startswith("//")]
n = 0
for path, new in sorted(added.items()):
    src = path.replace("drivers/mmc/host/meson_mx_sdhc_rs/", "")
    orig = comments(open(os.path.join(top, src), encoding="utf-8").read().split("\n"))
    it = iter(orig)
    for c in comments(new):
        if not any(c == o for o in it):
            print("%s: comment not in %s, or out of order: %s" % (path, src, c))
            bad = 1
            break
    n += 1
if n < 30:
    print("only %d new Rust files found in the series" % n)
    bad = 1
print("%d commit messages as their files have them, the cover letter as series/cover-letter, the comments of %d Rust files as this repository has them" % (len(lines), n))
sys.exit(bad)
PY
lines=$(wc -l < "$TOP/scripts/make-series")
[ "$lines" -le 600 ] || fail "scripts/make-series has $lines lines, more than 600"
echo "scripts/make-series: $lines lines"

# 4. Words of this repository.  The message (up to ---) and the added lines.
tests=$(cd "$TOP/tests/board" && ls -- *.sh | sed 's/\.sh$//' | paste -sd'|')
for p in "${P[@]}"; do
    awk '/^---$/ { body = 1 } !body || (/^\+/ && !/^\+\+\+ /)' "$p"
done > "$T/said"
hits=$(grep -nP "(?<![\w-])($tests)(?![\w-])|tests/(host|board)|scripts/(bench|make-series|series-test|emu-run)|make (bench|test|series)|make-series|series-test|\b(bench|driver|reliability|board|emulated-board|upstream|cache-maintenance)\.rst\b|\b[Ss]essions? [0-9]|\b[Ii]ssue [0-9]" "$T/said" || true)
[ -z "$hits" ] || { echo "$hits" | head -20; fail "the series speaks of this repository (above)"; }
echo "no test names, scripts, make targets or documents of this repository in $(wc -l < "$T/said") lines"

# 5. Clk::round_rate(): a method the series adds to 7.3's Clk, not a fix, as the stand-in has it.
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
# The method's lines, from its doc comment to its end, as the stand-in's impl has them.
sed -n '/^impl RoundRate for Clk {$/,/^}$/p' "$TOP/rust/kernel/clk/round_rate.rs" | sed '1d;$d' |
    sed 's/^    fn /    pub fn /; s/^\(.\)/    \1/' > "$T/rr.want"
sed -n 's/^+//p' "$rr" | sed -n '/^        \/\/\/ Get the rate/,/^        }$/p' > "$T/rr.got"
sed -i '1{/^$/d}' "$T/rr.want"
diff "$T/rr.want" "$T/rr.got" >/dev/null ||
    { diff "$T/rr.want" "$T/rr.got" | head; fail "$(basename "$rr") does not add the stand-in's method"; }
echo "Clk::round_rate(): $(basename "$rr" | cut -c1-4), rust/kernel/clk.rs only, no Fixes:, after the fixes and before the clock providers; the stand-in's method"
