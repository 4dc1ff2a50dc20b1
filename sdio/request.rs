// SPDX-License-Identifier: GPL-2.0

//! Starting a request: its data's path (in place or through the bounce buffer), then its first
//! command (SET_BLOCK_COUNT if the core asks for one), and the command that follows another;
//! and `pre_req`, which maps a write that will go in place while the previous request runs.

use kernel::{
    prelude::*,
    sync::atomic::Full,
    time::{
        Delta,
        Instant,
        Monotonic, //
    }, //
};

use crate::mmc::{
    Command,
    DmaRequest,
    PreReqRequest,
    Request, //
};

use crate::{
    host::{
        Cur,
        Path,
        Sdio,
        SdioHost,
        Stage, //
    },
    hw::{
        self,
        CmdRegs, //
    },
    logic::{
        data_path::DataPath,
        timeout::command_timeout_ms, //
    },
    regs, //
};

/// The command of `stage` of `mrq`, if the request has one.
pub(crate) fn command(mrq: &Request, stage: Stage) -> Option<&Command> {
    match stage {
        Stage::Sbc => mrq.sbc(),
        Stage::Cmd => Some(mrq.cmd()),
        Stage::Stop => mrq.stop(),
    }
}

/// How long the command of `stage` may take ([`command_timeout_ms`]): with data, at the card
/// clock `hz` on four lines or one (`four`).
fn timeout(mrq: &Request, stage: Stage, cmd: &Command, hz: u32, four: bool) -> Delta {
    let data_len = match stage {
        Stage::Cmd => mrq.data().map(|d| d.len()),
        Stage::Sbc | Stage::Stop => None,
    };
    let ms = command_timeout_ms(cmd.busy_timeout_ms(), data_len, hz, four);
    Delta::from_millis(i64::from(ms))
}

/// Starts the command of `stage` of the request in `cur` and sets its deadline.
///
/// The timer is armed when a request starts; when it fires before the deadline of the command
/// then current, it arms itself again for the rest (`irq::expired`).
pub(crate) fn start(sdio: &Sdio, cur: &mut Cur, stage: Stage) {
    let Some(cmd) = command(&cur.mrq, stage) else {
        return;
    };
    let data = if stage == Stage::Cmd {
        cur.mrq.data()
    } else {
        None
    };
    let four = hw::four_bit(&sdio.regs);
    let r = CmdRegs::new(cmd, data, four);
    if let Some(d) = data {
        d.set_bytes_xfered(0);
    }
    cur.stage = stage;
    cur.without_crc7 = r.without_crc7();
    cur.deadline =
        Instant::<Monotonic>::now() + timeout(&cur.mrq, stage, cmd, sdio.clkc.rate(), four);
    cur.seq = sdio.started.fetch_add(1, Full).wrapping_add(1);
    hw::start_cmd(&sdio.regs, sdio.slot, cmd.arg(), &r);
}

/// Sets the data's DMA address as the path rule says: the request's one segment of whole,
/// aligned words mapped (by `pre_req` for a write, else here), or the bounce buffer with a
/// write's data copied in. Returns the path, or the error that fails the request: a request
/// neither can take (without a bounce buffer, a segment the C driver refuses too).
fn set_up_data(sdio: &Sdio, mrq: &mut DmaRequest) -> Result<Path> {
    let Some((sg_len, offset, len)) = mrq
        .data()
        .map(|d| (d.sg_len(), d.sg_first_offset(), d.len()))
    else {
        return Ok(Path::None);
    };
    let (addr, path) = match sdio.path_rule.choose(sg_len, offset, len) {
        Ok(DataPath::Direct) => {
            if mrq.pre_mapped_segments().is_none() && mrq.map_count()? != 1 {
                return Err(EINVAL);
            }
            let (addr, _) = mrq.dma_for_device().ok_or(EINVAL)?;
            (addr, Path::Direct)
        }
        Ok(DataPath::Bounce) => {
            let bounce = sdio.bounce.as_ref().ok_or(EINVAL)?;
            // The CPU copies the data: a mapping `pre_req` made goes first.
            mrq.unmap();
            if mrq.data().is_some_and(|d| d.is_write()) && mrq.copy_to_buffer(bounce, len) != len {
                return Err(EIO);
            }
            (u64::from(bounce.dma_address()), Path::Bounce)
        }
        Err(e) => {
            dev_err!(sdio.dev, "cannot transfer the request's data: {:?}\n", e);
            return Err(EINVAL);
        }
    };
    // The controller takes 32-bit addresses.
    let addr = u32::try_from(addr).map_err(|_| EINVAL)?;
    sdio.regs.write_reg(regs::ADDR::from_raw(addr));
    Ok(path)
}

/// `pre_req`: maps the data of a write that will go to the controller in place, while the
/// previous request runs (as the SDHC driver does).
pub(crate) fn pre_request(sdio: &Sdio, mrq: &PreReqRequest) {
    let Some(d) = mrq.data() else {
        return;
    };
    if sdio
        .path_rule
        .pre_map(d.sg_len(), d.sg_first_offset(), d.len(), d.is_write())
        && mrq.pre_map()
    {
        sdio.stats.lock().req.record_pre_mapped();
    }
}

/// The `request` callback: fails the request with the last `set_ios` error, sets up its data
/// and starts its first command.
pub(crate) fn request(host: &SdioHost, mrq: Request) {
    let sdio = &host.sdio;
    if let Some(e) = *host.set_ios_error.lock() {
        sdio.stats.lock().req.record_setup_error();
        mrq.cmd().set_error(e);
        mrq.done();
        return;
    }
    let mut guard = sdio.cur.lock();
    let mut mrq = DmaRequest::new(mrq);
    let path = match set_up_data(sdio, &mut mrq) {
        Ok(p) => p,
        Err(e) => {
            drop(guard);
            dev_err!(sdio.dev, "request not started: error {}\n", e.to_errno());
            sdio.stats.lock().req.record_setup_error();
            mrq.cmd().set_error(e);
            mrq.done();
            return;
        }
    };
    let first = if mrq.sbc().is_some() {
        Stage::Sbc
    } else {
        Stage::Cmd
    };
    let cur = guard.insert(Cur {
        mrq,
        stage: first,
        path,
        without_crc7: false,
        deadline: Instant::<Monotonic>::now(),
        seq: 0,
        cmd_error: None,
        data_error: None,
    });
    start(sdio, cur, first);
    host.arm(cur.deadline);
}
