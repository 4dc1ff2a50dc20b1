// SPDX-License-Identifier: GPL-2.0

//! The stop command (CMD12, the request's `stop`) after a failed multi-block transfer.
//!
//! The MMC core gives every multi-block transfer a stop command. After a successful transfer
//! the controller sends CMD12 itself (`MISC.MANUAL_STOP` clear), which is all the C driver
//! relies on; after a failed one nothing says that it does. FreeBSD's `aml8726_sdxc-m8.c`
//! says the automatic stop follows a successful transfer only and sends the request's stop
//! itself after any error; Amlogic's `aml_sdhc_m8.c` sends one (`aml_sdhc_send_stop()`) after
//! a timeout or a FIFO error on an eMMC (not after a CRC error, not on an SD card). A card left
//! in its sending-data or receiving-data state takes no command but CMD12 and CMD13: the
//! core's recovery (CMD13, then CMD12) would have to bring it back. So once the controller is
//! reset after the error (`Sdhc::quiesce`), the driver sends the stop itself, as `sdhci` and
//! `meson-mx-sdio` do after a data error, and gives it its response, or its error: the core
//! finds the card in its transfer state again.
//! `logic::stop_after_error` says after which errors.
//!
//! The stop is polled, not completed by an interrupt: the request is still being completed
//! (by the interrupt thread, whose line stays masked until it returns, or by the deadline).

use kernel::{
    io::poll::read_poll_timeout,
    prelude::*,
    time::Delta, //
};

use crate::mmc::{
    Command,
    Request, //
};

use crate::{
    controller::Sdhc,
    hw::CmdInfo,
    irq::Errors,
    logic,
    regs, //
};

/// Between two reads of `ISTA` while the stop waits for its response.
const POLL_SLEEP: Delta = Delta::from_micros(20);

impl Sdhc {
    /// Sends the stop command of `mrq`, whose command and data failed as `errors` say, if it has
    /// one and those errors may have left the card in its data state.
    ///
    /// The stop gets its response, or its error, and the controller is reset again if it failed.
    /// The caller has reset the controller after the error.
    pub(crate) fn stop_after_error(&self, mrq: &Request, errors: &Errors) {
        let Some(stop) = mrq.stop() else {
            return;
        };
        if !logic::stop_after_error(errors.cmd, errors.data) {
            return;
        }
        let sent = self.send_stop(stop, self.ready_wait(mrq));
        if let Err(e) = sent {
            dev_dbg!(
                self.dev,
                "CMD{} after the failed CMD{}: {:?}\n",
                stop.opcode(),
                mrq.cmd().opcode(),
                e
            );
            stop.set_error(e);
            self.hw().reset();
        }
        self.debugfs.stats().record_error_stop(sent.is_ok());
    }

    /// Sends `stop`, waits for its response, then for the controller to be idle and, after an R1b
    /// stop (a write's), for the card to release DAT0, each for at most `wait`, and reads the
    /// response into it.
    ///
    /// `ETIMEDOUT` without a response or past the wait, `EILSEQ` for a response that failed its CRC
    /// check.
    fn send_stop(&self, stop: &Command, wait: Delta) -> Result {
        let hw = self.hw();
        let opcode = stop.opcode();
        hw.start_polled_cmd(&CmdInfo::new(stop, None, None))?;
        let ista = read_poll_timeout(
            || Ok(self.regs.read(regs::ISTA).into_raw()),
            |ista| ista & logic::RESP_DONE_IRQS != 0,
            POLL_SLEEP,
            wait,
        )
        .map(regs::ISTA::from_raw)
        .map_err(|_| ETIMEDOUT)?;
        if ista.resp_timeout() {
            return Err(ETIMEDOUT);
        }
        if ista.resp_err_crc() {
            return Err(EILSEQ);
        }
        hw.wait_cmd_ready(opcode, wait)?;
        if stop.resp_busy() {
            hw.wait_card_released(opcode, wait)?;
        }
        hw.read_response_into(stop);
        Ok(())
    }
}
