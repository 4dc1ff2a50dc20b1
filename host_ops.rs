// SPDX-License-Identifier: GPL-2.0

//! The MMC host callbacks of the controller.
//!
//! Each is implemented in the file named for it.

use kernel::prelude::*;

use crate::mmc::{
    Host,
    HostOps,
    Ios,
    Request,
    Tuning, //
};

use crate::{
    controller::SdhcHost,
    regs, //
};

#[vtable]
impl HostOps for SdhcHost {
    fn request(host: &Host<Self>, mrq: Request) {
        SdhcHost::start_request(host, mrq);
    }

    fn pre_req(host: &Host<Self>, mrq: &crate::mmc::PreReqRequest) {
        host.data().sdhc.pre_request(mrq);
    }

    fn post_req(host: &Host<Self>, mrq: &crate::mmc::PostReqRequest, _error: Option<Error>) {
        host.data().sdhc.post_request(mrq);
    }

    fn set_ios(host: &Host<Self>, ios: &Ios) {
        host.data().set_ios(ios);
    }

    fn card_busy(host: &Host<Self>) -> bool {
        host.data().sdhc.regs.read(regs::STAT).dat3_0().get() == 0
    }

    fn execute_tuning(host: &Host<Self>, tuning: &Tuning<'_>, opcode: u32) -> Result {
        host.data().execute_tuning(tuning, opcode)
    }

    fn enable_sdio_irq(host: &Host<Self>, enable: bool) {
        let sdhc = &host.data().sdhc;
        if enable {
            host.data().keep_awake_for_sdio(true);
        }
        sdhc.sdio.enable(&sdhc.regs, enable);
        SdhcHost::watch_sdio_irq(&host.data().watchdog);
        if !enable {
            host.data().keep_awake_for_sdio(false);
        }
    }

    fn ack_sdio_irq(host: &Host<Self>) {
        host.data().sdhc.ack_sdio_irq();
        SdhcHost::watch_sdio_irq(&host.data().watchdog);
    }
}
