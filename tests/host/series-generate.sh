#!/usr/bin/env bash
# The upstream series generates as a sender would send it (run-all:
# host-series-generate; scripts/make-series against the test kernel's tree):
#
#   1. without a git identity and without --author, the generator stops and
#      says how to give one; without --base-commit it stops too;
#   2. with a test identity and base: one directory NN-name per posting of
#      series/series, in its order, each a series of its own, "n/N" numbered
#      within the posting with its cover letter, "[PATCH" for the fixes and
#      "[RFC PATCH" for the postings marked rfc, its patches the lines under
#      it in that order: the fixes (each with a Fixes: tag) first, the drivers
#      (the SDHC's and the SD card slot's) last; a patch that adds a
#      kernel-crate module adds its files under rust/kernel/ and none of a
#      driver's, a driver's patch its crate root and nothing under rust/; no feature condition, no out-of-tree stand-in and no test
#      knob in it; the test identity as author, no trailer but Fixes: and
#      Cc: stable (no Signed-off-by, no Assisted-by: the sender adds their
#      own);
#   3. the recipients: each patch's To: and Cc: are its own, and these
#      concrete expectations of get_maintainer.pl hold: every patch names
#      rust-for-linux (the driver's through the MAINTAINERS entry its own
#      patch adds); the MMC posting's name linux-mmc and neither dri-devel
#      nor linux-clk; each patch of the clk posting names linux-clk and not
#      linux-mmc; dri-devel is named only by the debugfs fix, which changes
#      nova-core; linux-amlogic only by the drivers; the author by none; a
#      cover letter's recipients are those of its patches together;
#   4. Cc: stable@vger.kernel.org is on the fix of IoMem::ioremap()'s leak
#      and on no other patch (Documentation/upstream.rst says why), after
#      its Fixes: tag;
#   5. one subject prefix per subsystem: "rust: <module>: " for a patch of
#      the kernel crate's module <module> (the module it adds, else that of
#      the first file it changes under rust/kernel/), "mmc:
#      meson-mx-sdhc-rs: " and "mmc: meson-mx-sdio-rs: " for the drivers';
#   6. each cover letter lists the cover letters of the postings its
#      posting depends on, directly or not, and ends with base-commit: and
#      the patch-ids of their patches (prerequisite-patch-id:); with git am,
#      each posting applies to the pristine files with only those postings
#      before it; the driver's cover letter says what ran it (QEMU's virt
#      machine, the emulated Meson8b board) and that no real board did;
#   7. the generator rewrites no prose: each commit message is its file's,
#      each cover letter's text is its file's in series/cover/, and every
#      comment line of a Rust file the series adds is a comment line of the
#      file of this repository it comes from, in the same order; the
#      generator is at most 600 lines;
#   8. no commit message, cover letter or added line speaks of this
#      repository: its test names, scripts, make targets or documents;
#   9. Clk::round_rate(), which 7.3's Clk lacks, is a patch of its own adding
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

# 2-7. The postings, read with Python's email parser.
env -u SERIES_PREFIX "$TOP/scripts/make-series" --author "$ME" --base-commit "$BASE" \
    --out "$T/s" >/dev/null
SRC=$(readlink -f "$MESON_SDHC_CACHE/kernel/source" 2>/dev/null || true)
[ -n "$SRC" ] && [ -f "$SRC/MAINTAINERS" ] || SRC=
python3 - "$TOP" "$T/s" "$ME" "$BASE" "$T" "$SRC" <<'PY' || fail "(above)"
import email.parser, glob, os, re, subprocess, sys

top, out, me, base, tmp, src = sys.argv[1:]
bad = []


def check(ok, what):
    if not ok:
        bad.append(what)
        print("series-generate: " + what)


def msg(path):
    return email.parser.Parser().parse(open(path, encoding="utf-8"))


def addrs(m, key):
    return [a.strip() for a in re.sub(r"\s*\n\s*", " ", m.get(key) or "").split(",") if a.strip()]


# series/series, as the generator reads it.
postings = []
for ln in open(top + "/series/series", encoding="utf-8"):
    f = ln.split("#", 1)[0].split()
    if f and f[0] == "posting":
        dep = f.index("depends") if "depends" in f else len(f)
        postings.append({"name": f[1], "cover": f[2], "rfc": "rfc" in f[3:dep],
                         "depends": f[dep + 1:], "lines": []})
    elif f:
        postings[-1]["lines"].append(f)
dirs = sorted(d for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
check(dirs == ["%02d-%s" % (i + 1, q["name"]) for i, q in enumerate(postings)],
      "posting directories %s, not series/series' postings in order" % dirs)

me_addr = re.search(r"<(.*)>", me).group(1)
allp = []  # (posting, patch file, its series/series line), in order
for i, q in enumerate(postings):
    d = os.path.join(out, "%02d-%s" % (i + 1, q["name"]))
    q["dir"] = d
    files = sorted(glob.glob(d + "/*.patch"))
    check(files and os.path.basename(files[0]) == "0000-cover-letter.patch",
          "%s: no 0000-cover-letter.patch" % q["name"])
    n = len(files) - 1
    check(n == len(q["lines"]), "%s: %d patches, series/series has %d" % (q["name"], n,
                                                                          len(q["lines"])))
    tag = ("RFC " if q["rfc"] else "") + "PATCH"
    w = len(str(n))
    for k, f in enumerate(files):
        m = msg(f)
        subj = re.sub(r"\s*\n\s*", " ", m["Subject"])
        want = "[%s %0*d/%d] " % (tag, w, k, n)
        check(subj.startswith(want), "%s: subject %r does not start with %r" % (f, subj, want))
        check(m["From"] == me, "%s: author is not the given identity" % f)
        body = m.get_payload()
        check(not re.search(r"^(Signed-off-by|Assisted-by|Co-developed-by|Reviewed-by):", body,
                            re.M), "%s: has a trailer" % f)
        rcpt = addrs(m, "To") + addrs(m, "Cc")
        check(rcpt and all("@" in a for a in rcpt), "%s: no recipients" % f)
        check(not any(me_addr in a for a in rcpt), "%s: the author is a recipient" % f)
        check(all("<" in a for a in addrs(m, "To")) and all("<" not in a for a in addrs(m, "Cc")),
              "%s: To: is not the people and Cc: the lists" % f)
        if k:
            allp.append((q, f, q["lines"][k - 1], subj[len(want):], body, rcpt))
    q["files"] = files

# 2. The patches' contents.
for j, (q, f, line, subj, body, rcpt) in enumerate(allp):
    rel, what = line[0], (line[1] if len(line) > 1 else "")
    changed = re.findall(r"^\+\+\+ b/(\S+)", body, re.M)
    if rel.startswith("kernel-fixes/"):
        check(re.search(r"^Fixes: ", body, re.M), "%s: a fix without Fixes:" % f)
        check(all(x[2][0].startswith("kernel-fixes/") for x in allp[:j]), "%s: a fix after "
              "another patch" % f)
    if what.startswith("kernel::"):
        mod = what[len("kernel::"):].replace("::", "/")
        check("rust/kernel/%s.rs" % mod in changed, "%s does not add rust/kernel/%s.rs" % (f, mod))
        check(not any(c.startswith("drivers/mmc/host/") for c in changed),
              "%s: a kernel-crate patch changes the driver" % f)
    if what.startswith("driver:"):
        name = os.path.basename(what[len("driver:"):])
        check(all(x[2][1:] and x[2][1].startswith("driver:") for x in allp[j:]),
              "%s: a patch that is not a driver's after a driver" % f)
        check("drivers/mmc/host/%s/%s.rs" % (name, name) in changed,
              "%s does not add the driver %s" % (f, name))
        check(not any(c.startswith("rust/") for c in changed),
              "%s: the driver's patch changes the kernel crate" % f)
    for pat, what_ in [(r"^\+.*(cfg\((not\()?feature|cfg_attr\(.*feature)", "a feature condition"),
                       (r"^\+.*(kernel_ext|out_of_tree|foreign_dir|RoundRate|ClkFromRaw|"
                        r"DeviceAsRaw|FlagsAsRaw)", "an out-of-tree stand-in"),
                       (r"^\+.*(TEST_KNOBS|test_knobs)", "a test knob")]:
        hit = re.search(pat, body, re.M)
        check(not hit, "%s: %s: %s" % (f, what_, hit and hit.group(0)))
drivers = [x[2][1][len("driver:"):] for x in allp if x[2][1:] and x[2][1].startswith("driver:")]
check(len(drivers) == 2, "%d drivers in the series, not the SDHC's and the SD card slot's" %
      len(drivers))
print("%d postings, %d patches in series/series' order, fixes first, the drivers last; "
      "n/N per posting, [PATCH] and [RFC PATCH] as marked, author given, no trailers; "
      "no feature condition, stand-in or test knob" % (len(postings), len(allp)))

# 3. The recipients.
for q, f, line, subj, body, rcpt in allp:
    has = lambda l: any(l in a for a in rcpt)  # noqa: E731
    check(has("rust-for-linux@vger.kernel.org"), "%s: no rust-for-linux" % f)
    if q["name"] == "mmc":
        check(has("linux-mmc@vger.kernel.org"), "%s: no linux-mmc" % f)
        check(not has("dri-devel") and not has("linux-clk"), "%s: dri-devel or linux-clk" % f)
    if q["name"] == "rust-clk":
        check(has("linux-clk@vger.kernel.org") and not has("linux-mmc"),
              "%s: not linux-clk, or linux-mmc" % f)
    nova = any(c.startswith("drivers/gpu/nova-core/")
               for c in re.findall(r"^\+\+\+ b/(\S+)", body, re.M))
    check(has("dri-devel@lists.freedesktop.org") == nova, "%s: dri-devel %s" % (
        f, "missing (it changes nova-core)" if nova else "named (it does not change nova-core)"))
    check(has("linux-amlogic") == line[-1].startswith("driver:"), "%s: linux-amlogic" % f)
for q in postings:
    cover = msg(q["files"][0])
    got = set(addrs(cover, "To") + addrs(cover, "Cc"))
    want = {a for _, f, *_r in allp if f in q["files"] for a in _r[-1]}
    check(got == want, "%s: the cover letter's recipients are not its patches': %s" % (
        q["name"], sorted(got ^ want)))
n_mmc = sum(1 for x in allp if x[0]["name"] == "mmc")
print("recipients: each patch's own; rust-for-linux on all %d, linux-mmc and no dri-devel or "
      "linux-clk on the %d MMC patches, linux-clk on the clk posting's, dri-devel only on the "
      "nova-core change, linux-amlogic only on the drivers; the cover letters' the union of "
      "their patches'" % (len(allp), n_mmc))

# 4. Cc: stable.
for q, f, line, subj, body, rcpt in allp:
    stable = re.findall(r"^Cc: stable@vger\.kernel\.org$", body.split("\n---\n")[0], re.M)
    want = line[0].startswith("kernel-fixes/0001-")
    check(len(stable) == int(want), "%s: Cc: stable %s" % (f, "missing" if want else "present"))
    if stable:
        check(re.search(r"^Fixes: .*\nCc: stable@vger\.kernel\.org$", body, re.M),
              "%s: Cc: stable is not after the Fixes: tag" % f)
print("Cc: stable on the IoMem::ioremap() fix only, after its Fixes: tag")

# 5. One subject prefix per subsystem.
prefixes = {}
for q, f, line, subj, body, rcpt in allp:
    what = line[1] if len(line) > 1 else ""
    if what.startswith("driver:"):
        sub, want = what, "mmc: %s: " % os.path.basename(what[7:]).replace("_", "-")
    else:
        mods = [m.group(1) for c in re.findall(r"^\+\+\+ b/rust/kernel/(\S+)", body, re.M)
                for m in [re.match(r"([a-z0-9_]+)(\.rs$|/)", c)] if m and m.group(1) != "lib"]
        sub = what.split("::")[1] if what.startswith("kernel::") else (mods or ["?"])[0]
        want = "rust: %s: " % sub
    got = re.match(r"((?:[a-z0-9_.-]+: )+)", subj)
    got = got.group(1) if got else ""
    check(got == want, "%s: subject prefix %r, not %r" % (f, got, want))
    prefixes.setdefault(sub, set()).add(got)
check(all(len(v) == 1 for v in prefixes.values()), "a subsystem with two prefixes: %s" % prefixes)
print("one prefix per subsystem: " + ", ".join(sorted(min(v).strip()
                                                       for v in prefixes.values())))

# 6. Dependencies: the cover letters' lists and patch-ids; each posting applies with them.
byname = {q["name"]: q for q in postings}
for q in postings:
    want = set(q["depends"])
    for x in reversed(postings):
        if x["name"] in want:
            want |= set(x["depends"])
    q["needed"] = [x for x in postings if x["name"] in want]
    text = open(q["files"][0], encoding="utf-8").read()
    for x in q["needed"]:
        subj = re.sub(r"\s*\n\s*", " ", msg(x["files"][0])["Subject"])
        check("\n  " + subj + "\n" in text, "%s: its cover letter does not list %r" % (q["name"],
                                                                                      subj))
    ids = [subprocess.run(["git", "patch-id", "--stable"], stdin=open(p), text=True,
                          stdout=subprocess.PIPE).stdout.split()[0]
           for x in q["needed"] for p in x["files"][1:]]
    tail = ["base-commit: " + base] + ["prerequisite-patch-id: " + i for i in ids]
    check(text.rstrip("\n").split("\n")[-len(tail):] == tail,
          "%s: the cover letter does not end with base-commit: and the prerequisites' "
          "patch-ids" % q["name"])
    check(q["needed"] or "depends on" not in text, "%s: lists dependencies it has not" % q["name"])
if src:
    for q in postings:
        repo = os.path.join(tmp, "am-" + q["name"])
        os.makedirs(repo)
        mine = [p for x in q["needed"] + [q] for p in x["files"][1:]]
        for c in sorted({c for p in mine for c in re.findall(r"^--- a/(\S+)", open(p).read(),
                                                             re.M)}):
            if os.path.exists(os.path.join(src, c)):
                os.makedirs(os.path.dirname(os.path.join(repo, c)), exist_ok=True)
                subprocess.run(["cp", os.path.join(src, c), os.path.join(repo, c)], check=True)
        g = ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@localhost"]
        subprocess.run(g + ["init", "-q"], check=True)
        subprocess.run(g + ["add", "-A"], check=True)
        subprocess.run(g + ["commit", "-qm", "base", "--allow-empty"], check=True)
        for p in mine:
            r = subprocess.run(g + ["am", "-q", p], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            check(r.returncode == 0, "git am: %s does not apply after only: %s" % (
                os.path.relpath(p, out), ", ".join(x["name"] for x in q["needed"]) or "none"))
            if r.returncode:
                break
    print("git am: each posting applies to the pristine files after only the postings it "
          "depends on (" + "; ".join("%s: %s" % (q["name"], ", ".join(
              x["name"] for x in q["needed"]) or "none") for q in postings) + ")")
else:
    print("(no pristine tree at $MESON_SDHC_CACHE/kernel/source: the git am check is not run)")
drv = [q for q in postings if any(ln[-1].startswith("driver:") for ln in q["lines"])][0]
text = open(drv["files"][0], encoding="utf-8").read()
for s in ["\nWhat was and was not run\n", "emulated Meson8b board", "QEMU's virt",
          "Nothing in this series has been run on real hardware", "\nIn-tree build\n"]:
    check(s in text, "the driver's cover letter lacks %r" % s)
print("cover letters: their dependencies listed, base-commit and prerequisite-patch-id; the "
      "driver's says what ran it")

# 7. No prose rewritten.
for q, f, line, subj, body, rcpt in allp:
    want = open(os.path.join(top, line[0]), encoding="utf-8").read().split("\n---\n", 1)[0]
    check(subj + "\n\n" + body.split("\n---\n", 1)[0].strip("\n") == want.strip("\n"),
          "%s: the commit message is not %s's" % (f, line[0]))
for q in postings:
    cover = open(q["files"][0], encoding="utf-8").read()
    subject, _, blurb = open(os.path.join(top, q["cover"]), encoding="utf-8").read().partition(
        "\n\n")
    check("] " + subject.strip() in re.sub(r"\n\s+", " ", cover) and blurb.strip() in cover,
          "%s: the cover letter is not %s's" % (q["name"], q["cover"]))
added = {}
for q, f, *_r in allp:
    for m in re.finditer(r"^\+\+\+ b/(\S+\.rs)\n@@ -0,0 \+1,\d+ @@\n((?:\+.*\n?)*)",
                         open(f, encoding="utf-8").read(), re.M):
        added[m.group(1)] = [ln[1:] for ln in m.group(2).split("\n") if ln.startswith("+")]


def comments(lines):
    return [ln.strip() for ln in lines if ln.strip().startswith("//")]


for path, new in sorted(added.items()):
    orig = path
    for d in drivers:
        orig = orig.replace("drivers/mmc/host/%s/" % os.path.basename(d), os.path.dirname(d) and
                            os.path.dirname(d) + "/")
    it = iter(comments(open(os.path.join(top, orig), encoding="utf-8").read().split("\n")))
    for c in comments(new):
        if not any(c == o for o in it):
            check(False, "%s: comment not in %s, or out of order: %s" % (path, orig, c))
            break
check(len(added) >= 30, "only %d new Rust files found in the series" % len(added))
print("%d commit messages as their files have them, %d cover letters as series/cover/ has them, "
      "the comments of %d Rust files as this repository has them" % (len(allp), len(postings),
                                                                   len(added)))
sys.exit(1 if bad else 0)
PY
lines=$(wc -l < "$TOP/scripts/make-series")
[ "$lines" -le 600 ] || fail "scripts/make-series has $lines lines, more than 600"
echo "scripts/make-series: $lines lines"
P=("$T"/s/[0-9][0-9]-*/*.patch)

# 8. Words of this repository.  The message (up to ---) and the added lines.
tests=$(cd "$TOP/tests/board" && printf '%s\n' *.sh | sed 's/\.sh$//' | paste -sd'|')
for p in "${P[@]}"; do
    awk '/^---$/ { body = 1 } !body || (/^\+/ && !/^\+\+\+ /)' "$p"
done > "$T/said"
hits=$(grep -nP "(?<![\w-])($tests)(?![\w-])|tests/(host|board)|scripts/(bench|make-series|series-test|emu-run)|make (bench|test|series)|make-series|series-test|\b(bench|driver|reliability|board|emulated-board|upstream|cache-maintenance)\.rst\b|\b[Ss]essions? [0-9]|\b[Ii]ssue [0-9]" "$T/said" || true)
[ -z "$hits" ] || { echo "$hits" | head -20; fail "the series speaks of this repository (above)"; }
echo "no test names, scripts, make targets or documents of this repository in $(wc -l < "$T/said") lines"

# 9. Clk::round_rate(): a method the series adds to 7.3's Clk, not a fix, as the stand-in has it.
idx() { # the position in the series of the first patch whose subject matches
    local i
    for i in "${!Q[@]}"; do grep -qE "^Subject: \[[A-Z ]+[0-9]+/[0-9]+\] $1" "${Q[$i]}" && { echo "$i"; return; }; done
    echo -1
}
mapfile -t Q < <(printf '%s\n' "${P[@]}" | grep -v '/0000-cover-letter.patch$')
rri=$(idx 'rust: clk: add Clk::round_rate\(\)$')
[ "$rri" -ge 0 ] || fail "no patch 'rust: clk: add Clk::round_rate()'"
rr=${Q[$rri]}
provi=$(idx 'rust: clk: add basic clock providers$')
[ "$provi" -ge 0 ] || fail "no patch 'rust: clk: add basic clock providers'"
[ "$rri" -lt "$provi" ] || fail "Clk::round_rate() comes after the clock providers"
for i in "${!Q[@]}"; do
    if grep -q '^Fixes:' "${Q[$i]}" && [ "$i" -gt "$rri" ]; then fail "Clk::round_rate() comes before a fix (${Q[$i]})"; fi
done
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
echo "Clk::round_rate(): $(basename "$(dirname "$rr")")/$(basename "$rr" | cut -c1-4), rust/kernel/clk.rs only, no Fixes:, after the fixes and before the clock providers; the stand-in's method"
