/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Input header for the bindgen run of scripts/build-module.sh, after
 * mmc_helper.h: what only the kernel-crate additions of the SD card slot's
 * driver (sdio/) use, kernel::platform::of_child (of_platform_device_create()
 * and of_platform_device_destroy(), the only functions generated from it).
 * The upstream series (series/) carries the SDHC driver and what it uses
 * alone, so mmc_helper.h is what its patches add to the tree's bindings, and
 * this header is not.
 */

#include <linux/of_platform.h>
