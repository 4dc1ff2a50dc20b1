"""The checks a board test makes on its serial log (tests/lib.sh: log_checks).

The guest prints its findings as lines of their own: "@@JSON NAME {...}" (a JSON
document on one line) and "@@DT FIELDS" (a device tree node as the guest reads it).
markers() reads them back; need() prints each check as "  ok: ..." or "  FAILED: ..."
and done() exits 1 if any failed.
"""
import json
import re
import sys

failed = []


def markers(path, dt_fields):
    """Returns the log's @@JSON documents by name and the groups of its last @@DT line.

    dt_fields is the regular expression of what follows "@@DT " to the end of the
    line; the groups are None when no line matches it.
    """
    js = {}
    dt = None
    for line in open(path, errors="replace").read().splitlines():
        m = re.match(r"@@JSON (\S+) (.*)", line)
        if m:
            js[m.group(1)] = json.loads(m.group(2))
        m = re.match(r"@@DT " + dt_fields + "$", line)
        if m:
            dt = m.groups()
    return js, dt


def need(cond, what):
    """Prints WHAT as a check that passed or failed, as cond holds or not."""
    print(("  ok: " if cond else "  FAILED: ") + what)
    if not cond:
        failed.append(what)


def done():
    """Exits 0 when every check passed, else 1."""
    sys.exit(1 if failed else 0)
