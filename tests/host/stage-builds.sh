#!/usr/bin/env bash
# Every patch of the upstream series builds (run-all: host-stage-builds): the driver as the
# port of the C driver and with each prefix of Kbuild's FEATURES, as scripts/make-series
# writes its patches, built out of tree with the test knobs and rustc's warnings as errors
# (scripts/stage-builds with STAGE_BUILD=build).  The last stage, every feature, is the
# module itself, which host-rust-check builds with clippy.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
read -r -a features <<<"$(sed -n 's/^FEATURES *:= *//p' "$TOP/Kbuild")"
[ ${#features[@]} -gt 0 ] || { echo "stage-builds: Kbuild has no FEATURES"; exit 1; }
stages=(port "${features[@]:0:${#features[@]}-1}")
TEST_KNOBS=1 STAGE_BUILD=build "$TOP/scripts/stage-builds" "${stages[@]}"
echo "stage-builds: ${#stages[@]} stages before the whole driver build clean: ${stages[*]}"
