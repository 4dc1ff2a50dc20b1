// SPDX-License-Identifier: GPL-2.0

//! MMC host capabilities (`MMC_CAP_*`, `host->caps`).
//!
//! C header: [`include/linux/mmc/host.h`](srctree/include/linux/mmc/host.h)

use kernel::impl_flags;

use crate::bindings;

impl_flags!(
    /// A set of host capabilities (`MMC_CAP_*`), combined with `|`.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Caps(u32);

    /// One host capability (`MMC_CAP_*`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Cap {
        /// The host can do 4-bit transfers (`MMC_CAP_4_BIT_DATA`).
        FourBitData = bindings::MMC_CAP_4_BIT_DATA,
        /// The host can do 8-bit transfers (`MMC_CAP_8_BIT_DATA`).
        EightBitData = bindings::MMC_CAP_8_BIT_DATA,
        /// MMC high speed timing (`MMC_CAP_MMC_HIGHSPEED`).
        MmcHighspeed = bindings::MMC_CAP_MMC_HIGHSPEED,
        /// SD high speed timing (`MMC_CAP_SD_HIGHSPEED`).
        SdHighspeed = bindings::MMC_CAP_SD_HIGHSPEED,
        /// The card is soldered on (`MMC_CAP_NONREMOVABLE`).
        Nonremovable = bindings::MMC_CAP_NONREMOVABLE,
        /// The host waits for the card's busy signal itself (`MMC_CAP_WAIT_WHILE_BUSY`).
        WaitWhileBusy = bindings::MMC_CAP_WAIT_WHILE_BUSY,
        /// Card detection needs polling (`MMC_CAP_NEEDS_POLL`).
        NeedsPoll = bindings::MMC_CAP_NEEDS_POLL,
        /// The host sends CMD23 (`sbc`) itself (`MMC_CAP_CMD23`).
        Cmd23 = bindings::MMC_CAP_CMD23,
        /// The card may be reset through its reset line (`MMC_CAP_HW_RESET`).
        HwReset = bindings::MMC_CAP_HW_RESET,
        /// Commands with busy need an R1B response (`MMC_CAP_NEED_RSP_BUSY`).
        NeedRspBusy = bindings::MMC_CAP_NEED_RSP_BUSY,
        // `MMC_CAP_SDIO_IRQ` is not here: the core would call `enable_sdio_irq` and
        // `ack_sdio_irq` unchecked, so only the layer sets it, for a host with both.
        // `MMC_CAP_DONE_COMPLETE` is not here either: with it the block layer calls `post_req`
        // from `mmc_request_done()`'s context (drivers/mmc/core/block.c), which may be an
        // interrupt handler, while `HostOps` promises process context to every callback and the
        // layer's `post_req` unmaps (`kernel::dma::pre_map`), which may sleep. Adding it means
        // revisiting both.
    }
);

impl Caps {
    /// Returns the raw `MMC_CAP_*` bits.
    pub fn bits(self) -> u32 {
        self.into()
    }
}

#[cfg(CONFIG_RUST_MMC_KUNIT_TEST)]
#[kernel::macros::kunit_tests(rust_kernel_mmc_caps)]
mod tests {
    use super::*;

    #[test]
    fn caps_combine_to_the_c_bits() {
        let caps = Cap::WaitWhileBusy | Cap::HwReset;
        assert_eq!(
            caps.bits(),
            bindings::MMC_CAP_WAIT_WHILE_BUSY | bindings::MMC_CAP_HW_RESET
        );
        assert!(caps.contains(Cap::HwReset));
        assert!(!caps.contains(Cap::Cmd23));
        assert_eq!(Caps::default().bits(), 0);
    }
}
