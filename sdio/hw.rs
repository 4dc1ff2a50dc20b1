// SPDX-License-Identifier: GPL-2.0

//! Register programming, as `meson-mx-sdio.c` does it.
//!
//! The controller's setup and soft reset, a command's start and its response.

use kernel::{
    num::Bounded,
    prelude::*,
    time::{
        delay::udelay,
        Delta, //
    }, //
};

use crate::mmc::{
    Command,
    Data, //
};
use crate::regs::{
    self,
    Regs, //
};

/// The CRC16 bits that follow a block on each data line, minus one (the C driver's
/// `MESON_MX_SDIO_RESPONSE_CRC16_BITS`).
const CRC16_BITS: u32 = 16 - 1;

/// Most blocks in one command.
///
/// `SEND.REPEAT_PACKAGE_TIMES` holds the count minus one.
pub(crate) const MAX_BLK_COUNT: u32 = 0xff;

/// Largest block in bytes.
///
/// `EXT.DATA_RW_NUMBER` holds a block's bits with the CRC16 bits of four lines.
pub(crate) const MAX_BLK_SIZE: u32 = (0x3fff - 4 * CRC16_BITS) / 8;

/// Writes the configuration the C driver writes in probe.
///
/// 39 command argument bits, endianness 3, Nwr 2, write CRC status 2, one data line; the card clock
/// divider 0.
pub(crate) fn init_conf(regs: &Regs) {
    regs.write_reg(
        regs::CONF::zeroed()
            .with_const_cmd_argument_bits::<39>()
            .with_const_m_endian::<3>()
            .with_const_write_nwr::<2>()
            .with_const_write_crc_ok_status::<2>(),
    );
}

/// Soft-resets the controller (`IRQC.SOFT_RESET`).
///
/// The command on the bus and its DMA are abandoned, the status and interrupt bits cleared, the
/// interrupt enables too. `CONF` is kept.
pub(crate) fn soft_reset(regs: &Regs) {
    regs.write_reg(regs::IRQC::zeroed().with_soft_reset(true));
    udelay(Delta::from_micros(2));
}

/// Selects one or four data lines (`CONF.BUS_WIDTH`).
pub(crate) fn set_bus_width(regs: &Regs, four: bool) {
    regs.update(regs::CONF, |r| r.with_bus_width(four));
}

/// Returns whether four data lines are selected.
pub(crate) fn four_bit(regs: &Regs) -> bool {
    regs.read(regs::CONF).bus_width()
}

/// Disables the command interrupt (`IRQC.ARC_CMD_INT_EN`).
pub(crate) fn disable_cmd_irq(regs: &Regs) {
    regs.update(regs::IRQC, |r| r.with_arc_cmd_int_en(false));
}

/// What `SEND` and `EXT` get for a command.
pub(crate) struct CmdRegs {
    send: regs::SEND,
    ext: regs::EXT,
}

impl CmdRegs {
    /// Creates the registers for `cmd`, with `data` if it moves the request's data over one or four
    /// lines (`four`).
    pub(crate) fn new(cmd: &Command, data: Option<&Data>, four: bool) -> Self {
        let mut send = regs::SEND::zeroed()
            .with_command_index(Bounded::from_expr((0x40 | cmd.opcode()) & 0xff))
            .with_resp_without_crc7(!cmd.resp_crc())
            .with_check_dat0_busy(cmd.resp_busy());
        if cmd.resp_136() {
            // 7 (CMD) + 120 (response) + 7 (CRC) - 1
            send = send
                .with_const_cmd_resp_bits::<133>()
                .with_resp_crc7_from_8(true);
        } else if cmd.resp_present() {
            // 7 (CMD) + 32 (response) + 7 (CRC) - 1
            send = send.with_const_cmd_resp_bits::<45>();
        }
        let mut ext = regs::EXT::zeroed();
        if let Some(data) = data {
            let lines = if four { 4 } else { 1 };
            let pack_bits = data.blksz() * 8 + CRC16_BITS * lines;
            ext = ext.with_data_rw_number(Bounded::from_expr(pack_bits & 0x3fff));
            send = send
                .with_repeat_package_times(Bounded::from_expr(data.blocks().wrapping_sub(1) & 0xff))
                .with_data(data.is_write())
                .with_resp_has_data(data.is_read());
        }
        Self { send, ext }
    }

    /// Returns whether the response has no CRC7 to check (`SEND.RESP_WITHOUT_CRC7`).
    pub(crate) fn without_crc7(&self) -> bool {
        self.send.resp_without_crc7()
    }
}

/// Starts `cmd` with argument `arg` on the slot on `port`.
///
/// The port is selected, the command interrupt enabled and its pending status cleared, then
/// `ARGU`, `EXT` and last `SEND` written.
pub(crate) fn start_cmd(regs: &Regs, port: usize, arg: u32, r: &CmdRegs) {
    let port = (port & 0x3) as u32;
    regs.update(regs::MULT, |m| {
        m.with_port_sel(Bounded::from_expr(port & 0x3))
            .with_bit31(true)
    });
    regs.update(regs::IRQC, |c| c.with_arc_cmd_int_en(true));
    regs.update(regs::IRQS, |s| s.with_cmd_int(true));
    regs.write_reg(regs::ARGU::from_raw(arg));
    regs.write_reg(r.ext);
    regs.write_reg(r.send);
}

/// Reads the response of `cmd` into it.
///
/// One word, or four for a 136-bit response, whose bits 127:8 the controller keeps right-aligned
/// (the C driver's `meson_mx_mmc_read_response()`).
pub(crate) fn read_response(regs: &Regs, cmd: &Command) {
    regs.update(regs::MULT, |m| {
        m.with_wr_rd_out_index(true)
            .with_const_resp_read_index::<0>()
    });
    if cmd.resp_136() {
        let mut resp = [0u32; 4];
        for i in 0..4 {
            resp[3 - i] = regs.read(regs::ARGU).into_raw();
        }
        cmd.set_resp(0, (resp[0] << 8) | (resp[1] >> 24));
        cmd.set_resp(1, (resp[1] << 8) | (resp[2] >> 24));
        cmd.set_resp(2, (resp[2] << 8) | (resp[3] >> 24));
        cmd.set_resp(3, resp[3] << 8);
    } else if cmd.resp_present() {
        cmd.set_resp(0, regs.read(regs::ARGU).into_raw());
    }
}

/// The status the interrupt handler latched and what it means for a command.
#[derive(Clone, Copy)]
pub(crate) struct Status(pub(crate) u32);

impl Status {
    /// Returns whether a command with data saw its data's CRC16 good, or one without data its
    /// response's CRC7 good (or had none to check, `without_crc7`).
    pub(crate) fn crc_ok(self, with_data: bool, without_crc7: bool) -> bool {
        let s = regs::IRQS::from_raw(self.0);
        if with_data {
            s.data_read_crc16_ok() || s.data_write_crc16_ok()
        } else {
            s.resp_crc7_ok() || without_crc7
        }
    }
}
