// SPDX-License-Identifier: GPL-2.0

//! Register programming of the controller.
//!
//! Reset and initialisation, starting a command, reading the response, waiting for the controller
//! (`meson-mx-sdhc-mmc.c`).

use kernel::{
    device::Device,
    interrupt::local_interrupt_disable,
    io::{
        poll::read_poll_timeout,
        Io, //
    },
    num::Bounded,
    prelude::*,
    time::{
        delay::{
            fsleep,
            udelay, //
        },
        Delta,
        Instant,
        Monotonic, //
    }, //
};

use crate::mmc;

use crate::{
    logic::{
        ALL_IRQS,
        CMD_IRQS,
        MAX_BLK_SIZE, //
    },
    regs::{
        self,
        Regs, //
    },
    sdio_irq::SdioIrqs,
    soc::SocData, //
};

/// Between polls the thread sleeps (`usleep_range()`, as the C driver's regmap polls do).
///
/// A delay of 10 us or less would make `fsleep()` spin instead.
const WAIT_CMD_READY_SLEEP: Delta = Delta::from_micros(20);
pub(crate) const WAIT_CMD_READY_TIMEOUT: Delta = Delta::from_micros(100_000);
/// Between polls past the first 100 ms of a wait that covers the card's busy time.
///
/// The MMC core's own busy polls (`mmc_poll_for_busy()`) back off to a few milliseconds.
const WAIT_CARD_BUSY_SLEEP: Delta = Delta::from_micros(1000);
/// The read flush moves at most the RX FIFO's threshold (7 words) to memory.
///
/// How long that takes on the silicon is not measured (the SDHC's port competes with the others in
/// the DDR controller; Amlogic's driver raises its priority there); FreeBSD's driver allows 100 us.
/// The poll spins ([`Delta::ZERO`] between reads) for at most 1 ms: a guess, ten times FreeBSD's.
const WAIT_RX_FLUSH_SLEEP: Delta = Delta::ZERO;
const WAIT_RX_FLUSH_TIMEOUT: Delta = Delta::from_micros(1000);

/// How long the DMA engine may go on writing to memory after `SRST`, in microseconds, as the driver
/// assumes it.
///
/// Nothing documents a DMA-idle bit and neither the C driver nor the vendor driver waits after the
/// reset. What the engine can still hold is its FIFO and one burst (`PDMA` bursts of at most 32
/// words). How long writing those takes on the silicon is not measured (the DDR controller
/// arbitrates between ports); 1 ms is a guess, generous for a few hundred bytes, and costs nothing
/// on the error path.
pub(crate) const RESET_DRAIN_US: u32 = 1000;

/// The data phase of a command, as far as the controller needs it.
#[derive(Clone, Copy)]
pub(crate) struct DataInfo {
    pub(crate) blksz: u32,
    pub(crate) blocks: u32,
    pub(crate) write: bool,
    /// DMA address of the single mapped segment or of the bounce buffer.
    pub(crate) dma_addr: u32,
}

/// A command, as far as the controller needs it.
#[derive(Clone, Copy)]
pub(crate) struct CmdInfo {
    pub(crate) opcode: u32,
    pub(crate) arg: u32,
    pub(crate) resp_present: bool,
    pub(crate) resp_136: bool,
    pub(crate) resp_crc: bool,
    pub(crate) resp_busy: bool,
    pub(crate) data: Option<DataInfo>,
}

impl CmdInfo {
    /// Creates what the controller needs of `cmd`, with its data at `dma_addr`.
    pub(crate) fn new(cmd: &mmc::Command, data: Option<&mmc::Data>, dma_addr: Option<u32>) -> Self {
        Self {
            opcode: cmd.opcode(),
            arg: cmd.arg(),
            resp_present: cmd.resp_present(),
            resp_136: cmd.resp_136(),
            resp_crc: cmd.resp_crc(),
            resp_busy: cmd.resp_busy(),
            data: data.zip(dma_addr).map(|(d, dma_addr)| DataInfo {
                blksz: d.blksz(),
                blocks: d.blocks(),
                write: d.is_write(),
                dma_addr,
            }),
        }
    }
}

/// The controller's registers with what programming them needs.
pub(crate) struct Hw<'a> {
    pub(crate) dev: &'a Device,
    pub(crate) regs: &'a Regs,
    pub(crate) soc: &'a SocData,
    /// The SDIO card interrupt, which every `ICTL` write keeps as it is.
    pub(crate) sdio: &'a SdioIrqs,
}

/// Resets the whole controller.
///
/// This also stops its DMA engine.
pub(crate) fn reset(regs: &Regs) {
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
pub(crate) fn init_hw(regs: &Regs, soc: &SocData) {
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

    // Disable and mask all interrupts (the SDIO card's are enabled later, by the MMC core).
    regs.write_reg(regs::ICTL::zeroed());
    regs.write_reg(regs::ISTA::from_raw(ALL_IRQS));
}

/// The interrupts a command waits for, and its `SEND` and `CTRL.PACK_LEN` values.
struct CmdProgram {
    ictl: regs::ICTL,
    send: regs::SEND,
    pack_len: u32,
    manual_stop: bool,
}

impl CmdProgram {
    fn new(cmd: &CmdInfo, hardware_flush_all_cmds: bool) -> Self {
        let ictl = regs::ICTL::zeroed()
            .with_data_timeout(true)
            .with_data_err_crc(true)
            .with_rxfifo_full(true)
            .with_txfifo_empty(true)
            .with_resp_timeout(true)
            .with_resp_err_crc(true);
        let mut p = Self {
            ictl: ictl.with_resp_ok(true),
            send: regs::SEND::zeroed().with_cmd_index(Bounded::from_expr(cmd.opcode & 0x3f)),
            pack_len: 0,
            manual_stop: false,
        };
        if let Some(data) = cmd.data {
            p.send = p
                .send
                .with_cmd_has_data(true)
                .with_total_pack(Bounded::from_expr(data.blocks.wrapping_sub(1) & 0xffff))
                .with_data_dir(data.write);
            p.pack_len = if data.blksz < MAX_BLK_SIZE {
                data.blksz
            } else {
                0
            };
            // Without data the controller raises RESP_OK; with data it raises DMA_DONE
            // (hardware flush) or DATA_XFER_OK (software flush), regardless of DAT0 busy.
            p.ictl = if hardware_flush_all_cmds || data.write {
                ictl.with_dma_done(true)
            } else {
                ictl.with_data_xfer_ok(true)
            };
            // Like the vendor driver, set MANUAL_STOP for multi-block SD_IO_RW_EXTENDED only:
            // firmware downloads to BCM43362 SDIO cards time out without it.
            p.manual_stop = data.blocks > 1 && cmd.opcode == mmc::SD_IO_RW_EXTENDED;
        }
        p.send = p
            .send
            .with_data_stop(cmd.opcode == mmc::MMC_STOP_TRANSMISSION)
            .with_cmd_has_resp(cmd.resp_present)
            .with_resp_len(cmd.resp_136)
            .with_resp_no_crc(cmd.resp_136 || !cmd.resp_crc)
            .with_r1b(cmd.resp_busy);
        p
    }
}

impl Hw<'_> {
    /// Returns the `ICTL` enables of the interrupts `cmd` completes with (what [`Self::start_cmd`]
    /// writes, the SDIO card's aside).
    pub(crate) fn cmd_enables(&self, cmd: &CmdInfo) -> u32 {
        CmdProgram::new(cmd, self.soc.hardware_flush_all_cmds)
            .ictl
            .into_raw()
    }

    /// Programs and starts a command (`meson_mx_sdhc_start_cmd()`).
    ///
    /// Fails if the controller cannot be made ready for it, with nothing sent.
    pub(crate) fn start_cmd(&self, cmd: &CmdInfo) -> Result {
        self.start(cmd, true)
    }

    /// Programs and starts a command as [`Self::start_cmd`] does, but with none of its interrupts
    /// enabled.
    ///
    /// A command sent while a request completes, whose end the caller polls for in `ISTA` (no
    /// interrupt handler has a request to complete with it).
    pub(crate) fn start_polled_cmd(&self, cmd: &CmdInfo) -> Result {
        self.start(cmd, false)
    }

    /// Programs and starts `cmd`, with its interrupts enabled if `irqs`.
    fn start(&self, cmd: &CmdInfo, irqs: bool) -> Result {
        let p = CmdProgram::new(cmd, self.soc.hardware_flush_all_cmds);
        let regs = self.regs;
        // Ready (or reset) before anything of the command is written: a reset may return the
        // registers to their reset values, and a controller still busy may latch status.
        self.ready_for_cmd(cmd.opcode)?;

        regs.update(regs::MISC, |r| r.with_manual_stop(p.manual_stop));

        // Clear what is pending, then enable the new IRQs: a stale status bit left enabled
        // would complete this request before its command is sent.
        regs.write_reg(regs::ISTA::from_raw(CMD_IRQS));
        // The SDIO card interrupt (DAT1) is neither cleared nor disabled: it belongs to no
        // command.
        let ictl = if irqs { p.ictl } else { regs::ICTL::zeroed() };
        self.sdio.write_cmd_ictl(regs, ictl);

        regs.write_reg(regs::ARGU::from_raw(cmd.arg));

        regs.update(regs::CTRL, |r| {
            r.with_pack_len(Bounded::from_expr(p.pack_len & 0x1ff))
        });

        if let Some(data) = cmd.data {
            regs.write_reg(regs::ADDR::from_raw(data.dma_addr));
        }

        if let Some(data) = cmd.data {
            (self.soc.set_pdma)(regs, data.write);
        }

        if let Some(wait) = self.soc.wait_before_send {
            wait(regs, self.dev, cmd.data.is_some_and(|d| d.write));
        }

        regs.write_reg(p.send);
        Ok(())
    }

    /// Resets the FIFOs if they hold anything.
    pub(crate) fn clear_fifo(&self) {
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
        // A reset of MAIN_CTRL may return DAT1 sampling and its enables to their reset values.
        self.sdio.restore(self.regs);

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

    /// Polls `done` on `read` for at most `timeout`.
    ///
    /// Every [`WAIT_CMD_READY_SLEEP`] for the first [`WAIT_CMD_READY_TIMEOUT`], as the C driver
    /// does, then every [`WAIT_CARD_BUSY_SLEEP`] (a card programming for hundreds of milliseconds
    /// is not polled thousands of times).
    fn poll_ready<T>(
        &self,
        read: impl Fn() -> T,
        done: impl Fn(&T) -> bool,
        timeout: Delta,
    ) -> Result {
        let first = if timeout.as_micros_ceil() > WAIT_CMD_READY_TIMEOUT.as_micros_ceil() {
            WAIT_CMD_READY_TIMEOUT
        } else {
            timeout
        };
        if read_poll_timeout(|| Ok(read()), &done, WAIT_CMD_READY_SLEEP, first).is_ok() {
            return Ok(());
        }
        let rest = Delta::from_micros(timeout.as_micros_ceil() - first.as_micros_ceil());
        read_poll_timeout(|| Ok(read()), &done, WAIT_CARD_BUSY_SLEEP, rest).map(|_| ())
    }

    /// Waits until the controller is idle.
    ///
    /// `STAT.CMD_BUSY` clear, then `ESTA[13:11]` zero, for at most `timeout` each (the C driver's
    /// `meson_mx_sdhc_wait_cmd_ready()` allows 100 ms, [`WAIT_CMD_READY_TIMEOUT`]; after a write or
    /// an R1b command the caller gives the card's own busy time, in case `CMD_BUSY` covers it).
    /// Unlike the C driver it does not reset the controller when that fails but says so:
    /// `ETIMEDOUT`, which fails the request the wait was for (an automatic CMD12 that hangs, a
    /// command path busy past the card's busy time); the caller resets.
    pub(crate) fn wait_cmd_ready(&self, opcode: u32, timeout: Delta) -> Result {
        let busy = self.poll_ready(|| self.regs.read(regs::STAT), |s| !s.cmd_busy(), timeout);
        if busy.is_err() {
            dev_warn!(
                self.dev,
                "Failed to poll for CMD_BUSY while processing CMD{}\n",
                opcode
            );
            return Err(ETIMEDOUT);
        }

        // Each poll reads ESTA twice and looks at the second value, as Amlogic's driver does
        // ("read twice, we just focus on the second result"): its first read may be stale.
        let esta = self.poll_ready(
            || {
                let _ = self.regs.read(regs::ESTA);
                self.regs.read(regs::ESTA)
            },
            |e| e.esta_11_13().get() == 0,
            timeout,
        );
        if esta.is_err() {
            dev_warn!(
                self.dev,
                "Failed to poll for ESTA[13:11] while processing CMD{}\n",
                opcode
            );
            return Err(ETIMEDOUT);
        }
        Ok(())
    }

    /// Waits until the card releases DAT0 (`STAT`'s DAT0 high), for at most `timeout`.
    ///
    /// After an R1b command, whose completion may come with the response rather than once the
    /// card's busy ends (FreeBSD's driver polls DAT0 after R1b commands; with
    /// `MMC_CAP_WAIT_WHILE_BUSY` the core does not). `ETIMEDOUT` if it stays low.
    pub(crate) fn wait_card_released(&self, opcode: u32, timeout: Delta) -> Result {
        let released = self.poll_ready(
            || self.regs.read(regs::STAT),
            |s| s.dat3_0().get() & 1 != 0,
            timeout,
        );
        if released.is_err() {
            dev_warn!(
                self.dev,
                "card busy (DAT0 low) past its wait after CMD{}\n",
                opcode
            );
            return Err(ETIMEDOUT);
        }
        Ok(())
    }

    /// Makes the controller ready for a new command.
    ///
    /// Waits as [`Self::wait_cmd_ready`], and if it stays busy resets it (as the C driver does);
    /// fails with `EIO` if even the reset does not make it ready.
    fn ready_for_cmd(&self, opcode: u32) -> Result {
        if self.wait_cmd_ready(opcode, WAIT_CMD_READY_TIMEOUT).is_ok() {
            return Ok(());
        }
        self.reset();
        let stat = self.regs.read(regs::STAT);
        let esta = self.regs.read(regs::ESTA);
        if stat.cmd_busy() || esta.esta_11_13().get() != 0 {
            dev_err!(
                self.dev,
                "controller still busy after its reset, CMD{} not sent (STAT 0x{:08x}, ESTA 0x{:08x})\n",
                opcode,
                stat.into_raw(),
                esta.into_raw()
            );
            return Err(EIO);
        }
        Ok(())
    }

    /// Sends the last words of a read from the RX FIFO to memory and, if `wait`, waits until `STAT`
    /// counts no word in the RX FIFO.
    ///
    /// Meson6/8/8b do not flush by themselves. FreeBSD's driver waits so before it uses the data;
    /// Amlogic's polls the DDR controller's channel status instead.
    ///
    /// The FIFO reset that follows a data command would otherwise drop words still on their way:
    /// the read's last bytes would be what the buffer held before. `EIO` if they do not arrive in
    /// time.
    ///
    /// The flush and the first look at `STAT` are one step, with local interrupts disabled:
    /// no interrupt and no task that preempts the thread comes between them, so the words
    /// cannot reach memory while the driver is away, before it has started to wait for them.
    pub(crate) fn flush_rx_fifo(&self, opcode: u32, wait: bool) -> Result {
        let first = {
            let _irqs = local_interrupt_disable();
            // The flush and the first look at the FIFO under one guard: the look follows the
            // flush as closely as the C driver's does.
            self.regs.mapping().try_access_with(|io| {
                // If RXFIFO_MANUAL_FLUSH was 1 it has to become 3, if it was 0 it has to become
                // 2. Without this, reading SD cards sometimes transfers garbage, which results in
                // cards not being detected due to: unrecognised SCR structure version.
                io.update(regs::PDMA, |r| {
                    r.with_rxfifo_manual_flush(Bounded::from_expr(
                        (r.rxfifo_manual_flush().get() | 2) & 0x3,
                    ))
                });
                wait.then(|| io.read(regs::STAT))
            })
        };
        match first {
            None | Some(None) => return Ok(()),
            Some(Some(s)) if s.rxfifo_cnt().get() == 0 => return Ok(()),
            Some(Some(_)) => {}
        }
        read_poll_timeout(
            || Ok(self.regs.read(regs::STAT)),
            |s| s.rxfifo_cnt().get() == 0,
            WAIT_RX_FLUSH_SLEEP,
            WAIT_RX_FLUSH_TIMEOUT,
        )
        .map(|_| ())
        .map_err(|_| {
            dev_err!(
                self.dev,
                "CMD{}: the read's last words did not leave the RX FIFO (STAT 0x{:08x})\n",
                opcode,
                self.regs.read(regs::STAT).into_raw()
            );
            EIO
        })
    }

    /// Resets the whole controller.
    pub(crate) fn reset(&self) {
        reset(self.regs);
        // The reset may return DAT1 sampling and its enables to their reset values.
        self.sdio.restore(self.regs);
    }

    /// Returns whether `STAT` shows the controller idle.
    ///
    /// No busy command path, no word in the FIFOs.
    fn idle(&self) -> bool {
        let s = self.regs.read(regs::STAT);
        !s.cmd_busy() && s.rxfifo_cnt().get() == 0 && s.txfifo_cnt().get() == 0
    }

    /// Waits until `STAT` shows the controller idle, for at most `timeout`.
    ///
    /// Returns whether it does.
    pub(crate) fn wait_idle(&self, timeout: Delta) -> bool {
        read_poll_timeout(
            || Ok(self.idle()),
            |idle| *idle,
            WAIT_CMD_READY_SLEEP,
            timeout,
        )
        .is_ok()
    }

    /// Resets the controller after an error and waits until its DMA engine can no longer write to
    /// memory.
    ///
    /// `wait_us` (normally [`RESET_DRAIN_US`]), then until `STAT` shows it idle, for at most
    /// another `wait_us`. Returns the microseconds waited and whether it showed idle.
    pub(crate) fn quiesce(&self, wait_us: u32) -> (u32, bool) {
        self.reset();
        if wait_us == 0 {
            return (0, true);
        }
        let start = Instant::<Monotonic>::now();
        fsleep(Delta::from_micros(i64::from(wait_us)));
        let idle = self.wait_idle(Delta::from_micros(i64::from(wait_us)));
        if !idle {
            dev_warn!(
                self.dev,
                "controller still busy {} us after its reset (STAT 0x{:08x})\n",
                2 * wait_us,
                self.regs.read(regs::STAT).into_raw()
            );
        }
        let waited = u32::try_from(start.elapsed().as_micros_ceil()).unwrap_or(u32::MAX);
        (waited, idle)
    }

    /// Reads response word `idx` through the `ARGU` window.
    pub(crate) fn read_response(&self, idx: u32) -> u32 {
        self.regs.update(regs::PDMA, |r| r.with_dma_mode(false));
        self.regs.update(regs::PDMA, |r| {
            r.with_pio_rdresp(Bounded::from_expr(idx & 0x7))
        });
        self.regs.read(regs::ARGU).into_raw()
    }

    /// Reads the response of `cmd` into it.
    pub(crate) fn read_response_into(&self, cmd: &mmc::Command) {
        if cmd.resp_136() {
            cmd.set_resp(0, self.read_response(4));
            cmd.set_resp(1, self.read_response(3));
            cmd.set_resp(2, self.read_response(2));
            cmd.set_resp(3, self.read_response(1));
        } else {
            cmd.set_resp(0, self.read_response(0));
        }
    }

    /// Disables and acknowledges the command's interrupts (`meson_mx_sdhc_request_done()`).
    pub(crate) fn disable_irqs(&self) {
        // The SDIO card interrupt stays as it is, and is signalled if it latched meanwhile.
        self.sdio.end_cmd(self.regs);
    }

    /// Disables the command's interrupts in `ICTL`, DAT1's kept as they are.
    ///
    /// `ISTA` is left.
    pub(crate) fn mask_cmd_irqs(&self) {
        self.sdio.write_cmd_ictl(self.regs, regs::ICTL::zeroed());
    }

    /// Sets the RX clock phase.
    pub(crate) fn set_rx_phase(&self, phase: u32) {
        self.regs
            .update(regs::CLK2, |r| r.with_rx_clk_phase(regs::phase(phase)));
    }
}
