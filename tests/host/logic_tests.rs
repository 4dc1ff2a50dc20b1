// SPDX-License-Identifier: GPL-2.0

//! Host unit tests of the pure logic: the driver's `logic.rs` and its bounce buffer's path
//! decisions and double-buffer state machine (`bounce/policy.rs`, `bounce/slots.rs`), and the
//! dirty-line bookkeeping of `kernel::dma::noncoherent` (`dirty.rs`); and the SD card slot
//! driver's (`sdio/logic.rs`, whose tests are host tests only).
//! Their shared tests (`logic/tests.rs`, `policy/tests.rs`, `slots/tests.rs`, `dirty/tests.rs`) are
//! also KUnit suites in the kernel; the tests of text, which need `std`, are here.

#![no_std]
#![allow(dead_code, unused_imports)]

#[cfg(test)]
extern crate std;

#[path = "../../logic.rs"]
mod logic;

#[path = "../../bounce/policy.rs"]
mod policy;
#[path = "../../bounce/slots.rs"]
mod slots;
/// The number of bounce buffers, as `bounce.rs` has it (`slots.rs` takes it from its parent).
const MAX_BUFFERS: usize = 2;
#[path = "../../rust/kernel/dma/noncoherent/dirty.rs"]
mod dirty;

/// The SD card slot driver's pure decisions (`sdio/logic.rs`, with its tests), and the rules it
/// shares with the SDHC driver's (`logic/`).
#[path = "../../sdio/logic.rs"]
mod sdio_logic;

#[cfg(test)]
mod tests {
    use super::logic::{tests::suite::ok, *};
    use std::string::ToString;

    const KIB: u32 = 1024;
    const MIB: u32 = 1024 * 1024;

    #[test]
    fn error_messages_name_parameter_value_and_range() {
        let m = Params::new(3000, 64, BOUNCE_MAX).unwrap_err().to_string();
        assert!(m.contains("bounce_size=3000"), "{m}");
        assert!(
            m.contains("4096") && m.contains("4194304") && m.contains("power of two"),
            "{m}"
        );
        let m = Params::new(0, 0, BOUNCE_MAX).unwrap_err().to_string();
        assert!(m.contains("max_segs=0"), "{m}");
        assert!(m.contains("1 to 256"), "{m}");
        // Both wrong: bounce_size is reported first.
        assert_eq!(
            Params::new(3000, 0, BOUNCE_MAX),
            Err(ParamError::BounceSize(3000))
        );
        let m = Params::new(512 * KIB, 64, 128 * KIB)
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("bounce_size=524288") && m.contains("max_dma_size=131072"),
            "{m}"
        );
        assert!(m.contains("unproven"), "{m}");
        let m = Params::from_module(-2, 64, BOUNCE_MAX)
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("bounce_size=-2") && m.contains("-1 (as large as max_dma_size"),
            "{m}"
        );
        let m = SkipClean::from_module(2).unwrap_err().to_string();
        assert!(
            m.contains("skip_clean_invalidate=2")
                && m.contains("-1 (on if")
                && m.contains("0 (off) or 1 (on)"),
            "{m}"
        );
        let m = Params::new(0, 64, 3000).unwrap_err().to_string();
        assert!(
            m.contains("max_dma_size=3000") && m.contains("power of two"),
            "{m}"
        );
    }

    #[test]
    fn skip_clean_reasons_in_words() {
        for (param, mapping, words) in [
            (SkipClean::On, BufferMapping::Differs, "forced by parameter"),
            (SkipClean::Off, BufferMapping::Identity, "forced by parameter"),
            (SkipClean::Auto, BufferMapping::Identity, "auto: identity mapping"),
            (SkipClean::Auto, BufferMapping::Differs, "auto: mapping differs"),
            (SkipClean::Auto, BufferMapping::Unknown, "auto: mapping unknown, DMA ranges"),
            (SkipClean::Auto, BufferMapping::NoCachedBuffer, "auto: no cached buffer"),
        ] {
            assert_eq!(skip_clean(param, mapping).1.as_str(), words);
        }
    }

    #[test]
    fn stats_text() {
        let mut s = Stats::new();
        s.record(&ok(128 * KIB, false, true));
        let t = s.to_string();
        let lines: std::vec::Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 25 + ErrorKind::ALL.len() + HIST_BUCKETS);
        assert!(t.contains("data_requests: 1\n"));
        assert!(t.contains("bounced: 1\n"));
        assert!(t.contains("bytes_read: 131072\n"));
        assert!(t.contains("error_data_crc: 0\n"));
        assert!(t.contains("size_131072: 1\n"));
        s.record_prepared();
        s.record_post_req_copy();
        s.record_pre_mapped();
        let t = s.to_string();
        assert!(t.contains("prepared: 1\n") && t.contains("post_req_copies: 1\n"));
        assert!(t.contains("pre_mapped: 1\n") && t.contains("pre_mapped_errors: 0\n"));
        assert!(t.contains("size_512: 0\n"));
        assert!(t.contains("size_4194304: 0\n"));
        s.record_error_stop(true);
        s.record_error_stop(false);
        let t = s.to_string();
        assert!(t.contains("error_stops: 2\n") && t.contains("error_stops_failed: 1\n"));
        // Every line is "name: number".
        for l in lines {
            let (k, v) = l.split_once(": ").unwrap();
            assert!(!k.is_empty() && v.parse::<u64>().is_ok(), "{l}");
        }
        assert_eq!(Stats::new(), Stats::default());
    }

    #[test]
    fn decimal_without_u64_division() {
        for v in [
            0u64,
            1,
            9,
            10,
            9999,
            10000,
            10001,
            65535,
            65536,
            99_999_999,
            100_000_000,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
            134_217_728,
            1_000_000_000_000,
            12_345_678_901_234_567_890,
            u64::MAX - 1,
            u64::MAX,
        ] {
            assert_eq!(Dec(v).to_string(), v.to_string(), "{v}");
        }
        let mut x = 1u64;
        while x < u64::MAX / 3 {
            assert_eq!(Dec(x).to_string(), x.to_string());
            assert_eq!(Dec(x - 1).to_string(), (x - 1).to_string());
            x *= 3;
        }
    }
}
