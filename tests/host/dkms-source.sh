#!/usr/bin/env bash
# scripts/dkms-source run as root from a checkout another user owns (run-all:
# host-dkms-source; no board, about a second): DKMS builds from the tree as
# root at every kernel install, so in it nothing may belong to that user,
# nothing may be writable by group or others (the checkout has a file mode
# 0666 and a folder 0777), and no link may lead back into the user's files
# (the checkout has a link to a file of theirs: its content is copied).
# Without root the ownership is not checked (said so), the rest is.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/dkms-source.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }

# the checkout: the working tree's files (so that this script's changes count)
mkdir -p "$T/co"
(cd "$TOP" && git ls-files -z | cpio -0 -pdm --quiet "$T/co")
[ -x "$T/co/scripts/dkms-source" ] || { bad "no checkout copy"; exit 1; }
chmod 0666 "$T/co/probe.rs"
chmod 0777 "$T/co/rust"
echo '// the user can change this' > "$T/theirs.rs"
ln -s "$T/theirs.rs" "$T/co/rust/linked.rs"
root=0
if [ "$(id -u)" = 0 ]; then
    root=1
    chown -R -h 4242:4242 "$T/co" "$T/theirs.rs"
fi
rc=0
DKMS_VERSION=9.9 "$T/co/scripts/dkms-source" "$T/usrsrc" > "$T/out" 2>&1 || rc=$?
d=$T/usrsrc/meson_mx_sdhc_rs-9.9
if [ "$rc" != 0 ] || [ "$(tail -1 "$T/out")" != "$d" ]; then
    bad "dkms-source: exit $rc: $(cat "$T/out")"; exit 1
fi
[ -f "$d/dkms.conf" ] && [ -x "$d/dkms-make.sh" ] && [ -f "$d/probe.rs" ] && [ -f "$d/scripts/build-module.sh" ] &&
    ok "the tree has dkms.conf, dkms-make.sh, the sources, the build scripts" || bad "the tree misses files: $(ls "$d")"
if [ "$root" = 1 ]; then
    o=$(find "$d" ! -uid 0 -o ! -gid 0 | awk 'NR <= 3')
    [ -z "$o" ] && ok "every file is root's" || bad "files of the checkout's owner: $o"
else
    echo "  (not root: the ownership is not checked)"
fi
w=$(find "$d" -perm /022 ! -type l | awk 'NR <= 3')
[ -z "$w" ] && ok "nothing writable by group or others" || bad "writable by group or others: $w"
l=$(find "$d" -type l | awk 'NR <= 3')
[ -z "$l" ] && ok "no links (the checkout's link copied as a file)" || bad "links in the tree: $l"
cmp -s "$d/rust/linked.rs" "$T/theirs.rs" && ok "the linked file's content is there" || bad "rust/linked.rs is not the linked file's content"
rc=0
DKMS_VERSION=../x "$T/co/scripts/dkms-source" "$T/usrsrc" > "$T/out" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "DKMS_VERSION '../x'" "$T/out" && ok "DKMS_VERSION=../x refused" || bad "DKMS_VERSION=../x: exit $rc: $(cat "$T/out")"
[ "$fail" = 0 ] || { echo "dkms-source: FAILED"; exit 1; }
echo "dkms-source: all passed"
