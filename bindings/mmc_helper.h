/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Input header for the bindgen run of scripts/build-module.sh.
 *
 * Only the MMC host API, the clock provider API and runtime PM are generated
 * from this header; every other type resolves to the kernel crate's `kernel::bindings`.
 * Macros that bindgen cannot evaluate (they expand to BIT() and friends) are
 * turned into constants below; the generated file loses the
 * RUST_CONST_HELPER_ prefix like the kernel's own bindings do.
 */

#include <linux/clk-provider.h>
#include <linux/mmc/card.h>
#include <linux/mmc/core.h>
#include <linux/mmc/host.h>
#include <linux/mmc/mmc.h>
#include <linux/mmc/sd.h>
#include <linux/mmc/sdio.h>
#include <linux/mmc/slot-gpio.h>
#include <linux/pm_runtime.h>

const unsigned int RUST_CONST_HELPER_MMC_DATA_WRITE = MMC_DATA_WRITE;
const unsigned int RUST_CONST_HELPER_MMC_DATA_READ = MMC_DATA_READ;
const unsigned long RUST_CONST_HELPER_CLK_SET_RATE_PARENT = CLK_SET_RATE_PARENT;
