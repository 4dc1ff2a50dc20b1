#!/usr/bin/env bash
# The folder removal of make fresh-machine-check (scripts/common.sh:
# mounted_under, remove_tree; run-all: host-tree-removal; about a second).
# Its root has /proc, /sys, /dev and /dev/pts mounted inside; a folder whose
# path has a space shows in mountinfo with the space as \040, which a plain
# text search misses, and rm -rf would then empty the host's /dev.  Here:
#   1. a mountinfo line with \040 is found under the folder with a space;
#   2. with a real mount of another file system inside such a folder (a
#      tmpfs as the root's dev/, in a private mount namespace, unshare -m;
#      skipped, said so, where that is not allowed): remove_tree refuses
#      it, and a removal whose check missed the mount (an empty mountinfo)
#      stops at the file system boundary (--one-file-system): the file on
#      the mounted file system survives;
#   3. fresh-machine-check removes folders only through remove_tree.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/tree-removal.XXXXXX")
trap 'rm -rf --one-file-system "$T"' EXIT
fail=0
ok() { echo "  ok: $*"; }
bad() { echo "  FAILED: $*"; fail=1; }
log() { echo "    log: $*"; }
eval "$(sed -n '/^mounted_under() {/,/^}/p; /^remove_tree() {/,/^}/p' "$TOP/scripts/common.sh")"

D="$T/fresh debian 12"
printf '36 25 0:5 / %s rw,nosuid - devtmpfs udev rw\n' "$(echo "$D/root/dev" | sed 's/ /\\040/g')" > "$T/mountinfo"
printf '37 25 0:6 / /tmp/other rw - tmpfs tmpfs rw\n' >> "$T/mountinfo"
m=$(mounted_under "$D" "$T/mountinfo")
[ "$m" = "$D/root/dev" ] && ok "1. a mount below a path with spaces (\\040 in mountinfo): found" ||
    bad "1. mounted_under '$D': '$m'"
[ -z "$(mounted_under "$T/fresh" "$T/mountinfo")" ] && ok "1. a sibling folder's prefix is not below it" || bad "1. a prefix matched"

if unshare -m --propagation private true 2>/dev/null; then
    mkdir -p "$D/root/dev"
    : > "$T/empty-mountinfo"
    r=$(unshare -m --propagation private bash -c '
        eval "$(sed -n "/^mounted_under() {/,/^}/p; /^remove_tree() {/,/^}/p" "$1/scripts/common.sh")"
        log() { :; }
        mount -t tmpfs none "$2/root/dev" 2>/dev/null || { echo nomount; exit 0; }
        echo keep > "$2/root/dev/keep"
        if remove_tree "$2"; then echo removed; else echo refused; fi
        remove_tree "$2" "$3" 2>/dev/null || true
        [ -f "$2/root/dev/keep" ] && echo kept || echo lost
        umount "$2/root/dev"' _ "$TOP" "$D" "$T/empty-mountinfo" | tr '\n' ' ')
    case "$r" in
    nomount*) echo "  (bind mounts not allowed here: 2. skipped)" ;;
    "refused kept ") ok "2. a mount inside: refused; a removal that missed it stopped at the file system boundary" ;;
    *) bad "2. a mount inside the folder: $r" ;;
    esac
else
    echo "  (no private mount namespace here: 2. skipped)"
fi

plain=$(grep -nE 'rm -[a-z]*r[a-z]* ' "$TOP/scripts/fresh-machine-check" | grep -v 'remove_tree' || true)
[ -z "$plain" ] && grep -q 'remove_tree "$DIR"' "$TOP/scripts/fresh-machine-check" &&
    ok "3. fresh-machine-check removes folders with remove_tree only" || bad "3. fresh-machine-check: $plain"
[ "$fail" = 0 ] || { echo "tree-removal: FAILED"; exit 1; }
echo "tree-removal: all passed"
