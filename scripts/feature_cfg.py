"""The driver's features as they land one patch after another in the upstream series.

The driver's sources are the whole driver: the out-of-tree module is built with every
feature on (Kbuild: `--cfg 'feature="x"'` for each name of its `FEATURES :=` line).  Code
that belongs to one feature carries `#[cfg(feature = "x")]`; what a driver without the
feature has instead (a stub of the same name whose methods do nothing) carries
`#[cfg(not(feature = "x"))]`.  The driver keeps these conditions on items (a function, an
impl, a type, a module, a `use`, a field): none is inside a function body (run-all:
host-driver-files), so a stage differs from the next at item and file boundaries.  A
feature's code may use the features before it in FEATURES without a condition: no stage has
it without them.

`module!` takes no attributes: MODULE_PARAMS names the feature of each of its parameters,
and a parameter that is neither there nor in PORT_PARAMS is refused.

`strip(text, enabled)` gives a source file as it is with the features `enabled` on: every
feature condition is evaluated, the attribute goes, and an item, statement, field, argument
or match arm whose condition is false goes with the doc comments, attributes and plain
comments directly above it; so does a parameter of `module!` whose feature is off.
Conditions on anything other than features (`CONFIG_...`, `test`) are left alone; a
condition that mixes the two is refused.
"""

import re

# The parameters of the crate root's `module!` and the feature each belongs to.
MODULE_PARAMS = {
    "max_dma_size": "bounce",
    "bounce_size": "bounce",
    "max_segs": "bounce",
    "bounce_cached": "bounce",
    "skip_clean_invalidate": "bounce",
    "dram_write_check": "bounce",
    "double_buffer": "double_buffer",
    "sdio_irq": "sdio_irq",
}
# The parameters of the port of the C driver: what it does differently from the C driver where
# the silicon is unknown (the C driver has none).
PORT_PARAMS = frozenset()

ATTR = re.compile(r"^(\s*)#\[cfg\((.*)\)\]\s*$")
MODULE_MACRO = re.compile(r"^module! \{\s*$")
PARAMS_BLOCK = re.compile(r"^(\s*)params: \{\s*$")
PARAM_ENTRY = re.compile(r"^\s*([a-z0-9_]+): [A-Za-z0-9_]+ \{\s*$")
FEATURE_TERM = re.compile(r'feature\s*=\s*"([a-z0-9_]+)"')
COMBINATOR = re.compile(r"(not|all|any)\s*\(")
RAW_STRING = re.compile(r'(?:b|c)?r(#*)"')
CHAR_LITERAL = re.compile(r"'(\\.|[^\\'])'")


class CfgError(Exception):
    pass


def _parse(expr):
    """A cfg predicate as nested tuples: ("feature", name), ("not", p), ("all"|"any", [p])."""
    pos = 0

    def skip():
        nonlocal pos
        while pos < len(expr) and expr[pos].isspace():
            pos += 1

    def pred():
        nonlocal pos
        skip()
        m = FEATURE_TERM.match(expr, pos)
        if m:
            pos = m.end()
            return ("feature", m.group(1))
        m = COMBINATOR.match(expr, pos)
        if not m:
            raise CfgError("cannot read cfg(%s)" % expr)
        pos = m.end()
        args = []
        skip()
        while expr[pos] != ")":
            args.append(pred())
            skip()
            if expr[pos] == ",":
                pos += 1
                skip()
        pos += 1
        if m.group(1) == "not":
            if len(args) != 1:
                raise CfgError("not() takes one predicate: cfg(%s)" % expr)
            return ("not", args[0])
        return (m.group(1), args)

    p = pred()
    skip()
    if pos != len(expr):
        raise CfgError("cannot read cfg(%s)" % expr)
    return p


def _eval(p, enabled):
    if p[0] == "feature":
        return p[1] in enabled
    if p[0] == "not":
        return not _eval(p[1], enabled)
    vals = [_eval(q, enabled) for q in p[1]]
    return all(vals) if p[0] == "all" else any(vals)


def features_of(expr):
    """The feature names a cfg predicate mentions (none: not a feature condition)."""
    names = FEATURE_TERM.findall(expr)
    if names and re.sub(r'feature\s*=\s*"[a-z0-9_]+"|not|all|any|[\s(),]', "", expr):
        raise CfgError("cfg(%s) mixes features with other conditions" % expr)
    return names


def _scan(lines, start):
    """The index of the last line of the item that starts at lines[start]."""
    depth = 0
    i = start
    in_block_comment = False
    # In a `where` clause, whose bounds end with commas at depth 0 (until its `{` or `;`).
    in_where = False
    while i < len(lines):
        ln = lines[i]
        j = 0
        ended = None
        if depth == 0 and re.match(r"\s*where\b", ln) and not in_block_comment:
            in_where = True
        while j < len(ln):
            c = ln[j]
            if in_block_comment:
                if ln.startswith("*/", j):
                    in_block_comment = False
                    j += 2
                    continue
                j += 1
                continue
            if ln.startswith("//", j):
                break
            if ln.startswith("/*", j):
                in_block_comment = True
                j += 2
                continue
            m = RAW_STRING.match(ln, j)
            if m and (j == 0 or not (ln[j - 1].isalnum() or ln[j - 1] == "_")):
                close = '"' + m.group(1)
                k = ln.find(close, m.end())
                if k < 0:
                    raise CfgError("raw string over lines at line %d" % (i + 1))
                j = k + len(close)
                continue
            if c == '"':
                k = j + 1
                while k < len(ln) and ln[k] != '"':
                    k += 2 if ln[k] == "\\" else 1
                if k >= len(ln):
                    raise CfgError("string over lines at line %d" % (i + 1))
                j = k + 1
                continue
            if c == "'":
                m = CHAR_LITERAL.match(ln, j)
                j = m.end() if m else j + 1
                continue
            if c in "([{":
                if c == "{" and depth == 0:
                    in_where = False
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    if i == start:
                        raise CfgError("unbalanced item at line %d" % (i + 1))
                    return i - 1
                if depth == 0 and c == "}":
                    rest = ln[j + 1:].strip()
                    if rest in ("", ",", ";"):
                        nxt = next((x for x in lines[i + 1:] if x.strip()), "")
                        if not nxt.lstrip().startswith("else"):
                            ended = i
            elif depth == 0 and (c == ";" or c == "," and not in_where):
                # Only at the end of a line: a comma inside generics (`impl<T, E>`) is not
                # one that ends an item, and rustfmt puts one item per line.
                rest = ln[j + 1:].strip()
                if not rest or rest.startswith("//"):
                    ended = i
            j += 1
            if ended is not None:
                return ended
        i += 1
    raise CfgError("item from line %d never ends" % (start + 1))


def _attached_above(lines, at):
    """The first line of the doc comments, attributes and plain comments right above lines[at]
    (not the module's `//!` docs)."""
    first = at
    while first > 0:
        s = lines[first - 1].strip()
        if s.startswith(("///", "#[")) or (s.startswith("//") and not s.startswith("//!")):
            first -= 1
        else:
            break
    return first


def _join_cfg_attrs(lines):
    """`lines` with each feature condition that rustfmt wrapped over several lines
    (`#[cfg(not(all(` ... `)))]`) on one line."""
    out = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if not ln.strip().startswith("#[cfg(") or ATTR.match(ln):
            out.append(ln)
            i += 1
            continue
        end = i
        depth = ln.count("(") - ln.count(")")
        while depth > 0 and end + 1 < len(lines):
            end += 1
            depth += lines[end].count("(") - lines[end].count(")")
        joined = "".join([ln.rstrip()] + [x.strip() for x in lines[i + 1:end + 1]])
        joined = re.sub(r",\s*\)", ")", re.sub(r",\s*", ", ", joined))
        if ATTR.match(joined) and FEATURE_TERM.search(joined):
            out.append(joined)
            i = end + 1
        else:
            out.append(ln)
            i += 1
    return out


def module_params(text):
    """The parameters of the `module!` of `text`, in order: a list of (name, first line,
    last line), line indices of `text`; empty without `module!` or its `params`."""
    lines = text.split("\n")
    at = next((i for i, ln in enumerate(lines) if MODULE_MACRO.match(ln)), None)
    if at is None:
        return []
    end = _scan(lines, at)
    block = next((i for i in range(at + 1, end) if PARAMS_BLOCK.match(lines[i])), None)
    if block is None:
        return []
    params = []
    i = block + 1
    while i < end and lines[i].strip() != "},":
        s = lines[i].strip()
        if not s or s.startswith("//"):
            i += 1
            continue
        m = PARAM_ENTRY.match(lines[i])
        if not m:
            raise CfgError("module!: cannot read parameter at line %d: %r" % (i + 1, s))
        last = _scan(lines, i)
        params.append((m.group(1), i, last))
        i = last + 1
    return params


def param_feature(name):
    """The feature of the `module!` parameter `name` (None: the port's), or a refusal."""
    if name in MODULE_PARAMS:
        return MODULE_PARAMS[name]
    if name in PORT_PARAMS:
        return None
    raise CfgError("module! parameter %s is in neither MODULE_PARAMS nor PORT_PARAMS "
                   "(scripts/feature_cfg.py)" % name)


def check_module_params(root_text, features):
    """That every parameter of the crate root's `module!` is in MODULE_PARAMS (with one of
    `features`) or in PORT_PARAMS, and that every name of those is a parameter."""
    names = [name for name, _, _ in module_params(root_text)]
    for name in names:
        feature = param_feature(name)
        if feature is not None and feature not in features:
            raise CfgError("module! parameter %s: feature %s is not in Kbuild's FEATURES"
                           % (name, feature))
    for name in sorted((set(MODULE_PARAMS) | PORT_PARAMS) - set(names)):
        raise CfgError("%s is in MODULE_PARAMS or PORT_PARAMS but not a parameter of module!"
                       % name)


def _strip_params(text, enabled):
    """`text` without the `module!` parameters of features not `enabled`, with the doc
    comments and plain comments above them."""
    lines = text.split("\n")
    for name, first, last in reversed(module_params(text)):
        feature = param_feature(name)
        if feature is not None and feature not in enabled:
            del lines[_attached_above(lines, first):last + 1]
    return "\n".join(lines)


def strip(text, enabled):
    """`text` with the features `enabled` on and every other feature off."""
    lines = _join_cfg_attrs(_strip_params(text, enabled).split("\n"))
    out = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = ATTR.match(ln)
        if not m or not features_of(m.group(2)):
            out.append(ln)
            i += 1
            continue
        keep = _eval(_parse(m.group(2)), enabled)
        if keep:
            i += 1
            if i < len(lines) and lines[i].strip() == "{":
                # A block that holds a feature's statements: its statements, one level out.
                end = _scan(lines, i)
                body = lines[i + 1:end]
                lines[i:end + 1] = [b[4:] if b.startswith(" " * 4) else b for b in body]
            continue
        # Drop what is attached above (already in out), this line and the item below.
        k = i + 1
        while k < len(lines) and (lines[k].strip().startswith("#[")
                                  or lines[k].strip().startswith("///")):
            k += 1
        if k >= len(lines):
            raise CfgError("cfg at the end of the file")
        end = _scan(lines, k)
        del out[_attached_above(out, len(out)):]
        i = end + 1
    return "\n".join(out)


def features_in(text):
    """Every feature name a cfg of `text`, or a `module!` parameter of it, mentions."""
    names = set()
    for ln in _join_cfg_attrs(text.split("\n")):
        m = ATTR.match(ln)
        if m:
            names.update(features_of(m.group(2)))
    for name, _, _ in module_params(text):
        feature = param_feature(name)
        if feature is not None:
            names.add(feature)
    return names


def kbuild_features(kbuild_text):
    """The features of Kbuild's `FEATURES :=` line, in the order the series adds them."""
    m = re.search(r"^FEATURES\s*:=\s*(.*)$", kbuild_text, re.M)
    if not m:
        raise CfgError("Kbuild has no FEATURES := line")
    return m.group(1).split()
