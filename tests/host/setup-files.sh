#!/usr/bin/env bash
# What make setup writes and installs, without running it (run-all:
# host-setup-files; no network, under a second).  The apt files it adds
# (scripts/apt-suites.sh, apt_suite_files), on files in a temporary
# folder: Debian 12 gets trixie pinned to 100 and trixie-backports to 90
# (below trixie: during an upgrade to Debian 13, before setup runs again,
# the release is not tied with its backports, which would let apt upgrade
# every package backports has, the kernel too); a second run changes
# nothing; after an upgrade to Debian 13 the Debian 12 pin file is replaced
# whole by 13's (trixie-backports alone, at 90) and the sources file too; a
# pin file edited by hand is put back; setup installs linux-source-7.3 (in
# trixie-backports alone) by name.  The Python packages: every pip
# install in setup.sh is hash-checked (--require-hashes, -r a file of
# scripts/requirements/), and every line there is NAME==VERSION with hashes.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/setup-files.XXXXXX")
trap 'rm -rf "$T"' EXIT
log() { :; }
# shellcheck source=../../scripts/apt-suites.sh
. "$TOP/scripts/apt-suites.sh"
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
S=$T/src.sources P=$T/pin
M=http://mirror.invalid/debian
pins() { sed -n 's/^Pin: release n=//p' "$P" | tr '\n' ' '; }
priorities() { sed -n 's/^Pin-Priority: //p' "$P" | tr '\n' ' '; }

rc=0; apt_suite_files 12 bookworm "$M" "$S" "$P" || rc=$?
[ "$rc" = 0 ] && [ "$(pins)" = "trixie trixie-backports " ] && [ "$(priorities)" = "100 90 " ] &&
    grep -q '^Suites: trixie trixie-backports$' "$S" && grep -q '^Suites: bookworm$' "$S" &&
    ok "Debian 12: trixie at 100, trixie-backports at 90 (below it), an apt-get update due" ||
    bad "Debian 12: status $rc, pins '$(pins)' priorities '$(priorities)': $(cat "$P" "$S")"
cp "$P" "$T/pin.12"
rc=0; apt_suite_files 12 bookworm "$M" "$S" "$P" || rc=$?
[ "$rc" = 1 ] && cmp -s "$P" "$T/pin.12" && ok "Debian 12 again: nothing changed, no update due" ||
    bad "Debian 12 again: status $rc"
rc=0; apt_suite_files 13 trixie "$M" "$S" "$P" || rc=$?
[ "$rc" = 0 ] && [ "$(pins)" = "trixie-backports " ] && [ "$(priorities)" = "90 " ] &&
    grep -q '^Suites: trixie-backports$' "$S" && grep -q '^Suites: trixie bookworm$' "$S" &&
    ok "upgraded to Debian 13: the pin file is 13's (trixie-backports alone), the sources too" ||
    bad "upgraded to Debian 13: status $rc, pins '$(pins)' (trixie itself must not be pinned): $(cat "$P")"
printf 'Package: linux-image-*\nPin: release n=trixie-backports\nPin-Priority: 990\n' >> "$P"
apt_suite_files 13 trixie "$M" "$S" "$P" || true
[ "$(priorities)" = "90 " ] && ! grep -q 990 "$P" && ok "a pin file edited by hand: put back" || bad "an edited pin file kept: $(cat "$P")"
grep -qF 'apt-get install -y -qq --no-install-recommends "linux-source-$KVER_SERIES"' "$TOP/scripts/setup.sh" &&
    ok "setup.sh installs linux-source (only in trixie-backports, at 90) by name" || bad "setup.sh: linux-source not installed by name"
grep -q 'apt_suite_files "$(debian_release)" "$codename" "$uri" "$SRC" "$PIN"' "$TOP/scripts/setup.sh" &&
    ok "setup.sh writes its apt files with apt_suite_files" || bad "setup.sh does not use apt_suite_files"

# pip: every install hash-checked, from a requirements file
n=0
while IFS= read -r l; do
    n=$((n + 1))
    case "$l" in
    *--require-hashes*' -r '*) ;;
    *) bad "setup.sh installs without hashes: $l" ;;
    esac
done < <(grep -E -- '-m pip install' "$TOP/scripts/setup.sh" | grep -v '^ *#')
[ "$n" -ge 1 ] && ok "setup.sh: $n pip install lines, each --require-hashes -r FILE" || bad "no pip install in setup.sh?"
for r in "$TOP"/scripts/requirements/*.txt; do
    # one requirement per logical line (continued with \)
    reqs=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$r" | grep -v '^ *#' | grep -v '^ *$')
    badl=$(echo "$reqs" | grep -vE '^[A-Za-z0-9._-]+==[A-Za-z0-9.+!-]+( +--hash=sha256:[0-9a-f]{64})+ *$' || true)
    [ -z "$badl" ] && ok "$(basename "$r"): $(echo "$reqs" | wc -l) packages, each NAME==VERSION with sha256 hashes" ||
        bad "$(basename "$r"): not pinned with hashes: $badl"
done
grep -qE '^ *install_pkgs( [^ ]+)* shellcheck( |$)' "$TOP/scripts/setup.sh" && ok "setup.sh installs shellcheck" || bad "setup.sh does not install shellcheck"
[ "$fail" = 0 ] || { echo "setup-files: FAILED"; exit 1; }
echo "setup-files: all passed"
