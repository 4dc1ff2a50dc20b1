// SPDX-License-Identifier: GPL-2.0

//! The controller's mux shared by its slots.
//!
//! It decides which waiting slot the controller serves next, and
//! when a slot's bus settings must be written to the controller before its request.

/// The mux's ports (`MULT.PORT_SEL`).
pub(crate) const PORTS: usize = 3;

/// A slot's bus settings, four data lines or one, and the card clock in Hz.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BusSettings {
    /// Four data lines (`CONF.BUS_WIDTH`).
    pub(crate) four: bool,
    /// The card clock the slot's `set_ios` asked for.
    pub(crate) hz: u32,
}

/// Returns the port served after `last` among those `waiting`.
///
/// It is the next one in turn, so that
/// a waiting slot is passed over by at most one request of each other slot.
pub(crate) fn next_port(waiting: [bool; PORTS], last: usize) -> Option<usize> {
    (1..=PORTS)
        .map(|i| (last + i) % PORTS)
        .find(|&p| waiting[p])
}

/// The slots' bus settings and those written to the controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Mux {
    /// Each port's settings, as its slot's last `set_ios` asked.
    settings: [BusSettings; PORTS],
    /// The settings on the controller, `None` when unknown (a write failed, or none yet).
    written: Option<BusSettings>,
}

impl Mux {
    /// Returns the state with no settings written yet.
    pub(crate) const fn new() -> Self {
        Self {
            settings: [BusSettings { four: false, hz: 0 }; PORTS],
            written: None,
        }
    }

    /// Records `s` as the settings of `port` (out of range: ignored).
    pub(crate) fn set(&mut self, port: usize, s: BusSettings) {
        if let Some(slot) = self.settings.get_mut(port) {
            *slot = s;
        }
    }

    /// Returns the settings to write before a request of `port`, none when the controller has
    /// them already.
    pub(crate) fn unwritten(&self, port: usize) -> Option<BusSettings> {
        let s = *self.settings.get(port)?;
        (self.written != Some(s)).then_some(s)
    }

    /// Notes that the controller has `s` (`None`: a write failed, its settings are unknown).
    pub(crate) fn written(&mut self, s: Option<BusSettings>) {
        self.written = s;
    }
}
