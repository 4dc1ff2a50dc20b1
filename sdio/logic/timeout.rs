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
