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
#   - `unsafe` only where Linux 7.3's kernel crate itself makes the caller
#     promise what types cannot express, each with a `// SAFETY:` comment in
#     the three lines above: the "never forgotten" registrations of data that
#     borrows the bound device (`irq::ThreadedRegistration::new`, as tyr and
#     nova call it; the MMC host's and the delayed work's registrations, of
#     the same shape) and the module-global debugfs root
#     (`global_lock!`'s `unsafe(uninit) static` and its `init()`).
#
# Everything else goes through a safe kernel-crate API; a new `unsafe` in a
# driver file fails here.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
ROOT="$TOP/meson_mx_sdhc_rs.rs"
fail() { echo "driver-files: $*"; exit 1; }

# The promises the kernel crate asks for, as the code says them.
ALLOWED='ThreadedRegistration::new\(|\.register\(\)|OwnedDelayedWork::new\(|unsafe\(uninit\) static ROOT|ROOT\.init\(\)'

files=("$ROOT")
for m in $(sed -n 's/^\(pub\(([a-z]*)\)\? \)\?mod \([a-z0-9_]*\);$/\3/p' "$ROOT"); do
    [ "$m" = bindings ] && continue
    [ -f "$TOP/$m.rs" ] && files+=("$TOP/$m.rs")
    if [ -d "$TOP/$m" ]; then
        while read -r f; do files+=("$f"); done < <(find "$TOP/$m" -name '*.rs' | sort)
    fi
done
[ ${#files[@]} -gt 10 ] || fail "found only ${#files[@]} driver files: is $ROOT read right?"

bad=0 n_unsafe=0
for f in "${files[@]}"; do
    rel=${f#"$TOP"/}
    # Code only: comment lines and trailing comments go (no string in these
    # files holds "//" before the words checked).
    while IFS=: read -r ln text; do
        echo "$rel:$ln: bindings: $text"; bad=1
    done < <(sed 's|//.*||' "$f" | grep -nwE 'bindings' | grep -vxE '[0-9]+:mod bindings;' || true)
    while IFS=: read -r ln text; do
        n_unsafe=$((n_unsafe + 1))
        # The call the promise is for: on the line or on the two after it.
        if ! sed -n "${ln},$((ln + 2))p" "$f" | sed 's|//.*||' | grep -qE "$ALLOWED"; then
            echo "$rel:$ln: unsafe outside the kernel crate's registration contracts: $text"; bad=1
            continue
        fi
        from=$((ln > 3 ? ln - 3 : 1))
        sed -n "${from},${ln}p" "$f" | grep -q '// SAFETY:' ||
            { echo "$rel:$ln: unsafe without a // SAFETY: comment above it"; bad=1; }
    done < <(sed 's|//.*||' "$f" | grep -nwE 'unsafe' || true)
done
[ "$bad" = 0 ] || fail "the driver's files call C or use unsafe (above)"
echo "${#files[@]} driver files: no bindings; $n_unsafe unsafe, each a registration contract of the kernel crate with its SAFETY comment"
