#!/usr/bin/env bash
# The driver's own files call no C directly (run-all: host-driver-files).
# The driver's files are the crate root and every module it names at the top
# level (`mod x;`: x.rs and x/), which the series places in
# drivers/mmc/host/, and the SD card slot driver's files (sdio/); the kernel crate's new modules (rust/kernel/, named in
# the root's `mod kernel_ext` block) and the generated bindings (bindings/)
# are not.  In the driver's files, outside comments:
#
#   - no `bindings` at all (no C item, no `use` of the bindings), but the
#     crate root's `mod bindings;`, which declares the out-of-tree stand-in
#     for rust/bindings/ (bindings/mod.rs) and leaves the series with it;
#   - no `unsafe` (no unsafe block, fn, impl or attribute): the registrations
#     that Linux 7.3's kernel crate leaves to the caller's promise (the
#     host's and the interrupt's) are held by the device's devres
#     (UnregisteredHost::register, kernel::irq::managed), and the host's
#     timer and debugfs files by the host itself.
#
# Everything goes through a safe kernel-crate API; an `unsafe` in a driver
# file fails here.
#
# The driver reads as a driver: no condition (`#[cfg`, `#[cfg_attr`, `cfg!(`)
# inside a function body, and no `// cfg(...)` comment.  No file of the driver
# or of the kernel crate's new modules (rust/kernel/) has a condition on a
# feature (`feature = "x"`): every part of the driver is built, and what a
# module parameter switches is chosen at run time.
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
# The second driver, the SD card slot's: every file under sdio/ (its crate
# root names bindings/ with a #[path] to the one copy).
n=${#files[@]}
while read -r f; do files+=("$f"); done < <(find "$TOP/sdio" -name '*.rs' | sort)
[ $((${#files[@]} - n)) -gt 5 ] || fail "found only $((${#files[@]} - n)) files under sdio/"

bad=0
for f in "${files[@]}"; do
    rel=${f#"$TOP"/}
    # Code only: comment lines and trailing comments go (no string in these
    # files holds "//" before the words checked).
    while IFS=: read -r ln text; do
        echo "$rel:$ln: bindings: $text"; bad=1
    done < <(sed 's|//.*||' "$f" | grep -nwE 'bindings' |
        grep -vxE '[0-9]+:(mod bindings;|#\[path = "\.\./bindings/mod\.rs"\])' || true)
    while IFS=: read -r ln text; do
        echo "$rel:$ln: unsafe: $text"; bad=1
    done < <(sed 's|//.*||' "$f" | grep -nwE 'unsafe' || true)
done
# Conditions inside function bodies, and condition comments.
mapfile -t layer < <(find "$TOP/rust/kernel" -name '*.rs' | sort | sed 's|^|layer:|')
[ ${#layer[@]} -gt 10 ] || fail "found only ${#layer[@]} kernel-crate files under rust/kernel"
python3 - "$TOP" "${files[@]}" "${layer[@]}" <<'PY' || bad=1
import re
import sys

top, files = sys.argv[1], sys.argv[2:]
COND = re.compile(r"#\[cfg(_attr)?\b|\bcfg!\s*\(")
# Anywhere: a condition on a feature.
FEATURE_COND = re.compile(r"(#\[cfg(_attr)?|\bcfg!)\s*\([^\]]*\bfeature\b")
MARKER = re.compile(r"//\s*cfg\s*\(")
FN = re.compile(r"\bfn\s+[A-Za-z_][A-Za-z0-9_]*")


def code_only(text):
    """`text` with comments, strings and character literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or re.match(r'(?:b|c)?r#*"', text[i:i + 8]) and (
                i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(?:b|c)?r(#*)"', text[i:i + 8])
            if m and c != '"':
                close = '"' + m.group(1)
                j = text.find(close, i + m.end())
                j = n if j < 0 else j + len(close)
            else:
                j = i + 1
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            m = re.match(r"'(\\.|[^\\'])'", text[i:i + 4])
            out.append(" " * m.end())
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


bad = 0
nbodies = 0
for path in files:
    layer = path.startswith("layer:")
    path = path.removeprefix("layer:")
    rel = path[len(top) + 1:]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    for k, ln in enumerate(lines):
        if MARKER.search(ln) and re.match(r"\s*//(?![/!])", ln):
            print("%s:%d: cfg comment: %s" % (rel, k + 1, ln.strip()))
            bad = 1
    code = code_only(text)
    # The bodies of functions: from the `{` after `fn name` (before any `;`) to its match.
    spans = []
    for m in FN.finditer(code):
        i = m.end()
        depth = 0
        while i < len(code) and not (code[i] in "{;" and depth == 0):
            depth += code[i] in "([" and 1 or 0
            depth -= code[i] in ")]" and 1 or 0
            i += 1
        if i >= len(code) or code[i] == ";":
            continue
        start, depth = i, 0
        while i < len(code):
            if code[i] == "{":
                depth += 1
            elif code[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        spans.append((start, i))
    nbodies += 0 if layer else len(spans)
    for m in FEATURE_COND.finditer(code):
        line = code.count("\n", 0, m.start())
        print("%s:%d: feature condition: %s" % (rel, line + 1, lines[line].strip()))
        bad = 1
    if layer:
        continue
    seen = set()
    for m in COND.finditer(code):
        if any(a < m.start() < b for a, b in spans):
            line = code.count("\n", 0, m.start())
            if line not in seen:
                seen.add(line)
                print("%s:%d: cfg in a function body: %s" % (rel, line + 1, lines[line].strip()))
                bad = 1
if nbodies < 100:
    print("driver-files: found only %d function bodies: are they read right?" % nbodies)
    bad = 1
sys.exit(bad)
PY
[ "$bad" = 0 ] || fail "the driver's files call C, use unsafe, or hold a condition inside a function body or in a comment, or a driver or kernel-crate file a feature condition (above)"
echo "${#files[@]} driver files: no bindings, no unsafe, no condition in a function body or a comment; no feature condition in them or in ${#layer[@]} kernel-crate files"
