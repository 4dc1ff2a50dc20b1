// SPDX-License-Identifier: GPL-2.0

//! The SDHC's own clock tree, registered with the common clock framework.
//!
//! Like `meson-mx-sdhc-clkc.c`, the controller's `CLKC` register is described
//! by generic clk-provider clocks (the four at the right are gates):
//!
//! ```text
//! clkin0..3 --> src_sel (mux, CLKC[17:16]) --> div (CLKC[11:0], table) -+-> mod_clk_on (bit 15)
//!                                                                       +-> tx_clk_on  (bit 14)
//!                                                                       +-> rx_clk_on  (bit 13)
//!                                                                       +-> sd_clk_on  (bit 12)
//! ```
//!
//! All clocks have `CLK_SET_RATE_PARENT`, their names are `<device>#<suffix>`.
//! The four gates are consumed as one set, in this order (the C driver's bulk clocks); the bus
//! clock whose rate is set is `tx_clk_on`, as in the C driver.

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
    prelude::*, //
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

/// `CLKC` offset in the register window.
const CLKC_OFFSET: usize = <regs::CLKC as kernel::io::register::Register>::OFFSET;

/// Number of gates.
const NUM_GATES: usize = 4;

/// The divider's values.
///
/// `val` in `CLKC[11:0]` divides by `div`, as `(val, div)`.
const DIV_TABLE: [(u32, u32); 12] = [
    (5, 6),
    (7, 8),
    (8, 9),
    (9, 10),
    (11, 12),
    (15, 16),
    (17, 18),
    (33, 34),
    (141, 142),
    (849, 850),
    (2125, 2126),
    (4095, 4096),
];

/// The gates, each a name suffix (also the clock consumer id) and a `CLKC` bit.
const GATES: [(&CStr, u8); NUM_GATES] = [
    (c"mod_clk_on", 15),
    (c"tx_clk_on", 14),
    (c"rx_clk_on", 13),
    (c"sd_clk_on", 12),
];

/// Index of the bus clock among the gates (`tx_clk_on`, `bulk_clks[1]` in the C driver).
const SD_CLK: usize = 1;

/// The registered clock tree and the consumer references of its four gates.
///
/// The fields drop in order: the consumer references, then the clocks, children first.
pub(crate) struct Clkc {
    gates: KVec<Clk>,
    _gate_hws: KVec<ClkHw>,
    _div: ClkHw,
    _src_sel: ClkHw,
}

/// Returns the clock name `"<device>#<suffix>"`, cut to 31 characters like the C driver's `char
/// clk_name[32]`.
fn clk_name(dev_name: &CStr, suffix: &CStr) -> Result<KVec<u8>> {
    let mut name = KVec::with_capacity(32, GFP_KERNEL)?;
    let bytes = Iterator::chain(dev_name.to_bytes().iter(), b"#");
    for &c in Iterator::chain(bytes, suffix.to_bytes()).take(31) {
        name.push(c, GFP_KERNEL)?;
    }
    name.push(0, GFP_KERNEL)?;
    Ok(name)
}

/// Registers the clock `suffix` of the tree of `dev`.
fn register(
    dev: &Device<Bound>,
    reg: &Reg<Mapping>,
    suffix: &CStr,
    parents: &[Parent<'_>],
    basic: Basic<'_>,
) -> Result<ClkHw> {
    let name = clk_name(dev.name(), suffix)?;
    let init = Init {
        name: CStr::from_bytes_with_nul(&name).map_err(|_| EINVAL)?,
        parents,
        set_rate_parent: true,
    };
    Hw::<Mapping>::register(dev, reg, &init, basic)
}

impl Clkc {
    /// Registers the clock tree of the controller `dev`, whose registers are `regs`, and gets
    /// its four gate clocks.
    ///
    /// The tree is unregistered when the returned object is dropped or
    /// `dev` is unbound, before the registers' mapping is revoked.
    pub(crate) fn register(dev: &Device<Bound>, regs: &Regs) -> Result<Self> {
        let reg = Reg::<Mapping>::new(dev, regs.mapping().clone(), CLKC_OFFSET)?;

        let clkin = [c"clkin0", c"clkin1", c"clkin2", c"clkin3"].map(Parent::Input);
        let src_sel = register(
            dev,
            &reg,
            c"src_sel",
            &clkin,
            Basic::Mux {
                shift: 16,
                mask: 0x3,
            },
        )?;
        let div = register(
            dev,
            &reg,
            c"div",
            &[Parent::Clock(src_sel.access(dev)?.name())],
            Basic::Divider {
                shift: 0,
                width: 12,
                table: &DIV_TABLE,
            },
        )?;

        let mut gate_hws = KVec::with_capacity(NUM_GATES, GFP_KERNEL)?;
        let mut gates = KVec::with_capacity(NUM_GATES, GFP_KERNEL)?;
        for (suffix, bit) in GATES {
            let hw = register(
                dev,
                &reg,
                suffix,
                &[Parent::Clock(div.access(dev)?.name())],
                Basic::Gate { bit },
            )?;
            gates.push(hw.access(dev)?.clk(suffix)?, GFP_KERNEL)?;
            gate_hws.push(hw, GFP_KERNEL)?;
        }
        Ok(Self {
            gates,
            _gate_hws: gate_hws,
            _div: div,
            _src_sel: src_sel,
        })
    }

    /// Prepares and enables the four gates, in order (`clk_bulk_prepare_enable()`).
    ///
    /// On error none is left enabled.
    pub(crate) fn enable(&self) -> Result {
        for (i, clk) in self.gates.iter().enumerate() {
            if let Err(e) = clk.prepare_enable() {
                for clk in self.gates[..i].iter().rev() {
                    clk.disable_unprepare();
                }
                return Err(e);
            }
        }
        Ok(())
    }

    /// Disables and unprepares the four gates, in reverse order.
    ///
    /// Only after a successful [`Self::enable`].
    pub(crate) fn disable(&self) {
        for clk in self.gates.iter().rev() {
            clk.disable_unprepare();
        }
    }

    /// Returns the bus clock.
    fn sd_clk(&self) -> &Clk {
        &self.gates[SD_CLK]
    }

    /// Sets the bus clock rate (`clk_set_rate()`).
    pub(crate) fn set_rate(&self, hz: u32) -> Result {
        self.sd_clk().set_rate(Hertz(c_ulong::try_from(hz)?))
    }

    /// Returns the bus clock rate in Hz (`clk_get_rate()`), saturated to 32 bits.
    pub(crate) fn rate(&self) -> u32 {
        u32::try_from(self.sd_clk().rate().as_hz()).unwrap_or(u32::MAX)
    }

    /// Returns the rate in Hz the bus clock would get for `hz` (`clk_round_rate()`), saturated to
    /// 32 bits, or the clock framework's error.
    pub(crate) fn round_rate(&self, hz: c_ulong) -> Result<u32> {
        let r = self.sd_clk().round_rate(Hertz(hz))?;
        Ok(u32::try_from(r.as_hz()).unwrap_or(u32::MAX))
    }
}
