// SPDX-License-Identifier: GPL-2.0

//! The driver without some of its features: for each feature it is built without, a module
//! that the crate root uses under the feature module's name, with the feature's types and
//! methods as the rest of the driver calls them, doing nothing (as the kernel's `static inline`
//! stubs do) or what the C driver does. The code that calls a feature is the same with it and
//! without.

/// Without a bounce buffer: requests of one DMA segment, as the C driver's.
#[cfg(not(feature = "bounce"))]
pub(crate) mod bounce {
    use core::marker::PhantomData;
    use kernel::{
        device::{
            Bound,
            Device, //
        },
        prelude::*, //
    };

    use crate::{
        logic,
        mmc::bounce::{
            policy::Limits,
            Bouncer, //
        }, //
    };

    /// No bounce buffer (for the device's lifetime `'a`, as the buffers would be).
    pub(crate) struct Buffers<'a>(PhantomData<&'a Device<Bound>>);

    impl<'a> Buffers<'a> {
        /// Nothing to allocate.
        pub(crate) fn allocate(_dev: &'a Device<Bound>) -> Self {
            Self(PhantomData)
        }

        /// The C driver's queue limits: one segment, 128 KiB.
        pub(crate) fn limits(&self) -> Limits {
            logic::c_driver_limits()
        }

        /// The bounce policy without buffers: every request maps to one DMA segment.
        pub(crate) fn into_bouncer(self, merge_boundary: usize) -> impl PinInit<Bouncer<'a>> {
            Bouncer::new([None, None], merge_boundary, logic::MAX_DIRECT_LEN, false)
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
        pub(crate) fn new(_sdhc: &Sdhc<'_>, _mrq: &Request) -> Self {
            Self
        }

        /// No timer to arm.
        pub(crate) fn arm(&self, _host: &Host<SdhcHost<'_>>) {}

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
        pub(crate) fn write_cmd_ictl(&self, regs: &Regs<'_>, cmd: regs::ICTL) {
            regs.write_reg(cmd);
        }

        /// Disables and acknowledges the interrupts of the command just finished.
        pub(crate) fn end_cmd(&self, regs: &Regs<'_>) {
            regs.write_reg(regs::ICTL::zeroed());
            regs.write_reg(regs::ISTA::from_raw(CMD_IRQS));
        }

        /// Nothing to program again after a controller reset.
        pub(crate) fn restore(&self, _regs: &Regs<'_>) {}
    }
}

/// Without statistics: no debugfs file, nothing counted, the test knobs at their defaults.
#[cfg(not(feature = "stats"))]
pub(crate) mod stats {
    use kernel::prelude::*;

    use crate::{
        bounce::Buffers,
        mmc::{
            bounce::policy::Limits,
            HostOps,
            UnregisteredHost, //
        }, //
    };

    /// No debugfs file.
    pub(crate) struct HostDebugfs;

    impl HostDebugfs {
        /// Nothing to show.
        pub(crate) fn new(_limits: Limits, _buffers: &Buffers<'_>, _merge_boundary: usize) -> Self {
            Self
        }

        /// No file.
        pub(crate) fn add_files<T: HostOps, B>(
            _host: &mut UnregisteredHost<'_, T>,
            _debugfs: impl for<'x> Fn(&'x T) -> &'x Self + Copy,
            _bounce: impl for<'x> Fn(&'x T) -> &'x B,
        ) -> Result {
            Ok(())
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
