// SPDX-License-Identifier: GPL-2.0

//! `Clk::round_rate()` for a module built out of tree.
//!
//! C header: [`include/linux/clk.h`](srctree/include/linux/clk.h)
//!
//! A caller imports [`RoundRate`] on a `use` item of its own (`use
//! crate::kernel_ext::clk::round_rate::RoundRate as _;`) and calls `clk.round_rate(rate)` as it
//! would call the method of [`Clk`].

use kernel::{
    bindings,
    clk::{
        Clk,
        Hertz, //
    },
    prelude::*, //
};

/// An extension trait giving [`Clk`] the methods the upstream series adds.
pub trait RoundRate {
    /// Returns the rate the clock would run at if [`Clk::set_rate`] were called with `rate`.
    fn round_rate(&self, rate: Hertz) -> Result<Hertz>;
}

impl RoundRate for Clk {
    /// Get the rate the clock would run at if [`Clk::set_rate`] were called with `rate`.
    ///
    /// Equivalent to the kernel's [`clk_round_rate`] API. The clock is not changed.
    ///
    /// [`clk_round_rate`]: https://docs.kernel.org/core-api/kernel-api.html#c.clk_round_rate
    ///
    /// # Examples
    ///
    /// The following example sets a rate only if the clock can run at exactly that rate.
    ///
    /// ```
    /// use kernel::clk::{Clk, Hertz};
    /// use kernel::error::Result;
    ///
    /// fn set_exact_rate(clk: &Clk, rate: Hertz) -> Result {
    ///     if clk.round_rate(rate)? != rate {
    ///         return Err(EINVAL);
    ///     }
    ///
    ///     clk.set_rate(rate)
    /// }
    /// ```
    #[inline]
    fn round_rate(&self, rate: Hertz) -> Result<Hertz> {
        // SAFETY: By the type invariants, self.as_raw() is a valid argument for
        // [`clk_round_rate`].
        let ret = unsafe { bindings::clk_round_rate(self.as_raw(), rate.as_hz()) };

        // A negative value is an error code.
        match c_ulong::try_from(ret) {
            Ok(rate) => Ok(Hertz(rate)),
            Err(_) => Err(c_int::try_from(ret).map_or(EINVAL, Error::from_errno)),
        }
    }
}
