#!/usr/bin/env bash
# The bench pipeline end to end with tiny jobs (BENCH_SMOKE=1): the three
# variants README quotes (the C driver, the RFC design, the Rust default) boot
# twice each (BENCH_REPEAT's smoke default), every cell is the median of the
# two boots with both kept, the table is printed with the range, results/bench.json
# is complete and numeric, and the chart is well-formed SVG; the C driver with
# the RFC's bounce buffer is a variant of its own (its 128k transfers bounced: more than 4 KiB each) and
# the Rust variants' cells give their ratio to it; the rows users recognise
# and the cache and copy table at the default core's rates, the Cortex-A5's (the C
# driver, the RFC design and the default bounce design, the kernel's charge at
# scale_percent 0 and 100, the Cortex-A5's rates recorded: nothing charged at
# 0, maintenance for the C driver, uncached copies for the RFC design's
# coherent buffer and cached copies for the Rust driver at 100, and the Rust
# design's ratios against the RFC design) are there; the SDIO group (C driver, RFC design and Rust driver, 20 virtual ms
# per row: every row in the JSON and the table, bench-sdio.svg); the SD-slot group (the slot's C
# driver and Rust driver, 1 MiB per job: every job in the JSON and the table with MiB/s,
# requests and their average size from the block layer, the card at 4 bits in SD high speed
# with its actual clock, the C driver's requests of one 4 KiB page and the Rust driver's
# larger ones at bs=128k, bench-sdslot.svg).  Not a speed check: speed
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
RFC = "C driver + RFC bounce"
need(d["variants"] == ["C driver", RFC, "Rust bounce=128K"], "variants: %s" % d["variants"])
need(d.get("boots") == {v: 2 for v in d["variants"]}, "two boots per variant: %s" % d.get("boots"))
for v in d["variants"]:
    for j in d["jobs"] + d["user_jobs"]:
        c = d["results"][v][j]
        s = [x["mib_s"] for x in c.get("samples", [])]
        need(c.get("runs") == 2 and len(s) == 2 and abs(c["mib_s"] - sum(s) / 2) < 1e-9
             and (c["min"]["mib_s"], c["max"]["mib_s"]) == (min(s), max(s)),
             "%s / %s: the median of 2 boots %s, range [%s, %s]" % (v, j, s, c.get("min", {}).get("mib_s"),
                                                                   c.get("max", {}).get("mib_s")))
need(len(d.get("boot_seconds", {})) == 2 * len(d["variants"]) + 3 + 3 + 2, "wall time of every boot: %s" % d.get("boot_seconds"))
need("every figure the median of 2 boots" in table, "table: says its cells are medians of 2 boots")
if RFC in d["variants"]:
    c = d["results"][RFC]["read-128k"]
    need(c["avg_transfer_kib"] > 4, "%s / read-128k: average transfer %.1f KiB (bounced)" % (RFC, c["avg_transfer_kib"]))
need(any(l.startswith("| `read-128k` |") and l.count("x RFC") == len(d["variants"]) - 2 for l in table.splitlines()),
     "table: the Rust variants' ratio to the RFC design")
need(len(d["jobs"]) == 9, "9 jobs")
for v in d["variants"]:
    for j in d["jobs"]:
        c = d["results"][v][j]
        need(all(isinstance(c[k], (int, float)) and c[k] > 0 for k in ("mib_s", "iops", "data_commands", "avg_transfer_kib")),
             "%s / %s has positive MiB/s, IOPS, data commands, average size" % (v, j))
# the variants' table (the SD-slot group's, printed last, names its direct jobs the same way)
rows = [l for l in table.split("SD-slot group (")[0].splitlines() if l.startswith("| `")]
need(len(rows) == 9 and all(l.count("|") == len(d["variants"]) + 2 for l in rows), "table: 9 rows, one column per variant")
need(len(d["user_jobs"]) == 8, "8 rows users recognise")
for v in d["variants"]:
    for j in d["user_jobs"]:
        c = d["results"][v][j]
        need(c["mib_s"] > 0 and c["data_commands"] > 0, "%s / %s has MiB/s and data commands" % (v, j))
tbl = d.get("cortex_a5") or {}
need(tbl.get("core") == "a5" and tbl.get("append") == "dma_maint_ns_per_kib=1590,795,1590,130 "
     "dma_copy_ns_per_kib=1550,4320" and "cortex_a9" not in d and "The Cortex-A5 table" in table,
     "the cache and copy table at the Cortex-A5's rates by default: %s" % tbl.get("append"))
cols = [c["label"] for c in tbl.get("columns", [])]
need(cols == ["C driver", RFC, "cached, 2 buffers (default)"] and tbl.get("scales_percent") == [0, 100]
     and set(tbl.get("results", {})) == set(cols),
     "Cortex-A5 table: C driver, RFC design and the default design at scale 0 and 100: %s" % cols)
for col in cols:
    r = tbl["results"].get(col, {})
    for j in tbl.get("jobs", []):
        free, paid = r.get("%s@0" % j), r.get("%s@100" % j)
        need(free and paid and free["mib_s"] > 0 and paid["mib_s"] > 0
             and free["maint_ns"] == 0 and free["copy_ns"] == 0,
             "Cortex-A5 table: %s / %s at 0 (nothing charged) and 100" % (col, j))
        if not (free and paid):
            continue
        # at 1x the C driver pays maintenance only; the default design maintenance
        # (cached bounce buffers, or direct segments) and cached copies where it
        # bounces (the direct-I/O rows: fio's buffers are 4 KiB pages; a buffered
        # read of fresh memory may go direct throughout); the RFC design copies
        # to and from its coherent buffer (no maintenance for a bounced request)
        copies = paid["copy_ns"] > 0 if col != "C driver" and j != "buffered-read-1m" else (
            paid["copy_ns"] == 0 if col == "C driver" else True)
        if col == RFC and j != "buffered-read-1m":
            copies = paid["charge"].get("copy_uncached_ns", 0) > 0 and paid["charge"].get("copy_cached_ns", 0) == 0
        need((paid["maint_ns"] > 0 or col == RFC) and copies,
             "Cortex-A5 table: %s / %s at 1x charged %.2f ms maintenance, %.2f ms copy per MiB"
             % (col, j, paid["maint_ns_per_mib"] / 1e6, paid["copy_ns_per_mib"] / 1e6))
        if j == "read-128k" and col not in ("C driver", RFC):
            need(paid["charge"].get("copy_uncached_ns", 0) == 0 and paid["charge"].get("copy_cached_ns", 0) > 0,
                 "Cortex-A5 table: %s / %s copies charged at the cached rate only" % (col, j))
need(tbl.get("targets") and set(tbl["targets"]) == set(cols[2:]), "Cortex-A5 table: targets per Rust design")
need(all(set(t.get("ratio_to_rfc", {})) == set(tbl.get("jobs", [])) for t in (tbl.get("targets") or {}).values()),
     "Cortex-A5 table: each Rust design's ratio to the RFC design on every job")
copy_rows = [l for l in table.splitlines() if l.startswith("| ") and "->" in l and "charged" in l]
need(len(copy_rows) == len(tbl.get("jobs", [])) and len(copy_rows) == 4, "Cortex-A5 table: a 1x row per job")
need(all(c.get("runs") == 1 for r in tbl.get("results", {}).values() for c in r.values())
     and "One boot per column" in table and tbl.get("order"),
     "Cortex-A5 table: one boot per column, said so, and the scales' order recorded")
aroot = ET.parse(out + "/bench-a5.svg").getroot()
need(aroot.tag.endswith("svg") and len(aroot.findall("{http://www.w3.org/2000/svg}rect")) >= 8 * 2,
     "Cortex-A5 chart: an SVG with a bar per cell")
sd = d.get("sdio") or {}
need(sd.get("variants") == ["C driver", RFC, "Rust"], "sdio: C driver, RFC design and Rust driver: %s" % sd.get("variants"))
for v in sd.get("variants", []):
    for r in sd["rows"]:
        c = sd["results"][v].get(r["name"], {})
        need(isinstance(c.get("value"), float) and c["value"] > 0 and c.get("unit"),
             "sdio: %s / %s: %s %s" % (v, r["name"], c.get("value"), c.get("unit")))
sdio_rows = [l for l in table.splitlines() if l.startswith("| ") and any(l.startswith("| %s |" % r["label"]) for r in sd.get("rows", []))]
need(sd.get("rows") and len(sdio_rows) == len(sd["rows"]), "sdio table: a row per SDIO row")
sroot = ET.parse(out + "/bench-sdio.svg").getroot()
need(sroot.tag.endswith("svg") and len(sroot.findall("{http://www.w3.org/2000/svg}rect")) >= 6 * 2, "sdio chart: an SVG with a bar per MiB/s cell")
ss = d.get("sdslot") or {}
need(ss.get("variants") == ["C driver", "Rust"] and ss.get("board") == "odroidc1" and ss.get("mib_per_job") == 1
     and ss.get("commit") == d.get("commit") and ss.get("command") == d.get("command"),
     "sdslot: the C and the Rust driver on the Odroid-C1's slot, 1 MiB per job, the run's commit and command")
need(len(ss.get("jobs", [])) == 11 and len(ss.get("boot_seconds", {})) == 2, "sdslot: 11 jobs, 2 boots timed: %s"
     % ss.get("boot_seconds"))
for v in ss.get("variants", []):
    ios = ss["ios"][v]
    need(ios.get("bus_width") == "4_bits" and ios.get("timing") == "sd_high-speed" and ios.get("clock") == 50000000
         and 0 < ios.get("actual_clock", 0) <= 50000000,
         "sdslot: %s: the card at 4 bits, SD high speed, %s Hz asked, %s Hz actual"
         % (v, ios.get("clock"), ios.get("actual_clock")))
    for j in ss.get("jobs", []):
        c = ss["results"][v].get(j, {})
        need(all(isinstance(c.get(k), (int, float)) and c[k] > 0 for k in ("mib_s", "requests", "avg_transfer_kib"))
             and abs(c["card_mib_moved"] - c["mib_moved"]) < 0.01 and c.get("cpu_ms_per_mib") is not None,
             "sdslot: %s / %s: %.2f MiB/s, %s requests of %.1f KiB, %s ms CPU per MiB"
             % (v, j, c.get("mib_s", 0), c.get("requests"), c.get("avg_transfer_kib", 0), c.get("cpu_ms_per_mib")))
if ss.get("results"):
    ck, rk = ss["results"]["C driver"]["read-128k"]["avg_transfer_kib"], ss["results"]["Rust"]["read-128k"]["avg_transfer_kib"]
    need(ck == 4 and rk > 4, "sdslot: read-128k in requests of %.1f KiB (C driver, one page) and %.1f KiB (Rust)" % (ck, rk))
sdslot_rows = [l for l in table.splitlines() if l.startswith("| ") and l.count("|") == 9 and l.split("|")[4].strip().endswith("x")]
need(len(sdslot_rows) == len(ss.get("jobs", [])), "sdslot table: a row per job")
sslroot = ET.parse(out + "/bench-sdslot.svg").getroot()
need(sslroot.tag.endswith("svg") and len(sslroot.findall("{http://www.w3.org/2000/svg}rect")) >= 11 * 2,
     "sdslot chart: an SVG with a bar per cell")
root = ET.parse(out + "/bench.svg").getroot()
need(root.tag.endswith("svg") and len(root.findall("{http://www.w3.org/2000/svg}rect")) >= 9 * len(d["variants"]), "chart: an SVG with a bar per cell")
sys.exit(0 if ok else 1)
P
