#!/usr/bin/env bash
# Documentation/bench-board.rst against scripts/bench-board itself (run-all:
# host-bench-board-doc): the page's Options section lists exactly the
# options the script's parser takes and its --help lists; the page's job
# table has every kind of job the script takes (RW_KINDS) and the page names
# the default and --user-rows jobs; its JSON fields section names every key
# the script writes into the JSON, and its top-level fields are the script's.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
exec python3 - "$TOP/scripts/bench-board" "$TOP/Documentation/bench-board.rst" <<'P'
import re, subprocess, sys
script_path, rst_path = sys.argv[1:]
script = open(script_path).read()
rst = open(rst_path).read()
ok = True


def check(cond, what, detail=""):
    global ok
    print(("  ok: " if cond else "  FAILED: ") + what + ("" if cond or not detail else ": " + detail))
    ok &= bool(cond)


def section(title):
    """the text of the rst section with this title (up to the next one)"""
    m = re.search(r"^%s\n=+\n(.*?)(?=^[^\n]+\n=+\n|\Z)" % re.escape(title), rst, re.M | re.S)
    if not m:
        check(False, "bench-board.rst has a section '%s'" % title)
        return ""
    return m.group(1)


def shell_list(name):
    m = re.search(r'^%s="([^"]*)"$' % name, script, re.M)
    check(m is not None, "bench-board sets %s" % name)
    return m.group(1).split() if m else []


# --- options ---------------------------------------------------------------
loop = re.search(r'^while \[ \$# -gt 0 \]; do\n(.*?)^done$', script, re.M | re.S).group(1)
parser = set()
for arm in re.findall(r'^    ([-a-z |]+)\)', loop, re.M):
    parser |= {o.strip() for o in arm.split("|")}
helptext = subprocess.run(["sh", script_path, "--help"], capture_output=True, text=True, check=True).stdout
helpopts = set()
for line in helptext.splitlines():
    m = re.match(r"^  (-[a-z], )?(--[a-z-]+)", line)
    if m:
        helpopts |= {m.group(2)} | ({m.group(1)[:2]} if m.group(1) else set())
docopts = set()
for line in section("Options").splitlines():
    if line.startswith("``-"):
        docopts |= set(re.findall(r"``(--?[a-z][a-z-]*)", line))
check(parser == helpopts, "--help lists the parser's options (%d)" % len(parser),
      "only in the parser: %s; only in --help: %s" % (sorted(parser - helpopts), sorted(helpopts - parser)))
check(parser == docopts, "bench-board.rst's Options list the parser's options",
      "undocumented: %s; documented but not taken: %s" % (sorted(parser - docopts), sorted(docopts - parser)))

# --- jobs --------------------------------------------------------------------
kinds = shell_list("RW_KINDS")
jobs_sec = section("The jobs")
table_kinds = re.findall(r"^``([a-z]+)-BS``", jobs_sec, re.M)
check(sorted(table_kinds) == sorted(kinds), "the job table has every kind of job: %s" % " ".join(kinds),
      "table: %s" % table_kinds)
for k in kinds:
    check(re.search(r"\b%s\b" % k, helptext) is not None, "--help names the job kind %s" % k)
for name in ("DEFAULT_JOBS", "USER_ROW_JOBS"):
    for j in shell_list(name):
        check("``%s``" % j in jobs_sec, "bench-board.rst names %s's job %s" % (name, j))

# --- JSON ----------------------------------------------------------------------
writer = script[script.index("\njstr() {"):script.index('} > "$JTMP"')]
keys = set(re.findall(r'\\?"([a-z_]+)\\?": ', writer))
top = set(re.findall(r'^    (?:echo|printf) [\'"] \\?"([a-z_]+)\\?":', writer, re.M))
json_sec = section("JSON fields")
terms = set(re.findall(r"^``([a-z_]+)``$", json_sec, re.M))
named = set(re.findall(r"``([a-z_]+)``", json_sec))
check(len(top) > 10 and top == terms, "bench-board.rst's JSON fields are the script's top-level keys (%d)" % len(top),
      "undocumented: %s; documented but not written: %s" % (sorted(top - terms), sorted(terms - top)))
check(keys <= named, "bench-board.rst names every key the script writes (%d)" % len(keys),
      "not named: %s" % sorted(keys - named))
sys.exit(0 if ok else 1)
P
