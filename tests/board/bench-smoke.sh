#!/usr/bin/env bash
# The bench pipeline end to end with tiny jobs (BENCH_SMOKE=1): every variant
# boots, the table is printed, results/bench.json is complete and numeric, and
# the chart is well-formed SVG; the rows users recognise and the copy-cost
# table (every bounce design at no cost and at its memory's cost; the cost
# really charged: on the coherent designs' psync reads CPU per MiB rises and
# MiB/s falls) are there; the SDIO group (C and Rust driver, 20 virtual ms
# per row: every row in the JSON and the table, bench-sdio.svg).  Not a speed check: speed
# lives in make bench.  One lane (BENCH_JOBS=1): make test already runs
# TEST_JOBS boards side by side; a bad BENCH_JOBS is refused before any boot.
. "$(dirname "$0")/../lib.sh"
for bad in 0 two; do
    if BENCH_JOBS=$bad BENCH_SMOKE=1 BENCH_OUT="$T/bad" "$TOP/scripts/bench" > /dev/null 2> "$T/bad.err"; then
        echo "FAILED: BENCH_JOBS=$bad was taken"; exit 1
    fi
    grep -q "BENCH_JOBS must be a number of boards" "$T/bad.err" || { cat "$T/bad.err"; echo "FAILED: BENCH_JOBS=$bad: no clear error"; exit 1; }
done
echo "ok: BENCH_JOBS=0 and BENCH_JOBS=two refused: $(cat "$T/bad.err")"
BENCH_JOBS=1 BENCH_SMOKE=1 BENCH_OUT="$T/out" "$TOP/scripts/bench" > "$T/table.txt"
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
need(len(d["user_jobs"]) == 8, "8 rows users recognise")
for v in d["variants"]:
    for j in d["user_jobs"]:
        c = d["results"][v][j]
        need(c["mib_s"] > 0 and c["data_commands"] > 0, "%s / %s has MiB/s and data commands" % (v, j))
cc = d["copy_cost"]
need(len(cc["designs"]) == 4 and set(cc["results"]) == {x["label"] for x in cc["designs"]},
     "copy cost: 4 designs measured")
for x in cc["designs"]:
    r = cc["results"].get(x["label"], {})
    for j in cc["jobs"]:
        free, paid = r.get("%s@0" % j), r.get("%s@%d" % (j, x["ns_per_kib"]))
        need(free and paid and free["mib_s"] > 0 and paid["mib_s"] > 0,
             "copy cost: %s / %s at 0 and %d ns/KiB" % (x["label"], j, x["ns_per_kib"]))
    # the knob bites where every request is bounced (fio's own buffers are 4 KiB
    # pages; a buffered read of fresh memory goes partly direct, uncopied) and
    # the charge stands well above the noise (coherent: 7.8 ms per MiB)
    j = "read-128k"
    free, paid = r.get("%s@0" % j), r.get("%s@%d" % (j, x["ns_per_kib"]))
    if x["ns_per_kib"] >= 7000 and free and paid and None not in (free["cpu_ms_per_mib"], paid["cpu_ms_per_mib"]):
        need(paid["cpu_ms_per_mib"] > free["cpu_ms_per_mib"] and paid["mib_s"] < free["mib_s"],
             "copy cost: %s %s %.2f MiB/s, %.2f ms CPU/MiB at the cost; %.2f, %.2f ms without"
             % (x["label"], j, paid["mib_s"], paid["cpu_ms_per_mib"], free["mib_s"], free["cpu_ms_per_mib"]))
copy_rows = [l for l in table.splitlines() if l.startswith("| ") and "->" in l]
need(len(copy_rows) == len(cc["jobs"]), "copy-cost table: a row per job")
sd = d.get("sdio") or {}
need(sd.get("variants") == ["C driver", "Rust"], "sdio: C and Rust driver: %s" % sd.get("variants"))
for v in sd.get("variants", []):
    for r in sd["rows"]:
        c = sd["results"][v].get(r["name"], {})
        need(isinstance(c.get("value"), float) and c["value"] > 0 and c.get("unit"),
             "sdio: %s / %s: %s %s" % (v, r["name"], c.get("value"), c.get("unit")))
sdio_rows = [l for l in table.splitlines() if l.startswith("| ") and any(l.startswith("| %s |" % r["label"]) for r in sd.get("rows", []))]
need(sd.get("rows") and len(sdio_rows) == len(sd["rows"]), "sdio table: a row per SDIO row")
sroot = ET.parse(out + "/bench-sdio.svg").getroot()
need(sroot.tag.endswith("svg") and len(sroot.findall("{http://www.w3.org/2000/svg}rect")) >= 6 * 2, "sdio chart: an SVG with a bar per MiB/s cell")
root = ET.parse(out + "/bench.svg").getroot()
need(root.tag.endswith("svg") and len(root.findall("{http://www.w3.org/2000/svg}rect")) >= 9 * len(d["variants"]), "chart: an SVG with a bar per cell")
sys.exit(0 if ok else 1)
P
