// SPDX-License-Identifier: GPL-2.0

//! Device-managed interrupts, requested until the device is unbound (`devm_request_irq()`).
//!
//! C header: [`include/linux/interrupt.h`](srctree/include/linux/interrupt.h)
//!
//! The handler borrows nothing (`'static`) and runs until the device is unbound (to stop it
//! earlier, keep a [`ThreadedRegistration`] instead). The driver core drops the bound driver's
//! data before it releases the device's devres, so the handler may run after that data is gone:
//! whatever it uses belongs to the handler (shared through an [`Arc`](kernel::sync::Arc), say).
//! Devres frees in reverse order: an interrupt requested after a resource (an `IoMem` mapping)
//! is freed before it.
//!
//! # Examples
//!
//! ```
//! use kernel::{
//!     device::Bound,
//!     irq::{
//!         self,
//!         managed,
//!         IrqReturn,
//!         ThreadedHandler, //
//!     },
//!     platform,
//!     prelude::*,
//!     sync::{
//!         atomic::{
//!             Atomic,
//!             Relaxed, //
//!         },
//!         Arc, //
//!     }, //
//! };
//!
//! struct Counter(Arc<Atomic<u32>>);
//!
//! impl ThreadedHandler for Counter {
//!     fn handle_threaded(&self) -> IrqReturn {
//!         self.0.fetch_add(1, Relaxed);
//!         IrqReturn::Handled
//!     }
//! }
//!
//! fn count_interrupts(pdev: &platform::Device<Bound>) -> Result<Arc<Atomic<u32>>> {
//!     let count = Arc::new(Atomic::new(0), GFP_KERNEL)?;
//!     managed::request_threaded_irq_by_index(
//!         pdev,
//!         irq::Flags::ONESHOT,
//!         0,
//!         c"counter",
//!         Ok::<_, Error>(Counter(count.clone())),
//!     )?;
//!     Ok(count)
//! }
//! ```

use kernel::{
    device::{
        Bound,
        Device, //
    },
    devres,
    irq::{
        Flags,
        Handler,
        IrqRequest,
        Registration,
        ThreadedHandler,
        ThreadedRegistration, //
    },
    platform,
    prelude::*, //
};

/// Hands `registration` to the devres of `dev`, which drops it when `dev` is unbound.
fn register<R: Send + 'static>(
    dev: &Device<Bound>,
    registration: impl PinInit<R, Error>,
) -> Result {
    devres::register(dev, registration, GFP_KERNEL)
}

/// Requests `request`, an interrupt of `dev`, with `handler` until `dev` is unbound.
fn request_irq<'a, T: Handler + Send + 'static>(
    dev: &'a Device<Bound>,
    request: IrqRequest<'a>,
    flags: Flags,
    name: &'static CStr,
    handler: impl PinInit<T, Error> + 'a,
) -> Result {
    // SAFETY: The registration goes to devres below, which drops it exactly once: when `dev` is
    // unbound, or at once if devres cannot take it. It is never forgotten.
    let registration = unsafe { Registration::new(request, flags, name, handler) };
    // SAFETY: `Registration<'a, T>` and `Registration<'static, T>` differ only in the lifetime,
    // which does not change the layout. `'a` ties the registration to the binding of `dev`,
    // whose interrupt `request` is; devres drops it before that binding ends, and `T` borrows
    // nothing.
    let registration = unsafe {
        pin_init::cast_pin_init::<Registration<'a, T>, Registration<'static, T>, Error>(
            registration,
        )
    };
    register(dev, registration)
}

/// Requests the interrupt `request` of `dev` with the threaded `handler` until `dev` is unbound.
fn request_threaded_irq<'a, T: ThreadedHandler + Send + 'static>(
    dev: &'a Device<Bound>,
    request: IrqRequest<'a>,
    flags: Flags,
    name: &'static CStr,
    handler: impl PinInit<T, Error> + 'a,
) -> Result {
    // SAFETY: As in `request_irq`: devres drops the registration exactly once.
    let registration = unsafe { ThreadedRegistration::new(request, flags, name, handler) };
    // SAFETY: As in `request_irq`: only the lifetime differs, and devres drops the registration
    // within the binding `'a` stands for.
    let registration = unsafe {
        pin_init::cast_pin_init::<
            ThreadedRegistration<'a, T>,
            ThreadedRegistration<'static, T>,
            Error,
        >(registration)
    };
    register(dev, registration)
}

/// Requests interrupt `index` of `pdev` with `handler` until unbind (`devm_request_irq()`).
pub fn request_irq_by_index<'a, T: Handler + Send + 'static>(
    pdev: &'a platform::Device<Bound>,
    flags: Flags,
    index: u32,
    name: &'static CStr,
    handler: impl PinInit<T, Error> + 'a,
) -> Result {
    request_irq(
        pdev.as_ref(),
        pdev.irq_by_index(index)?,
        flags,
        name,
        handler,
    )
}

/// Requests interrupt `index` of `pdev` with the threaded `handler` until unbind.
///
/// The interrupt is requested with `devm_request_threaded_irq()`.
pub fn request_threaded_irq_by_index<'a, T: ThreadedHandler + Send + 'static>(
    pdev: &'a platform::Device<Bound>,
    flags: Flags,
    index: u32,
    name: &'static CStr,
    handler: impl PinInit<T, Error> + 'a,
) -> Result {
    request_threaded_irq(
        pdev.as_ref(),
        pdev.irq_by_index(index)?,
        flags,
        name,
        handler,
    )
}
