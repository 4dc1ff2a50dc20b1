#!/usr/bin/env bash
# make check as a test: rustfmt (check mode) on our sources and the kernel's
# clippy (CLIPPY=1) over the module, both clean.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/build-module.sh check
