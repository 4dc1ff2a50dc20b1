#!/usr/bin/env bash
# README.md is for its readers: at most 120 lines, no Markdown table cell
# over 300 characters, and on its first screen (the first 40 lines) what it
# is, what it needs, that it has never run on a real board, the two
# commands, and where board owners go (Documentation/board.rst).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
R="$TOP/README.md"
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
n=$(wc -l < "$R")
[ "$n" -le 120 ] && ok "$n lines (at most 120)" || bad "$n lines (at most 120)"
long=$(awk -F' [|] ' '/^\|/ { line = $0; gsub(/\\\|/, "", line); n = split(line, c, / \| /)
        for (i = 1; i <= n; i++) { x = c[i]; gsub(/^\| ?| ?\|$/, "", x)
            if (length(x) > 300) printf "line %d: a cell of %d characters\n", NR, length(x) } }' "$R")
[ -z "$long" ] && ok "no table cell over 300 characters" || bad "$long"
head -40 "$R" > "${TMPDIR:-/tmp}/readme-head.$$"
trap 'rm -f "${TMPDIR:-/tmp}/readme-head.$$"' EXIT
for want in 'Linux 7.3' 'CONFIG_RUST=y' 'never run on a real board' 'make bench' 'make test' 'Debian 12 or 13' \
    'Documentation/board.rst'; do
    grep -qiF "$want" "${TMPDIR:-/tmp}/readme-head.$$" && ok "first screen: $want" || bad "first screen lacks '$want'"
done
[ "$fail" = 0 ]
