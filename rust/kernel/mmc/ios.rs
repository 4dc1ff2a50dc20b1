// SPDX-License-Identifier: GPL-2.0

//! MMC bus settings handed to [`HostOps::set_ios`](super::HostOps::set_ios) (`struct mmc_ios`).
//!
//! C header: [`include/linux/mmc/host.h`](srctree/include/linux/mmc/host.h)

use core::ptr::NonNull;

use kernel::{
    error::to_result,
    prelude::*, //
};

use crate::bindings;

/// The power state of the card (`ios->power_mode`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PowerMode {
    /// `MMC_POWER_OFF`.
    Off,
    /// `MMC_POWER_UP`.
    Up,
    /// `MMC_POWER_ON`.
    On,
    /// `MMC_POWER_UNDEFINED` or anything else.
    Undefined,
}

impl PowerMode {
    pub(super) fn from_raw(v: u8) -> Self {
        match u32::from(v) {
            bindings::MMC_POWER_OFF => Self::Off,
            bindings::MMC_POWER_UP => Self::Up,
            bindings::MMC_POWER_ON => Self::On,
            _ => Self::Undefined,
        }
    }
}

/// The width of the data bus (`ios->bus_width`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BusWidth {
    /// `MMC_BUS_WIDTH_1`.
    One,
    /// `MMC_BUS_WIDTH_4`.
    Four,
    /// `MMC_BUS_WIDTH_8`.
    Eight,
    /// Any other raw value.
    Other(u8),
}

impl BusWidth {
    pub(super) fn from_raw(v: u8) -> Self {
        match u32::from(v) {
            bindings::MMC_BUS_WIDTH_1 => Self::One,
            bindings::MMC_BUS_WIDTH_4 => Self::Four,
            bindings::MMC_BUS_WIDTH_8 => Self::Eight,
            _ => Self::Other(v),
        }
    }
}

/// The settings of one `set_ios` or `start_signal_voltage_switch` call.
///
/// It also gives what only those callbacks may do with the host: report the clock it really
/// runs and switch the card's supply.
///
/// # Invariants
///
/// `host` is valid, and one of its `set_ios` or `start_signal_voltage_switch` callbacks is
/// running on this thread. The MMC core makes both calls with the host claimed
/// (`mmc_claim_host()`, also in `mmc_start_host()` and `mmc_stop_host()`), so no two of them
/// overlap and nothing else writes `actual_clock` meanwhile (the core and debugfs only read it).
/// `supply.vmmc` and `supply.vqmmc` are NULL (`mmc_alloc_host()`; `mmc_regulator_get_supply()`
/// was not called), an error pointer (no such regulator) or a regulator, set before the host
/// is added and not changed afterwards.
pub struct Ios {
    host: NonNull<bindings::mmc_host>,
    /// Bus clock in Hz, 0 for off.
    pub clock: u32,
    /// OCR bit number of the selected voltage.
    pub vdd: u16,
    /// Power state.
    pub power_mode: PowerMode,
    /// Data bus width.
    pub bus_width: BusWidth,
}

impl Ios {
    /// Creates an [`Ios`] from the settings `ios` of `host`.
    ///
    /// # Safety
    ///
    /// `host` must be valid and in its `set_ios` or `start_signal_voltage_switch` callback on
    /// this thread, called by the MMC core as the type invariants describe, and `ios` its valid
    /// settings.
    pub(super) unsafe fn from_raw(
        host: NonNull<bindings::mmc_host>,
        ios: *const bindings::mmc_ios,
    ) -> Self {
        // SAFETY: `ios` is valid during the callback (safety requirements).
        let ios = unsafe { &*ios };
        // INVARIANT: By the safety requirements.
        Self {
            host,
            clock: ios.clock,
            vdd: ios.vdd,
            power_mode: PowerMode::from_raw(ios.power_mode),
            bus_width: BusWidth::from_raw(ios.bus_width),
        }
    }

    /// Reports the bus clock actually running, in Hz (`host->actual_clock`).
    pub fn set_actual_clock(&self, hz: u32) {
        // SAFETY: By the type invariant the host is valid and only this callback writes the
        // field now; the host's debugfs `ios` file reads it without claiming the host, hence
        // one volatile write (`WRITE_ONCE()`).
        unsafe { (&raw mut (*self.host.as_ptr()).actual_clock).write_volatile(hz) };
    }

    /// Sets the vmmc supply to the voltage of OCR bit `vdd`, 0 for off (`mmc_regulator_set_ocr()`).
    ///
    /// Does nothing without a vmmc regulator (none in the device tree, or
    /// [`UnregisteredHost::regulator_get_supply`](super::UnregisteredHost::regulator_get_supply)
    /// never called).
    pub fn set_vmmc_ocr(&self, vdd: u16) -> Result {
        let h = self.host.as_ptr();
        // SAFETY: By the type invariant the host is valid and `supply.vmmc` does not change.
        let vmmc = unsafe { (*h).supply.vmmc };
        // SAFETY: `IS_ERR()` only inspects the pointer value.
        if vmmc.is_null() || unsafe { bindings::IS_ERR(vmmc.cast_const().cast()) } {
            return Ok(());
        }
        // SAFETY: `h` is a valid host and `vmmc` its regulator (neither NULL nor an error
        // pointer, checked).
        to_result(unsafe { bindings::mmc_regulator_set_ocr(h, vmmc, vdd) })
    }

    /// Sets the vqmmc supply to the signal voltage the core asks for
    /// (`mmc_regulator_set_vqmmc()`), what `start_signal_voltage_switch` does on a host whose
    /// card I/O lines are powered by vqmmc.
    ///
    /// Returns whether the voltage changed: `false` when the regulator already gives it or
    /// cannot give exactly that voltage but one in its range (`1` of the C function). Fails with
    /// `EINVAL` without a vqmmc regulator.
    pub fn set_vqmmc(&self) -> Result<bool> {
        let h = self.host.as_ptr();
        // SAFETY: By the type invariant the host is valid and `supply.vqmmc` does not change.
        let vqmmc = unsafe { (*h).supply.vqmmc };
        if vqmmc.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: `h` is valid and one of its `set_ios`/`start_signal_voltage_switch` callbacks
        // runs (type invariant): `ios` is the host's own settings, which the core wrote before the
        // call and does not change during it. An error pointer is the C function's own `EINVAL`.
        let ret = unsafe { bindings::mmc_regulator_set_vqmmc(h, &raw mut (*h).ios) };
        to_result(ret).map(|()| ret == 0)
    }
}

#[cfg(CONFIG_RUST_MMC_KUNIT_TEST)]
#[kernel::macros::kunit_tests(rust_kernel_mmc_ios)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_map_to_their_variants() {
        assert_eq!(
            PowerMode::from_raw(bindings::MMC_POWER_OFF as u8),
            PowerMode::Off
        );
        assert_eq!(
            PowerMode::from_raw(bindings::MMC_POWER_UP as u8),
            PowerMode::Up
        );
        assert_eq!(
            PowerMode::from_raw(bindings::MMC_POWER_ON as u8),
            PowerMode::On
        );
        assert_eq!(PowerMode::from_raw(0xff), PowerMode::Undefined);
        assert_eq!(
            BusWidth::from_raw(bindings::MMC_BUS_WIDTH_1 as u8),
            BusWidth::One
        );
        assert_eq!(
            BusWidth::from_raw(bindings::MMC_BUS_WIDTH_4 as u8),
            BusWidth::Four
        );
        assert_eq!(
            BusWidth::from_raw(bindings::MMC_BUS_WIDTH_8 as u8),
            BusWidth::Eight
        );
        assert_eq!(BusWidth::from_raw(7), BusWidth::Other(7));
    }
}
