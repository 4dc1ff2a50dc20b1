// SPDX-License-Identifier: GPL-2.0

//! Bus settings handed to [`HostOps::set_ios`](super::HostOps::set_ios) (`struct mmc_ios`).

use core::ptr::NonNull;

use kernel::{
    error::to_result,
    prelude::*, //
};

use crate::bindings;

/// `ios->power_mode`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum PowerMode {
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

/// `ios->bus_width`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum BusWidth {
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

/// The settings of one `set_ios` call, and what only `set_ios` may do with the host: report
/// the clock it really runs and switch the card's supply.
///
/// # Invariants
///
/// `host` is a registered host whose `set_ios` callback is running; the MMC core serializes
/// that callback, so nothing else writes `actual_clock` meanwhile.
pub(crate) struct Ios {
    host: NonNull<bindings::mmc_host>,
    /// Bus clock in Hz, 0 for off.
    pub(crate) clock: u32,
    /// OCR bit number of the selected voltage.
    pub(crate) vdd: u16,
    /// Power state.
    pub(crate) power_mode: PowerMode,
    /// Data bus width.
    pub(crate) bus_width: BusWidth,
}

impl Ios {
    /// # Safety
    ///
    /// `host` must be a registered host in its `set_ios` callback, and `ios` its valid settings.
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
    pub(crate) fn set_actual_clock(&self, hz: u32) {
        // SAFETY: By the type invariant the host is valid and only this callback writes the
        // field now.
        unsafe { (*self.host.as_ptr()).actual_clock = hz };
    }

    /// Sets the vmmc supply to the voltage of OCR bit `vdd` (0: off), if the host has a vmmc
    /// regulator (`mmc_regulator_set_ocr()`).
    pub(crate) fn set_vmmc_ocr(&self, vdd: u16) -> Result {
        let h = self.host.as_ptr();
        // SAFETY: By the type invariant the host is valid; `supply.vmmc` was set by
        // `mmc_regulator_get_supply()` before registration and does not change.
        let vmmc = unsafe { (*h).supply.vmmc };
        // SAFETY: `IS_ERR()` only inspects the pointer value.
        if unsafe { bindings::IS_ERR(vmmc.cast_const().cast()) } {
            return Ok(());
        }
        // SAFETY: `h` is a valid host and `vmmc` its regulator.
        to_result(unsafe { bindings::mmc_regulator_set_ocr(h, vmmc, vdd) })
    }
}

#[kernel::macros::kunit_tests(meson_mx_sdhc_rs_mmc_ios)]
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
