#!/usr/bin/env bash
# The driver's modules import each other without a cycle, and the feature
# modules (the bounce buffer and its submodules, the SDIO card interrupt, the
# deadline, the statistics) never reach the controller's state nor import
# each other (run-all: host-module-graph).  scripts/module-graph --check parses every driver
# file's imports (`use crate::...` trees, grouped ones expanded, and
# `crate::x::` / `super::` paths in code; comments left out) into the module
# graph and prints each cycle, each feature module that reaches
# `controller` and each that imports another, with the file:line of every
# import on the way.
# `make module-graph` prints the graph.
#
# Then the check is shown to fail: on copies of the driver's files with a
# cycle, a feature module naming the controller in code, and one importing
# it through a grouped `use`; and to pass on a copy where only a comment
# names the controller.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
fail() { echo "module-graph: $*"; exit 1; }

"$TOP/scripts/module-graph" --check "$TOP" || fail "the driver's modules break the rule (above)"
"$TOP/scripts/module-graph" "$TOP" > /dev/null || fail "printing the graph failed"

T=$(mktemp -d "${TMPDIR:-/tmp}/module-graph.XXXXXX")
trap 'rm -rf "$T"' EXIT

copy() { # name: a fresh copy of the driver's files in $T/name
    mkdir -p "$T/$1"
    cp "$TOP"/*.rs "$T/$1/"
    cp -r "$TOP/bounce" "$T/$1/"
}
expect_fail() { # name pattern...: the check fails on $T/name, printing each pattern
    local out name=$1 p
    shift
    if out=$("$TOP/scripts/module-graph" --check "$T/$name"); then
        fail "$name: the check passed"
    fi
    for p in "$@"; do
        grep -qF -- "$p" <<< "$out" || fail "$name: no \"$p\" in: $out"
    done
}

# A cycle through a grouped, nested `use crate::{...}`: hw imports logic.
copy cycle
printf 'use crate::{\n    hw::{\n        CmdInfo, //\n    },\n    regs, //\n};\n' >> "$T/cycle/logic.rs"
expect_fail cycle "cycle: " "hw -> logic" "logic.rs:"

# A feature module naming the controller in a path in code.
copy code-path
printf 'fn _f(_: &crate::controller::Sdhc) {}\n' >> "$T/code-path/deadline.rs"
expect_fail code-path "feature module deadline reaches controller: deadline -> controller"

# A bounce submodule importing it through a grouped `use`.
copy grouped
printf 'use crate::{\n    controller::{\n        Sdhc, //\n    },\n    logic, //\n};\n' >> "$T/grouped/bounce/slots.rs"
expect_fail grouped "feature module bounce::slots reaches controller"

# A feature module reaching it through another module.
copy indirect
printf 'use crate::drain::DIRECT_HOLD_MS;\n' >> "$T/indirect/stats.rs"
expect_fail indirect "feature module stats reaches controller: stats -> drain -> controller"

# A feature module importing another one.
copy feature
printf 'use crate::bounce::Buffers;\n' >> "$T/feature/stats.rs"
expect_fail feature "feature module stats imports feature module bounce  (stats.rs:"

# A comment is no import.
copy comment
# shellcheck disable=SC2016 # the backquotes are Rust's, not the shell's
printf '// use crate::controller::Sdhc;\n/// [`crate::controller::Sdhc`]\nconst _C: u32 = 0;\n' >> "$T/comment/sdio_irq.rs"
"$TOP/scripts/module-graph" --check "$T/comment" || fail "a comment counted as an import"
echo "module-graph: ok"
