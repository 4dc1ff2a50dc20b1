#!/usr/bin/env bash
# The kernel crate extension (rust/kernel/) never turns a raw pointer to a C
# object into a `&mut` (`&mut *ptr`): a host, its private area or a work item
# may be read by another thread (an SDIO signal handle, the timer's work) at
# the same time, and a `&mut` would assert that nothing else reads it.
# Fields are written through the raw pointer instead (`(*h).f_min = ...`).
set -euo pipefail
cd "$(dirname "$0")/../.."
if hits=$(grep -rnE '&mut \*' rust/kernel/ --include='*.rs' | grep -vE '^[^:]+:[0-9]+:\s*//'); then
    echo "rust/kernel/ makes a \`&mut\` from a raw pointer:" >&2
    echo "$hits" >&2
    exit 1
fi
echo "no \`&mut *\` in rust/kernel/"
