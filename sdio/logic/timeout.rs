// SPDX-License-Identifier: GPL-2.0

//! How long a command may take before the driver's timer ends it.

/// How long a command without a busy timeout of its own may take, in milliseconds, as in the C
/// driver.
pub(crate) const CMD_TIMEOUT_MS: u32 = 1000;

/// Returns how long a command may take, in milliseconds.
///
/// Its busy timeout (`busy_timeout_ms`, 0: none), or [`CMD_TIMEOUT_MS`]; with data (`data_len`
/// bytes) the time the data takes on the bus at the card clock `hz` on one or four lines (`four`)
/// on top. A stopped clock counts as 1 kHz.
pub(crate) fn command_timeout_ms(
    busy_timeout_ms: u32,
    data_len: Option<u32>,
    hz: u32,
    four: bool,
) -> u32 {
    let ms = match busy_timeout_ms {
        0 => CMD_TIMEOUT_MS,
        t => t,
    };
    let lines = if four { 4 } else { 1 };
    let khz = (hz / 1000).max(1);
    let data = data_len.map_or(0, |len| len.saturating_mul(8) / lines / khz);
    ms.saturating_add(data)
}

/// What a slot's timer does when it fires.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Expiry {
    /// Nothing: the bus is idle, or its command is another slot's, whose own timer is armed
    /// for its deadline.
    Ignore,
    /// Arm again for the rest of the command's time: the timer fired early (its jiffies).
    Rearm,
    /// End the command on the bus: its deadline passed.
    TimeOut,
}

/// Returns what the timer of the slot on `port` does when it fires.
///
/// `cur_port` is the port of the command on the bus (none when idle), `passed` whether its
/// deadline passed. Each command's slot's timer is armed for its deadline when it starts; a
/// command whose deadline passed is ended by whichever timer fires first.
pub(crate) fn on_expiry(port: usize, cur_port: Option<usize>, passed: bool) -> Expiry {
    match cur_port {
        None => Expiry::Ignore,
        Some(_) if passed => Expiry::TimeOut,
        Some(p) if p == port => Expiry::Rearm,
        Some(_) => Expiry::Ignore,
    }
}
