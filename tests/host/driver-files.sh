#!/usr/bin/env bash
# The driver's own files call no C directly (run-all: host-driver-files).
# The driver's files are the crate root and every module it names at the top
# level (`mod x;`: x.rs and x/), which the series places in
# drivers/mmc/host/; the kernel crate's new modules (rust/kernel/, named in
# the root's `mod kernel_ext` block) and the generated bindings (bindings/)
# are not.  In the driver's files, outside comments:
#
#   - no `bindings` at all (no C item, no `use` of the bindings), but the
#     crate root's `mod bindings;`, which declares the out-of-tree stand-in
#     for rust/bindings/ (bindings/mod.rs) and leaves the series with it;
#   - no `unsafe` (no unsafe block, fn, impl or attribute): the registrations
#     that Linux 7.3's kernel crate leaves to the caller's promise (the
#     host's and the interrupt's) are made by kernel::mmc::platform, in the
#     bound device's data, and the host's timer and debugfs files by the
#     host itself.
#
# Everything goes through a safe kernel-crate API; an `unsafe` in a driver
# file fails here.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
ROOT="$TOP/meson_mx_sdhc_rs.rs"
fail() { echo "driver-files: $*"; exit 1; }

files=("$ROOT")
for m in $(sed -n 's/^\(pub\(([a-z]*)\)\? \)\?mod \([a-z0-9_]*\);$/\3/p' "$ROOT"); do
    [ "$m" = bindings ] && continue
    [ -f "$TOP/$m.rs" ] && files+=("$TOP/$m.rs")
    if [ -d "$TOP/$m" ]; then
        while read -r f; do files+=("$f"); done < <(find "$TOP/$m" -name '*.rs' | sort)
    fi
done
[ ${#files[@]} -gt 10 ] || fail "found only ${#files[@]} driver files: is $ROOT read right?"

bad=0
for f in "${files[@]}"; do
    rel=${f#"$TOP"/}
    # Code only: comment lines and trailing comments go (no string in these
    # files holds "//" before the words checked).
    while IFS=: read -r ln text; do
        echo "$rel:$ln: bindings: $text"; bad=1
    done < <(sed 's|//.*||' "$f" | grep -nwE 'bindings' | grep -vxE '[0-9]+:mod bindings;' || true)
    while IFS=: read -r ln text; do
        echo "$rel:$ln: unsafe: $text"; bad=1
    done < <(sed 's|//.*||' "$f" | grep -nwE 'unsafe' || true)
done
[ "$bad" = 0 ] || fail "the driver's files call C or use unsafe (above)"
echo "${#files[@]} driver files: no bindings, no unsafe"
