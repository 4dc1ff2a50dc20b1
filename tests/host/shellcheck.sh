#!/usr/bin/env bash
# shellcheck (installed by make setup) on every script a board owner runs, on
# the board or as root on the build machine (run-all: host-shellcheck; a few
# seconds): no finding at all, at shellcheck's default level (style and
# info too).  Files it sources are followed (.shellcheckrc: next to the
# script that sources them).
set -uo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 1
command -v shellcheck > /dev/null || { echo "shellcheck missing (make setup installs it)"; exit 1; }
# on the board: switch-driver, bench-board (and board-region.sh), first-contact, board-report, check-board-config, sdhc-pack-probe,
# the initramfs hook, the board kit's installer and uInitrd hook, DKMS's build (dkms-make.sh,
# build-module.sh and what it sources); as root on the build machine: setup, dkms-source,
# install, fresh-machine-check, board-kit
SCRIPTS="scripts/switch-driver scripts/bench-board scripts/board-region.sh scripts/first-contact scripts/board-report scripts/check-board-config scripts/sdhc-pack-probe
contrib/initramfs-tools/hooks/meson_mx_sdhc_rs dkms/dkms-make.sh scripts/build-module.sh scripts/common.sh
scripts/toolchain.sh scripts/setup.sh scripts/apt-suites.sh scripts/dkms-source scripts/install-module.sh
scripts/fresh-machine-check scripts/board-kit scripts/board-kit-install contrib/kernel/zz-meson-sdhc-uinitrd"
fail=0
for f in $SCRIPTS; do
    [ -f "$f" ] || { echo "  FAILED: $f is gone (update this list)"; fail=1; continue; }
    if out=$(shellcheck "$f" 2>&1); then
        echo "  ok: $f"
    else
        echo "  FAILED: $f:"; echo "$out" | sed 's/^/    | /'
        fail=1
    fi
done
echo "shellcheck $(shellcheck --version | sed -n 's/^version: //p')"
[ "$fail" = 0 ] || { echo "shellcheck: FAILED"; exit 1; }
echo "shellcheck: all clean"
