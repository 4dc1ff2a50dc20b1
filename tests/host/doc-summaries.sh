#!/usr/bin/env bash
# The doc summaries of the driver's files and of its kernel-crate layer are
# one sentence, and a function's begins with a third-person verb ("Returns
# ...") (run-all: host-doc-summaries; Documentation/rust/coding-guidelines.rst:
# "The first paragraph must be a single sentence").  scripts/doc-summaries
# --check measures them (its --help defines "one sentence" and "verb first")
# and fails, naming file:line of each offender, when fewer than 95 % of the
# summaries are one sentence or fewer than 85 % of the function summaries
# begin with a verb; Linux 7.3's tyr driver has 83.7 % and 67.5 % by the same
# measure, nova-core 86.2 % and 68.7 % (Documentation/driver.rst, "Building").
#
# Then the check is shown to fail, with the offender's file:line, on files
# with a summary of two sentences, one joined by ';', one joined by ':', one
# without a full stop and a function summary that is a noun phrase; and to
# pass on a parenthesis holding a ':', an abbreviation and a second
# paragraph.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"
fail() { echo "doc-summaries: $*"; exit 1; }

files=(./*.rs)
files=("${files[@]#./}")
scripts/doc-summaries --check --min-sentence 95 --min-verb 85 \
    "${files[@]}" sdio logic bounce stats rust/kernel ||
    fail "the driver's doc summaries are below the minimum (above)"

T=$(mktemp -d "${TMPDIR:-/tmp}/doc-summaries.XXXXXX")
trap 'rm -rf "$T"' EXIT

expect_fail() { # file pattern...: the check fails on $T/file, printing each pattern
    local out f=$1 p
    shift
    if out=$(scripts/doc-summaries --check "$T/$f"); then
        fail "$f: the check passed: $out"
    fi
    for p in "$@"; do
        grep -qF -- "$p" <<< "$out" || fail "$f: no \"$p\" in: $out"
    done
}

cat > "$T/two.rs" << 'EOF'
//! A module.

/// The size. It is in bytes.
const A: u32 = 0;
EOF
expect_fail two.rs "two.rs:3: const: more than one sentence" "one sentence 1 (50.0 %)"

cat > "$T/semicolon.rs" << 'EOF'
/// The size in bytes; 0 for none.
const A: u32 = 0;
EOF
expect_fail semicolon.rs "semicolon.rs:1: const: a ';' joins clauses"

cat > "$T/colon.rs" << 'EOF'
struct S {
    /// The size: in bytes.
    size: u32,
}
EOF
expect_fail colon.rs "colon.rs:2: field: a ':' joins clauses"

cat > "$T/stop.rs" << 'EOF'
/// The size in bytes
const A: u32 = 0;
EOF
expect_fail stop.rs "stop.rs:1: const: no full stop at the end"

cat > "$T/noun.rs" << 'EOF'
/// Returns the size.
fn a() -> u32 {
    0
}

/// The size in bytes.
#[inline]
pub(crate) fn b() -> u32 {
    0
}
EOF
expect_fail noun.rs "noun.rs:6: fn: no verb first: The size in bytes." "fn 2, verb first 1 (50.0 %)"

cat > "$T/good.rs" << 'EOF'
//! The driver's state (`struct x`, one per device).
//!
//! More: as many sentences as it takes. Here too; and here.

/// The size of the buffer (0: none), e.g. 512 bytes.
const A: u32 = 0;

/// Gets the size, i.e. [`A`].
///
/// Why: because.
fn size() -> u32 {
    A
}
EOF
out=$(scripts/doc-summaries --check "$T/good.rs") || fail "good.rs: the check failed: $out"
[ "$out" = "items 3, one sentence 3 (100.0 %), fn 1, verb first 1 (100.0 %)" ] ||
    fail "good.rs: $out"
echo "doc-summaries: ok"
