// SPDX-License-Identifier: GPL-2.0

//! The controller state the MMC callbacks of its slots' hosts, the interrupt and the timers
//! share, and the hosts' callbacks (implemented in `request.rs`, `irq.rs` and `ios.rs`).

use kernel::{
    device::Device,
    dma::Coherent,
    new_mutex,
    prelude::*,
    str::CString,
    sync::{
        aref::ARef,
        atomic::Atomic,
        Arc,
        Mutex, //
    },
    time::{
        Instant,
        Monotonic, //
    }, //
};

use crate::kernel_ext::workqueue::{
    alloc::Flags,
    timer::{
        Timer,
        TimerHandler,
        TimerRef, //
    }, //
};
use crate::mmc::{
    DmaRequest,
    Host,
    HostOps,
    Ios,
    PreReqRequest,
    Request, //
};

use crate::{
    clkc::Clkc,
    hw,
    logic::ports::{
        Mux,
        PORTS, //
    },
    logic::{
        counters::SlotStats,
        data_path::PathRule,
        stats::ErrorKind, //
    },
    regs::Regs,
    stats_file::StatsFile, //
};

/// The step of a request its current command is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// SET_BLOCK_COUNT (CMD23) before the command.
    Sbc,
    /// The request's command, with its data if any.
    Cmd,
    /// STOP_TRANSMISSION (CMD12) after the data.
    Stop,
}

/// Where the data of the request in flight goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// No data.
    None,
    /// The request's one segment, DMA-mapped, to the controller in place.
    Direct,
    /// The bounce buffer, copied from before a write and into the request after a read.
    Bounce,
}

/// The request in flight.
pub(crate) struct Cur {
    pub(crate) mrq: DmaRequest,
    /// The port of its slot.
    pub(crate) port: usize,
    pub(crate) stage: Stage,
    pub(crate) path: Path,
    /// The current command has no CRC7 to check.
    pub(crate) without_crc7: bool,
    /// When the current command times out.
    pub(crate) deadline: Instant<Monotonic>,
    /// The current command's number ([`Sdio::started`] when it started).
    pub(crate) seq: u32,
    /// What went wrong with a command of the request, for the statistics (the first error).
    pub(crate) cmd_error: Option<ErrorKind>,
    /// What went wrong with its data.
    pub(crate) data_error: Option<ErrorKind>,
}

/// The slots' timers, armed for each command when it starts.
///
/// Each entry is set when its slot's host is created and cleared when the host drops its data,
/// after stopping the timer: the timer's data holds the controller, which holds these.
pub(crate) struct Timers([Option<TimerRef<Watchdog>>; PORTS]);

impl Timers {
    /// Arms the timer of the slot on `port` for `deadline`, moving an armed one's expiry.
    pub(crate) fn arm(&self, port: usize, deadline: Instant<Monotonic>) {
        if let Some(t) = self.0.get(port).and_then(Option::as_ref) {
            t.arm(crate::irq::remaining(deadline));
        }
    }

    /// Sets the timer of the slot on `port` to `timer` and returns the one it had.
    fn replace(
        &mut self,
        port: usize,
        timer: Option<TimerRef<Watchdog>>,
    ) -> Option<TimerRef<Watchdog>> {
        let entry = self.0.get_mut(port)?;
        core::mem::replace(entry, timer)
    }
}

/// The controller's bus, which the slots take in turn.
///
/// It holds the request on it, those waiting for it (at most one a slot: the MMC core issues a
/// host's next request once the last is done), the slots' bus settings and their timers.
pub(crate) struct Bus {
    /// The request in flight.
    pub(crate) cur: Option<Cur>,
    /// The request of each port waiting for the bus.
    pub(crate) waiting: [Option<Request>; PORTS],
    /// The port served last.
    pub(crate) last: usize,
    /// The slots' bus settings and those on the controller.
    pub(crate) mux: Mux,
    /// The slots' timers.
    pub(crate) timers: Timers,
}

impl Bus {
    /// Returns an idle bus, with nothing waiting and no settings written.
    pub(crate) const fn new() -> Self {
        Self {
            cur: None,
            waiting: [None, None, None],
            last: 0,
            mux: Mux::new(),
            timers: Timers([None, None, None]),
        }
    }

    /// Returns which ports have a request waiting.
    pub(crate) fn waiting_ports(&self) -> [bool; PORTS] {
        self.waiting.each_ref().map(Option::is_some)
    }
}

/// A module clock kept enabled, disabled when dropped.
pub(crate) struct EnabledClock(kernel::clk::Clk);

impl EnabledClock {
    /// Prepares and enables `clk`.
    pub(crate) fn new(clk: kernel::clk::Clk) -> Result<Self> {
        clk.prepare_enable()?;
        Ok(Self(clk))
    }
}

impl Drop for EnabledClock {
    fn drop(&mut self) {
        self.0.disable_unprepare();
    }
}

/// The controller.
#[pin_data]
pub(crate) struct Sdio {
    pub(crate) dev: ARef<Device>,
    pub(crate) regs: Regs,
    /// The card clock, dropped before the module clock.
    pub(crate) clkc: Clkc,
    pub(crate) _core_clk: EnabledClock,
    /// The bounce buffer, coherent memory of `bounce_size` bytes (none with 0).
    pub(crate) bounce: Option<Coherent<[u8]>>,
    /// Which requests go to the controller in place, which through the bounce buffer.
    pub(crate) path_rule: PathRule,
    /// The counters of the debugfs file `stats`.
    #[pin]
    pub(crate) stats: StatsFile<SlotStats>,
    /// The bus, with the request in flight, those waiting and the slots' settings.
    #[pin]
    pub(crate) bus: Mutex<Bus>,
    /// `IRQS` as the interrupt handler read it, for its thread.
    pub(crate) irqs: Atomic<u32>,
    /// The number of commands started, counted before each `SEND` write.
    pub(crate) started: Atomic<u32>,
    /// [`Self::started`] when the interrupt handler read `IRQS`.
    ///
    /// The thread takes the status for the current command only if it is that command's. A command
    /// the timer ended may have interrupted before its soft reset, and its thread run only after
    /// the next command started.
    pub(crate) irq_seq: Atomic<u32>,
}

impl Sdio {
    /// Quiesces the controller.
    ///
    /// A soft reset, as the C driver does after an error.
    pub(crate) fn quiesce(&self) {
        hw::soft_reset(&self.regs);
    }

    /// Quiesces the controller after an error, and counts it.
    ///
    /// The settings on the controller count as unknown afterwards (`bus`), so that the next
    /// request writes its slot's.
    pub(crate) fn quiesce_after_error(&self, bus: &mut Bus) {
        self.quiesce();
        bus.mux.written(None);
        self.stats.lock().record_reset();
    }
}

/// A host's timer, which ends a command the controller never reported.
///
/// Each command, of whichever request, arms its slot's timer for its own deadline when it
/// starts, under the bus lock, as the C driver arms its timer at each command
/// ([`on_expiry`](crate::logic::timeout::on_expiry) says what a timer does when it fires).
pub(crate) struct Watchdog {
    pub(crate) sdio: Arc<Sdio>,
    /// The port of the timer's slot.
    pub(crate) port: usize,
}

impl TimerHandler for Watchdog {
    fn expired(timer: &TimerRef<Self>) {
        crate::irq::expired(timer);
    }
}

/// The driver data of a slot's MMC host (in its private area).
#[pin_data(PinnedDrop)]
pub(crate) struct SdioHost {
    pub(crate) sdio: Arc<Sdio>,
    /// The slot's port on the controller's mux (the slot node's `reg`, below [`PORTS`]).
    pub(crate) port: usize,
    /// The timer, stopped first when the host drops its data.
    pub(crate) watchdog: Timer<Watchdog>,
    /// Why the last `set_ios` failed.
    ///
    /// Requests fail with it until one succeeds (`host->error` in the C driver).
    #[pin]
    pub(crate) set_ios_error: Mutex<Option<Error>>,
}

impl SdioHost {
    /// Returns the data of the host of the slot on `port` of `sdio`, with its timer (named
    /// after the slot's device `slot_dev`), the one its slot's commands arm.
    pub(crate) fn new(
        sdio: Arc<Sdio>,
        port: usize,
        slot_dev: &Device,
    ) -> impl PinInit<Self, Error> {
        let watchdog = || {
            let name = CString::try_from_fmt(fmt!("mmc_timer/{}", slot_dev.name()))?;
            let data = Watchdog {
                sdio: sdio.clone(),
                port,
            };
            Timer::new(&name, Flags::UNBOUND | Flags::MEM_RECLAIM, data)
        };
        let watchdog = watchdog();
        try_pin_init!(Self {
            watchdog: watchdog?,
            sdio,
            port,
            set_ios_error <- new_mutex!(None, "meson_mx_sdio_rs::set_ios_error"),
        }? Error)
        .pin_chain(|host| {
            host.watch_bus();
            Ok(())
        })
    }

    /// Makes the timer the one the commands of the host's slot arm ([`Timers`]).
    ///
    /// Called once the host's data is in place (its drop undoes it), before the host is added.
    fn watch_bus(&self) {
        let timer = TimerRef::clone(&self.watchdog);
        let mut bus = self.sdio.bus.lock();
        // A timer set before (none: each slot has a host of its own) drops after the lock.
        let old = bus.timers.replace(self.port, Some(timer));
        drop(bus);
        drop(old);
    }
}

#[pinned_drop]
impl PinnedDrop for SdioHost {
    fn drop(self: Pin<&mut Self>) {
        // The host is removed (or was never added): no request of it is in flight and no
        // callback arms its timer any more. Another slot's request may be on the bus: the
        // controller is reset only when idle.
        self.watchdog.stop();
        let mut bus = self.sdio.bus.lock();
        let timer = bus.timers.replace(self.port, None);
        if bus.cur.is_none() {
            self.sdio.quiesce();
        }
        drop(bus);
        drop(timer);
    }
}

#[vtable]
impl HostOps for SdioHost {
    fn request(host: &Host<Self>, mrq: Request) {
        crate::request::request(&host.data(), mrq);
    }

    fn set_ios(host: &Host<Self>, ios: &Ios) {
        crate::ios::set_ios(&host.data(), ios);
    }

    /// Maps a write that will go in place while the previous request runs.
    ///
    /// The layer's `post_req` undoes the mapping.
    fn pre_req(host: &Host<Self>, mrq: &PreReqRequest) {
        crate::request::pre_request(&host.data().sdio, mrq);
    }
}
