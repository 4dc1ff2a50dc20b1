"""The driver's features as they land one patch after another in the upstream series.

The driver's sources are the whole driver: the out-of-tree module is built with every
feature on (Kbuild: `--cfg 'feature="x"'` for each name of its `FEATURES :=` line).  Code
that belongs to one feature carries `#[cfg(feature = "x")]`; the little code a driver
without the feature has instead carries `#[cfg(not(feature = "x"))]`.  In `module!` (whose
parameters take no attributes) a comment line `// cfg(feature = "x")` does the same for the
parameter after it.

`strip(text, enabled)` gives a source file as it is with the features `enabled` on: every
feature condition is evaluated, the attribute (or comment) goes, and an item, statement,
field, argument or match arm whose condition is false goes with the doc comments,
attributes and plain comments directly above it.  Conditions on anything other than
features (`CONFIG_...`, `test`) are left alone; a condition that mixes the two is refused.
"""

import re

ATTR = re.compile(r"^(\s*)#\[cfg\((.*)\)\]\s*$")
COMMENT = re.compile(r"^(\s*)// cfg\((.*)\)\s*$")
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
    while i < len(lines):
        ln = lines[i]
        j = 0
        ended = None
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
            elif depth == 0 and c in ";,":
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


def _comment_item(lines, start):
    """A comment line and the rest of its paragraph, or a list item of a comment and its
    continuation lines."""
    m = re.match(r"^(\s*//[!/]?)( *)(.*)$", lines[start])
    lead, indent, text = m.group(1), len(m.group(2)), m.group(3)
    bullet = re.match(r"[-*] ", text)
    end = start
    while end + 1 < len(lines):
        n = re.match(r"^(\s*//[!/]?)( *)(.*)$", lines[end + 1])
        if not n or n.group(1) != lead or not n.group(3).strip():
            break
        deeper = len(n.group(2)) > indent
        if bullet and not deeper:
            break
        if not bullet and not deeper and re.match(r"[-*] ", n.group(3)):
            break
        end += 1
    return end


def _attached_above(lines, at):
    """The first line of the doc comments, attributes and plain comments right above lines[at]
    (not the module's `//!` docs)."""
    first = at
    while first > 0:
        s = lines[first - 1].strip()
        if s.startswith(("///", "#[")) or (s.startswith("//") and not s.startswith("//!")
                                           and not COMMENT.match(lines[first - 1])):
            first -= 1
        else:
            break
    return first


def strip(text, enabled):
    """`text` with the features `enabled` on and every other feature off."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        m = ATTR.match(ln) or COMMENT.match(ln)
        if not m or not features_of(m.group(2)):
            out.append(ln)
            i += 1
            continue
        keep = _eval(_parse(m.group(2)), enabled)
        if keep:
            i += 1
            if i < len(lines) and lines[i].strip() == "{" and ATTR.match(ln):
                # A block that holds a feature's statements: its statements, one level out.
                end = _scan(lines, i)
                body = lines[i + 1:end]
                lines[i:end + 1] = [b[4:] if b.startswith(" " * 4) else b for b in body]
            continue
        # Drop what is attached above (already in out), this line and the item below.
        k = i + 1
        if COMMENT.match(ln) and k < len(lines) and lines[k].lstrip().startswith("//"):
            # A directive for the comment line after it (and its continuation lines).
            i = _comment_item(lines, k) + 1
            continue
        while k < len(lines) and (ATTR.match(lines[k]) or COMMENT.match(lines[k])
                                  or lines[k].strip().startswith("#[")
                                  or lines[k].strip().startswith("///")):
            k += 1
        if k >= len(lines):
            raise CfgError("cfg at the end of the file")
        end = _scan(lines, k)
        del out[_attached_above(out, len(out)):]
        i = end + 1
    return "\n".join(out)


def features_in(text):
    """Every feature name a cfg of `text` mentions."""
    names = set()
    for ln in text.split("\n"):
        m = ATTR.match(ln) or COMMENT.match(ln)
        if m:
            names.update(features_of(m.group(2)))
    return names


def kbuild_features(kbuild_text):
    """The features of Kbuild's `FEATURES :=` line, in the order the series adds them."""
    m = re.search(r"^FEATURES\s*:=\s*(.*)$", kbuild_text, re.M)
    if not m:
        raise CfgError("Kbuild has no FEATURES := line")
    return m.group(1).split()
