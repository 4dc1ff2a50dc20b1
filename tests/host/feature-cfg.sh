#!/usr/bin/env bash
# scripts/feature_cfg.py, the evaluation of the driver's feature conditions that writes each
# patch of the series (run-all: host-feature-cfg): items, statements, fields and match arms
# under a condition that holds keep everything but the attribute; under one that does not they
# go with their docs and comments; a block of statements loses its braces; a `// cfg(...)`
# comment applies to the doc paragraph, list item or macro entry after it; a condition that
# mixes features and other cfgs, or an item that never ends, is refused.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
python3 - "$TOP/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import feature_cfg as fc

SRC = '''\
//! A module.
// cfg(feature = "b")
//! - a list item of b, wrapped
//!   over two lines;
//! - a list item of everyone.

use kernel::prelude::*;
#[cfg(feature = "a")]
use crate::a::Thing;

/// Doc of the struct.
struct S {
    /// Field of a.
    #[cfg(feature = "a")]
    #[pin]
    a: u32,
    c: u32,
}

impl<T, E> Tr<T> for Result<T, E> {
    fn f(&self) {
        // Comment of a's statement.
        #[cfg(feature = "a")]
        self.a();
        #[cfg(not(feature = "a"))]
        self.c();
        #[cfg(feature = "b")]
        {
            let x = "{ not a brace }";
            g(x);
        }
        #[cfg(all(feature = "a", feature = "b"))]
        if x {
            y();
        } else {
            z();
        }
        m(match v {
            #[cfg(feature = "a")]
            V::A => 1,
            _ => 2,
        });
    }
}

module! {
    params: {
        // cfg(feature = "b")
        p: u32 {
            default: 1,
        },
        q: bool {
            default: true,
        },
    },
}
'''

def lines(t):
    return [ln.strip() for ln in t.split("\n") if ln.strip()]

none = fc.strip(SRC, set())
both = fc.strip(SRC, {"a", "b"})
for gone in ("list item of b", "over two lines", "use crate::a::Thing", "Field of a",
             "#[pin]", "a: u32", "Comment of a", "self.a()", "not a brace", "if x",
             "} else {", "z();", "V::A", "p: u32", "default: 1"):
    assert gone not in none, ("kept without the feature", gone, none)
for kept in ("list item of everyone", "c: u32", "self.c();", "_ => 2,", "q: bool",
             "impl<T, E> Tr<T> for Result<T, E> {"):
    assert kept in none, ("lost without the feature", kept)
assert "cfg(" not in both and "self.c()" not in both, both
for kept in ("list item of b", "over two lines", "#[pin]", "self.a();", "V::A => 1,",
             "p: u32 {", "z();"):
    assert kept in both, ("lost with the features", kept, both)
# The block of b loses its braces and one level of indentation.
assert "        let x = \"{ not a brace }\";" in both.split("\n"), both
assert fc.features_in(SRC) == {"a", "b"}
only_a = fc.strip(SRC, {"a"})
assert "if x" not in only_a and "self.a();" in only_a and "not a brace" not in only_a

for bad in ('#[cfg(all(feature = "a", CONFIG_X))]\nfn f() {}\n',
            '#[cfg(feature = "a")]\nfn f() {\n'):
    try:
        fc.strip(bad, set())
    except fc.CfgError as e:
        print("refused:", e)
    else:
        raise SystemExit("accepted %r" % bad)
assert fc.kbuild_features("x := 1\nFEATURES := a b c\n") == ["a", "b", "c"]
print("feature-cfg: %d lines without the features, %d with both, conditions evaluated"
      % (len(lines(none)), len(lines(both))))
PY
