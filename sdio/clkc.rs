// SPDX-License-Identifier: GPL-2.0

//! The controller's card clock, registered with the common clock framework.
//!
//! As in `meson-mx-sdio.c` (`meson_mx_mmc_register_clk()`), the card clock is the input
//! `clkin` halved, then divided by `CONF[9:0] + 1`:
//!
//! ```text
//! clkin --> fixed_div2 (/2) --> div (CONF[9:0], divides by value + 1) --> the card clock
//! ```
//!
//! The names are `<device>#fixed_div2` and `<device>#div`. The C driver passes
//! `CLK_DIVIDER_ALLOW_ZERO` where the clock's flags go (`CLK_HW_INIT_HW()`), so its divider has
//! bit 2 of those, `CLK_SET_RATE_PARENT`: that changes no rate, as the fixed factor above it
//! passes none on, and it is left out here. The divider's value 0 divides by 1.

use kernel::{
    clk::{
        Clk,
        Hertz, //
    },
    device::{
        Bound,
        Device, //
    },
    devres::Devres,
    prelude::*,
    str::CString, //
};

use crate::kernel_ext::clk::provider::{
    Basic,
    Hw,
    Init,
    Parent,
    Reg, //
};
use crate::kernel_ext::clk::round_rate::RoundRate as _;
use crate::kernel_ext::io::mem::ExclusiveIoMem;

use crate::regs::{
    self,
    Regs,
    REGS_SIZE, //
};

/// The registers' mapping, as the clock provider names it.
type Mapping = ExclusiveIoMem<'static, REGS_SIZE>;

/// A clock of the tree, registered for the device's binding.
type ClkHw = Devres<Hw<Mapping>>;

/// `CONF` offset in the register window.
const CONF_OFFSET: usize = <regs::CONF as kernel::io::register::Register>::OFFSET;

/// The registered clocks and the consumer reference of the card clock, enabled.
///
/// The fields drop in order: the consumer reference (disabled first, [`Drop`]), then the clocks,
/// children first.
pub(crate) struct Clkc {
    div_clk: Clk,
    _div: ClkHw,
    _fixed_div2: ClkHw,
}

/// Registers the clock `<device>#<suffix>` of `dev`.
fn register(
    dev: &Device<Bound>,
    reg: &Reg<Mapping>,
    suffix: &CStr,
    parent: Parent<'_>,
    basic: Basic<'_>,
) -> Result<ClkHw> {
    let name = CString::try_from_fmt(fmt!("{}#{}", dev.name(), suffix))?;
    let init = Init {
        name: &name,
        parents: &[parent],
        set_rate_parent: false,
    };
    Hw::<Mapping>::register(dev, reg, &init, basic)
}

impl Clkc {
    /// Registers the clock tree of the controller `dev`, whose registers are `regs`, and enables
    /// the card clock (`clk_prepare_enable()`).
    ///
    /// Dropping the returned object disables it and
    /// unregisters the tree, which `dev`'s unbind unregisters too, before the registers' mapping
    /// is revoked.
    pub(crate) fn register(dev: &Device<Bound>, regs: &Regs) -> Result<Self> {
        let reg = Reg::<Mapping>::new(dev, regs.mapping().clone(), CONF_OFFSET)?;
        let fixed_div2 = register(
            dev,
            &reg,
            c"fixed_div2",
            Parent::Input(c"clkin"),
            Basic::FixedFactor { mult: 1, div: 2 },
        )?;
        let div = register(
            dev,
            &reg,
            c"div",
            Parent::Clock(fixed_div2.access(dev)?.name()),
            Basic::Divider {
                shift: 0,
                width: 10,
                table: &[],
            },
        )?;
        let div_clk = div.access(dev)?.clk(c"cfg_div_clk")?;
        div_clk.prepare_enable()?;
        Ok(Self {
            div_clk,
            _div: div,
            _fixed_div2: fixed_div2,
        })
    }

    /// Sets the card clock rate (`clk_set_rate()`).
    pub(crate) fn set_rate(&self, hz: u32) -> Result {
        self.div_clk.set_rate(Hertz(c_ulong::try_from(hz)?))
    }

    /// Returns the card clock rate in Hz (`clk_get_rate()`), saturated to 32 bits.
    pub(crate) fn rate(&self) -> u32 {
        u32::try_from(self.div_clk.rate().as_hz()).unwrap_or(u32::MAX)
    }

    /// Returns the rate in Hz the card clock would get for `hz` (`clk_round_rate()`), saturated to
    /// 32 bits.
    pub(crate) fn round_rate(&self, hz: c_ulong) -> Result<u32> {
        let r = self.div_clk.round_rate(Hertz(hz))?;
        Ok(u32::try_from(r.as_hz()).unwrap_or(u32::MAX))
    }
}

impl Drop for Clkc {
    fn drop(&mut self) {
        self.div_clk.disable_unprepare();
    }
}
