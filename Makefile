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
#   make module-graph  which driver module imports which (scripts/module-graph)
#   make test     everything above, then the test suite on the emulated board
#   make bench    C driver vs Rust driver with fio on the emulated board
#   make series SERIES_BASE=<v7.3 commit>  the upstream series against Linux
#                 7.3, as postings to their own maintainers, in build/series/NN-name/
#                 (series/series: the fixes, clk, debugfs, io and irq, dma,
#                 workqueue, then kernel::mmc and the driver); author: your git
#                 identity
#   make board-kit BOARD=odroidc1|onecloud  the kit for a real board: kernel
#                 package, this module, scripts, on-board installer (board.rst)
#   make series-test  the series applied with git am, checked and built patch by
#                 patch, the in-tree module tested on the emulated board

SHELL := /bin/bash
CACHE ?= $(or $(MESON_SDHC_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/meson-mx-sdhc-rs)
export MESON_SDHC_CACHE := $(CACHE)

.PHONY: all module setup kernel kernel-bench qemu guest guest-bench check module-graph test bench series series-test clean

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
	@TEST_KNOBS=1 MODDIR=$(CURDIR)/build/module-test scripts/build-module.sh
	@scripts/build-guest.sh

guest-bench:
	@KDIR=$(CACHE)/kernel-bench MODDIR=$(CURDIR)/build/module-bench scripts/build-module.sh
	@KERNEL_VARIANT=bench scripts/build-guest.sh

check:
	@scripts/build-module.sh check
	@TEST_KNOBS=1 MODDIR=$(CURDIR)/build/module-test scripts/build-module.sh check

# the driver's module graph and its rule (no cycle, no feature module
# reaching the controller): scripts/module-graph --check, host-module-graph
module-graph:
	@scripts/module-graph
	@scripts/module-graph --check

# The kernel (variant $(1)) and QEMU build side by side: the kernel's Rust
# crates compile one at a time on one core (rustc, one codegen unit), and
# QEMU's build takes the other core meanwhile.  Either failing fails both.
define kernel_and_qemu
	@KERNEL_VARIANT=$(1) scripts/build-kernel.sh & k=$$!; \
	    q=0; scripts/build-qemu.sh || q=$$?; \
	    r=0; wait $$k || r=$$?; [ $$q = 0 ] && [ $$r = 0 ]
endef

test: setup
	$(call kernel_and_qemu,test)
	@$(MAKE) --no-print-directory guest
	@tests/run-all

bench: setup
	$(call kernel_and_qemu,bench)
	@$(MAKE) --no-print-directory guest-bench
	@scripts/bench

series:
	@scripts/make-series

series-test: setup kernel qemu
	@scripts/series-test

clean:
	@scripts/build-module.sh clean
	rm -rf build

# The two commands on a bare Debian (debootstrap minbase, chroot): make setup,
# the builds and a short subset of make test.  DEBIAN=12 or 13.  Not in make
# test (a cold setup and kernel build; Documentation/make-targets.rst has its time).
.PHONY: fresh-machine-check
fresh-machine-check:
	@DEBIAN=$(or $(DEBIAN),12) scripts/fresh-machine-check

# Board owners' paths (Documentation/board.rst)
.PHONY: install check-builds dkms-source

# modules_install into INSTALL_MOD_PATH (default /) for KDIR's kernel
install: module
	@scripts/install-module.sh

# the module with -Werror against multi_v7_defconfig+RUST and the test
# configuration without DEBUG_FS (modules_prepare trees, cached)
check-builds: setup
	@scripts/check-builds

# a DKMS source tree in DKMS_SOURCE (default /usr/src)
dkms-source:
	@scripts/dkms-source $(DKMS_SOURCE)

# The root on the eMMC (Documentation/board.rst, 4.): a third kernel, the test
# configuration with the C driver built in (CONFIG_MMC_MESON_MX_SDHC=y), its
# guest (the Rust module built against it), and tests/board-kernel/: the root
# file system on the eMMC through the Rust driver.  Not in make test (the
# third kernel alone is a cold kernel build; Documentation/make-targets.rst)
.PHONY: kernel-board guest-board test-board

kernel-board:
	@KERNEL_VARIANT=board scripts/build-kernel.sh

guest-board:
	@KDIR=$(CACHE)/kernel-board MODDIR=$(CURDIR)/build/module-board scripts/build-module.sh
	@KERNEL_VARIANT=board scripts/build-guest.sh

test-board: setup kernel-board qemu
	@$(MAKE) --no-print-directory guest-board
	@tests/board-kernel/run

# skip_clean_invalidate's default where the DMA API bounces (Documentation/driver.rst,
# "Skipping the invalidate of a clean buffer"): a fourth kernel, the test configuration
# with CONFIG_ARM_LPAE=y (which selects SWIOTLB), its guest (the Rust module built against
# it, with the test knobs), and tests/swiotlb/: booted with swiotlb=force, the default
# resolves to off.  Not in make test (the LPAE kernel alone is a cold kernel build;
# Documentation/make-targets.rst)
.PHONY: kernel-swiotlb guest-swiotlb test-swiotlb

kernel-swiotlb:
	@KERNEL_VARIANT=swiotlb scripts/build-kernel.sh

guest-swiotlb:
	@KDIR=$(CACHE)/kernel-swiotlb MODDIR=$(CURDIR)/build/module-swiotlb TEST_KNOBS=1 scripts/build-module.sh
	@GUEST_KDIR=$(CACHE)/kernel-swiotlb RSKO=$(CURDIR)/build/module-swiotlb/meson_mx_sdhc_rs.ko \
		GUEST_OUT=$(CURDIR)/build/guest-swiotlb scripts/build-guest.sh

test-swiotlb: setup kernel-swiotlb qemu
	@$(MAKE) --no-print-directory guest-swiotlb
	@tests/swiotlb/run

# The board kit (Documentation/board.rst, "The board kit"): the board kernel
# (multi_v7_defconfig with Rust, packaged by the kernel's bindeb-pkg; a cold
# kernel build the first time, then cached), this module built for it, the
# scripts and the on-board installer, in build/board-kit-$(BOARD)-<release>.tar.xz.
# Not in make test (Documentation/make-targets.rst has its time).
.PHONY: board-kit
board-kit:
	@case "$(BOARD)" in odroidc1|onecloud) ;; *) echo "make board-kit BOARD=odroidc1|onecloud"; exit 2 ;; esac
	@SETUP_BOARD_KIT=1 scripts/setup.sh
	@scripts/board-kit $(BOARD)
