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
m = re.compile(r"\d+\.\d\d \(").search(s, a)
s = s[:m.start()] + "%.2f (" % (float(m.group(0)[:-2]) + 0.01) + s[m.end():]
open(p, "w").write(s)
PY
if python3 "$T/scripts/bench-tables" --check >/dev/null 2>&1; then
    echo "bench-tables: a figure changed by hand was not found"; exit 1
fi
echo "bench-tables: a figure changed by hand is refused"
