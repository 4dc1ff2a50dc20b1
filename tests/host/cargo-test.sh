#!/usr/bin/env bash
# Unit tests of the pure logic on the host (run-all: host-cargo-test).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
exec cargo test --offline -q --manifest-path "$TOP/tests/host/Cargo.toml"
