# meson_mx_sdhc_rs: out-of-tree Rust MMC host driver for the Amlogic Meson MX SDHC.
#
#   make setup    install the toolchain and sources (Debian, as root)
#   make kernel   the test kernel (cached by a hash of its inputs)
#   make kernel-bench  the same without the run-time checkers, for make bench
#   make qemu     qemu-system-arm with our meson-mx-sdhc model (cached)
#   make guest    the guest initramfs (busybox, fio, modules, test scripts)
#   make guest-bench   the same for the bench kernel
#   make          the module (against KDIR, default: the test kernel)
#   make check    rustfmt and clippy
#   make test     everything above, then the test suite on the emulated board
#   make bench    C driver vs Rust driver with fio on the emulated board
#   make series   the upstream patch series against Linux 7.3 (build/series)
#   make series-test  the series applied with git am, checked and built patch by
#                 patch, the in-tree module tested on the emulated board

SHELL := /bin/bash
CACHE ?= $(or $(MESON_SDHC_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/meson-mx-sdhc-rs)
export MESON_SDHC_CACHE := $(CACHE)

.PHONY: all module setup kernel kernel-bench qemu guest guest-bench check test bench series series-test clean

all: module

module:
	@scripts/build-module.sh

setup:
	@scripts/setup.sh

kernel:
	@scripts/build-kernel.sh

kernel-bench:
	@KERNEL_VARIANT=bench scripts/build-kernel.sh

qemu:
	@scripts/build-qemu.sh

guest: module
	@scripts/build-guest.sh

guest-bench:
	@KDIR=$(CACHE)/kernel-bench MODDIR=$(CURDIR)/build/module-bench scripts/build-module.sh
	@KERNEL_VARIANT=bench scripts/build-guest.sh

check:
	@scripts/build-module.sh check

test: setup kernel qemu
	@$(MAKE) --no-print-directory guest
	@tests/run-all

bench: setup kernel-bench qemu
	@$(MAKE) --no-print-directory guest-bench
	@scripts/bench

series:
	@scripts/make-series

series-test: setup kernel qemu
	@scripts/series-test

clean:
	@scripts/build-module.sh clean
	rm -rf build
