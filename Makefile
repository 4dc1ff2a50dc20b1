# meson_mx_sdhc_rs: out-of-tree Rust MMC host driver for the Amlogic Meson MX SDHC.
#
#   make setup    install the toolchain and sources (Debian, as root)
#   make kernel   the test kernel (cached by a hash of its inputs)
#   make qemu     qemu-system-arm with our meson-mx-sdhc model (cached)
#   make guest    the guest initramfs (busybox, fio, modules, test scripts)
#   make          the module (against KDIR, default: the test kernel)
#   make check    rustfmt and clippy
#   make test     everything above, then the test suite on the emulated board
#   make bench    C driver vs Rust driver with fio on the emulated board

SHELL := /bin/bash
CACHE ?= $(or $(MESON_SDHC_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/meson-mx-sdhc-rs)
export MESON_SDHC_CACHE := $(CACHE)

.PHONY: all module setup kernel qemu guest check test bench clean

all: module

module:
	@scripts/build-module.sh

setup:
	@scripts/setup.sh

kernel:
	@scripts/build-kernel.sh

qemu:
	@scripts/build-qemu.sh

guest: module
	@scripts/build-guest.sh

check:
	@scripts/build-module.sh check

test: setup kernel qemu
	@$(MAKE) --no-print-directory guest
	@tests/run-all

bench: setup kernel qemu
	@$(MAKE) --no-print-directory guest
	@scripts/bench

clean:
	@scripts/build-module.sh clean
	rm -rf build
