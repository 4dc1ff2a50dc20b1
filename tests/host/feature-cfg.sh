#!/usr/bin/env bash
# scripts/feature_cfg.py, the evaluation of the driver's feature conditions that writes each
# patch of the series (run-all: host-feature-cfg): items, statements, fields and match arms
# under a condition that holds keep everything but the attribute; under one that does not they
# go with their docs and comments; a block of statements loses its braces; a condition that
# rustfmt wrapped over lines is read as one; a parameter of `module!` goes when the feature
# MODULE_PARAMS names for it is off, and one named in neither MODULE_PARAMS nor PORT_PARAMS is
# refused; so are a condition that mixes features and other cfgs, and an item that never ends.
# An item's `where` clause (bounds ending with commas) does not end the item.
# The crate root's `module!` has a feature, or the port, for every parameter.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
python3 - "$TOP/scripts" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import feature_cfg as fc

fc.MODULE_PARAMS = {"p": "b"}
fc.PORT_PARAMS = frozenset({"q"})

SRC = '''\
//! A module.

use kernel::prelude::*;
#[cfg(feature = "a")]
use crate::a::Thing;
// A comment of the module of a and b.
#[cfg(all(
    feature = "a",
    feature = "b"
))]
mod ab;
#[cfg(not(all(feature = "a", feature = "b")))]
mod not_ab;

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

    /// A function of a with a where clause.
    #[cfg(feature = "a")]
    fn w<'x>(
        x: &'x u32,
    ) -> impl Sized + 'x
    where
        T: 'x,
    {
        in_where_body(x)
    }

    fn after_where() {}
}

module! {
    params: {
        /// A parameter of b.
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
for gone in ("use crate::a::Thing", "Field of a", "A parameter of b", "mod ab;",
             "#[pin]", "a: u32", "Comment of a", "self.a()", "not a brace", "if x",
             "} else {", "z();", "V::A", "p: u32", "default: 1", "with a where clause",
             "T: 'x,", "in_where_body"):
    assert gone not in none, ("kept without the feature", gone, none)
for kept in ("mod not_ab;", "c: u32", "self.c();", "_ => 2,", "q: bool", "fn after_where() {}",
             "impl<T, E> Tr<T> for Result<T, E> {"):
    assert kept in none, ("lost without the feature", kept)
assert "cfg(" not in both and "self.c()" not in both and "not_ab" not in both, both
for kept in ("A comment of the module", "mod ab;", "#[pin]", "self.a();", "V::A => 1,",
             "p: u32 {", "z();"):
    assert kept in both, ("lost with the features", kept, both)
# The block of b loses its braces and one level of indentation.
assert "        let x = \"{ not a brace }\";" in both.split("\n"), both
assert fc.features_in(SRC) == {"a", "b"}
only_a = fc.strip(SRC, {"a"})
assert "if x" not in only_a and "self.a();" in only_a and "not a brace" not in only_a
assert "mod not_ab;" in only_a and "mod ab;" not in only_a
assert [n for n, _, _ in fc.module_params(SRC)] == ["p", "q"]
fc.check_module_params(SRC, ["a", "b"])

unknown = "module! {\n    params: {\n        r: u32 {\n            default: 1,\n        },\n    },\n}\n"
for bad in ('#[cfg(all(feature = "a", CONFIG_X))]\nfn f() {}\n',
            '#[cfg(feature = "a")]\nfn f() {\n', unknown):
    try:
        fc.strip(bad, set())
    except fc.CfgError as e:
        print("refused:", e)
    else:
        raise SystemExit("accepted %r" % bad)
for bad, features in ((SRC.replace("q: bool", "r: bool"), ["a", "b"]), (SRC, ["a"]),
                      (SRC.replace("p: u32", "q: u32"), ["a", "b"])):
    try:
        fc.check_module_params(bad, features)
    except fc.CfgError as e:
        print("refused:", e)
    else:
        raise SystemExit("module! parameters accepted")

# The driver's own crate root: every parameter has a feature of Kbuild's or is the port's.
import importlib
importlib.reload(fc)
top = sys.argv[1] + "/.."
with open(top + "/meson_mx_sdhc_rs.rs") as f:
    root = f.read()
with open(top + "/Kbuild") as f:
    features = fc.kbuild_features(f.read())
fc.check_module_params(root, features)
port = {n for n, _, _ in fc.module_params(fc.strip(root, set()))}
assert port == fc.PORT_PARAMS, "the port's module parameters are %s, not PORT_PARAMS" % sorted(port)
assert fc.kbuild_features("x := 1\nFEATURES := a b c\n") == ["a", "b", "c"]
print("feature-cfg: %d lines without the features, %d with both, conditions evaluated; "
      "%d module parameters, each of a feature" % (len(lines(none)), len(lines(both)),
                                                    len(fc.module_params(root))))
PY
