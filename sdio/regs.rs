// SPDX-License-Identifier: GPL-2.0

//! Register map of the Amlogic Meson6/8/8b "SDIO" MMC controller.
//!
//! The layout follows `drivers/mmc/host/meson-mx-sdio.c` field by field. Only the fields the
//! driver uses are given names; unnamed bits are kept as they are by the `with_*` setters.

use kernel::io::register;

use crate::mapped_regs::MappedRegs;

/// Size of the register window (up to and including `EXT`).
pub(crate) const REGS_SIZE: usize = 0x20;

/// The mapped register window.
pub(crate) type Regs = MappedRegs<REGS_SIZE>;

register! {
    /// Command argument, with `MULT.WR_RD_OUT_INDEX` set the response read-back window.
    pub(crate) ARGU(u32) @ 0x00 {
        31:0 value;
    }

    /// Command send register, whose write starts the command.
    pub(crate) SEND(u32) @ 0x04 {
        7:0 command_index;
        15:8 cmd_resp_bits;
        16:16 resp_without_crc7 => bool;
        17:17 resp_has_data => bool;
        18:18 resp_crc7_from_8 => bool;
        19:19 check_dat0_busy => bool;
        20:20 data => bool;
        21:21 use_int_window => bool;
        31:24 repeat_package_times;
    }

    /// Configuration, whose bits 9:0 are the card clock divider the clock tree in `clkc.rs` owns.
    pub(crate) CONF(u32) @ 0x08 {
        9:0 cmd_clk_div;
        10:10 cmd_disable_crc => bool;
        11:11 cmd_out_at_positive_edge => bool;
        17:12 cmd_argument_bits;
        18:18 resp_latch_at_negative_edge => bool;
        19:19 data_latch_at_negative_edge => bool;
        20:20 bus_width => bool;
        22:21 m_endian;
        28:23 write_nwr;
        31:29 write_crc_ok_status;
    }

    /// Interrupt and command status, whose `IF_INT` and `CMD_INT` are cleared by writing 1.
    pub(crate) IRQS(u32) @ 0x0c {
        3:0 status_state_machine;
        4:4 cmd_busy => bool;
        5:5 resp_crc7_ok => bool;
        6:6 data_read_crc16_ok => bool;
        7:7 data_write_crc16_ok => bool;
        8:8 if_int => bool;
        9:9 cmd_int => bool;
        15:12 status_info;
        16:16 timing_out_int => bool;
    }

    /// Interrupt control and soft reset.
    pub(crate) IRQC(u32) @ 0x10 {
        3:3 arc_if_int_en => bool;
        4:4 arc_cmd_int_en => bool;
        7:6 if_config;
        15:15 soft_reset => bool;
        30:30 force_halt => bool;
        31:31 halt_hole => bool;
    }

    /// Slot mux and response read-back index.
    pub(crate) MULT(u32) @ 0x14 {
        1:0 port_sel;
        8:8 wr_rd_out_index => bool;
        15:12 resp_read_index;
        /// Set with the port by both the in-tree and Amlogic's driver, undocumented.
        31:31 bit31 => bool;
    }

    /// DMA address of the data.
    pub(crate) ADDR(u32) @ 0x18 {
        31:0 value;
    }

    /// Extension, the bits of one data package.
    pub(crate) EXT(u32) @ 0x1c {
        29:16 data_rw_number;
    }
}
