// SPDX-License-Identifier: GPL-2.0

//! Starting a request: its data's path (in place or through the bounce buffer), then its first
//! command (SET_BLOCK_COUNT if the core asks for one), and the command that follows another.

use kernel::{
    io::Io,
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
    regs, //
};

/// How long a command without a busy timeout of its own may take, as in the C driver.
const CMD_TIMEOUT_MS: i64 = 1000;

/// The command of `stage` of `mrq`, if the request has one.
pub(crate) fn command(mrq: &Request, stage: Stage) -> Option<&Command> {
    match stage {
        Stage::Sbc => mrq.sbc(),
        Stage::Cmd => Some(mrq.cmd()),
        Stage::Stop => mrq.stop(),
    }
}

/// How long the command of `stage` may take: its busy timeout, or 1 s; with data, the time the
/// data takes on the bus at the card clock `hz` on top.
fn timeout(mrq: &Request, stage: Stage, cmd: &Command, hz: u32, four: bool) -> Delta {
    let mut ms = match cmd.busy_timeout_ms() {
        0 => CMD_TIMEOUT_MS,
        t => i64::from(t),
    };
    if let (Stage::Cmd, Some(data)) = (stage, mrq.data()) {
        let lines = if four { 4 } else { 1 };
        let khz = (hz / 1000).max(1);
        ms += i64::from(data.len().saturating_mul(8) / lines / khz);
    }
    Delta::from_millis(ms)
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

/// Whether the request's data can go to the controller in place: one segment of whole,
/// aligned words (what the C driver takes, and all it takes).
fn direct(mrq: &DmaRequest) -> bool {
    mrq.data()
        .is_some_and(|d| d.sg_len() == 1 && d.sg_first_offset() % 4 == 0 && d.len() % 4 == 0)
}

/// Sets the data's DMA address: the request's one segment mapped, or the bounce buffer with a
/// write's data copied in. Returns the path, or the error that fails the request.
fn set_up_data(sdio: &Sdio, mrq: &mut DmaRequest) -> Result<Path> {
    let Some(len) = mrq.data().map(|d| d.len()) else {
        return Ok(Path::None);
    };
    let (addr, path) = if direct(mrq) {
        if mrq.map_count()? != 1 {
            return Err(EINVAL);
        }
        let (addr, _) = mrq.dma_for_device().ok_or(EINVAL)?;
        (addr, Path::Direct)
    } else {
        if len as usize > sdio.bounce.size() {
            return Err(EINVAL);
        }
        if mrq.data().is_some_and(|d| d.is_write()) && mrq.copy_to_buffer(&sdio.bounce, len) != len
        {
            return Err(EIO);
        }
        (u64::from(sdio.bounce.dma_address()), Path::Bounce)
    };
    // The controller takes 32-bit addresses.
    let addr = u32::try_from(addr).map_err(|_| EINVAL)?;
    sdio.regs.write_reg(regs::ADDR::from_raw(addr));
    Ok(path)
}

/// The `request` callback: fails the request with the last `set_ios` error, sets up its data
/// and starts its first command.
pub(crate) fn request(host: &SdioHost, mrq: Request) {
    if let Some(e) = *host.set_ios_error.lock() {
        mrq.cmd().set_error(e);
        mrq.done();
        return;
    }
    let sdio = &host.sdio;
    let mut guard = sdio.cur.lock();
    let mut mrq = DmaRequest::new(mrq);
    let path = match set_up_data(sdio, &mut mrq) {
        Ok(p) => p,
        Err(e) => {
            drop(guard);
            dev_err!(sdio.dev, "request not started: error {}\n", e.to_errno());
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
    });
    start(sdio, cur, first);
    host.arm(cur.deadline);
}
