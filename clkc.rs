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
//! The four gates are consumed as one bulk set, in this order; the bus clock
//! whose rate is set is `tx_clk_on`, as in the C driver.

use core::ptr::{
    addr_of,
    addr_of_mut,
    null,
    null_mut,
    NonNull, //
};

use kernel::{
    device::{
        Bound,
        Device, //
    },
    error::{
        from_err_ptr,
        to_result, //
    },
    io::{
        IoBackend,
        IoBase,
        MmioBackend, //
    },
    prelude::*,
    sync::Arc, //
};

use crate::{
    bindings as b,
    regs::{
        self,
        Regs, //
    }, //
};

/// `CLKC` offset in the register window.
const CLKC_OFFSET: usize = <regs::CLKC as kernel::io::register::Register>::OFFSET;

/// Number of gates, i.e. of bulk clocks.
const NUM_GATES: usize = 4;

/// The divider's values: `val` in `CLKC[11:0]` divides by `div` (sentinel last).
static DIV_TABLE: [b::clk_div_table; 13] = [
    b::clk_div_table { div: 6, val: 5 },
    b::clk_div_table { div: 8, val: 7 },
    b::clk_div_table { div: 9, val: 8 },
    b::clk_div_table { div: 10, val: 9 },
    b::clk_div_table { div: 12, val: 11 },
    b::clk_div_table { div: 16, val: 15 },
    b::clk_div_table { div: 18, val: 17 },
    b::clk_div_table { div: 34, val: 33 },
    b::clk_div_table { div: 142, val: 141 },
    b::clk_div_table { div: 850, val: 849 },
    b::clk_div_table {
        div: 2126,
        val: 2125,
    },
    b::clk_div_table {
        div: 4096,
        val: 4095,
    },
    b::clk_div_table { div: 0, val: 0 },
];

/// The gates: name suffix (also the clock consumer id) and `CLKC` bit.
const GATES: [(&CStr, u8); NUM_GATES] = [
    (c"mod_clk_on", 15),
    (c"tx_clk_on", 14),
    (c"rx_clk_on", 13),
    (c"sd_clk_on", 12),
];

/// Index of the bus clock in the bulk set (`tx_clk_on`, `bulk_clks[1]` in the C driver).
const SD_CLK: usize = 1;

/// The clock provider structures; they must not move while registered.
struct Hws {
    src_sel: b::clk_mux,
    div: b::clk_divider,
    gates: [b::clk_gate; NUM_GATES],
}

/// The registered clock tree and the bulk set of its four gates.
///
/// # Invariants
///
/// - `hws` comes from `KBox::leak` and is owned by this object; its first `registered` clock
///   structures (in the order src_sel, div, gates) are registered with the clock framework.
/// - Every non-NULL `bulk[i].clk` is a clock of gate `i` obtained with `clk_hw_get_clk()`.
/// - `_regs` keeps the register window the clock structures point into mapped.
pub(crate) struct Clkc<'a> {
    hws: NonNull<Hws>,
    registered: usize,
    bulk: [b::clk_bulk_data; NUM_GATES],
    _regs: Arc<Regs<'a>>,
}

// SAFETY: The clock framework serializes all operations on the registered clocks internally;
// after construction `Clkc` only passes its pointers to the clock framework.
unsafe impl Send for Clkc<'_> {}
// SAFETY: See `Send`; no method mutates `Clkc` through `&self`.
unsafe impl Sync for Clkc<'_> {}

impl<'a> Clkc<'a> {
    /// Registers the clock tree of the controller `dev`, whose registers are `regs`, and gets
    /// its four gate clocks. Dropping the returned object unregisters the tree.
    ///
    /// # Safety
    ///
    /// The returned object must be dropped, never forgotten, before `dev` is unbound: the
    /// registered clocks point into the register mapping and at this module's divider table,
    /// and stay registered, reachable by any consumer, for as long as it lives (the contract
    /// of `irq::ThreadedRegistration::new`).
    pub(crate) unsafe fn register(dev: &Device<Bound>, regs: Arc<Regs<'a>>) -> Result<Self> {
        let base = MmioBackend::as_ptr((&*regs).as_view())
            .cast::<u8>()
            .wrapping_add(CLKC_OFFSET)
            .cast::<c_void>();

        let hws = KBox::new(
            Hws {
                src_sel: b::clk_mux {
                    reg: base,
                    mask: 0x3,
                    shift: 16,
                    ..Default::default()
                },
                div: b::clk_divider {
                    reg: base,
                    shift: 0,
                    width: 12,
                    table: DIV_TABLE.as_ptr(),
                    ..Default::default()
                },
                gates: GATES.map(|(_, bit)| b::clk_gate {
                    reg: base,
                    bit_idx: bit,
                    ..Default::default()
                }),
            },
            GFP_KERNEL,
        )?;

        // INVARIANT: nothing registered, no clock obtained yet; `regs` is kept.
        let mut this = Self {
            hws: NonNull::from(KBox::leak(hws)),
            registered: 0,
            bulk: [b::clk_bulk_data {
                id: null(),
                clk: null_mut(),
            }; NUM_GATES],
            _regs: regs,
        };
        // On error, dropping `this` undoes what was done.
        this.register_all(dev)?;
        Ok(this)
    }

    fn register_all(&mut self, dev: &Device<Bound>) -> Result {
        let p = self.hws.as_ptr();
        let name = dev.name();

        let clkin = [c"clkin0", c"clkin1", c"clkin2", c"clkin3"].map(|n| b::clk_parent_data {
            fw_name: n.as_char_ptr(),
            ..Default::default()
        });
        // SAFETY: `p` is valid (type invariant); `src_sel` is a `clk_mux` whose `reg` points into
        // the mapped register window.
        let hw = unsafe { addr_of_mut!((*p).src_sel.hw) };
        self.register_one(dev, name, c"src_sel", &clkin, addr_of!(b::clk_mux_ops), hw)?;

        let src_sel = [b::clk_parent_data {
            hw: hw.cast_const(),
            ..Default::default()
        }];
        // SAFETY: As above, for the `clk_divider` `div`.
        let hw = unsafe { addr_of_mut!((*p).div.hw) };
        self.register_one(
            dev,
            name,
            c"div",
            &src_sel,
            addr_of!(b::clk_divider_ops),
            hw,
        )?;

        let div = [b::clk_parent_data {
            hw: hw.cast_const(),
            ..Default::default()
        }];
        for (i, (suffix, _)) in GATES.iter().enumerate() {
            // SAFETY: As above, for the `clk_gate` `gates[i]`.
            let hw = unsafe { addr_of_mut!((*p).gates[i].hw) };
            self.register_one(dev, name, suffix, &div, addr_of!(b::clk_gate_ops), hw)?;

            // SAFETY: `hw` is registered; `suffix` is a static string, as `clk_hw_get_clk()`
            // keeps the pointer.
            let clk = from_err_ptr(unsafe { b::clk_hw_get_clk(hw, suffix.as_char_ptr()) })?;
            // INVARIANT: `clk` is a clock of gate `i`.
            self.bulk[i].clk = clk;
        }
        Ok(())
    }

    /// Registers the clock structure `hw` (the next in order) with the given parents and ops.
    fn register_one(
        &mut self,
        dev: &Device<Bound>,
        dev_name: &CStr,
        suffix: &CStr,
        parents: &[b::clk_parent_data],
        ops: *const b::clk_ops,
        hw: *mut b::clk_hw,
    ) -> Result {
        // "<device>#<suffix>", cut to 31 characters like the C driver's `char clk_name[32]`.
        let mut clk_name = KVec::with_capacity(32, GFP_KERNEL)?;
        let bytes = Iterator::chain(dev_name.to_bytes().iter(), b"#");
        for &c in Iterator::chain(bytes, suffix.to_bytes()).take(31) {
            clk_name.push(c, GFP_KERNEL)?;
        }
        clk_name.push(0, GFP_KERNEL)?;

        let init = b::clk_init_data {
            name: clk_name.as_ptr().cast(),
            ops,
            parent_names: null(),
            parent_data: parents.as_ptr(),
            parent_hws: null_mut(),
            num_parents: u8::try_from(parents.len())?,
            flags: b::CLK_SET_RATE_PARENT,
        };
        let raw = core::ptr::from_ref(dev).cast::<b::device>().cast_mut();
        // The clocks are registered by the device's OF node, not by the device: registered by
        // device, the clock core would pin this module for every consumer reference, our own
        // included, and `rmmod` would be refused while the controller is bound. Removing the
        // module unbinds the device first, and unbinding unregisters these clocks (`Drop`), so
        // no clock outlives the code behind its ops. `clkin0..3` are still found through the
        // node's `clock-names`.
        //
        // SAFETY: `hw` is the next, not yet registered clock structure of `self.hws` (see the
        // callers), embedded in the provider structure `ops` expects. `init`, the name and the
        // parent data only need to live during `of_clk_hw_register()`, which copies them and
        // clears `hw->init`. `raw` is the bound device behind `dev`, so reading its `of_node`
        // is valid.
        unsafe {
            (*hw).init = &init;
            to_result(b::of_clk_hw_register((*raw).of_node, hw))?;
        }
        // INVARIANT: one more structure, in order, is registered.
        self.registered += 1;
        Ok(())
    }

    /// Prepares and enables the four gates (`clk_bulk_prepare_enable()`).
    pub(crate) fn enable(&self) -> Result {
        let n = NUM_GATES as c_int;
        // SAFETY: By the type invariants all bulk clocks were obtained (a `Clkc` only exists
        // once `register_all()` succeeded).
        to_result(unsafe { b::clk_bulk_prepare(n, self.bulk.as_ptr()) })?;
        // SAFETY: As above; the clocks are prepared.
        let ret = to_result(unsafe { b::clk_bulk_enable(n, self.bulk.as_ptr()) });
        if ret.is_err() {
            // SAFETY: The clocks were prepared above.
            unsafe { b::clk_bulk_unprepare(n, self.bulk.as_ptr()) };
        }
        ret
    }

    /// Disables and unprepares the four gates; only after a successful [`Self::enable`].
    pub(crate) fn disable(&self) {
        let n = NUM_GATES as c_int;
        // SAFETY: The caller pairs this with a successful `enable()`.
        unsafe {
            b::clk_bulk_disable(n, self.bulk.as_ptr());
            b::clk_bulk_unprepare(n, self.bulk.as_ptr());
        }
    }

    /// Sets the bus clock rate (`clk_set_rate()`).
    pub(crate) fn set_rate(&self, hz: u32) -> Result {
        // SAFETY: The bus clock was obtained (type invariant).
        to_result(unsafe { b::clk_set_rate(self.bulk[SD_CLK].clk, c_ulong::try_from(hz)?) })
    }

    /// The bus clock rate in Hz (`clk_get_rate()`), saturated to 32 bits.
    pub(crate) fn rate(&self) -> u32 {
        // SAFETY: The bus clock was obtained (type invariant).
        let r = unsafe { b::clk_get_rate(self.bulk[SD_CLK].clk) };
        u32::try_from(r).unwrap_or(u32::MAX)
    }

    /// The rate in Hz the bus clock would get for `hz` (`clk_round_rate()`), saturated to 32
    /// bits, or the clock framework's error.
    pub(crate) fn round_rate(&self, hz: c_ulong) -> Result<u32> {
        // SAFETY: The bus clock was obtained (type invariant).
        let r = unsafe { b::clk_round_rate(self.bulk[SD_CLK].clk, hz) };
        if r < 0 {
            return Err(Error::from_errno(c_int::try_from(r).unwrap_or(-22)));
        }
        Ok(u32::try_from(r).unwrap_or(u32::MAX))
    }
}

impl Drop for Clkc<'_> {
    fn drop(&mut self) {
        let p = self.hws.as_ptr();
        for c in &self.bulk {
            if !c.clk.is_null() {
                // SAFETY: By the type invariant `c.clk` came from `clk_hw_get_clk()`.
                unsafe { b::clk_put(c.clk) };
            }
        }
        for i in (0..self.registered).rev() {
            // SAFETY: By the type invariant `p` is valid and structure `i` is registered; all
            // consumer references were put above.
            unsafe {
                let hw = match i {
                    0 => addr_of_mut!((*p).src_sel.hw),
                    1 => addr_of_mut!((*p).div.hw),
                    g => addr_of_mut!((*p).gates[g - 2].hw),
                };
                b::clk_hw_unregister(hw);
            }
        }
        // SAFETY: By the type invariant `hws` came from `KBox::leak`; nothing is
        // registered any more.
        drop(unsafe { KBox::from_raw(p) });
        // `_regs` is dropped after this, i.e. after the clocks are gone.
    }
}
