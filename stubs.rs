// SPDX-License-Identifier: GPL-2.0

//! The driver without some of its features: for each feature it is built without, a module
//! that the crate root uses under the feature module's name, with the feature's types and
//! methods as the rest of the driver calls them, doing nothing (as the kernel's `static inline`
//! stubs do) or what the C driver does. The code that calls a feature is the same with it and
//! without.

/// Without a bounce buffer: requests of one DMA segment, mapped in place, as the C driver's.
#[cfg(not(feature = "bounce"))]
pub(crate) mod bounce {
    use kernel::{
        device::{
            Bound,
            Device, //
        },
        prelude::*, //
    };

    use crate::{
        logic::{
            self,
            Limits, //
        },
        mmc::DmaRequest, //
    };

    /// No bounce buffer.
    pub(crate) struct Buffers;

    impl Buffers {
        /// Nothing to allocate.
        pub(crate) fn allocate(_dev: &Device<Bound>) -> Self {
            Self
        }

        /// The C driver's queue limits: one segment, 128 KiB.
        pub(crate) fn limits(&self) -> Limits {
            logic::c_driver_limits()
        }

        /// No bounce policy: every request maps to one DMA segment.
        pub(crate) fn into_bouncer(self, _merge_boundary: usize) -> Bouncer {
            Bouncer
        }
    }

    /// A bounce buffer, of which there is none: no request is ever on one.
    #[derive(Clone, Copy)]
    pub(crate) enum Slot {}

    impl Slot {
        /// The buffer's index.
        pub(crate) fn index(self) -> usize {
            match self {}
        }

        /// The buffer's bit in a set of buffers.
        pub(crate) fn bit(self) -> u32 {
            match self {}
        }

        /// No buffer is in any set.
        pub(crate) fn in_mask(_mask: u32) -> core::iter::Empty<Slot> {
            core::iter::empty()
        }
    }

    /// Where the controller finds a request's data.
    pub(crate) struct DataSetup {
        /// The DMA address to program.
        pub(crate) dma_addr: u64,
        /// Never a bounce buffer.
        pub(crate) slot: Option<Slot>,
    }

    /// The data path of a host without a bounce buffer: the request's own memory.
    pub(crate) struct Bouncer;

    impl Bouncer {
        /// Maps the request's data, which must be one DMA segment, for the controller
        /// (`meson_mx_sdhc_map_dma()`): its address.
        pub(crate) fn set_up(
            &self,
            dev: &Device,
            mrq: &mut DmaRequest,
            _force: bool,
            _copy_in_fault: &dyn Fn() -> bool,
        ) -> Result<DataSetup> {
            let segments = mrq.map_count().inspect_err(|e| {
                dev_err!(dev, "cannot map the request's data: {:?}\n", e);
            })?;
            let direct = if segments == 1 {
                mrq.dma_for_device()
            } else {
                None
            };
            match direct {
                Some((dma_addr, len)) if len == mrq.data_len() => Ok(DataSetup {
                    dma_addr,
                    slot: None,
                }),
                _ => {
                    dev_err!(
                        dev,
                        "request of {} bytes mapped to {} DMA segments\n",
                        mrq.data_len(),
                        segments
                    );
                    mrq.unmap();
                    Err(EINVAL)
                }
            }
        }

        /// No buffer to free.
        pub(crate) fn release(&self, slot: Slot) {
            match slot {}
        }

        /// No buffer to copy out of.
        pub(crate) fn complete(
            &self,
            _dev: &Device,
            _mrq: &DmaRequest,
            slot: Slot,
            _len: u32,
        ) -> Result {
            match slot {}
        }
    }
}

/// With one bounce buffer (no double buffering): the buffer is taken when a request starts and
/// freed when it completes; nothing is prepared in `pre_req` or left for `post_req`.
#[cfg(all(feature = "bounce", not(feature = "double_buffer")))]
pub(crate) mod slots {
    /// The bounce buffer: only the first exists.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct Slot;

    impl Slot {
        /// The buffer's index.
        pub(crate) fn index(self) -> usize {
            0
        }

        /// The buffer's bit in a set of buffers.
        pub(crate) fn bit(self) -> u32 {
            1
        }

        /// The buffer, if its bit is set in `mask`.
        pub(crate) fn in_mask(mask: u32) -> core::option::IntoIter<Slot> {
            (mask & 1 != 0).then_some(Slot).into_iter()
        }
    }

    /// How the request starting got its buffer.
    pub(crate) struct Start(Option<Slot>);

    impl Start {
        /// The buffer taken (never prepared); `None` if it is in use.
        pub(crate) fn taken(self) -> Option<(Slot, bool)> {
            self.0.map(|slot| (slot, false))
        }
    }

    /// Whether the one buffer is in use.
    pub(crate) struct Slots {
        /// Whether the buffer exists.
        exists: bool,
        /// Whether a request holds it (or it is held back after an error).
        busy: bool,
    }

    impl Slots {
        /// `count` buffers: the first exists if `count` is not 0.
        pub(crate) const fn new(count: usize) -> Self {
            Self {
                exists: count != 0,
                busy: false,
            }
        }

        /// Nothing is prepared, so nothing goes stale.
        pub(crate) fn drop_stale(&mut self, _owner: usize) {}

        /// `request`: the buffer, now the controller's, if it is free.
        pub(crate) fn start(&mut self, _owner: usize, _cookie: i32) -> Start {
            let free = self.exists && !self.busy;
            self.busy |= free;
            Start(free.then_some(Slot))
        }

        /// The request in flight completed: the buffer is free (nothing waits for
        /// `post_req`).
        pub(crate) fn finish(&mut self, _slot: Slot, _read_ok: Option<u32>) -> bool {
            self.busy = false;
            false
        }

        /// Read data is copied out at completion.
        pub(crate) fn defers_copy_out(&self, _slot: Slot) -> bool {
            false
        }
    }
}

/// Without a software deadline: a request waits for its interrupt.
#[cfg(not(feature = "deadline"))]
pub(crate) mod deadline {
    use crate::{
        controller::{
            Sdhc,
            SdhcHost, //
        },
        mmc::{
            Host,
            Request, //
        }, //
    };

    /// No deadline.
    pub(crate) struct Deadline;

    impl Deadline {
        /// Nothing to compute.
        pub(crate) fn new(_sdhc: &Sdhc, _mrq: &Request) -> Self {
            Self
        }

        /// No timer to arm.
        pub(crate) fn arm(&self, _host: &Host<SdhcHost>) {}

        /// No clock to start again when the command is sent.
        pub(crate) fn restart(&mut self) {}
    }

    /// The bus width is not needed.
    pub(crate) struct BusLines;

    impl BusLines {
        /// Nothing to keep.
        pub(crate) fn new() -> Self {
            Self
        }

        /// Nothing to keep.
        pub(crate) fn set(&self, _lines: u32) {}
    }
}

/// Without SDIO card interrupts: the MMC core polls the card; every `ICTL` write is a
/// command's, as in the C driver.
#[cfg(not(feature = "sdio_irq"))]
pub(crate) mod sdio_irq {
    use kernel::{
        io::Io,
        prelude::*, //
    };

    use crate::{
        logic::CMD_IRQS,
        regs::{
            self,
            Regs, //
        }, //
    };

    /// No SDIO card interrupt.
    pub(crate) struct SdioIrqs;

    impl SdioIrqs {
        /// Nothing to set up.
        pub(crate) fn new() -> Self {
            Self
        }

        /// Writes the `ICTL` enables of a command's interrupts `cmd`.
        pub(crate) fn write_cmd_ictl(&self, regs: &Regs, cmd: regs::ICTL) {
            regs.write_reg(cmd);
        }

        /// Disables and acknowledges the interrupts of the command just finished.
        pub(crate) fn end_cmd(&self, regs: &Regs) {
            regs.write_reg(regs::ICTL::zeroed());
            regs.write_reg(regs::ISTA::from_raw(CMD_IRQS));
        }

        /// Nothing to program again after a controller reset.
        pub(crate) fn restore(&self, _regs: &Regs) {}
    }
}

/// Without statistics: no debugfs file, nothing counted, the test knobs at their defaults.
#[cfg(not(feature = "stats"))]
pub(crate) mod stats {
    use kernel::prelude::*;

    use crate::{
        bounce::Buffers,
        logic::Limits,
        mmc::{
            HostOps,
            UnregisteredHost, //
        }, //
    };

    /// No debugfs file.
    pub(crate) struct HostDebugfs;

    impl HostDebugfs {
        /// Nothing to show.
        pub(crate) fn new(_limits: Limits, _buffers: &Buffers, _merge_boundary: usize) -> Self {
            Self
        }

        /// Registers `host`, with no file.
        pub(crate) fn register<T: HostOps + 'static, B>(
            host: UnregisteredHost<'_, T>,
            _debugfs: impl for<'x> Fn(&'x T) -> &'x Self,
            _bounce: impl for<'x> Fn(&'x T) -> &'x B,
        ) -> Result {
            host.register()
        }

        /// No counter.
        pub(crate) fn stats(&self) -> NoStats {
            NoStats
        }

        /// Requests that map to one segment go direct.
        pub(crate) fn force_bounce(&self) -> bool {
            false
        }

        /// A read's flush is waited for.
        pub(crate) fn read_flush_wait(&self) -> bool {
            true
        }

        /// Copies into a bounce buffer are whole.
        pub(crate) fn take_copy_in_fault(&self) -> bool {
            false
        }
    }

    /// The counters, none of which counts.
    pub(crate) struct NoStats;

    impl NoStats {
        pub(crate) fn record_late_interrupt(&mut self) {}

        pub(crate) fn record_late_status(&mut self) {}

        pub(crate) fn record_setup_error(&mut self) {}

        pub(crate) fn record_quiesce(&mut self, _waited_us: u32, _idle: bool) {}

        pub(crate) fn record_held_back(&mut self) {}

        pub(crate) fn record_held_forced(&mut self) {}

        pub(crate) fn record_error_stop(&mut self, _ok: bool) {}

        #[cfg(feature = "double_buffer")]
        pub(crate) fn record_prepared(&mut self) {}

        #[cfg(feature = "double_buffer")]
        pub(crate) fn record_post_req_copy(&mut self) {}

        #[cfg(feature = "double_buffer")]
        pub(crate) fn record_pre_mapped(&mut self) {}

        #[cfg(feature = "deadline")]
        pub(crate) fn record_deadline_rearm(&mut self) {}

        #[cfg(feature = "deadline")]
        pub(crate) fn record_deadline_completed(&mut self) {}
    }
}
