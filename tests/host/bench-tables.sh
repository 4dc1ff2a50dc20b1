#!/usr/bin/env bash
# The docs' bench figures are the run they name (run-all: host-bench-tables): every block
# between "bench-table" marks in Documentation/bench.rst and README.md must be what
# scripts/bench-tables writes from Documentation/bench-run.json (one full make bench run at
# one commit).  A figure edited by hand, or a block left from another run, fails here; so does
# a changed figure in a copy of the docs (checked below, so the check cannot pass by itself).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
python3 "$TOP/scripts/bench-tables" --check
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/scripts" "$T/Documentation"
cp "$TOP/scripts/bench-tables" "$T/scripts/"
cp "$TOP/Documentation/bench.rst" "$TOP/Documentation/bench-run.json" "$T/Documentation/"
cp "$TOP/README.md" "$T/"
# one figure of the variants table changed by hand: the check must refuse it
python3 - "$T/Documentation/bench.rst" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
a = s.index(".. begin bench-table variants")
# the first cell's MiB/s (a median "13.30 [13.05-13.61] (1.00x)" or one boot's "12.54* (")
m = re.compile(r"\| (\d+\.\d\d)(?=[ *\[])").search(s, a)
s = s[:m.start(1)] + "%.2f" % (float(m.group(1)) + 0.01) + s[m.end(1):]
open(p, "w").write(s)
PY
if python3 "$T/scripts/bench-tables" --check >/dev/null 2>&1; then
    echo "bench-tables: a figure changed by hand was not found"; exit 1
fi
echo "bench-tables: a figure changed by hand is refused"
# a run with the C driver with the RFC's bounce buffer (the imported run's own, or,
# for a run without it, a copy of the C driver's cells at twice the MiB/s): its
# column and the Rust default's ratios to it
cp "$TOP/Documentation/bench.rst" "$T/Documentation/"
python3 - "$T/Documentation/bench-run.json" <<'PY'
import copy, json, sys
p = sys.argv[1]
run = json.load(open(p))
rfc = "C driver + RFC bounce"
# the imported run has the RFC design already: then its own column is checked
if rfc not in run["variants"]:
    run["variants"].insert(1, rfc)
    run["results"][rfc] = copy.deepcopy(run["results"]["C driver"])
    for c in run["results"][rfc].values():
        if isinstance(c, dict) and "mib_s" in c:
            c["mib_s"] *= 2
tbl = run.get("cortex_a5") or run["cortex_a9"]
if rfc not in [c["label"] for c in tbl["columns"]]:
    tbl["columns"].insert(1, dict(tbl["columns"][0], label=rfc, driver="c-rfc"))
    tbl["results"][rfc] = copy.deepcopy(tbl["results"]["C driver"])
sd = run["sdio"]
if rfc not in sd["variants"]:
    sd["variants"].insert(1, rfc)
    sd["results"][rfc] = copy.deepcopy(sd["results"]["C driver"])
json.dump(run, open(p, "w"))
PY
python3 "$T/scripts/bench-tables" >/dev/null
python3 - "$T/Documentation/bench.rst" "$T/README.md" "$T/Documentation/bench-run.json" <<'PY'
import json, re, sys
rst, md = open(sys.argv[1]).read(), open(sys.argv[2]).read()
variants = json.load(open(sys.argv[3]))["variants"]
row = next(l for l in rst.splitlines() if l.startswith("    | read-128k |"))
cells = [c.strip() for c in row.split("|")[2:-1]]
# a column per variant: the C driver, the RFC design, then the Rust variants with both ratios
ok = len(variants) >= 3 and len(cells) == len(variants) and "RFC" not in cells[0] and "RFC" not in cells[1] and all(
    re.search(r"\(\d+\.\d\dx, \d+\.\d\dx RFC\)", c) for c in cells[2:])
ok = ok and "against the C driver with the RFC's bounce buffer: sequential reads" in rst
ok = ok and "Against the C driver with the RFC's bounce buffer: read" in md
srow = next(l for l in rst.splitlines() if l.startswith("    | CMD52 (write + read-back) |"))
ok = ok and srow.count(" RFC)") == len(srow.split("|")[3:-1]) - 2
if not ok:
    print("bench-tables: a run with the RFC design lacks its column or the ratios to it:", row)
    sys.exit(1)
PY
echo "bench-tables: a run with the RFC design gets its column and the Rust ratios to it"
# The cache and copy table is titled by the core whose rates the run charged: a run whose
# table is under "cortex_a5" (scripts/bench's default, BENCH_CORE=a5) gives "The Cortex-A5
# table" and README's "at a Cortex-A5's cache and copy rates", one under "cortex_a9" the
# Cortex-A9's (the run is the imported one with its table moved to the other key)
for core in a5 a9; do
    cp "$TOP/Documentation/bench.rst" "$TOP/Documentation/bench-run.json" "$T/Documentation/"
    cp "$TOP/README.md" "$T/"
    python3 - "$T/Documentation/bench-run.json" "$core" <<'PY'
import json, sys
p, core = sys.argv[1], sys.argv[2]
run = json.load(open(p))
tbl = run.pop("cortex_a5", None) or run.pop("cortex_a9")
run["cortex_" + core] = tbl
json.dump(run, open(p, "w"))
PY
    python3 "$T/scripts/bench-tables" >/dev/null
    name=Cortex-${core^}
    other=Cortex-A$([ "$core" = a5 ] && echo 9 || echo 5)
    if ! grep -q "^The $name table, measured with" "$T/Documentation/bench.rst" ||
        grep -q "^The $other table, measured with" "$T/Documentation/bench.rst" ||
        ! grep -q "at a $name's cache and copy rates the default loses" "$T/README.md"; then
        echo "bench-tables: a run at the $name's rates is not titled so"; exit 1
    fi
done
echo "bench-tables: the cache and copy table and README name the core whose rates the run charged"
# Repeated boots: scripts/bench's merge_boots makes each cell the median of its boots with the
# lowest and highest (checked against medians computed here), and bench-tables renders a
# repeated cell as "median [min-max]", the single cells with "*", and the ratios from the
# medians (a synthetic run: the imported run's three quoted variants, each cell in three
# boots at factors whose median is neither the first boot nor the mean)
cp "$TOP/Documentation/bench.rst" "$TOP/Documentation/bench-run.json" "$T/Documentation/"
cp "$TOP/README.md" "$T/"
python3 - "$TOP/scripts/bench" "$T/Documentation/bench-run.json" <<'PY'
import copy, importlib.machinery, json, sys
bench = importlib.machinery.SourceFileLoader("bench", sys.argv[1]).load_module()
p = sys.argv[2]
run = json.load(open(p))
factors = {"C driver": (1.10, 0.90, 0.99), "C driver + RFC bounce": (0.95, 1.02, 1.20),
           "Rust bounce=128K": (1.30, 1.01, 0.80)}
bad = []
for v, fs in factors.items():
    old = run["results"][v]
    boots = []
    for f in fs:
        b = copy.deepcopy(old)
        for c in b.values():
            c["mib_s"] *= f
            if c["cpu_ms_per_mib"] is not None:
                c["cpu_ms_per_mib"] /= f
        boots.append(b)
    new = bench.merge_columns(boots)
    for t, c in new.items():
        ms = sorted(b[t]["mib_s"] for b in boots)
        if (c["runs"], len(c["samples"])) != (3, 3) or abs(c["mib_s"] - ms[1]) > 1e-9 \
                or (c["min"]["mib_s"], c["max"]["mib_s"]) != (ms[0], ms[2]) or c["samples"][0] != boots[0][t]:
            bad.append("%s / %s: %s (the boots: %s)" % (v, t, {k: c[k] for k in ("mib_s", "min", "max", "runs")}, ms))
        cpus = [b[t]["cpu_ms_per_mib"] for b in boots]
        if None not in cpus and abs(c["cpu_ms_per_mib"] - sorted(cpus)[1]) > 1e-9:
            bad.append("%s / %s: CPU %s, not the median of %s" % (v, t, c["cpu_ms_per_mib"], cpus))
    run["results"][v] = new
for v in run["variants"]:
    if v not in factors:
        for c in run["results"][v].values():
            c["runs"] = 1
if bad:
    print("bench-tables: scripts/bench's medians are wrong:\n  " + "\n  ".join(bad[:5]))
    sys.exit(1)
json.dump(run, open(p, "w"))
PY
python3 "$T/scripts/bench-tables" >/dev/null
python3 "$T/scripts/bench-tables" --check >/dev/null
python3 - "$T/Documentation/bench.rst" "$T/README.md" "$T/Documentation/bench-run.json" <<'PY'
import re, sys
rst, md, run = open(sys.argv[1]).read(), open(sys.argv[2]).read(), __import__("json").load(open(sys.argv[3]))
r = run["results"]
row = next(l for l in rst.splitlines() if l.startswith("    | read-128k |"))
cells = dict(zip(run["variants"], [c.strip() for c in row.split("|")[2:-1]]))
ok, why = True, []
def need(cond, what):
    global ok
    ok &= bool(cond)
    if not cond:
        why.append(what)
for v in ("C driver", "C driver + RFC bounce", "Rust bounce=128K"):
    ms = sorted(s["mib_s"] for s in r[v]["read-128k"]["samples"])
    need(cells[v].startswith("%.2f [%.2f-%.2f] (" % (ms[1], ms[0], ms[2])), "%s: %r, boots %s" % (v, cells[v], ms))
for v in ("Rust bounce=0", "Rust bounce=512K"):
    need(cells[v].startswith("%.2f* (" % r[v]["read-128k"]["mib_s"]), "%s: %r not marked single" % (v, cells[v]))
med = r["Rust bounce=128K"]["read-128k"]["mib_s"] / r["C driver"]["read-128k"]["mib_s"]
first = (r["Rust bounce=128K"]["read-128k"]["samples"][0]["mib_s"]
         / r["C driver"]["read-128k"]["samples"][0]["mib_s"])
need("%.2fx" % med != "%.2fx" % first, "the test's factors do not tell a median from the first boot")
need("(%.2fx, " % med in cells["Rust bounce=128K"], "the default's ratio is not %.2fx: %r" % (med, cells["Rust bounce=128K"]))
need("**Speed** against the C driver: read %.2fx at 128k" % med in md, "README's read 128k is not %.2fx" % med)
need("ratios of medians of 3 boots" in md and "psync read (each figure from one boot)" in md,
     "README does not say which figures are medians and which single boots")
need("the median of 3 boots with the lowest and highest" in rst and "cells marked with an asterisk: one boot" in rst,
     "bench.rst's variants table does not say what its cells are")
need("(the table above; ratios of medians of 3 boots)" in rst, "against-c: not said to be ratios of medians")
if not ok:
    print("bench-tables: a run with repeated boots is rendered wrong:\n  " + "\n  ".join(why))
    sys.exit(1)
PY
echo "bench-tables: repeated boots give medians with their range, ratios of medians, single cells marked"
# The cache and copy table's guest script interleaves the scales: each job runs at every scale before the
# next job, no two jobs of a boot in the same order, a column's next boot in another order,
# every scale first somewhere
python3 - "$TOP/scripts/bench" <<'PY'
import importlib.machinery, sys
bench = importlib.machinery.SourceFileLoader("bench", sys.argv[1]).load_module()
scales = bench.CHARGE_SCALES
def orders(boot):
    g = bench.copy_guest_script(32, "rust", scales, "x", boot).splitlines()
    tags = [l.split()[2] for l in g if l.startswith("echo \"@@CHG ")]
    return [[int(t.split("@")[1]) for t in tags if t.startswith(j + "@")] for j, _ in bench.COPY_JOBS]
runs = orders(0) + orders(1)
ok = all(sorted(o) == list(scales) for o in runs) and len({tuple(o) for o in orders(0)}) == len(bench.COPY_JOBS) \
    and orders(0)[0] != orders(1)[0] and len({o[0] for o in runs}) == len(scales)
g = bench.copy_guest_script(32, "rust", scales, "x", 0).splitlines()
tags = [l.split()[2] for l in g if l.startswith("echo \"@@CHG ")]
jobs = [t.split("@")[0] for t in tags]
ok = ok and jobs == sorted(jobs, key=[j for j, _ in bench.COPY_JOBS].index)
if not ok:
    print("bench-tables: the cache and copy table's scales are not interleaved:", runs)
    sys.exit(1)
print("bench-tables: the cache and copy table's scales interleaved, orders %s" % runs[:4])
PY
# The SD-slot group ("sdslot", its own commit and command): a figure of its block changed by
# hand is refused; a broken group (a job's cell missing, a smoke run, no ios, no group) fails
# the check with a message, and --import-sdslot refuses it; a good group imported with
# --import-sdslot replaces the file's "sdslot" only and its block names the group's commit
cp "$TOP/Documentation/bench.rst" "$TOP/Documentation/bench-run.json" "$T/Documentation/"
cp "$TOP/README.md" "$T/"
python3 - "$T/Documentation/bench.rst" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
a = s.index(".. begin bench-table sd-slot")
m = re.compile(r"\| read-128k \| (\d+\.\d\d) \|").search(s, a)
s = s[:m.start(1)] + "%.2f" % (float(m.group(1)) + 0.01) + s[m.end(1):]
open(p, "w").write(s)
PY
if python3 "$T/scripts/bench-tables" --check >/dev/null 2>&1; then
    echo "bench-tables: a figure of the sd-slot block changed by hand was not found"; exit 1
fi
echo "bench-tables: a figure of the sd-slot block changed by hand is refused"
for broken in cell smoke ios gone; do
    cp "$TOP/Documentation/bench.rst" "$TOP/Documentation/bench-run.json" "$T/Documentation/"
    python3 - "$T/Documentation/bench-run.json" "$broken" "$T/part.json" <<'PY'
import json, sys
p, broken, part = sys.argv[1:]
run = json.load(open(p))
s = run["sdslot"]
if broken == "cell":
    del s["results"][s["variants"][-1]]["read-128k"]
elif broken == "smoke":
    s["smoke"] = True
elif broken == "ios":
    s["ios"][s["variants"][0]].pop("actual_clock")
else:
    del run["sdslot"]
json.dump({"sdslot": run.get("sdslot")}, open(part, "w"))
json.dump(run, open(p, "w"))
PY
    if python3 "$T/scripts/bench-tables" --check > /dev/null 2> "$T/err"; then
        echo "bench-tables: a run whose SD-slot group is broken ($broken) passed the check"; exit 1
    fi
    grep -q "sdslot" "$T/err" || { cat "$T/err"; echo "bench-tables: no clear message for a broken SD-slot group ($broken)"; exit 1; }
    cp "$TOP/Documentation/bench-run.json" "$T/Documentation/"
    if python3 "$T/scripts/bench-tables" --import-sdslot "$T/part.json" > /dev/null 2>&1 ||
        ! cmp -s "$TOP/Documentation/bench-run.json" "$T/Documentation/bench-run.json"; then
        echo "bench-tables: --import-sdslot took a broken SD-slot group ($broken)"; exit 1
    fi
done
echo "bench-tables: a broken SD-slot group (a cell missing, a smoke run, no actual clock, none) fails the check and is not imported"
cp "$TOP/Documentation/bench.rst" "$TOP/Documentation/bench-run.json" "$T/Documentation/"
python3 - "$T/Documentation/bench-run.json" "$T/part.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
s = dict(run["sdslot"], commit="abcdef0", command="BENCH_PARTS=sdslot BENCH_SDSLOT_MIB=8 make bench")
s["results"]["Rust"]["read-128k"] = dict(s["results"]["Rust"]["read-128k"], mib_s=99.5)
json.dump({"commit": "abcdef0", "sdslot": s}, open(sys.argv[2], "w"))
PY
python3 "$T/scripts/bench-tables" --import-sdslot "$T/part.json" > /dev/null
python3 "$T/scripts/bench-tables" --check > /dev/null
python3 - "$TOP/Documentation/bench-run.json" "$T/Documentation/bench-run.json" "$T/Documentation/bench.rst" <<'PY'
import json, sys
old, new, rst = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), open(sys.argv[3]).read()
block = rst[rst.index(".. begin bench-table sd-slot"):rst.index(".. end bench-table sd-slot")]
rest_same = {k: v for k, v in old.items() if k != "sdslot"} == {k: v for k, v in new.items() if k != "sdslot"}
ok = rest_same and new["sdslot"]["commit"] == "abcdef0" and "at commit abcdef0" in block \
    and "``BENCH_PARTS=sdslot BENCH_SDSLOT_MIB=8 make bench``" in block and "| read-128k |" in block \
    and "| 99.50 |" in block and "commit %s" % old["commit"] in rst
if not ok:
    print("bench-tables: --import-sdslot did not replace the SD-slot group alone (rest kept: %s)" % rest_same)
    sys.exit(1)
PY
echo "bench-tables: --import-sdslot replaces the SD-slot group alone, its block names the group's commit and command"
