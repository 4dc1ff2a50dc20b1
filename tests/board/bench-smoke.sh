#!/usr/bin/env bash
# The bench pipeline end to end with tiny jobs (BENCH_SMOKE=1): every variant
# boots, the table is printed, results/bench.json is complete and numeric, and
# the chart is well-formed SVG.  Not a speed check: speed lives in make bench.
. "$(dirname "$0")/../lib.sh"
BENCH_SMOKE=1 BENCH_OUT="$T/out" "$TOP/scripts/bench" > "$T/table.txt"
cat "$T/table.txt"
python3 - "$T/out" "$T/table.txt" <<'P'
import json, sys, xml.etree.ElementTree as ET
out, table = sys.argv[1], open(sys.argv[2]).read()
d = json.load(open(out + "/bench.json"))
ok = True
def need(cond, what):
    global ok
    print(("  ok: " if cond else "  FAILED: ") + what)
    ok &= bool(cond)
need(len(d["variants"]) >= 2 and d["variants"][0] == "C driver", "variants: %s" % d["variants"])
need(len(d["jobs"]) == 9, "9 jobs")
for v in d["variants"]:
    for j in d["jobs"]:
        c = d["results"][v][j]
        need(all(isinstance(c[k], (int, float)) and c[k] > 0 for k in ("mib_s", "iops", "data_commands", "avg_transfer_kib")),
             "%s / %s has positive MiB/s, IOPS, data commands, average size" % (v, j))
rows = [l for l in table.splitlines() if l.startswith("| `")]
need(len(rows) == 9 and all(l.count("|") == len(d["variants"]) + 2 for l in rows), "table: 9 rows, one column per variant")
root = ET.parse(out + "/bench.svg").getroot()
need(root.tag.endswith("svg") and len(root.findall("{http://www.w3.org/2000/svg}rect")) >= 9 * len(d["variants"]), "chart: an SVG with a bar per cell")
sys.exit(0 if ok else 1)
P
