// SPDX-License-Identifier: GPL-2.0

//! Starts requests on the controller.
//!
//! A request starts on an idle controller, or else once the requests of the other slots
//! before it ended, its slot's bus settings, its data's path (in place or through the bounce
//! buffer), then its first command (SET_BLOCK_COUNT if the core asks for one), and the command
//! that follows another; and `pre_req`, which maps a write that will go in place while the
//! previous request runs.

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
        Bus,
        Cur,
        Path,
        Sdio,
        SdioHost,
        Stage,
        Timers, //
    },
    hw::{
        self,
        CmdRegs, //
    },
    logic::{
        data_path::DataPath,
        ports::{
            next_port,
            BusSettings,
            PORTS, //
        },
        timeout::command_timeout_ms, //
    },
    regs, //
};

/// Returns the command of `stage` of `mrq`, if the request has one.
pub(crate) fn command(mrq: &Request, stage: Stage) -> Option<&Command> {
    match stage {
        Stage::Sbc => mrq.sbc(),
        Stage::Cmd => Some(mrq.cmd()),
        Stage::Stop => mrq.stop(),
    }
}

/// Returns how long the command of `stage` may take ([`command_timeout_ms`]).
///
/// With data, at the card clock `hz` on four lines or one (`four`).
fn timeout(mrq: &Request, stage: Stage, cmd: &Command, hz: u32, four: bool) -> Delta {
    let data_len = match stage {
        Stage::Cmd => mrq.data().map(|d| d.len()),
        Stage::Sbc | Stage::Stop => None,
    };
    let ms = command_timeout_ms(cmd.busy_timeout_ms(), data_len, hz, four);
    Delta::from_millis(i64::from(ms))
}

/// Starts the command of `stage` of the request in `cur` and arms its slot's timer for it.
///
/// Called with the bus held, so that the timer is armed for the command on the bus: a later
/// command's arming cannot go before it (`mod_timer()` at each command in the C driver).
pub(crate) fn start(sdio: &Sdio, cur: &mut Cur, timers: &Timers, stage: Stage) {
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
    timers.arm(cur.port, cur.deadline);
    hw::start_cmd(&sdio.regs, cur.port, cmd.arg(), &r);
}

/// Sets the data's DMA address as the path rule says.
///
/// The request's one segment of whole, aligned words mapped (by `pre_req` for a write, else here),
/// or the bounce buffer with a write's data copied in. Returns the path, or the error that fails
/// the request: a request neither can take (without a bounce buffer, a segment the C driver refuses
/// too).
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

/// Maps the data of a write that will go to the controller in place, while the previous request
/// runs (`pre_req`, as the SDHC driver does).
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

/// Writes the bus settings `s` to the controller.
///
/// The bus width goes first, then the card clock (a failure is logged and returned). The
/// controller's settings are noted in `bus`, the write counted.
pub(crate) fn write_settings(sdio: &Sdio, bus: &mut Bus, s: BusSettings) -> Result {
    sdio.stats.lock().record_settings_write();
    hw::set_bus_width(&sdio.regs, s.four);
    let r = sdio.clkc.set_rate(s.hz).inspect_err(|e| {
        dev_warn!(
            sdio.dev,
            "failed to set MMC clock to {}: {}\n",
            s.hz,
            e.to_errno()
        );
    });
    bus.mux.written(r.is_ok().then_some(s));
    r
}

/// A request that could not start, with the error that fails it.
type Unstarted = (DmaRequest, Error);

/// Starts `mrq` of the slot on `port` on the idle bus.
///
/// Its slot's settings are written if the controller has others, its data set up and its
/// first command started.
///
/// Returns the request back, with its error, when it cannot start; the caller completes it
/// ([`fail`]) once the bus lock is released.
fn begin(sdio: &Sdio, bus: &mut Bus, port: usize, mrq: Request) -> Result<(), Unstarted> {
    bus.last = port;
    let mut mrq = DmaRequest::new(mrq);
    if let Some(s) = bus.mux.unwritten(port) {
        if let Err(e) = write_settings(sdio, bus, s) {
            return Err((mrq, e));
        }
    }
    let path = match set_up_data(sdio, &mut mrq) {
        Ok(p) => p,
        Err(e) => return Err((mrq, e)),
    };
    let first = if mrq.sbc().is_some() {
        Stage::Sbc
    } else {
        Stage::Cmd
    };
    let cur = bus.cur.insert(Cur {
        mrq,
        port,
        stage: first,
        path,
        without_crc7: false,
        deadline: Instant::<Monotonic>::now(),
        seq: 0,
        cmd_error: None,
        data_error: None,
    });
    start(sdio, cur, &bus.timers, first);
    Ok(())
}

/// Completes a request that could not start with its error, and counts it.
fn fail(sdio: &Sdio, (mrq, e): Unstarted) {
    dev_err!(sdio.dev, "request not started: error {}\n", e.to_errno());
    sdio.stats.lock().req.record_setup_error();
    mrq.cmd().set_error(e);
    mrq.done();
}

/// The waiting requests that could not start, to complete once the bus lock is released.
pub(crate) struct Failed([Option<Unstarted>; PORTS]);

impl Failed {
    /// Completes each with its error ([`fail`]).
    pub(crate) fn complete(self, sdio: &Sdio) {
        for f in self.0.into_iter().flatten() {
            fail(sdio, f);
        }
    }
}

/// Starts the waiting request whose slot's turn it is ([`next_port`]) on the idle bus.
///
/// The next one in turn is tried when it cannot start; those that could not are returned.
pub(crate) fn start_waiting(sdio: &Sdio, bus: &mut Bus) -> Failed {
    let mut failed = Failed([None, None, None]);
    while bus.cur.is_none() {
        let Some(port) = next_port(bus.waiting_ports(), bus.last) else {
            break;
        };
        let Some(mrq) = bus.waiting[port].take() else {
            break;
        };
        if let Err(f) = begin(sdio, bus, port, mrq) {
            failed.0[port] = Some(f);
        }
    }
    failed
}

/// Handles the `request` callback.
///
/// It fails the request with the last `set_ios` error; starts it on an idle bus, or leaves it
/// waiting for its turn while another slot's request runs (its commands arm the host's timer
/// when they start, [`start`]).
pub(crate) fn request(host: &SdioHost, mrq: Request) {
    let sdio = &host.sdio;
    let set_ios_error = *host.set_ios_error.lock();
    if let Some(e) = set_ios_error {
        sdio.stats.lock().req.record_setup_error();
        mrq.cmd().set_error(e);
        mrq.done();
        return;
    }
    let mut bus = sdio.bus.lock();
    let mut failed = None;
    let mut waits = false;
    if bus.cur.is_some() {
        if bus.waiting[host.port].is_none() {
            bus.waiting[host.port] = Some(mrq);
            waits = true;
        } else {
            // The MMC core issued a request before the last one was done.
            failed = Some((DmaRequest::new(mrq), EBUSY));
        }
    } else if let Err(f) = begin(sdio, &mut bus, host.port, mrq) {
        failed = Some(f);
    }
    drop(bus);
    if waits {
        sdio.stats.lock().record_waited();
    }
    if let Some(f) = failed {
        fail(sdio, f);
    }
}
