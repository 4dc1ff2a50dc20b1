/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Input header for the bindgen run of scripts/build-module.sh, after
 * mmc_helper.h: what only the kernel-crate additions of the SD card slot's
 * driver (sdio/) use, kernel::platform::of_child (of_platform_device_create()
 * and of_platform_device_destroy(), the only functions generated from it).
 * The upstream series adds its #include lines to the tree's
 * rust/bindings/bindings_helper.h with kernel::platform::of_child's patch.
 */

#include <linux/of_platform.h>
