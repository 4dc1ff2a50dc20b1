#!/usr/bin/env bash
# Documentation/*.rst through docutils (run-all: host-rst-check; a few seconds): every file
# parses without a warning or an error (a malformed table, a literal block cut by text, an
# unknown directive), as the kernel's documentation build would reject them.  docutils comes
# from make setup's tools venv ($CACHE/venv-tools).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/scripts/common.sh"
PY="$CACHE/venv-tools/bin/python"
"$PY" -c 'import docutils' 2>/dev/null || die "docutils missing in $CACHE/venv-tools (run 'make setup')"
"$PY" - "$TOP"/Documentation/*.rst <<'PY'
import io, sys
import docutils.core
bad = 0
for path in sys.argv[1:]:
    err = io.StringIO()
    docutils.core.publish_doctree(open(path).read(), source_path=path,
        settings_overrides={"warning_stream": err, "report_level": 2, "halt_level": 5})
    msgs = err.getvalue().strip()
    name = path.rsplit("/", 1)[-1]
    if msgs:
        bad += 1
        print("  FAILED: %s:\n%s" % (name, "\n".join("    | " + l for l in msgs.splitlines()[:20])))
    else:
        print("  ok: %s" % name)
# the check bites: a table with text in its column margin is reported
err = io.StringIO()
docutils.core.publish_doctree("==  ==\na   b\n==  ==\nxxxxx y\n==  ==\n",
    settings_overrides={"warning_stream": err, "report_level": 2, "halt_level": 5})
if "Malformed table" in err.getvalue():
    print("  ok: a malformed table is reported")
else:
    bad += 1
    print("  FAILED: a malformed table was not reported")
sys.exit(1 if bad else 0)
PY
