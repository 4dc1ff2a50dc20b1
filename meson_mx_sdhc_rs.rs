// SPDX-License-Identifier: GPL-2.0

//! Amlogic Meson6/Meson8/Meson8b/Meson8m2 SDHC MMC host controller driver.
//!
//! A Rust port of `drivers/mmc/host/meson-mx-sdhc-mmc.c` that drives the
//! hardware the same way. The driver logic in this file is safe Rust; the raw
//! MMC host API lives in `mmc.rs`, the controller's clock tree in `clkc.rs`
//! and the register map in `regs.rs`.

use kernel::{
    clk::Clk,
    device::{Bound, Core, Device},
    io::{poll::read_poll_timeout, Io},
    irq::{self, IrqReturn, ThreadedHandler, ThreadedIrqReturn, ThreadedRegistration},
    new_mutex,
    num::Bounded,
    of, platform,
    prelude::*,
    sync::{
        atomic::{Acquire, Atomic, Release},
        Arc, Mutex,
    },
    time::{
        delay::{fsleep, udelay},
        Delta,
    },
};

mod bindings;
mod bounce;
mod clkc;
mod logic;
mod mmc;
mod regs;
mod stats;

use bounce::BounceBuffer;
use clkc::Clkc;
use logic::{DataPath, ErrorKind, Limits, Outcome, Params, PathError, MAX_BLK_SIZE};
use mmc::{BusWidth, Host, HostConfig, HostOps, Ios, PowerMode, Request, UnregisteredHost};
use regs::{update_bits, Regs, ALL_IRQS, REGS_SIZE};
use stats::{HostDebugfs, LimitsInfo};

/// Tuning commands that must all succeed at one RX phase.
const NUM_TUNING_TRIES: u32 = 10;
/// Longest busy wait, in milliseconds.
const MAX_BUSY_TIMEOUT_MS: u32 = 30 * 1000;

const WAIT_CMD_READY_SLEEP: Delta = Delta::from_micros(1);
const WAIT_CMD_READY_TIMEOUT: Delta = Delta::from_micros(100_000);
const WAIT_BEFORE_SEND_SLEEP: Delta = Delta::from_micros(1);
const WAIT_BEFORE_SEND_TIMEOUT: Delta = Delta::from_micros(200);

/// What differs between the SoC generations (`struct meson_mx_sdhc_data`).
#[derive(Clone, Copy)]
struct SocData {
    /// SoC specific part of the hardware initialisation.
    init_hw: fn(&Regs<'_>),
    /// Switches the controller to DMA for a transfer in the given direction (`true`: write).
    set_pdma: fn(&Regs<'_>, bool),
    /// Waits until the controller may start the command.
    wait_before_send: Option<fn(&Sdhc<'_>, &CmdInfo)>,
    /// Whether the hardware flushes the FIFO itself, also for reads.
    hardware_flush_all_cmds: bool,
}

/// Meson6, Meson8 and Meson8b.
const MESON8: SocData = SocData {
    init_hw: init_hw_meson8,
    set_pdma: set_pdma_meson8,
    wait_before_send: Some(wait_before_send_meson8),
    hardware_flush_all_cmds: false,
};

/// Meson8m2.
const MESON8M2: SocData = SocData {
    init_hw: init_hw_meson8m2,
    set_pdma: set_pdma_meson8m2,
    wait_before_send: None,
    hardware_flush_all_cmds: true,
};

fn init_hw_meson8(regs: &Regs<'_>) {
    regs.write_reg(
        regs::MISC::zeroed()
            .with_const_txstart_thres::<7>()
            .with_const_wcrc_err_patt::<5>()
            .with_const_wcrc_ok_patt::<2>(),
    );
    regs.write_reg(
        regs::ENHC_MESON6::zeroed()
            .with_const_rxfifo_th::<63>()
            .with_dma_wr_resp(true)
            .with_const_rx_timeout::<255>()
            .with_const_sdio_irq_period::<12>(),
    );
}

fn set_pdma_meson8(regs: &Regs<'_>, write: bool) {
    if write {
        update_bits!(regs, PDMA, |r| r
            .with_dma_mode(true)
            .with_const_rd_burst::<31>()
            .with_txfifo_fill(true));
        update_bits!(regs, PDMA, |r| r.with_const_rd_burst::<15>());
    } else {
        update_bits!(regs, PDMA, |r| r
            .with_dma_mode(true)
            .with_const_rxfifo_manual_flush::<1>());
    }
}

fn wait_before_send_meson8(sdhc: &Sdhc<'_>, cmd: &CmdInfo) {
    let mut last = 0;
    let esta = read_poll_timeout(
        || Ok(sdhc.regs.read(regs::ESTA).into_raw()),
        |v| {
            last = *v;
            *v == 0
        },
        WAIT_BEFORE_SEND_SLEEP,
        WAIT_BEFORE_SEND_TIMEOUT,
    );
    if esta.is_err() {
        dev_warn!(
            sdhc.dev,
            "Failed to wait for ESTA to clear: 0x{:08x}\n",
            last
        );
    }

    if cmd.data.is_some_and(|d| d.write) {
        let fill = read_poll_timeout(
            || Ok(sdhc.regs.read(regs::STAT)),
            |s| s.txfifo_cnt().get() != 0,
            WAIT_BEFORE_SEND_SLEEP,
            WAIT_BEFORE_SEND_TIMEOUT,
        );
        if fill.is_err() {
            dev_warn!(sdhc.dev, "Failed to wait for TX FIFO to fill\n");
        }
    }
}

fn init_hw_meson8m2(regs: &Regs<'_>) {
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

fn set_pdma_meson8m2(regs: &Regs<'_>, _write: bool) {
    update_bits!(regs, PDMA, |r| r.with_dma_mode(true));
}

/// Resets the whole controller.
fn reset(regs: &Regs<'_>) {
    regs.write_reg(
        regs::SRST::zeroed()
            .with_main_ctrl(true)
            .with_rxfifo(true)
            .with_txfifo(true)
            .with_dphy_rx(true)
            .with_dphy_tx(true)
            .with_dma_if(true),
    );
    fsleep(Delta::from_micros(10));

    regs.write_reg(regs::SRST::zeroed());
    fsleep(Delta::from_micros(10));
}

/// Brings the controller into a known state (`meson_mx_sdhc_init_hw()`).
fn init_hw(regs: &Regs<'_>, soc: &SocData) {
    reset(regs);

    regs.write_reg(
        regs::CTRL::zeroed()
            .with_const_rx_period::<0xf>()
            .with_const_rx_timeout::<0x7f>()
            .with_const_rx_endian::<0x7>()
            .with_const_tx_endian::<0x7>(),
    );

    // Start with a valid divider and enable the memory (un-setting MEM_PWR_OFF).
    regs.write_reg(regs::CLKC::zeroed().with_const_clk_div::<0xfff>());

    regs.write_reg(regs::CLK2::zeroed().with_const_sd_clk_phase::<1>());

    regs.write_reg(
        regs::PDMA::zeroed()
            .with_dma_urgent(true)
            .with_const_wr_burst::<7>()
            .with_const_txfifo_th::<49>()
            .with_const_rd_burst::<15>()
            .with_const_rxfifo_th::<7>(),
    );

    // Some initialization bits depend on the SoC.
    (soc.init_hw)(regs);

    // Disable and mask all interrupts.
    regs.write_reg(regs::ICTL::zeroed());
    regs.write_reg(regs::ISTA::from_raw(ALL_IRQS));
}

/// The data phase of a command, as far as the controller needs it.
#[derive(Clone, Copy)]
struct DataInfo {
    blksz: u32,
    blocks: u32,
    write: bool,
    /// DMA address of the single mapped segment or of the bounce buffer.
    dma_addr: u32,
}

/// The request in flight.
struct InFlight {
    mrq: Request,
    /// Whether its data goes through the bounce buffer.
    bounced: bool,
}

/// A command, as far as the controller needs it.
#[derive(Clone, Copy)]
struct CmdInfo {
    opcode: u32,
    arg: u32,
    resp_present: bool,
    resp_136: bool,
    resp_crc: bool,
    resp_busy: bool,
    data: Option<DataInfo>,
}

/// What `set_ios` and `request` share (serialized by the MMC core).
struct IosState {
    /// The outcome of the last `set_ios`; requests fail with it (`host->error`).
    error: Option<Error>,
    /// Whether the four gate clocks are on.
    clks_enabled: bool,
}

/// A "pclk" that is prepared and enabled for as long as this object lives.
struct EnabledClk(Clk);

impl EnabledClk {
    fn new(clk: Clk) -> Result<Self> {
        clk.prepare_enable()?;
        Ok(Self(clk))
    }
}

impl Drop for EnabledClk {
    fn drop(&mut self) {
        self.0.disable_unprepare();
    }
}

/// The controller (`struct meson_mx_sdhc_host`), shared by the MMC callbacks and the IRQ
/// handlers.
///
/// Teardown order: the gate clocks are switched off in `drop`, then the fields go in
/// declaration order: pclk off, clock tree unregistered, registers unmapped.
#[pin_data(PinnedDrop)]
struct Sdhc<'a> {
    dev: &'a Device<Bound>,
    soc: SocData,
    pclk: EnabledClk,
    clkc: Clkc<'a>,
    regs: Arc<Regs<'a>>,
    /// The bounce buffer, if there is one (see `bounce.rs`).
    bounce: Option<BounceBuffer>,
    /// `dma_get_merge_boundary()` of the controller: 0 when a DMA mapping never merges
    /// scatterlist entries (see `logic::segments_without_mapping`).
    dma_merge_boundary: usize,
    /// The request in flight, from `request` until the threaded IRQ handler completes it.
    #[pin]
    cur: Mutex<Option<InFlight>>,
    /// `ISTA` as the hard IRQ handler saw it, for the threaded handler. The line stays masked
    /// (`IRQF_ONESHOT`) until the thread is done, so there is one value per thread run.
    irq_ista: Atomic<u32>,
    #[pin]
    ios: Mutex<IosState>,
    /// Counters and switches, in debugfs.
    #[pin]
    debugfs: HostDebugfs,
}

#[pinned_drop]
impl PinnedDrop for Sdhc<'_> {
    fn drop(self: Pin<&mut Self>) {
        let mut st = self.ios.lock();
        self.disable_clks(&mut st);
    }
}

impl<'a> Sdhc<'a> {
    fn disable_clks(&self, st: &mut IosState) {
        if st.clks_enabled {
            self.clkc.disable();
            st.clks_enabled = false;
        }
    }

    fn enable_clks(&self, st: &mut IosState) -> Result {
        if !st.clks_enabled {
            self.clkc.enable()?;
            st.clks_enabled = true;
        }
        Ok(())
    }

    /// Resets the FIFOs if they hold anything.
    fn clear_fifo(&self) {
        let stat = self.regs.read(regs::STAT);
        if stat.rxfifo_cnt().get() == 0 && stat.txfifo_cnt().get() == 0 {
            return;
        }

        self.regs.write_reg(
            regs::SRST::zeroed()
                .with_rxfifo(true)
                .with_txfifo(true)
                .with_main_ctrl(true),
        );
        udelay(Delta::from_micros(5));

        let stat = self.regs.read(regs::STAT);
        if stat.rxfifo_cnt().get() != 0 || stat.txfifo_cnt().get() != 0 {
            dev_warn!(
                self.dev,
                "Failed to clear FIFOs, RX: {}, TX: {}\n",
                stat.rxfifo_cnt().get(),
                stat.txfifo_cnt().get()
            );
        }
    }

    /// Waits until the controller is idle; resets it if it does not get there.
    fn wait_cmd_ready(&self, opcode: u32) {
        let busy = read_poll_timeout(
            || Ok(self.regs.read(regs::STAT)),
            |s| !s.cmd_busy(),
            WAIT_CMD_READY_SLEEP,
            WAIT_CMD_READY_TIMEOUT,
        );
        if busy.is_err() {
            dev_warn!(
                self.dev,
                "Failed to poll for CMD_BUSY while processing CMD{}\n",
                opcode
            );
            reset(&self.regs);
        }

        let esta = read_poll_timeout(
            || Ok(self.regs.read(regs::ESTA)),
            |e| e.esta_11_13().get() == 0,
            WAIT_CMD_READY_SLEEP,
            WAIT_CMD_READY_TIMEOUT,
        );
        if esta.is_err() {
            dev_warn!(
                self.dev,
                "Failed to poll for ESTA[13:11] while processing CMD{}\n",
                opcode
            );
            reset(&self.regs);
        }
    }

    /// Programs and starts a command (`meson_mx_sdhc_start_cmd()`).
    fn start_cmd(&self, cmd: &CmdInfo) {
        let mut ictl = regs::ICTL::zeroed()
            .with_data_timeout(true)
            .with_data_err_crc(true)
            .with_rxfifo_full(true)
            .with_txfifo_empty(true)
            .with_resp_timeout(true)
            .with_resp_err_crc(true);

        let mut send = regs::SEND::zeroed().with_cmd_index(Bounded::from_expr(cmd.opcode & 0x3f));
        let pack_len;
        let mut manual_stop = false;

        if let Some(data) = cmd.data {
            send = send
                .with_cmd_has_data(true)
                .with_total_pack(Bounded::from_expr(data.blocks.wrapping_sub(1) & 0xffff));

            pack_len = if data.blksz < MAX_BLK_SIZE {
                data.blksz
            } else {
                0
            };

            if data.write {
                send = send.with_data_dir(true);
            }

            // Without data the controller raises RESP_OK; with data it raises DMA_DONE
            // (hardware flush) or DATA_XFER_OK (software flush), regardless of DAT0 busy.
            ictl = if self.soc.hardware_flush_all_cmds || data.write {
                ictl.with_dma_done(true)
            } else {
                ictl.with_data_xfer_ok(true)
            };

            // Like the vendor driver, set MANUAL_STOP for multi-block SD_IO_RW_EXTENDED only:
            // firmware downloads to BCM43362 SDIO cards time out without it.
            manual_stop = data.blocks > 1 && cmd.opcode == mmc::SD_IO_RW_EXTENDED;
        } else {
            pack_len = 0;
            ictl = ictl.with_resp_ok(true);
        }

        update_bits!(self.regs, MISC, |r| r.with_manual_stop(manual_stop));

        if cmd.opcode == mmc::MMC_STOP_TRANSMISSION {
            send = send.with_data_stop(true);
        }
        if cmd.resp_present {
            send = send.with_cmd_has_resp(true);
        }
        if cmd.resp_136 {
            send = send.with_resp_len(true).with_resp_no_crc(true);
        }
        if !cmd.resp_crc {
            send = send.with_resp_no_crc(true);
        }
        if cmd.resp_busy {
            send = send.with_r1b(true);
        }

        // Enable the new IRQs and mask all pending ones.
        self.regs.write_reg(ictl);
        self.regs.write_reg(regs::ISTA::from_raw(ALL_IRQS));

        self.regs.write_reg(regs::ARGU::from_raw(cmd.arg));

        update_bits!(self.regs, CTRL, |r| r
            .with_pack_len(Bounded::from_expr(pack_len & 0x1ff)));

        if let Some(data) = cmd.data {
            self.regs.write_reg(regs::ADDR::from_raw(data.dma_addr));
        }

        self.wait_cmd_ready(cmd.opcode);

        if let Some(data) = cmd.data {
            (self.soc.set_pdma)(&self.regs, data.write);
        }

        if let Some(wait) = self.soc.wait_before_send {
            wait(self, cmd);
        }

        self.regs.write_reg(send);
    }

    /// Chooses the data path of the request and sets it up: a single DMA segment stays mapped
    /// for the controller; a scatterlist of more segments goes through the bounce buffer (a
    /// write is copied into it here). Without an IOMMU a list of more than one entry is not
    /// mapped at all: its segment count is its length. Otherwise it is mapped to count its
    /// segments and unmapped again if there are more than one. Returns the DMA address for the
    /// controller and whether the request is bounced.
    fn map_data(&self, mrq: &mut Request) -> Result<(u64, bool)> {
        let segments = match logic::segments_without_mapping(mrq.sg_len(), self.dma_merge_boundary)
        {
            Some(segments) => segments,
            None => mrq.map_dma().inspect_err(|e| match e {
                mmc::DmaMapError::MapFailed => dev_err!(self.dev, "dma_map_sg failed\n"),
                e => dev_err!(self.dev, "cannot map the request's data: {:?}\n", e),
            })?,
        };
        let len = mrq.data_len();
        let bounce_size = self.bounce.as_ref().map_or(0, BounceBuffer::size);
        let path = logic::data_path(segments, len, bounce_size, self.debugfs.force_bounce());
        let bounce = match (path, &self.bounce) {
            (Ok(DataPath::Direct), _) => {
                // The controller uses the request's memory itself: hand it over.
                let addr = mrq.dma_for_device().ok_or(EIO)?;
                return Ok((addr, false));
            }
            (Ok(DataPath::Bounce), Some(bounce)) => bounce,
            (Ok(DataPath::Bounce), None) | (Err(PathError::NoSegments), _) => {
                mrq.unmap_dma();
                return Err(EINVAL);
            }
            (
                Err(PathError::TooBig {
                    segments,
                    len,
                    bounce,
                }),
                _,
            ) => {
                dev_err!(
                    self.dev,
                    "request of {} bytes mapped to {} DMA segments, bounce buffer: {} bytes\n",
                    len,
                    segments,
                    bounce
                );
                mrq.unmap_dma();
                return Err(EINVAL);
            }
        };
        // The CPU copies the data now: no mapping may be left on the scatterlist.
        mrq.unmap_dma();
        if mrq.cmd().data().is_some_and(|d| d.is_write()) {
            let copied = mrq.copy_to_dma_buffer(bounce.coherent(), len);
            if copied != len {
                dev_err!(
                    self.dev,
                    "copied {} of {} bytes into the bounce buffer\n",
                    copied,
                    len
                );
                return Err(EIO);
            }
        }
        Ok((bounce.dma_address(), true))
    }

    /// Sets up the request's data and collects what `start_cmd` needs.
    fn prepare(&self, mrq: &mut Request) -> Result<(CmdInfo, bool)> {
        let (dma_addr, bounced) = if mrq.cmd().data().is_some() {
            let (addr, bounced) = self.map_data(mrq)?;
            let addr = u32::try_from(addr).map_err(|_| {
                dev_err!(self.dev, "DMA address {:#x} beyond 32 bits\n", addr);
                mrq.unmap_dma();
                EIO
            })?;
            (Some(addr), bounced)
        } else {
            (None, false)
        };

        let cmd = mrq.cmd();
        let info = CmdInfo {
            opcode: cmd.opcode(),
            arg: cmd.arg(),
            resp_present: cmd.resp_present(),
            resp_136: cmd.resp_136(),
            resp_crc: cmd.resp_crc(),
            resp_busy: cmd.resp_busy(),
            data: cmd.data().zip(dma_addr).map(|(d, dma_addr)| DataInfo {
                blksz: d.blksz(),
                blocks: d.blocks(),
                write: d.is_write(),
                dma_addr,
            }),
        };
        Ok((info, bounced))
    }

    /// Programs the bus clock (`meson_mx_sdhc_set_clk()`).
    fn set_clk(&self, host: &Host, st: &mut IosState, ios: &Ios) -> Result {
        self.disable_clks(st);

        if ios.clock == 0 {
            host.set_actual_clock(0);
            return Ok(());
        }

        self.clkc.set_rate(ios.clock).inspect_err(|e| {
            dev_warn!(
                self.dev,
                "Failed to set MMC clock to {}Hz: {}\n",
                ios.clock,
                e.to_errno()
            )
        })?;

        self.enable_clks(st)?;

        host.set_actual_clock(self.clkc.rate());

        // Phase 90 should work in most cases. For data transmission, execute_tuning() will find
        // a accurate value.
        let rx_clk_phase = self.regs.read(regs::CLKC).clk_div() / 4;
        update_bits!(self.regs, CLK2, |r| r
            .with_rx_clk_phase(regs::phase(rx_clk_phase)));

        Ok(())
    }

    fn do_set_ios(&self, host: &Host, st: &mut IosState, ios: &Ios) -> Result {
        match ios.power_mode {
            PowerMode::Off => host.set_vmmc_ocr(0)?,
            PowerMode::Up => host.set_vmmc_ocr(ios.vdd)?,
            PowerMode::On | PowerMode::Undefined => {}
        }

        self.set_clk(host, st, ios)?;

        let dat_type = match ios.bus_width {
            BusWidth::One => 0,
            BusWidth::Four => 1,
            BusWidth::Eight => 2,
            BusWidth::Other(w) => {
                dev_err!(self.dev, "unsupported bus width: {}\n", w);
                return Err(EINVAL);
            }
        };
        update_bits!(self.regs, CTRL, |r| r
            .with_dat_type(Bounded::from_expr(dat_type & 0x3)));

        Ok(())
    }

    /// Reads response word `idx` through the `ARGU` window.
    fn read_response(&self, idx: u32) -> u32 {
        update_bits!(self.regs, PDMA, |r| r.with_dma_mode(false));
        update_bits!(self.regs, PDMA, |r| r
            .with_pio_rdresp(Bounded::from_expr(idx & 0x7)));
        self.regs.read(regs::ARGU).into_raw()
    }

    /// Disables the interrupts and completes the request (`meson_mx_sdhc_request_done()`).
    fn request_done(&self, mrq: Request) {
        update_bits!(self.regs, ICTL, |r| regs::ICTL::from_raw(
            r.into_raw() & !ALL_IRQS
        ));
        update_bits!(self.regs, ISTA, |r| regs::ISTA::from_raw(
            r.into_raw() | ALL_IRQS
        ));

        mrq.done();
    }

    /// Hard IRQ handler: claims the interrupt and hands `ISTA` to the thread.
    ///
    /// Unlike the C driver it does not write the command's error here: the request is only
    /// reachable under a sleeping lock, so the thread applies the errors (first thing, before
    /// anything looks at them).
    fn irq(&self) -> ThreadedIrqReturn {
        let ictl = self.regs.read(regs::ICTL).into_raw();
        let ista = self.regs.read(regs::ISTA).into_raw();

        if ictl & ista == 0 {
            return ThreadedIrqReturn::None;
        }

        self.irq_ista.store(ista, Release);
        ThreadedIrqReturn::WakeThread
    }

    /// Records the errors `ISTA` reports on the command and its data; returns their kinds.
    fn set_errors(
        &self,
        mrq: &Request,
        ista: regs::ISTA,
    ) -> (Option<ErrorKind>, Option<ErrorKind>) {
        let cmd = mrq.cmd();

        let cmd_error = if ista.rxfifo_full() || ista.txfifo_empty() {
            cmd.set_error(EIO);
            Some(ErrorKind::Fifo)
        } else if ista.resp_err_crc() {
            cmd.set_error(EILSEQ);
            Some(ErrorKind::CmdCrc)
        } else if ista.resp_timeout() {
            cmd.set_error(ETIMEDOUT);
            Some(ErrorKind::CmdTimeout)
        } else {
            None
        };

        let data_error = match cmd.data() {
            Some(data) if ista.data_err_crc() => {
                data.set_error(EILSEQ);
                Some(ErrorKind::DataCrc)
            }
            Some(data) if ista.data_timeout() => {
                data.set_error(ETIMEDOUT);
                Some(ErrorKind::DataTimeout)
            }
            _ => None,
        };

        if cmd.error().is_some() || cmd.data().is_some_and(|d| d.error().is_some()) {
            dev_dbg!(
                self.dev,
                "CMD{} error, ISTA: 0x{:08x}\n",
                cmd.opcode(),
                ista.into_raw()
            );
        }
        (cmd_error, data_error)
    }

    /// Threaded IRQ handler: finishes the transfer, reads the response, completes the request.
    fn irq_thread(&self) -> IrqReturn {
        let Some(InFlight { mut mrq, bounced }) = self.cur.lock().take() else {
            dev_warn!(self.dev, "interrupt thread without a command in flight\n");
            return IrqReturn::Handled;
        };
        let (cmd_kind, mut data_kind) =
            self.set_errors(&mrq, regs::ISTA::from_raw(self.irq_ista.load(Acquire)));
        let opcode = mrq.cmd().opcode();

        let data = mrq.cmd().data().map(|d| (d.is_read(), d.error().is_some()));
        let len = mrq.data_len();
        // Bytes to copy from the bounce buffer into the request once the controller is done.
        let mut copy_back = 0;
        let mut xfered = 0;
        if let Some((is_read, data_error)) = data {
            if !data_error && !self.soc.hardware_flush_all_cmds && is_read {
                self.wait_cmd_ready(opcode);

                // If RXFIFO_MANUAL_FLUSH was 1 it has to become 3, if it was 0 it has to become
                // 2. Without this, reading SD cards sometimes transfers garbage, which results
                // in cards not being detected due to: unrecognised SCR structure version.
                update_bits!(self.regs, PDMA, |r| r.with_rxfifo_manual_flush(
                    Bounded::from_expr((r.rxfifo_manual_flush().get() | 2) & 0x3)
                ));
            }

            // Data that failed is unmapped too.
            mrq.unmap_dma();

            // Unlike the C driver, nothing counts as transferred when the command itself
            // failed: after a response timeout the card never sent (or took) the data, and
            // the MMC core would complete the request with whatever the buffer held.
            let cmd_error = mrq.cmd().error().is_some();
            xfered = logic::bytes_xfered(cmd_error, data_error, len);
            if let Some(d) = mrq.cmd().data() {
                d.set_bytes_xfered(xfered);
            }
            if bounced {
                copy_back = logic::copy_back_len(is_read, cmd_error, data_error, xfered);
            }
        }

        self.wait_cmd_ready(opcode);

        let cmd = mrq.cmd();
        if cmd.resp_136() {
            cmd.set_resp(0, self.read_response(4));
            cmd.set_resp(1, self.read_response(3));
            cmd.set_resp(2, self.read_response(2));
            cmd.set_resp(3, self.read_response(1));
        } else {
            cmd.set_resp(0, self.read_response(0));
        }

        if matches!(cmd.error(), Some(e) if e == EIO || e == ETIMEDOUT) {
            reset(&self.regs);
        } else if cmd.data().is_some() {
            // Clear the FIFOs after completing data transfers to prevent corrupting data on
            // write access. It's not clear why this is needed (for reads and writes), but it
            // mimics what the BSP kernel did.
            self.clear_fifo();
        }

        // The controller is done with the bounce buffer: hand the read data over.
        if copy_back != 0 {
            if let Some(bounce) = &self.bounce {
                let copied = mrq.copy_from_dma_buffer(bounce.coherent(), copy_back);
                if copied != copy_back {
                    dev_err!(
                        self.dev,
                        "copied {} of {} bytes out of the bounce buffer\n",
                        copied,
                        copy_back
                    );
                    if let Some(d) = mrq.cmd().data() {
                        d.set_error(EIO);
                        d.set_bytes_xfered(0);
                    }
                    data_kind = Some(ErrorKind::Setup);
                    xfered = 0;
                    copy_back = 0;
                }
            }
        }

        {
            let mut stats = self.debugfs.stats();
            match data {
                Some((is_read, _)) => stats.record(&Outcome {
                    len,
                    write: !is_read,
                    bounced,
                    cmd_error: cmd_kind,
                    data_error: data_kind,
                    xfered,
                    copied_back: copy_back,
                }),
                None => stats.record_command(cmd_kind),
            }
        }

        self.request_done(mrq);

        IrqReturn::Handled
    }

    /// Whether all tuning commands succeed at the current RX phase.
    fn tuning_point_matches(&self, host: &Host, opcode: u32) -> bool {
        (0..NUM_TUNING_TRIES)
            .filter(|_| host.send_tuning(opcode).is_ok())
            .count()
            == NUM_TUNING_TRIES as usize
    }

    fn set_rx_phase(&self, phase: u32) {
        update_bits!(self.regs, CLK2, |r| r.with_rx_clk_phase(regs::phase(phase)));
    }
}

impl HostOps for Sdhc<'_> {
    fn request(&self, _host: &Host, mut mrq: Request) {
        let error = self.ios.lock().error;
        let info = match error {
            Some(e) => Err(e),
            None => self.prepare(&mut mrq),
        };

        match info {
            Err(e) => {
                self.debugfs.stats().record_setup_error();
                mrq.cmd().set_error(e);
                mrq.done();
            }
            Ok((info, bounced)) => {
                *self.cur.lock() = Some(InFlight { mrq, bounced });
                self.start_cmd(&info);
            }
        }
    }

    fn set_ios(&self, host: &Host, ios: &Ios) {
        let mut st = self.ios.lock();
        let result = self.do_set_ios(host, &mut st, ios);
        st.error = result.err();
    }

    fn card_busy(&self, _host: &Host) -> bool {
        self.regs.read(regs::STAT).dat3_0().get() == 0
    }

    fn execute_tuning(&self, host: &Host, opcode: u32) -> Result {
        let old_phase = self.regs.read(regs::CLK2).rx_clk_phase().get();
        let div = self.regs.read(regs::CLKC).clk_div().get();

        let (mut start, mut len) = (0, 0);
        let (mut best_start, mut best_len) = (0, 0);

        for curr_phase in 0..=div {
            self.set_rx_phase(curr_phase);

            if self.tuning_point_matches(host, opcode) {
                if len == 0 {
                    start = curr_phase;
                    dev_dbg!(self.dev, "New RX phase window starts at {}\n", start);
                }
                len += 1;
            } else {
                if len > best_len {
                    best_start = start;
                    best_len = len;
                    dev_dbg!(
                        self.dev,
                        "New best RX phase window: {} - {}\n",
                        best_start,
                        best_start + best_len
                    );
                }
                // Reset the current window.
                len = 0;
            }
        }

        let new_phase = if len > best_len {
            // The last window is the best (or possibly only) window.
            start + len / 2
        } else if best_len != 0 {
            // There was a better window than the last.
            best_start + best_len / 2
        } else {
            // No window was found at all, reset to the original phase.
            old_phase
        };

        self.set_rx_phase(new_phase);

        if len == 0 && best_len == 0 {
            return Err(EIO);
        }

        dev_dbg!(self.dev, "Tuned RX clock phase to {}\n", new_phase);

        Ok(())
    }
}

/// The IRQ handlers' view of the controller.
struct IrqHandler<'a>(Arc<Sdhc<'a>>);

impl ThreadedHandler for IrqHandler<'_> {
    fn handle(&self) -> ThreadedIrqReturn {
        self.0.irq()
    }

    fn handle_threaded(&self) -> IrqReturn {
        self.0.irq_thread()
    }
}

/// Everything a bound device owns.
///
/// Fields drop in declaration order, which is the remove path: the MMC host is removed first
/// (no more requests or callbacks), then the IRQ is freed, then the last reference to the
/// controller goes and with it the clocks and the register mapping.
#[pin_data]
struct SdhcData<'bound> {
    mmc: mmc::Registration<Sdhc<'bound>>,
    #[pin]
    irq: ThreadedRegistration<'bound, IrqHandler<'bound>>,
    sdhc: Arc<Sdhc<'bound>>,
}

/// The module parameters, checked in module init (so they are valid here).
fn params() -> Params {
    Params::new(
        *module_parameters::bounce_size.value_ref(),
        *module_parameters::max_segs.value_ref(),
    )
    .unwrap_or(Params {
        bounce_size: 0,
        max_segs: 1,
    })
}

/// The parameters and the bounce buffer of a new host; without the buffer (`bounce_size=0`
/// or a failed allocation) the host gets the C driver's single-segment limits.
fn bounce_buffer(dev: &Device<Bound>) -> (Params, Option<BounceBuffer>) {
    let params = params();
    if params.bounce_size == 0 {
        return (params, None);
    }
    match BounceBuffer::new(dev, params.bounce_size) {
        Ok(b) => (params, Some(b)),
        Err(e) => {
            dev_warn!(
                dev,
                "cannot allocate a {} byte bounce buffer (error {}), using single-segment requests\n",
                params.bounce_size,
                e.to_errno()
            );
            (params, None)
        }
    }
}

/// Logs a probe failure unless it is a deferral.
fn probe_err(dev: &Device, what: &str, e: Error) -> Error {
    if e != EPROBE_DEFER {
        dev_err!(dev, "{}: error {}\n", what, e.to_errno());
    }
    e
}

struct SdhcDriver;

kernel::of_device_table!(
    OF_TABLE,
    <SdhcDriver as platform::Driver>::IdInfo,
    [
        (of::DeviceId::new(c"amlogic,meson8-sdhc"), MESON8),
        (of::DeviceId::new(c"amlogic,meson8b-sdhc"), MESON8),
        (of::DeviceId::new(c"amlogic,meson8m2-sdhc"), MESON8M2),
    ]
);

impl platform::Driver for SdhcDriver {
    type IdInfo = SocData;
    type Data<'bound> = SdhcData<'bound>;
    const OF_ID_TABLE: Option<of::IdTable<Self::IdInfo>> = Some(&OF_TABLE);

    fn probe<'bound>(
        pdev: &'bound platform::Device<Core<'_>>,
        info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        pin_init::pin_init_scope(move || {
            let dev: &'bound Device<Bound> = pdev.as_ref();

            let soc = *info.ok_or_else(|| probe_err(dev, "no match data", EINVAL))?;

            let regs = pdev
                .io_request_by_index(0)
                .ok_or_else(|| probe_err(dev, "missing register window (reg)", ENODEV))?
                .iomap_sized::<REGS_SIZE>()
                .map_err(|e| probe_err(dev, "failed to map the registers", e))?;
            let regs = Arc::new(regs, GFP_KERNEL)?;

            let pclk = Clk::get(dev, Some(c"pclk"))
                .map_err(|e| probe_err(dev, "missing clock \"pclk\"", e))?;
            // The mux of the clock tree starts at its first input; without it there is no
            // bus clock.
            drop(
                Clk::get(dev, Some(c"clkin0"))
                    .map_err(|e| probe_err(dev, "missing clock \"clkin0\"", e))?,
            );

            // Accessing any register requires the module clock to be enabled.
            let pclk = EnabledClk::new(pclk)
                .map_err(|e| probe_err(dev, "Failed to enable 'pclk' clock", e))?;

            init_hw(&regs, &soc);

            let clkc = Clkc::register(dev, regs.clone())
                .map_err(|e| probe_err(dev, "failed to register the clock controller", e))?;

            let mut host = UnregisteredHost::new(dev)?;

            // Get regulators and the supported OCR mask.
            host.regulator_get_supply()
                .map_err(|e| probe_err(dev, "failed to get the vmmc/vqmmc supplies", e))?;
            // Without vmmc (and no other source of voltages) every card would fail to
            // initialise with a bare -EINVAL from the MMC core; say what is missing instead.
            if host.ocr_avail() == 0 {
                return Err(probe_err(
                    dev,
                    "no card voltage: vmmc-supply is missing from the device tree",
                    EINVAL,
                ));
            }

            let f_min = clkc
                .round_rate(1)
                .map_err(|e| probe_err(dev, "no usable bus clock rate", e))?;
            let f_max = clkc
                .round_rate(c_ulong::MAX)
                .map_err(|e| probe_err(dev, "no usable bus clock rate", e))?;
            if f_max == 0 {
                return Err(probe_err(dev, "bus clock has no rate", EINVAL));
            }

            let (params, bounce) = bounce_buffer(dev);
            let bounce_size = bounce.as_ref().map_or(0, BounceBuffer::size);
            let limits = Limits::new(&params, bounce_size);
            dev_dbg!(dev, "queue limits: {:?}\n", limits);
            let merge_boundary = mmc::dma_merge_boundary(dev);

            host.configure(&HostConfig {
                f_min,
                f_max,
                max_req_size: limits.max_req_size,
                max_seg_size: limits.max_seg_size,
                max_segs: u16::try_from(limits.max_segs).unwrap_or(1),
                max_blk_count: limits.max_blk_count,
                max_blk_size: limits.max_blk_size,
                max_busy_timeout: MAX_BUSY_TIMEOUT_MS,
                max_current_180: 300,
                max_current_330: 300,
                caps: mmc::CAP_WAIT_WHILE_BUSY | mmc::CAP_HW_RESET,
            });

            host.of_parse().map_err(|e| {
                probe_err(
                    dev,
                    "invalid MMC properties in the device tree (bus-width, cd-gpios, ...)",
                    e,
                )
            })?;

            let irq = pdev
                .irq_by_index(0)
                .map_err(|e| probe_err(dev, "missing interrupt", e))?;

            let sdhc = Arc::pin_init(
                try_pin_init!(Sdhc {
                    dev,
                    soc,
                    pclk,
                    clkc,
                    regs,
                    bounce,
                    dma_merge_boundary: merge_boundary,
                    cur <- new_mutex!(None, "meson_mx_sdhc_rs::cur"),
                    irq_ista: Atomic::new(0),
                    ios <- new_mutex!(
                        IosState {
                            error: None,
                            clks_enabled: false,
                        },
                        "meson_mx_sdhc_rs::ios"
                    ),
                    debugfs <- HostDebugfs::new(dev.name(), LimitsInfo {
                            limits,
                            bounce_size,
                            dma_merge_boundary: merge_boundary,
                        }),
                }),
                GFP_KERNEL,
            )?;

            // SAFETY: The registration becomes a field of the driver data, which the driver
            // core drops when the device is unbound; it is never leaked.
            let irq = unsafe {
                ThreadedRegistration::new(
                    irq,
                    irq::Flags::ONESHOT,
                    c"meson-mx-sdhc-rs",
                    Ok::<_, Error>(IrqHandler(sdhc.clone())),
                )
            };

            Ok(try_pin_init!(SdhcData {
                irq <- irq,
                mmc: host.register(sdhc.clone())?,
                sdhc,
            }))
        })
    }
}

/// The message of a [`logic::ParamError`] for the kernel's formatting macros.
struct ParamMsg(logic::ParamError);

impl kernel::fmt::Display for ParamMsg {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        core::fmt::Display::fmt(&self.0, f)
    }
}

/// The module: checks the parameters, then registers the platform driver.
#[pin_data]
struct SdhcModule {
    #[pin]
    _driver: kernel::driver::Registration<platform::Adapter<SdhcDriver>>,
    /// The debugfs directory; dropped after the driver is unregistered (field order).
    _debugfs: stats::Root,
}

impl kernel::InPlaceModule for SdhcModule {
    fn init(module: &'static ThisModule) -> impl PinInit<Self, Error> {
        pin_init::pin_init_scope(move || {
            Params::new(
                *module_parameters::bounce_size.value_ref(),
                *module_parameters::max_segs.value_ref(),
            )
            .map_err(|e| {
                pr_err!("{}\n", ParamMsg(e));
                EINVAL
            })?;
            let debugfs = stats::Root::new(<Self as kernel::ModuleMetadata>::NAME);
            Ok(try_pin_init!(Self {
                _driver <- kernel::driver::Registration::new(
                    <Self as kernel::ModuleMetadata>::NAME,
                    module,
                ),
                _debugfs: debugfs,
            }))
        })
    }
}

module! {
    type: SdhcModule,
    name: "meson-mx-sdhc-rs",
    authors: ["meson_mx_sdhc_rs developers"],
    description: "Meson6, Meson8, Meson8b and Meson8m2 SDHC Host Driver (Rust)",
    license: "GPL",
    params: {
        bounce_size: u32 {
            default: crate::logic::BOUNCE_DEFAULT,
            description: "Bounce buffer size in bytes: 0 (none, one DMA segment per request) or a power of two from 4096 to 4194304",
        },
        max_segs: u32 {
            default: crate::logic::MAX_SEGS_DEFAULT,
            description: "Most scatterlist segments per request with the bounce buffer, 1 to 256",
        },
    },
}
