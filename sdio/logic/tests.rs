// SPDX-License-Identifier: GPL-2.0

//! Host tests (`cargo test`) of the driver's pure decisions.

use std::string::ToString;
use std::vec::Vec;

use super::counters::{
    SlotStats,
    SLOT_ERRORS, //
};
use super::data_path::{
    DataPath,
    PathError, //
};
use super::module_params::{
    ParamError,
    Params,
    QueueLimits,
    MAX_REQ_SIZE, //
};
use super::params::{
    BOUNCE_SIZE_DEFAULT,
    MAX_SEGS_DEFAULT, //
};
use super::ports::{
    next_port,
    BusSettings,
    Mux,
    PORTS, //
};
use super::stats::{
    ErrorKind,
    Outcome, //
};
use super::timeout::{
    command_timeout_ms,
    on_expiry,
    Expiry,
    CMD_TIMEOUT_MS, //
};
use super::transfer::{
    bytes_xfered,
    copy_back_len, //
};

const KIB: u32 = 1024;

fn params(bounce_size: i32, max_segs: u32) -> Params {
    Params::from_module(bounce_size, max_segs).unwrap()
}

#[test]
fn default_parameters() {
    let p = params(BOUNCE_SIZE_DEFAULT, MAX_SEGS_DEFAULT);
    assert_eq!(
        p,
        Params {
            bounce_size: 128 * KIB,
            max_segs: 64
        }
    );
    assert_eq!(
        p.limits(),
        QueueLimits {
            max_segs: 64,
            max_req_size: 128 * KIB
        }
    );
}

#[test]
fn parameter_ranges() {
    for ok in [0, 4096, 8192, 65536, 131072] {
        assert_eq!(params(ok, 64).bounce_size, ok as u32);
    }
    for bad in [
        -2,
        -4096,
        1,
        512,
        2048,
        3000,
        4095,
        4097,
        12288,
        262144,
        i32::MAX,
        i32::MIN,
    ] {
        assert_eq!(
            Params::from_module(bad, 64),
            Err(ParamError::BounceSize(bad)),
            "{bad}"
        );
    }
    for ok in [1, 2, 64, 255, 256] {
        assert_eq!(u32::from(params(-1, ok).max_segs), ok);
    }
    for bad in [0, 257, 65536, 65537, u32::MAX] {
        assert_eq!(
            Params::from_module(-1, bad),
            Err(ParamError::MaxSegs(bad)),
            "{bad}"
        );
    }
    // Both wrong: bounce_size is reported first.
    assert_eq!(
        Params::from_module(3000, 0),
        Err(ParamError::BounceSize(3000))
    );
}

#[test]
fn error_messages_name_parameter_value_and_range() {
    let m = Params::from_module(3000, 64).unwrap_err().to_string();
    assert!(m.contains("bounce_size=3000"), "{m}");
    assert!(
        m.contains("-1 (the largest request, 131072, the default)")
            && m.contains("0 (no bounce buffer)")
            && m.contains("power of two from 4096 to 131072"),
        "{m}"
    );
    let m = Params::from_module(-7, 64).unwrap_err().to_string();
    assert!(m.contains("bounce_size=-7"), "{m}");
    let m = Params::from_module(-1, 300).unwrap_err().to_string();
    assert!(
        m.contains("max_segs=300") && m.contains("from 1 to 256"),
        "{m}"
    );
}

#[test]
fn queue_limits() {
    // No bounce buffer: the C driver's one segment of 128 KiB, whatever max_segs says.
    for segs in [1, 64, 256] {
        assert_eq!(
            params(0, segs).limits(),
            QueueLimits {
                max_segs: 1,
                max_req_size: MAX_REQ_SIZE
            }
        );
    }
    // A smaller buffer: requests no larger than it.
    assert_eq!(
        params(4096, 1).limits(),
        QueueLimits {
            max_segs: 1,
            max_req_size: 4096
        }
    );
    assert_eq!(
        params(32 * 1024, 256).limits(),
        QueueLimits {
            max_segs: 256,
            max_req_size: 32 * KIB
        }
    );
}

#[test]
fn direct_is_one_segment_of_aligned_words() {
    let r = params(-1, 64).path_rule();
    // One segment of whole words at a word-aligned offset: in place.
    assert_eq!(r.choose(1, 0, 4 * KIB), Ok(DataPath::Direct));
    assert_eq!(r.choose(1, 4, 512), Ok(DataPath::Direct));
    assert_eq!(r.choose(1, 32, 8), Ok(DataPath::Direct));
    assert_eq!(r.choose(1, 0, 128 * KIB), Ok(DataPath::Direct));
    // An offset or a length that is not a multiple of 4: bounced.
    for (offset, len) in [(1, 512), (2, 512), (0, 6), (0, 1), (4094, 4)] {
        assert_eq!(
            r.choose(1, offset, len),
            Ok(DataPath::Bounce),
            "{offset} {len}"
        );
    }
    // More than one segment: bounced, up to the buffer.
    assert_eq!(r.choose(2, 0, 8 * KIB), Ok(DataPath::Bounce));
    assert_eq!(r.choose(64, 0, 128 * KIB), Ok(DataPath::Bounce));
    assert_eq!(
        r.choose(2, 0, 256 * KIB),
        Err(PathError::TooBig {
            segments: 2,
            len: 256 * KIB,
            bounce: 128 * KIB
        })
    );
    assert_eq!(r.choose(0, 0, 512), Err(PathError::NoSegments));
    // A small buffer does not limit the requests that go in place.
    let small = params(4096, 64).path_rule();
    assert_eq!(small.choose(1, 0, 64 * KIB), Ok(DataPath::Direct));
    assert_eq!(small.choose(1, 2, 4096), Ok(DataPath::Bounce));
    assert!(matches!(
        small.choose(1, 2, 8192),
        Err(PathError::Unaligned { .. })
    ));
}

#[test]
fn without_bounce_buffer_unaligned_fails() {
    // bounce_size=0: the C driver's rule, an unaligned segment is refused.
    let r = params(0, 64).path_rule();
    assert_eq!(r.choose(1, 0, 4 * KIB), Ok(DataPath::Direct));
    assert_eq!(
        r.choose(1, 2, 512),
        Err(PathError::Unaligned {
            offset: 2,
            len: 512,
            bounce: 0
        })
    );
    assert!(matches!(
        r.choose(2, 0, 1024),
        Err(PathError::TooBig { .. })
    ));
}

#[test]
fn pre_map_only_writes_that_go_direct() {
    let r = params(-1, 64).path_rule();
    assert!(r.pre_map(1, 0, 4 * KIB, true));
    assert!(r.pre_map(1, 4, 512, true));
    // Reads, lists, unaligned segments: left to the request.
    assert!(!r.pre_map(1, 0, 4 * KIB, false));
    assert!(!r.pre_map(2, 0, 8 * KIB, true));
    assert!(!r.pre_map(1, 2, 512, true));
    assert!(!r.pre_map(1, 0, 6, true));
}

#[test]
fn copy_back_only_without_error() {
    for (cmd, data) in [(false, false), (true, false), (false, true), (true, true)] {
        let xfered = bytes_xfered(cmd, data, 64 * KIB);
        let failed = cmd || data;
        assert_eq!(xfered, if failed { 0 } else { 64 * KIB });
        // A read copies back what was transferred, and only without an error.
        assert_eq!(
            copy_back_len(true, cmd, data, xfered),
            if failed { 0 } else { 64 * KIB }
        );
        // A write never.
        assert_eq!(copy_back_len(false, cmd, data, xfered), 0);
    }
}

#[test]
fn command_timeouts() {
    // Without data: the busy timeout, or the C driver's second.
    assert_eq!(
        command_timeout_ms(0, None, 50_000_000, true),
        CMD_TIMEOUT_MS
    );
    assert_eq!(command_timeout_ms(250, None, 400_000, false), 250);
    assert_eq!(command_timeout_ms(30_000, None, 400_000, false), 30_000);
    // With data: its time on the bus on top. 128 KiB on one line at 400 kHz: 2621 ms.
    assert_eq!(
        command_timeout_ms(0, Some(128 * KIB), 400_000, false),
        1000 + 2621
    );
    // On four lines at 50 MHz: 5 ms.
    assert_eq!(
        command_timeout_ms(0, Some(128 * KIB), 50_000_000, true),
        1005
    );
    // A clock below 1 kHz counts as 1 kHz, never a division by zero.
    assert_eq!(command_timeout_ms(0, Some(512), 0, false), 1000 + 4096);
    assert_eq!(
        command_timeout_ms(u32::MAX, Some(u32::MAX), 0, false),
        u32::MAX
    );
    // Never shorter than the time the data takes on the bus.
    for hz in [100_000, 400_000, 25_000_000, 50_000_000] {
        for len in [512, 4 * KIB, 128 * KIB] {
            let bus_ms = len * 8 / (hz / 1000);
            assert!(command_timeout_ms(0, Some(len), hz, false) >= bus_ms + CMD_TIMEOUT_MS);
        }
    }
}

fn outcome(len: u32, write: bool, bounced: bool) -> Outcome {
    Outcome {
        len,
        write,
        bounced,
        cmd_error: None,
        data_error: None,
        xfered: len,
        copied_back: if bounced && !write { len } else { 0 },
        pre_mapped: false,
    }
}

#[test]
fn stats_text() {
    let mut s = SlotStats::new();
    s.req.record(&outcome(128 * KIB, false, true));
    s.req.record(&outcome(4 * KIB, true, false));
    let mut crc = outcome(64 * KIB, false, true);
    crc.data_error = Some(ErrorKind::DataCrc);
    crc.xfered = 0;
    crc.copied_back = 0;
    s.req.record(&crc);
    s.req.record_command(Some(ErrorKind::Deadline));
    s.req.record_pre_mapped();
    s.record_reset();
    s.record_reset();
    s.record_waited();
    s.record_settings_write();
    s.record_settings_write();
    s.record_settings_write();
    let t = s.to_string();
    for line in [
        "commands: 4\n",
        "data_requests: 3\n",
        "direct: 1\n",
        "bounced: 2\n",
        "bytes_read: 131072\n",
        "bytes_written: 4096\n",
        "copy_back_skipped: 1\n",
        "pre_mapped: 1\n",
        "resets: 2\n",
        "waited: 1\n",
        "settings_writes: 3\n",
        "error_data_crc: 1\n",
        "error_deadline: 1\n",
        "error_cmd_crc: 0\n",
        "error_setup: 0\n",
        "size_131072: 1\n",
        "size_65536: 1\n",
        "size_4096: 1\n",
    ] {
        assert!(t.contains(line), "{line:?} not in\n{t}");
    }
    // Only the kinds this controller reports.
    assert!(
        !t.contains("error_fifo") && !t.contains("error_cmd_timeout"),
        "{t}"
    );
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 12 + SLOT_ERRORS.len() + 14);
    for l in lines {
        let (k, v) = l.split_once(": ").unwrap();
        assert!(!k.is_empty() && v.parse::<u64>().is_ok(), "{l}");
    }
    assert_eq!(SlotStats::new(), SlotStats::default());
}

/// Checks that the controller serves the waiting slots in turn, after the one served last.
#[test]
fn ports_in_turn() {
    assert_eq!(next_port([false; PORTS], 0), None);
    assert_eq!(next_port([true, false, false], 0), Some(0));
    assert_eq!(next_port([true, true, false], 0), Some(1));
    assert_eq!(next_port([true, true, false], 1), Some(0));
    assert_eq!(next_port([true, true, true], 2), Some(0));
    assert_eq!(next_port([false, true, true], 1), Some(2));
    // Two slots both waiting all the time alternate.
    let mut last = 1;
    let served: Vec<usize> = (0..6)
        .map(|_| {
            last = next_port([true, true, false], last).unwrap();
            last
        })
        .collect();
    assert_eq!(served, [0, 1, 0, 1, 0, 1]);
}

/// Checks that a slot's settings are written before its request only when they differ.
#[test]
fn mux_settings() {
    let sd = BusSettings {
        four: true,
        hz: 50_000_000,
    };
    let sdio = BusSettings {
        four: true,
        hz: 25_000_000,
    };
    let mut m = Mux::new();
    assert_eq!(m, Mux::default());
    // Nothing written yet: even the default settings are written.
    assert_eq!(m.unwritten(1), Some(BusSettings::default()));
    m.set(1, sd);
    m.set(0, sdio);
    assert_eq!(m.unwritten(1), Some(sd));
    m.written(Some(sd));
    assert_eq!(m.unwritten(1), None);
    assert_eq!(m.unwritten(0), Some(sdio));
    m.written(Some(sdio));
    assert_eq!(m.unwritten(0), None);
    assert_eq!(m.unwritten(1), Some(sd));
    // Two slots with the same settings share them.
    m.set(1, sdio);
    assert_eq!(m.unwritten(1), None);
    // A failed write: the next request writes again.
    m.written(None);
    assert_eq!(m.unwritten(0), Some(sdio));
    // A port out of range has no settings.
    m.set(PORTS, sd);
    assert_eq!(m.unwritten(PORTS), None);
}

#[test]
fn a_timer_ends_only_a_passed_command_and_follows_only_its_own() {
    // Idle bus: nothing to end, whether or not the timer's slot was the last on it.
    assert_eq!(on_expiry(0, None, false), Expiry::Ignore);
    assert_eq!(on_expiry(0, None, true), Expiry::Ignore);
    // Its own slot's command: ended once its deadline passed, else armed for the rest.
    assert_eq!(on_expiry(1, Some(1), true), Expiry::TimeOut);
    assert_eq!(on_expiry(1, Some(1), false), Expiry::Rearm);
    // Another slot's command: its own timer follows it; a passed one is ended by either.
    assert_eq!(on_expiry(0, Some(2), false), Expiry::Ignore);
    assert_eq!(on_expiry(0, Some(2), true), Expiry::TimeOut);
    for port in 0..PORTS {
        for cur in 0..PORTS {
            assert_eq!(
                on_expiry(port, Some(cur), false) == Expiry::Rearm,
                port == cur
            );
        }
    }
}
