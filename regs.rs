// SPDX-License-Identifier: GPL-2.0

//! Register map of the Amlogic Meson6/8/8b/8m2 SDHC controller.
//!
//! The layout follows `drivers/mmc/host/meson-mx-sdhc.h` field by field.
//! Only the fields the driver uses are given names; unnamed bits are kept as
//! they are by the `with_*` setters.

use kernel::{
    io::register,
    num::Bounded, //
};

use crate::mapped_regs::MappedRegs;

/// Size of the register window (up to and including `CLK2`).
pub(crate) const REGS_SIZE: usize = 0x3c;

/// The mapped register window.
///
/// It is the device tree's `reg`, 0x42 bytes upstream (`meson.dtsi`), of which the registers
/// are the first `REGS_SIZE`.
pub(crate) type Regs = MappedRegs<REGS_SIZE>;

register! {
    /// Command argument, with `PDMA.PIO_RDRESP` also the response read-back window.
    pub(crate) ARGU(u32) @ 0x00 {
        31:0 value;
    }

    /// Command send register, whose write starts the command.
    pub(crate) SEND(u32) @ 0x04 {
        5:0 cmd_index;
        6:6 cmd_has_resp => bool;
        7:7 cmd_has_data => bool;
        8:8 resp_len => bool;
        9:9 resp_no_crc => bool;
        10:10 data_dir => bool;
        11:11 data_stop => bool;
        12:12 r1b => bool;
        31:16 total_pack;
    }

    /// Controller configuration.
    pub(crate) CTRL(u32) @ 0x08 {
        1:0 dat_type;
        2:2 ddr_mode => bool;
        3:3 tx_crc_nocheck => bool;
        12:4 pack_len;
        19:13 rx_timeout;
        23:20 rx_period;
        26:24 rx_endian;
        27:27 sdio_irq_mode => bool;
        28:28 dat0_irq_sel => bool;
        31:29 tx_endian;
    }

    /// Status.
    pub(crate) STAT(u32) @ 0x0c {
        0:0 cmd_busy => bool;
        4:1 dat3_0;
        5:5 cmd => bool;
        12:6 rxfifo_cnt;
        19:13 txfifo_cnt;
        23:20 dat7_4;
    }

    /// Clock control, whose bits 17:16 and 15:12 the clock tree in `clkc.rs` owns.
    pub(crate) CLKC(u32) @ 0x10 {
        11:0 clk_div;
        24:24 clk_jic => bool;
        26:25 mem_pwr_off;
    }

    /// DMA address.
    pub(crate) ADDR(u32) @ 0x14 {
        31:0 value;
    }

    /// PIO/DMA control.
    pub(crate) PDMA(u32) @ 0x18 {
        0:0 dma_mode => bool;
        3:1 pio_rdresp;
        4:4 dma_urgent => bool;
        9:5 wr_burst;
        14:10 rd_burst;
        21:15 rxfifo_th;
        28:22 txfifo_th;
        30:29 rxfifo_manual_flush;
        31:31 txfifo_fill => bool;
    }

    /// Miscellaneous.
    pub(crate) MISC(u32) @ 0x1c {
        6:4 wcrc_err_patt;
        9:7 wcrc_ok_patt;
        21:16 burst_num;
        27:22 thread_id;
        28:28 manual_stop => bool;
        31:29 txstart_thres;
    }

    /// Interrupt enable, with the bit layout of `ISTA`.
    pub(crate) ICTL(u32) @ 0x24 {
        0:0 resp_ok => bool;
        1:1 resp_timeout => bool;
        2:2 resp_err_crc => bool;
        3:3 resp_ok_noclear => bool;
        4:4 data_1pack_ok => bool;
        5:5 data_timeout => bool;
        6:6 data_err_crc => bool;
        7:7 data_xfer_ok => bool;
        8:8 rx_higher => bool;
        9:9 rx_lower => bool;
        10:10 dat1_irq => bool;
        11:11 dma_done => bool;
        12:12 rxfifo_full => bool;
        13:13 txfifo_empty => bool;
        14:14 addi_dat1_irq => bool;
        17:16 dat1_irq_delay;
    }

    /// Interrupt status, whose bits are cleared by writing 1.
    pub(crate) ISTA(u32) @ 0x28 {
        0:0 resp_ok => bool;
        1:1 resp_timeout => bool;
        2:2 resp_err_crc => bool;
        3:3 resp_ok_noclear => bool;
        4:4 data_1pack_ok => bool;
        5:5 data_timeout => bool;
        6:6 data_err_crc => bool;
        7:7 data_xfer_ok => bool;
        8:8 rx_higher => bool;
        9:9 rx_lower => bool;
        10:10 dat1_irq => bool;
        11:11 dma_done => bool;
        12:12 rxfifo_full => bool;
        13:13 txfifo_empty => bool;
        14:14 addi_dat1_irq => bool;
    }

    /// Soft reset.
    pub(crate) SRST(u32) @ 0x2c {
        0:0 main_ctrl => bool;
        1:1 rxfifo => bool;
        2:2 txfifo => bool;
        3:3 dphy_rx => bool;
        4:4 dphy_tx => bool;
        5:5 dma_if => bool;
    }

    /// Extended status.
    pub(crate) ESTA(u32) @ 0x30 {
        13:11 esta_11_13;
    }

    /// Enhanced control, whose bits 7:0 and 17:16 Meson6/8/8b and Meson8m2 use differently.
    pub(crate) ENHC(u32) @ 0x34 {
        0:0 meson8m2_wrrsp_mode => bool;
        1:1 meson8m2_chk_wrrsp => bool;
        2:2 meson8m2_chk_dma => bool;
        5:3 meson8m2_debug;
        15:8 sdio_irq_period;
        24:18 rxfifo_th;
        31:25 txfifo_th;
    }

    /// Meson6/8/8b view of `ENHC`.
    pub(crate) ENHC_MESON6(u32) => ENHC {
        7:0 rx_timeout;
        15:8 sdio_irq_period;
        16:16 dma_rd_resp => bool;
        17:17 dma_wr_resp => bool;
        24:18 rxfifo_th;
        31:25 txfifo_th;
    }

    /// Clock phases.
    pub(crate) CLK2(u32) @ 0x38 {
        11:0 rx_clk_phase;
        23:12 sd_clk_phase;
    }
}

/// Returns a 12-bit clock phase/divider value, masked like the C driver's `FIELD_PREP()`.
#[inline(always)]
pub(crate) fn phase(v: u32) -> Bounded<u32, 12> {
    Bounded::from_expr(v & 0xfff)
}
