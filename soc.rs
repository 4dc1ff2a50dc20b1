// SPDX-License-Identifier: GPL-2.0

//! What differs between the SoC generations (`struct meson_mx_sdhc_data`).

use kernel::{
    device::Device,
    io::poll::read_poll_timeout,
    prelude::*,
    time::Delta, //
};

use crate::regs::{
    self,
    Regs, //
};

/// The same as `hw::WAIT_CMD_READY_SLEEP`, long enough for `fsleep()` to sleep, not spin.
const WAIT_BEFORE_SEND_SLEEP: Delta = Delta::from_micros(20);
const WAIT_BEFORE_SEND_TIMEOUT: Delta = Delta::from_micros(200);

/// The SoC specific parts of the controller.
#[derive(Clone, Copy)]
pub(crate) struct SocData {
    /// SoC specific part of the hardware initialisation.
    pub(crate) init_hw: fn(&Regs),
    /// Switches the controller to DMA for a transfer in the given direction (`true`: write).
    pub(crate) set_pdma: fn(&Regs, bool),
    /// Waits until the controller may start the command (`true`: one that writes data).
    pub(crate) wait_before_send: Option<fn(&Regs, &Device, bool)>,
    /// Whether the hardware flushes the FIFO itself, also for reads.
    pub(crate) hardware_flush_all_cmds: bool,
}

/// Meson6, Meson8 and Meson8b.
pub(crate) const MESON8: SocData = SocData {
    init_hw: init_hw_meson8,
    set_pdma: set_pdma_meson8,
    wait_before_send: Some(wait_before_send_meson8),
    hardware_flush_all_cmds: false,
};

/// Meson8m2.
pub(crate) const MESON8M2: SocData = SocData {
    init_hw: init_hw_meson8m2,
    set_pdma: set_pdma_meson8m2,
    wait_before_send: None,
    hardware_flush_all_cmds: true,
};

fn init_hw_meson8(regs: &Regs) {
    regs.write_reg(
        regs::MISC::zeroed()
            .with_const_txstart_thres::<7>()
            .with_const_wcrc_err_patt::<5>()
            .with_const_wcrc_ok_patt::<2>(),
    );
    regs.write_reg(
        regs::ENHC_MESON6::zeroed()
            .with_const_rxfifo_th::<63>()
            // "No Write DMA Response Check" in Amlogic's register header, as the C driver
            // sets it: a read's data is checked in memory instead (`bounce::tail`).
            .with_dma_wr_resp(true)
            .with_const_rx_timeout::<255>()
            .with_const_sdio_irq_period::<12>(),
    );
}

fn set_pdma_meson8(regs: &Regs, write: bool) {
    if write {
        regs.update(regs::PDMA, |r| {
            r.with_dma_mode(true)
                .with_const_rd_burst::<31>()
                .with_txfifo_fill(true)
        });
        regs.update(regs::PDMA, |r| r.with_const_rd_burst::<15>());
    } else {
        regs.update(regs::PDMA, |r| {
            r.with_dma_mode(true).with_const_rxfifo_manual_flush::<1>()
        });
    }
}

fn wait_before_send_meson8(regs: &Regs, dev: &Device, write: bool) {
    let mut last = 0;
    let esta = read_poll_timeout(
        || Ok(regs.read(regs::ESTA).into_raw()),
        |v| {
            last = *v;
            *v == 0
        },
        WAIT_BEFORE_SEND_SLEEP,
        WAIT_BEFORE_SEND_TIMEOUT,
    );
    if esta.is_err() {
        dev_warn!(dev, "Failed to wait for ESTA to clear: 0x{:08x}\n", last);
    }

    if write {
        let fill = read_poll_timeout(
            || Ok(regs.read(regs::STAT)),
            |s| s.txfifo_cnt().get() != 0,
            WAIT_BEFORE_SEND_SLEEP,
            WAIT_BEFORE_SEND_TIMEOUT,
        );
        if fill.is_err() {
            dev_warn!(dev, "Failed to wait for TX FIFO to fill\n");
        }
    }
}

fn init_hw_meson8m2(regs: &Regs) {
    regs.write_reg(
        regs::MISC::zeroed()
            .with_const_txstart_thres::<6>()
            .with_const_wcrc_err_patt::<5>()
            .with_const_wcrc_ok_patt::<2>(),
    );
    regs.write_reg(
        regs::ENHC::zeroed()
            .with_const_rxfifo_th::<64>()
            .with_const_meson8m2_debug::<1>()
            .with_meson8m2_wrrsp_mode(true)
            .with_const_sdio_irq_period::<12>(),
    );
}

fn set_pdma_meson8m2(regs: &Regs, _write: bool) {
    regs.update(regs::PDMA, |r| r.with_dma_mode(true));
}
