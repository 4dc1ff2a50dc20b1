// SPDX-License-Identifier: GPL-2.0

//! The registers, reached through their device-managed mapping one access at a time.
//!
//! The mapping is a `DevresExclusiveIoMem`: it is revoked, and unmapped, when the device is
//! unbound. Each read, write and update takes its own `try_access()` guard and drops it before
//! returning, so that no guard is held across a sleep (the driver polls, sleeps and takes
//! mutexes between its accesses) and no context needs the bound device at hand: the MMC
//! callbacks, the interrupt handlers, runtime PM, the watchdog's work and the host's teardown
//! reach the registers alike. Once the mapping is revoked a read gives 0 and a write does
//! nothing, as on a bus whose device is gone.

use kernel::{
    io::{
        register::LocatedRegister,
        Io,
        IoCapable,
        IoLoc,
        MmioBackend,
        Region, //
    },
    prelude::*,
    sync::Arc, //
};

use crate::kernel_ext::io::mem::DevresExclusiveIoMem;

/// The registers of a device-managed mapping of at least `SIZE` bytes.
pub(crate) struct MappedRegs<const SIZE: usize> {
    io: Arc<DevresExclusiveIoMem<SIZE>>,
}

impl<const SIZE: usize> MappedRegs<SIZE> {
    /// Takes the mapping `io`.
    pub(crate) fn new(io: DevresExclusiveIoMem<SIZE>) -> Result<Self> {
        Ok(Self {
            io: Arc::new(io, GFP_KERNEL)?,
        })
    }

    /// Returns the mapping, for the clocks registered over a register of it.
    pub(crate) fn mapping(&self) -> &Arc<DevresExclusiveIoMem<SIZE>> {
        &self.io
    }

    /// Reads the register at `location`, or 0 once the mapping is revoked.
    #[inline]
    pub(crate) fn read<T, L>(&self, location: L) -> T
    where
        L: IoLoc<Region<SIZE>, T>,
        L::IoType: Default,
        MmioBackend: IoCapable<L::IoType>,
    {
        self.io
            .try_access_with(|io| io.read(location))
            .unwrap_or_else(|| L::IoType::default().into())
    }

    /// Writes the located register value `value`, unless the mapping is revoked.
    #[inline]
    pub(crate) fn write_reg<T, L, V>(&self, value: V)
    where
        L: IoLoc<Region<SIZE>, T>,
        V: LocatedRegister<Region<SIZE>, Location = L, Value = T>,
        MmioBackend: IoCapable<L::IoType>,
    {
        self.io.try_access_with(|io| io.write_reg(value));
    }

    /// Writes `f` of the register at `location` back to it, both under one guard, unless the
    /// mapping is revoked.
    #[inline]
    pub(crate) fn update<T, L, F>(&self, location: L, f: F)
    where
        L: IoLoc<Region<SIZE>, T>,
        MmioBackend: IoCapable<L::IoType>,
        F: FnOnce(T) -> T,
    {
        self.io.try_access_with(|io| io.update(location, f));
    }
}
