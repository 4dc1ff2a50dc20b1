// SPDX-License-Identifier: GPL-2.0

//! Basic clock providers.
//!
//! Mux, divider and gate clocks over an MMIO register, and fixed factors.
//!
//! C header: [`include/linux/clk-provider.h`](srctree/include/linux/clk-provider.h)
//!
//! A [`Hw`] registers one of the framework's basic clock types for the device tree node of a
//! bound device, for the device's binding ([`Devres`]): it is unregistered when the device is
//! unbound, or when dropped before, and hands out consumer [`Clk`]s of it. A [`Reg`] is a
//! register of a device-managed mapping ([`DevresLt`]) of the same device, which it holds
//! through an [`Arc`]: the mapping was registered before the clock, so the clock is unregistered
//! before the mapping is revoked at unbind, and it is not dropped before the clock.
//!
//! # Examples
//!
//! A gate at bit 3 of the register at offset 0x10 of a mapping, fed by the node's clock
//! `"core"`:
//!
//! ```
//! use kernel::{
//!     clk::{
//!         provider::{
//!             Basic,
//!             Hw,
//!             Init,
//!             Parent,
//!             Reg, //
//!         },
//!         Clk, //
//!     },
//!     device::{
//!         Bound,
//!         Device, //
//!     },
//!     devres::{
//!         Devres,
//!         DevresLt, //
//!     },
//!     io::{
//!         IoBase,
//!         MmioBackend, //
//!     },
//!     prelude::*,
//!     sync::Arc,
//!     types::CovariantForLt, //
//! };
//!
//! fn gate<F>(dev: &Device<Bound>, io: Arc<DevresLt<F>>) -> Result<(Devres<Hw<F>>, Clk)>
//! where
//!     F: CovariantForLt + 'static,
//!     for<'a> F::Of<'a>: Send + Sync,
//!     for<'b> &'b F::Of<'b>: IoBase<'b, Backend = MmioBackend>,
//! {
//!     let reg = Reg::new(dev, io, 0x10)?;
//!     let init = Init {
//!         name: c"example-gate",
//!         parents: &[Parent::Input(c"core")],
//!         set_rate_parent: true,
//!     };
//!     let hw = Hw::register(dev, &reg, &init, Basic::Gate { bit: 3 })?;
//!     let clk = hw.access(dev)?.clk(c"gate")?;
//!     clk.prepare_enable()?;
//!     Ok((hw, clk))
//! }
//! ```

use core::{
    mem::ManuallyDrop,
    ptr::{
        null,
        null_mut,
        NonNull, //
    }, //
};

use kernel::{
    clk::Clk,
    device::{
        property::FwNode,
        Bound,
        Device, //
    },
    devres::{
        Devres,
        DevresLt, //
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
    ptr::KnownSize,
    str::CString,
    sync::{
        aref::ARef,
        Arc, //
    },
    types::{
        CovariantForLt,
        ForLt, //
    }, //
};

use crate::bindings;
use crate::kernel_ext::out_of_tree::ClkFromRaw as _;

/// A 32-bit register of a device-managed MMIO mapping ([`DevresLt`] of `F`), for basic clocks.
///
/// # Invariants
///
/// `offset` is 4-byte aligned and the 4 bytes at `offset` lie inside the mapping of `io`.
pub struct Reg<F: ForLt>
where
    for<'a> F::Of<'a>: Send,
{
    io: Arc<DevresLt<F>>,
    offset: usize,
}

impl<F: CovariantForLt> Reg<F>
where
    for<'a> F::Of<'a>: Send,
    for<'b> &'b F::Of<'b>: IoBase<'b, Backend = MmioBackend>,
{
    /// Creates the 32-bit register at `offset` in the mapping `io` of the bound device `dev`.
    ///
    /// Returns `EINVAL` if `io` is not a mapping of `dev`, or the register is not inside the
    /// mapping or not aligned.
    pub fn new(dev: &Device<Bound>, io: Arc<DevresLt<F>>, offset: usize) -> Result<Self> {
        let ptr = MmioBackend::as_ptr(io.access(dev)?.as_view());
        let end = offset.checked_add(4).ok_or(EINVAL)?;
        if offset % 4 != 0 || ptr.addr() % 4 != 0 || end > KnownSize::size(ptr) {
            return Err(EINVAL);
        }
        // INVARIANT: Checked above.
        Ok(Self { io, offset })
    }

    /// Returns the register's address, for the C clock structures.
    ///
    /// Returns `EINVAL` if `dev` is not the device of the mapping.
    ///
    /// The address is valid until the mapping is revoked, when `dev` is unbound.
    fn addr(&self, dev: &Device<Bound>) -> Result<*mut c_void> {
        Ok(MmioBackend::as_ptr(self.io.access(dev)?.as_view())
            .cast::<u8>()
            .wrapping_add(self.offset)
            .cast())
    }
}

/// A parent of a clock being registered.
#[derive(Clone, Copy)]
pub enum Parent<'p> {
    /// An input of the device's device tree node, by its `clock-names` entry.
    Input(&'p CStr),
    /// A registered clock, by its name (see [`Hw::name`]).
    Clock(&'p CStr),
}

/// The type of a basic clock and where its field lies in the register.
pub enum Basic<'t> {
    /// A mux (`struct clk_mux`).
    ///
    /// The parent index is `(reg >> shift) & mask`.
    Mux {
        /// Position of the field.
        shift: u8,
        /// Mask of the field, shifted to bit 0.
        mask: u32,
    },
    /// A divider (`struct clk_divider`) of `width` bits at `shift`, with the values of `table`.
    Divider {
        /// Position of the field.
        shift: u8,
        /// Width of the field, in bits (1 to 30).
        width: u8,
        /// The values of the field and the divisors they select, as `(value, divisor)`.
        ///
        /// Divisors are not zero. Empty: every value `v` of the field divides by `v + 1`.
        table: &'t [(u32, u32)],
    },
    /// A gate (`struct clk_gate`).
    ///
    /// Setting bit `bit` enables the clock.
    Gate {
        /// The enable bit.
        bit: u8,
    },
    /// A fixed factor (`struct clk_fixed_factor`).
    ///
    /// The parent's rate times `mult` divided by `div`. It has no field in the register.
    FixedFactor {
        /// The multiplier, not zero.
        mult: u32,
        /// The divisor, not zero.
        div: u32,
    },
}

/// The name, parents and flags of a clock being registered.
pub struct Init<'a> {
    /// The clock's name, unique among all clocks.
    pub name: &'a CStr,
    /// The parents, for a mux in the order of the field's values.
    pub parents: &'a [Parent<'a>],
    /// Whether a rate change is passed on to the parent (`CLK_SET_RATE_PARENT`).
    pub set_rate_parent: bool,
}

/// The C structure of a basic clock.
///
/// All of them start with their `struct clk_hw`.
#[repr(C)]
union BasicClk {
    mux: ManuallyDrop<bindings::clk_mux>,
    divider: ManuallyDrop<bindings::clk_divider>,
    gate: ManuallyDrop<bindings::clk_gate>,
    fixed_factor: ManuallyDrop<bindings::clk_fixed_factor>,
}

/// A registered basic clock, unregistered when dropped (`clk_hw_unregister()`).
///
/// It exists only inside the [`Devres`] that [`Hw::register`] returns: it is dropped when the
/// device is unbound at the latest.
///
/// # Invariants
///
/// - `raw` comes from `KBox::into_raw` and holds the clock structure whose `struct clk_hw` is
///   `hw`; it is registered with the clock framework for the node `_node` until `drop`.
/// - The structure's register address is that of `_reg`, whose mapping is not revoked before
///   `self` is dropped; a divider's `table` is NULL or points into `_table`, terminated by a
///   zero divisor.
pub struct Hw<F: ForLt>
where
    for<'a> F::Of<'a>: Send,
{
    raw: NonNull<BasicClk>,
    hw: NonNull<bindings::clk_hw>,
    name: CString,
    _table: KVec<bindings::clk_div_table>,
    _node: ARef<FwNode>,
    _reg: Reg<F>,
}

// SAFETY: The clock framework serializes the operations on a registered clock itself; `Hw`
// only passes its pointers to it, and its other fields are `Send` if the mapping is.
unsafe impl<F: ForLt> Send for Hw<F> where for<'a> F::Of<'a>: Send + Sync {}
// SAFETY: See `Send`; no method of `Hw` mutates it through `&self`.
unsafe impl<F: ForLt> Sync for Hw<F> where for<'a> F::Of<'a>: Send + Sync {}

/// Returns the device tree node of `dev`, with a reference held, and its `struct device_node`.
///
/// Returns `EINVAL` if `dev` has none.
fn of_node(dev: &Device) -> Result<(ARef<FwNode>, *mut bindings::device_node)> {
    let node = dev.fwnode().filter(|n| n.is_of_node()).ok_or(EINVAL)?;
    let node = ARef::from(node);
    // CAST: `FwNode` is a transparent wrapper of `struct fwnode_handle`, which an OF node
    // embeds as its `fwnode` (`is_of_node()` above).
    let of_node = core::ptr::from_ref::<FwNode>(&*node)
        .cast::<u8>()
        .cast_mut()
        .wrapping_sub(core::mem::offset_of!(bindings::device_node, fwnode))
        .cast::<bindings::device_node>();
    Ok((node, of_node))
}

/// Returns the clock structure of `basic` over the register at `addr`, and its operations.
///
/// A divider's table goes into `table`, which must live as long as the clock. Returns `EINVAL`
/// for a field that does not fit in 32 bits, a zero divider or a zero factor.
fn basic_clk(
    basic: Basic<'_>,
    addr: *mut c_void,
    table: &mut KVec<bindings::clk_div_table>,
) -> Result<(BasicClk, *const bindings::clk_ops)> {
    Ok(match basic {
        Basic::Mux { shift, mask } => {
            if shift >= 32 || mask == 0 {
                return Err(EINVAL);
            }
            let mux = bindings::clk_mux {
                reg: addr,
                mask,
                shift,
                ..Default::default()
            };
            (
                BasicClk {
                    mux: ManuallyDrop::new(mux),
                },
                &raw const bindings::clk_mux_ops,
            )
        }
        Basic::Divider {
            shift,
            width,
            table: t,
        } => {
            if !(1..=30).contains(&width) || u32::from(shift) + u32::from(width) > 32 {
                return Err(EINVAL);
            }
            let divider = bindings::clk_divider {
                reg: addr,
                shift,
                width,
                table: div_table(t, table)?,
                ..Default::default()
            };
            (
                BasicClk {
                    divider: ManuallyDrop::new(divider),
                },
                &raw const bindings::clk_divider_ops,
            )
        }
        Basic::Gate { bit } => {
            if bit >= 32 {
                return Err(EINVAL);
            }
            let gate = bindings::clk_gate {
                reg: addr,
                bit_idx: bit,
                ..Default::default()
            };
            (
                BasicClk {
                    gate: ManuallyDrop::new(gate),
                },
                &raw const bindings::clk_gate_ops,
            )
        }
        Basic::FixedFactor { mult, div } => {
            if mult == 0 || div == 0 {
                return Err(EINVAL);
            }
            let fixed_factor = bindings::clk_fixed_factor {
                mult,
                div,
                ..Default::default()
            };
            (
                BasicClk {
                    fixed_factor: ManuallyDrop::new(fixed_factor),
                },
                &raw const bindings::clk_fixed_factor_ops,
            )
        }
    })
}

/// Fills `table` with the framework's divider table for `(value, divisor)` pairs `t`, ended by a
/// zero entry, and returns it.
///
/// Null for no pairs (the divisor is the value plus one).
fn div_table(
    t: &[(u32, u32)],
    table: &mut KVec<bindings::clk_div_table>,
) -> Result<*const bindings::clk_div_table> {
    if t.is_empty() {
        return Ok(null());
    }
    table.reserve(t.len() + 1, GFP_KERNEL)?;
    for &(val, div) in t {
        if div == 0 {
            return Err(EINVAL);
        }
        table.push(bindings::clk_div_table { val, div }, GFP_KERNEL)?;
    }
    table.push(bindings::clk_div_table { val: 0, div: 0 }, GFP_KERNEL)?;
    Ok(table.as_ptr())
}

/// Returns the framework's description of `parents`.
fn parent_data(parents: &[Parent<'_>]) -> Result<KVec<bindings::clk_parent_data>> {
    let mut data = KVec::with_capacity(parents.len(), GFP_KERNEL)?;
    for p in parents {
        data.push(
            match p {
                Parent::Input(n) => bindings::clk_parent_data {
                    fw_name: n.as_char_ptr(),
                    index: -1,
                    ..Default::default()
                },
                // Not `.hw`: the framework may look a parent up again later (after its
                // parent was unregistered, for one), and the name is copied, the
                // `clk_hw` is not.
                Parent::Clock(n) => bindings::clk_parent_data {
                    name: n.as_char_ptr(),
                    index: -1,
                    ..Default::default()
                },
            },
            GFP_KERNEL,
        )?;
    }
    Ok(data)
}

impl<F: CovariantForLt + 'static> Hw<F>
where
    for<'a> F::Of<'a>: Send + Sync,
    for<'b> &'b F::Of<'b>: IoBase<'b, Backend = MmioBackend>,
{
    /// Registers a basic clock of type `basic` over `reg` for the device tree node of `dev`,
    /// until `dev` is unbound or the returned [`Devres`] is dropped.
    ///
    /// Returns `EINVAL` if `reg` is not a register of a mapping of `dev`, `dev` has no device
    /// tree node or the field does not fit in 32 bits.
    pub fn register(
        dev: &Device<Bound>,
        reg: &Reg<F>,
        init: &Init<'_>,
        basic: Basic<'_>,
    ) -> Result<Devres<Self>> {
        // The mapping is one of `dev`'s (checked here): its devres entry precedes the clock's
        // (below), which is released first at unbind.
        let addr = reg.addr(dev)?;
        let (node, of_node) = of_node(dev)?;
        let mut table = KVec::new();
        let (c, ops) = basic_clk(basic, addr, &mut table)?;
        let parents = parent_data(init.parents)?;
        let name = init.name.to_cstring()?;
        let raw_init = bindings::clk_init_data {
            name: name.as_char_ptr(),
            ops,
            parent_names: null(),
            parent_data: parents.as_ptr(),
            parent_hws: null_mut(),
            num_parents: u8::try_from(parents.len())?,
            flags: if init.set_rate_parent {
                bindings::CLK_SET_RATE_PARENT
            } else {
                0
            },
        };

        const {
            assert!(core::mem::offset_of!(bindings::clk_mux, hw) == 0);
            assert!(core::mem::offset_of!(bindings::clk_divider, hw) == 0);
            assert!(core::mem::offset_of!(bindings::clk_gate, hw) == 0);
            assert!(core::mem::offset_of!(bindings::clk_fixed_factor, hw) == 0);
        };
        let raw = KBox::into_raw(KBox::new(c, GFP_KERNEL)?);
        // CAST: All the basic clock structures start with their `struct clk_hw` (asserted
        // above), and so does the `#[repr(C)]` union of them.
        let hw = raw.cast::<bindings::clk_hw>();
        // SAFETY: `hw` is the `struct clk_hw` of the clock structure `raw` (just allocated, not
        // registered), the structure `ops` expects, whose register address is valid until the
        // mapping of `reg` is revoked, which is after the clock is unregistered (below).
        // `raw_init`, the name and the parent data only need to live during
        // `of_clk_hw_register()`, which copies them and clears `hw->init`. `of_node` is the node
        // `node` holds a reference to.
        let ret = unsafe {
            (*hw).init = &raw_init;
            to_result(bindings::of_clk_hw_register(of_node, hw))
        };
        if let Err(e) = ret {
            // SAFETY: `raw` came from `KBox::into_raw` above and is not registered.
            drop(unsafe { KBox::from_raw(raw) });
            return Err(e);
        }
        // INVARIANT: `raw` is registered, its register is `reg`'s, its table `table`'s, its node
        // `node`. The clone of the `Arc` keeps the mapping from being dropped, and so revoked,
        // before `self`; the mapping's devres entry precedes that of the `Devres` made here,
        // released first at unbind, which drops `self`.
        let hw = Self {
            // SAFETY: `KBox::into_raw` does not return NULL.
            raw: unsafe { NonNull::new_unchecked(raw) },
            // SAFETY: As above, `hw` is `raw`.
            hw: unsafe { NonNull::new_unchecked(hw) },
            name,
            _table: table,
            _node: node,
            _reg: Reg {
                io: reg.io.clone(),
                offset: reg.offset,
            },
        };
        Devres::new(dev, hw)
    }
}

impl<F: ForLt> Hw<F>
where
    for<'a> F::Of<'a>: Send,
{
    /// Returns the clock's name, for [`Parent::Clock`].
    pub fn name(&self) -> &CStr {
        &self.name
    }

    /// Returns a consumer reference of the clock (`clk_hw_get_clk()`) for connection `con_id`.
    ///
    /// The [`Clk`] may outlive `self`: the framework then fails its operations.
    pub fn clk(&self, con_id: &CStr) -> Result<Clk> {
        // SAFETY: By the type invariant `hw` is registered; `con_id` is copied.
        let clk = from_err_ptr(unsafe {
            bindings::clk_hw_get_clk(self.hw.as_ptr(), con_id.as_char_ptr())
        })?;
        // SAFETY: `clk` is a reference of a clock, which the `Clk` puts when dropped.
        Ok(unsafe { Clk::from_raw(clk) })
    }
}

impl<F: ForLt> Drop for Hw<F>
where
    for<'a> F::Of<'a>: Send,
{
    fn drop(&mut self) {
        // SAFETY: By the type invariant `hw` is registered. The framework keeps the clock core
        // for the consumer references still held, but no longer uses `hw` and the structure
        // around it.
        unsafe { bindings::clk_hw_unregister(self.hw.as_ptr()) };
        // SAFETY: By the type invariant `raw` came from `KBox::into_raw`; nothing refers to it
        // any more.
        drop(unsafe { KBox::from_raw(self.raw.as_ptr()) });
        // The table, the node reference and the register's mapping go after this.
    }
}
