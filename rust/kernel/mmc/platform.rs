// SPDX-License-Identifier: GPL-2.0

//! MMC host controllers on the platform bus, with one threaded interrupt.
//!
//! A host controller driver registers its host and requests its interrupt; both call into
//! data that borrows the bound device, so both registrations must be dropped, never
//! forgotten, before the device is unbound: [`UnregisteredHost::register`] and
//! `irq::ThreadedRegistration::new` are `unsafe` for that reason. A [`Driver`] only describes
//! them, in the [`Probe`] its probe returns; [`Adapter`] makes both registrations a field of
//! the bound device's data, which only the platform bus holds and which it drops on unbind.
//! So a driver registers its host and its interrupt without `unsafe`.

use core::marker::PhantomData;

use kernel::{
    device::Core,
    irq::{
        self,
        IrqRequest,
        ThreadedHandler,
        ThreadedRegistration, //
    },
    of,
    platform,
    prelude::*, //
};

use super::{
    HostOps,
    Registration,
    UnregisteredHost, //
};

/// An MMC host controller driver on the platform bus.
///
/// # Examples
///
/// A host with no card slot wired up, whose every command fails; the module registers
/// `kernel::platform::Adapter<Adapter<NoSlotDriver>>`:
///
/// ```
/// use kernel::{
///     device::Core,
///     irq::{
///         self,
///         IrqReturn,
///         ThreadedHandler, //
///     },
///     mmc::{
///         platform::{
///             Driver,
///             Probe, //
///         },
///         Host,
///         HostOps,
///         Ios,
///         Request,
///         UnregisteredHost, //
///     },
///     of,
///     platform,
///     prelude::*, //
/// };
///
/// struct NoSlot;
///
/// #[vtable]
/// impl HostOps for NoSlot {
///     fn request(_host: &Host<Self>, mrq: Request) {
///         mrq.cmd().set_error(ENOMEDIUM);
///     }
///
///     fn set_ios(_host: &Host<Self>, _ios: &Ios) {}
/// }
///
/// struct NoInterrupt;
///
/// impl ThreadedHandler for NoInterrupt {
///     fn handle_threaded(&self) -> IrqReturn {
///         IrqReturn::None
///     }
/// }
///
/// struct NoSlotDriver;
///
/// kernel::of_device_table!(
///     OF_TABLE,
///     <NoSlotDriver as Driver>::IdInfo,
///     [(of::DeviceId::new(c"test,mmc-no-slot"), ())]
/// );
///
/// impl Driver for NoSlotDriver {
///     type IdInfo = ();
///     type Host<'bound> = NoSlot;
///     type Irq<'bound> = NoInterrupt;
///     type Data<'bound> = ();
///     const OF_ID_TABLE: Option<of::IdTable<Self::IdInfo>> = Some(&OF_TABLE);
///
///     fn probe<'bound>(
///         pdev: &'bound platform::Device<Core<'_>>,
///         _info: Option<&'bound Self::IdInfo>,
///     ) -> Result<Probe<'bound, Self>> {
///         let host = UnregisteredHost::new(pdev.as_ref(), Ok::<_, Error>(NoSlot))?;
///         Ok(Probe {
///             host,
///             irq: pdev.irq_by_index(0)?,
///             irq_flags: irq::Flags::SHARED,
///             irq_name: c"mmc-no-slot",
///             irq_handler: NoInterrupt,
///             data: (),
///         })
///     }
/// }
/// ```
pub(crate) trait Driver: 'static {
    /// The data of a match of [`Self::OF_ID_TABLE`].
    type IdInfo: 'static;

    /// The driver data in the host's private area ([`UnregisteredHost::new`]).
    type Host<'bound>: HostOps + 'bound;

    /// The handler of the host's interrupt.
    type Irq<'bound>: ThreadedHandler + Send + 'bound;

    /// What else the bound device keeps, dropped after the host and the interrupt are gone.
    type Data<'bound>: Send + 'bound;

    /// The devices the driver binds to.
    const OF_ID_TABLE: Option<of::IdTable<Self::IdInfo>>;

    /// Allocates and configures the host of `pdev` and describes its interrupt.
    fn probe<'bound>(
        pdev: &'bound platform::Device<Core<'_>>,
        info: Option<&'bound Self::IdInfo>,
    ) -> Result<Probe<'bound, Self>>;
}

/// What a [`Driver`]'s probe hands to [`Adapter`] to register.
pub(crate) struct Probe<'bound, D: Driver + ?Sized> {
    /// The host, configured; registered after the interrupt is requested.
    pub(crate) host: UnregisteredHost<'bound, D::Host<'bound>>,
    /// The interrupt (e.g. `platform::Device::irq_by_index()`).
    pub(crate) irq: IrqRequest<'bound>,
    /// Its flags.
    pub(crate) irq_flags: irq::Flags,
    /// Its name in `/proc/interrupts`.
    pub(crate) irq_name: &'static CStr,
    /// Its handler.
    pub(crate) irq_handler: D::Irq<'bound>,
    /// The rest of the bound device's data.
    pub(crate) data: D::Data<'bound>,
}

/// The data of a bound device: the host's registration, the interrupt's and the driver's data.
///
/// Fields drop in declaration order, which is the remove path: the host is removed first (no
/// request in flight and no callback running afterwards), then the interrupt is freed, then
/// the driver's data goes.
#[pin_data]
pub(crate) struct Bound<'bound, D: Driver> {
    host: Registration<'bound, D::Host<'bound>>,
    #[pin]
    irq: ThreadedRegistration<'bound, D::Irq<'bound>>,
    data: D::Data<'bound>,
}

impl<'bound, D: Driver> Bound<'bound, D> {
    /// The driver's data.
    pub(crate) fn data(&self) -> &D::Data<'bound> {
        &self.data
    }
}

/// The platform driver of an MMC host controller [`Driver`]; register it as
/// `kernel::driver::Registration<kernel::platform::Adapter<Adapter<D>>>`.
pub(crate) struct Adapter<D>(PhantomData<D>);

impl<D: Driver> platform::Driver for Adapter<D> {
    type IdInfo = D::IdInfo;
    type Data<'bound> = Bound<'bound, D>;
    const OF_ID_TABLE: Option<of::IdTable<Self::IdInfo>> = D::OF_ID_TABLE;

    fn probe<'bound>(
        pdev: &'bound platform::Device<Core<'_>>,
        info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        pin_init::pin_init_scope(move || {
            let Probe {
                host,
                irq,
                irq_flags,
                irq_name,
                irq_handler,
                data,
            } = D::probe(pdev, info)?;
            // SAFETY: The registration is a field of `Bound`, the bound device's data, which
            // only the platform bus holds and which it drops on unbind.
            let irq = unsafe {
                ThreadedRegistration::new(irq, irq_flags, irq_name, Ok::<_, Error>(irq_handler))
            };
            Ok(try_pin_init!(Bound {
                irq <- irq,
                // SAFETY: As for the interrupt: a field of `Bound`, dropped on unbind.
                host: unsafe { host.register() }?,
                data,
            }))
        })
    }
}
