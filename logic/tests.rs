// SPDX-License-Identifier: GPL-2.0

//! Tests of the driver's pure decisions.
//!
//! KUnit tests in the kernel (`CONFIG_KUNIT`), `cargo test`s on the host. The tests of text (error
//! messages, the statistics file, decimal formatting) need `std`'s strings and stay host tests.

/// The suite.
#[cfg_attr(not(test), kernel::macros::kunit_tests(meson_mx_sdhc_rs_logic))]
pub(crate) mod suite {
    use super::super::*;

    const KIB: u32 = 1024;
    const MIB: u32 = 1024 * 1024;

    /// What a test returns.
    ///
    /// `Err` says what went wrong (a panic would oops the kernel).
    type TestResult = Result<(), &'static str>;

    /// `Ok`/`Some`, or the test fails.
    trait ExpectOk<T> {
        fn expect_ok(self) -> Result<T, &'static str>;
    }

    impl<T, E> ExpectOk<T> for Result<T, E> {
        fn expect_ok(self) -> Result<T, &'static str> {
            self.map_err(|_| "unexpected Err")
        }
    }

    impl<T> ExpectOk<T> for Option<T> {
        fn expect_ok(self) -> Result<T, &'static str> {
            self.ok_or("unexpected None")
        }
    }

    /// Returns the C driver's limits.
    fn c_limits() -> Limits {
        Limits {
            max_segs: 1,
            max_req_size: 128 * KIB,
            max_seg_size: 128 * KIB,
            max_blk_size: 512,
            max_blk_count: 0xffff,
        }
    }

    #[test]
    fn bytes_xfered_zero_on_any_error() -> TestResult {
        assert_eq!(bytes_xfered(false, false, 4096), 4096);
        assert_eq!(bytes_xfered(true, false, 4096), 0);
        assert_eq!(bytes_xfered(false, true, 4096), 0);
        assert_eq!(bytes_xfered(true, true, 4096), 0);
        Ok(())
    }

    #[test]
    fn copy_back_rule() -> TestResult {
        // Reads without errors: exactly bytes_xfered, also short ones.
        assert_eq!(copy_back_len(true, false, false, 128 * KIB), 128 * KIB);
        assert_eq!(copy_back_len(true, false, false, 512), 512);
        assert_eq!(copy_back_len(true, false, false, 0), 0);
        // Any error: nothing.
        assert_eq!(copy_back_len(true, true, false, 4096), 0);
        assert_eq!(copy_back_len(true, false, true, 4096), 0);
        assert_eq!(copy_back_len(true, true, true, 4096), 0);
        // Writes never copy back.
        assert_eq!(copy_back_len(false, false, false, 4096), 0);
        // Combined with bytes_xfered: an error means no copy.
        for (c, d) in [(true, false), (false, true), (true, true)] {
            assert_eq!(copy_back_len(true, c, d, bytes_xfered(c, d, 8192)), 0);
        }
        Ok(())
    }

    #[test]
    fn limits_of_a_bounce_buffer() -> TestResult {
        assert_eq!(
            Limits::bounced(128 * KIB, 64, 512, 65536),
            Limits {
                max_segs: 64,
                max_req_size: 128 * KIB,
                max_seg_size: 128 * KIB,
                max_blk_size: 512,
                max_blk_count: 256,
            }
        );
        // The controller's block count bounds a large buffer.
        let l = Limits::bounced(4 * MIB, 256, 512, 4096);
        assert_eq!((l.max_req_size, l.max_seg_size), (4 * MIB, 4 * MIB));
        assert_eq!(l.max_blk_count, 4096);
        assert_eq!(Limits::bounced(4 * KIB, 1, 512, 65536).max_blk_count, 8);
        // A request of the largest size fills exactly one buffer.
        let l = Limits::bounced(512 * KIB, 64, 512, 65536);
        assert_eq!(l.max_blk_count * l.max_blk_size, l.max_req_size);
        assert_eq!(Limits::bounced(4 * KIB, 1, 0, 65536).max_blk_count, 0);
        Ok(())
    }

    /// Returns the deadline of a request on an 8-bit bus at 50 MHz, changed by `f`.
    fn deadline(f: impl FnOnce(&mut DeadlineInput)) -> u32 {
        let mut r = DeadlineInput {
            bus_hz: 50_000_000,
            bus_width: 8,
            ..Default::default()
        };
        f(&mut r);
        request_deadline_ms(&r)
    }

    #[test]
    fn bounce_size_boundaries() -> TestResult {
        for ok in [0, 4 * KIB, 8 * KIB, 128 * KIB, 512 * KIB, 4 * MIB] {
            assert_eq!(Params::new(ok, 64, BOUNCE_MAX).expect_ok()?.bounce_size, ok);
        }
        for bad in [
            1,
            512,
            2 * KIB,
            4 * KIB - 1,
            4 * KIB + 1,
            3000,
            12 * KIB,
            8 * MIB,
            u32::MAX,
        ] {
            assert_eq!(
                Params::new(bad, 64, BOUNCE_MAX),
                Err(ParamError::BounceSize(bad))
            );
        }
        Ok(())
    }

    #[test]
    fn max_segs_boundaries() -> TestResult {
        for ok in [1, 2, 64, 255, 256] {
            assert_eq!(
                u32::from(Params::new(128 * KIB, ok, BOUNCE_MAX).expect_ok()?.max_segs),
                ok
            );
        }
        for bad in [0, 257, 1000, u32::MAX] {
            assert_eq!(
                Params::new(128 * KIB, bad, BOUNCE_MAX),
                Err(ParamError::MaxSegs(bad))
            );
        }
        Ok(())
    }

    #[test]
    fn defaults_are_valid() -> TestResult {
        let p = Params::from_module(BOUNCE_FOLLOWS_MAX_DMA, MAX_SEGS_DEFAULT, MAX_DMA_DEFAULT)
            .expect_ok()?;
        assert_eq!(p.bounce_size, 131072);
        assert_eq!(p.max_segs, 64);
        assert_eq!(p.max_dma, 131072);
        assert_eq!(limits(&p, p.bounce_size).max_req_size, 131072);
        Ok(())
    }

    #[test]
    fn max_dma_size_boundaries() -> TestResult {
        for ok in [4 * KIB, 64 * KIB, 128 * KIB, 512 * KIB, 4 * MIB] {
            assert_eq!(Params::new(0, 64, ok).expect_ok()?.max_dma, ok);
        }
        for bad in [0, 2 * KIB, 4 * KIB + 1, 96 * KIB, 8 * MIB, u32::MAX] {
            assert_eq!(Params::new(0, 64, bad), Err(ParamError::MaxDmaSize(bad)));
        }
        Ok(())
    }

    #[test]
    fn bounce_size_above_max_dma_size_is_refused() -> TestResult {
        let e = ParamError::BounceAboveMaxDma {
            bounce: 512 * KIB,
            max_dma: 128 * KIB,
        };
        assert_eq!(Params::new(512 * KIB, 64, 128 * KIB), Err(e));
        assert_eq!(
            Params::new(128 * KIB, 64, 128 * KIB)
                .expect_ok()?
                .bounce_size,
            128 * KIB
        );
        assert_eq!(
            Params::new(64 * KIB, 64, 128 * KIB)
                .expect_ok()?
                .bounce_size,
            64 * KIB
        );
        // A bad size is reported as such before it is compared.
        assert_eq!(
            Params::new(3000, 64, 128 * KIB),
            Err(ParamError::BounceSize(3000))
        );
        Ok(())
    }

    #[test]
    fn bounce_size_follows_max_dma_size_by_default() -> TestResult {
        // -1, the default: the buffer is as large as max_dma_size, whatever that is.
        for max_dma in [4 * KIB, 64 * KIB, 128 * KIB, 512 * KIB, 4 * MIB] {
            let p = Params::from_module(BOUNCE_FOLLOWS_MAX_DMA, 64, max_dma).expect_ok()?;
            assert_eq!((p.bounce_size, p.max_dma), (max_dma, max_dma));
        }
        // Given: checked as before.
        assert_eq!(
            Params::from_module(64 * 1024, 64, 128 * KIB)
                .expect_ok()?
                .bounce_size,
            64 * KIB
        );
        assert_eq!(
            Params::from_module(0, 64, 128 * KIB)
                .expect_ok()?
                .bounce_size,
            0
        );
        assert_eq!(
            Params::from_module(512 * 1024, 64, 128 * KIB),
            Err(ParamError::BounceAboveMaxDma {
                bounce: 512 * KIB,
                max_dma: 128 * KIB
            })
        );
        // Following a bad max_dma_size: max_dma_size is what is wrong.
        assert_eq!(
            Params::from_module(BOUNCE_FOLLOWS_MAX_DMA, 64, 3000),
            Err(ParamError::MaxDmaSize(3000))
        );
        // Other negative sizes.
        for bad in [-2, -4096, i32::MIN] {
            assert_eq!(
                Params::from_module(bad, 64, 128 * KIB),
                Err(ParamError::BounceNegative(bad))
            );
        }
        Ok(())
    }

    #[test]
    fn skip_clean_param_range() -> TestResult {
        assert_eq!(SkipClean::from_module(SKIP_CLEAN_AUTO), Ok(SkipClean::Auto));
        assert_eq!(SkipClean::from_module(0), Ok(SkipClean::Off));
        assert_eq!(SkipClean::from_module(1), Ok(SkipClean::On));
        for bad in [-2, 2, 3, i32::MIN, i32::MAX] {
            assert_eq!(
                SkipClean::from_module(bad),
                Err(ParamError::SkipCleanInvalidate(bad))
            );
        }
        Ok(())
    }

    #[test]
    fn skip_clean_forced_whatever_the_mapping() -> TestResult {
        use BufferMapping::*;
        for m in [NoCachedBuffer, Identity, Differs, Unknown] {
            assert_eq!(
                skip_clean(SkipClean::On, m),
                (true, SkipCleanReason::Forced)
            );
            assert_eq!(
                skip_clean(SkipClean::Off, m),
                (false, SkipCleanReason::Forced)
            );
        }
        Ok(())
    }

    #[test]
    fn skip_clean_auto_only_with_identity_mapping() -> TestResult {
        use BufferMapping::*;
        for m in [NoCachedBuffer, Identity, Differs, Unknown] {
            assert_eq!(
                skip_clean(SkipClean::Auto, m),
                (m == Identity, SkipCleanReason::Auto(m))
            );
        }
        Ok(())
    }

    #[test]
    fn buffer_mapping_any_buffer_not_in_place_decides() -> TestResult {
        use BufferMapping::*;
        let all = [NoCachedBuffer, Identity, Differs, Unknown];
        for a in all {
            for b in all {
                assert_eq!(a.and(b), b.and(a));
                let differs = a.and(b) == Differs;
                assert_eq!(differs, a == Differs || b == Differs);
            }
            assert_eq!(a.and(NoCachedBuffer), a);
        }
        assert_eq!(Identity.and(Identity), Identity);
        assert_eq!(Identity.and(Unknown), Unknown);
        assert_eq!(Unknown.and(Differs), Differs);
        Ok(())
    }

    #[test]
    fn limits_without_buffer_follow_max_dma_size() -> TestResult {
        let p = Params::new(0, 64, 64 * KIB).expect_ok()?;
        let l = limits(&p, 0);
        assert_eq!(
            (l.max_segs, l.max_req_size, l.max_seg_size),
            (1, 64 * KIB, 64 * KIB)
        );
        let p = Params::new(0, 64, 4 * MIB).expect_ok()?;
        assert_eq!(limits(&p, 0), c_limits());
        Ok(())
    }

    #[test]
    fn limits_without_buffer_are_the_c_drivers() -> TestResult {
        assert_eq!(c_driver_limits(), c_limits());
        Ok(())
    }

    #[test]
    fn limits_without_allocated_buffer_are_the_c_drivers() -> TestResult {
        let p = Params::new(0, 64, BOUNCE_MAX).expect_ok()?;
        assert_eq!(limits(&p, 0), c_limits());
        // Allocation failed: same.
        let p = Params::new(128 * KIB, 64, BOUNCE_MAX).expect_ok()?;
        assert_eq!(limits(&p, 0), c_limits());
        Ok(())
    }

    #[test]
    fn limits_with_buffer() -> TestResult {
        let p = Params::new(128 * KIB, 64, BOUNCE_MAX).expect_ok()?;
        assert_eq!(
            limits(&p, 128 * KIB),
            Limits {
                max_segs: 64,
                max_req_size: 128 * KIB,
                max_seg_size: 128 * KIB,
                max_blk_size: 512,
                max_blk_count: 256,
            }
        );
        let p = Params::new(4 * KIB, 1, BOUNCE_MAX).expect_ok()?;
        let l = limits(&p, 4 * KIB);
        assert_eq!(
            (l.max_segs, l.max_req_size, l.max_blk_count),
            (1, 4 * KIB, 8)
        );
        let p = Params::new(4 * MIB, 256, BOUNCE_MAX).expect_ok()?;
        let l = limits(&p, 4 * MIB);
        assert_eq!(
            (l.max_segs, l.max_req_size, l.max_seg_size),
            (256, 4 * MIB, 4 * MIB)
        );
        assert_eq!(l.max_blk_count, 8192);
        assert!(l.max_blk_count <= MAX_BLK_COUNT_HW);
        Ok(())
    }

    #[test]
    fn histogram_buckets() -> TestResult {
        assert_eq!(hist_bucket(0), 0);
        assert_eq!(hist_bucket(1), 0);
        assert_eq!(hist_bucket(512), 0);
        assert_eq!(hist_bucket(513), 1);
        assert_eq!(hist_bucket(4 * KIB), 3);
        assert_eq!(hist_bucket(4 * KIB + 512), 4);
        assert_eq!(hist_bucket(12 * KIB), 5);
        assert_eq!(hist_bucket(128 * KIB), 8);
        assert_eq!(hist_bucket(4 * MIB), HIST_BUCKETS - 1);
        assert_eq!(hist_bound(HIST_BUCKETS - 1), 4 * MIB);
        // Beyond the largest bucket (the hardware allows 32 MiB): the last one.
        assert_eq!(hist_bucket(32 * MIB), HIST_BUCKETS - 1);
        assert_eq!(hist_bucket(u32::MAX), HIST_BUCKETS - 1);
        for i in 0..HIST_BUCKETS {
            assert_eq!(hist_bucket(hist_bound(i)), i);
        }
        Ok(())
    }

    /// Returns a request of `len` bytes that succeeded (also used by the host's tests of text).
    pub(crate) fn ok(len: u32, write: bool, bounced: bool) -> Outcome {
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
    fn stats_count_requests() -> TestResult {
        let mut s = Stats::new();
        s.record(&ok(4 * KIB, false, false));
        s.record(&ok(128 * KIB, false, true));
        s.record(&ok(128 * KIB, true, true));
        s.record(&ok(512, true, false));
        s.record_command(None);
        assert_eq!(s.req.commands, 5);
        assert_eq!(s.req.data_requests, 4);
        assert_eq!((s.req.direct, s.req.bounced), (2, 2));
        assert_eq!(s.req.bytes_read, u64::from(132 * KIB));
        assert_eq!(s.req.bytes_written, u64::from(128 * KIB + 512));
        assert_eq!(s.req.copy_back_skipped, 0);
        assert_eq!(s.req.sizes[hist_bucket(128 * KIB)], 2);
        assert_eq!(s.req.sizes[0], 1);
        assert_eq!(s.req.sizes.iter().sum::<u64>(), 4);
        assert!(s.req.errors.iter().all(|&e| e == 0));
        Ok(())
    }

    #[test]
    fn stats_errors_and_copy_back() -> TestResult {
        let mut s = Stats::new();
        // A bounced read with a data CRC error: no bytes, copy-back skipped.
        let mut o = ok(64 * KIB, false, true);
        o.data_error = Some(ErrorKind::DataCrc);
        o.xfered = bytes_xfered(false, true, o.len);
        o.copied_back = copy_back_len(true, false, true, o.xfered);
        assert!(o.copy_back_skipped());
        s.record(&o);
        // A bounced write with a data timeout: nothing to copy back, nothing skipped.
        let mut w = ok(64 * KIB, true, true);
        w.data_error = Some(ErrorKind::DataTimeout);
        w.xfered = 0;
        assert!(!w.copy_back_skipped());
        s.record(&w);
        // A direct read with a response timeout: no bounce buffer, nothing skipped.
        let mut d = ok(4 * KIB, false, false);
        d.cmd_error = Some(ErrorKind::CmdTimeout);
        d.xfered = 0;
        assert!(!d.copy_back_skipped());
        s.record(&d);
        // Both errors on one bounced read: each counted, one skip.
        let mut b = ok(8 * KIB, false, true);
        b.cmd_error = Some(ErrorKind::CmdCrc);
        b.data_error = Some(ErrorKind::Fifo);
        b.xfered = 0;
        b.copied_back = 0;
        s.record(&b);
        s.record_command(Some(ErrorKind::CmdTimeout));
        s.record_setup_error();
        assert_eq!(s.req.copy_back_skipped, 2);
        assert_eq!(s.req.bytes_read, 0);
        assert_eq!(s.req.bytes_written, 0);
        assert_eq!(s.error_count(ErrorKind::DataCrc), 1);
        assert_eq!(s.error_count(ErrorKind::DataTimeout), 1);
        assert_eq!(s.error_count(ErrorKind::CmdTimeout), 2);
        assert_eq!(s.error_count(ErrorKind::CmdCrc), 1);
        assert_eq!(s.error_count(ErrorKind::Fifo), 1);
        assert_eq!(s.error_count(ErrorKind::Setup), 1);
        assert_eq!(s.req.commands, 6);
        assert_eq!(s.req.data_requests, 4);
        // A short successful bounced read copies back what was transferred: not skipped.
        let mut short = ok(8 * KIB, false, true);
        short.xfered = 4 * KIB;
        short.copied_back = 4 * KIB;
        assert!(!short.copy_back_skipped());
        Ok(())
    }

    #[test]
    fn stats_count_pre_mapped_errors() -> TestResult {
        let mut s = Stats::new();
        s.record_pre_mapped();
        s.record_pre_mapped();
        // A write `pre_req` mapped that succeeded, then one that failed: only the failure.
        let mut w = ok(4 * KIB, true, false);
        w.pre_mapped = true;
        s.record(&w);
        w.data_error = Some(ErrorKind::DataCrc);
        w.xfered = 0;
        s.record(&w);
        // A command error on another counts too; an error on a request not pre-mapped does
        // not.
        let mut c = ok(4 * KIB, true, false);
        c.pre_mapped = true;
        c.cmd_error = Some(ErrorKind::Deadline);
        c.xfered = 0;
        s.record(&c);
        c.pre_mapped = false;
        s.record(&c);
        assert_eq!(s.req.pre_mapped, 2);
        assert_eq!(s.req.pre_mapped_errors, 2);
        assert_eq!(s.req.direct, 4);
        Ok(())
    }

    #[test]
    fn deadline_without_data_is_the_minimum() -> TestResult {
        assert_eq!(deadline(|_| {}), DEADLINE_MIN_MS);
        // Even at the identification clock.
        assert_eq!(deadline(|r| r.bus_hz = 400_000), DEADLINE_MIN_MS);
        // A stopped clock counts as 100 kHz, not as a division by zero.
        assert_eq!(deadline(|r| r.bus_hz = 0), DEADLINE_MIN_MS);
        Ok(())
    }

    #[test]
    fn deadline_allows_the_data_timeout_for_every_block() -> TestResult {
        // The emulated eMMC: TAAC 1 ms x 10 x R2W 16 = 160 ms per block written. Eight stalls
        // of 150 ms in a 512 KiB write (1.2 s) stay within it; the old sizing (one timeout
        // per request, floored at 1 s) did not allow them.
        let emmc_write = deadline(|r| {
            r.bus_hz = 94_444_445;
            r.data_len = 512 * KIB;
            r.blocks = 1024;
            r.data_timeout_ns = 160_000_000;
        });
        assert!(emmc_write >= 8 * 150 + 10);
        // 1024 x 160 ms is over the ceiling: 30 s of card waits, plus the bus time.
        assert!((MAX_CARD_WAIT_MS..MAX_CARD_WAIT_MS + 1000).contains(&emmc_write));
        // Eight blocks at 10 ms each (an eMMC read): below the floor.
        let small_read = deadline(|r| {
            r.data_len = 4 * KIB;
            r.blocks = 8;
            r.data_timeout_ns = 10_000_000;
        });
        assert_eq!(small_read, DEADLINE_MIN_MS);
        // 100 blocks of 100 ms (an SD read): 10 s of card waits, plus the rest.
        let sd_read = deadline(|r| {
            r.bus_width = 4;
            r.data_len = 50 * KIB;
            r.blocks = 100;
            r.data_timeout_ns = 100_000_000;
        });
        assert!(sd_read > 10_000 + DEADLINE_MARGIN_MS);
        // Per-block clocks count per block too: 1000 clocks at 100 kHz = 10 ms a block.
        let clks = deadline(|r| {
            r.bus_hz = 100_000;
            r.data_len = 512 * KIB;
            r.blocks = 1024;
            r.data_timeout_clks = 1000;
        });
        assert!(clks >= 10_240);
        Ok(())
    }

    #[test]
    fn deadline_has_a_ceiling_that_still_allows_the_transfer() -> TestResult {
        // A 1024-block SD write at 3 s per block would be 51 minutes.
        let sd_write = deadline(|r| {
            r.bus_width = 4;
            r.data_len = 512 * KIB;
            r.blocks = 1024;
            r.data_timeout_ns = 3_000_000_000;
        });
        assert!(sd_write <= MAX_CARD_WAIT_MS + 1000);
        // The same at 400 kHz on one line: 10.5 s of data on the bus come on top.
        let slow = deadline(|r| {
            r.bus_hz = 400_000;
            r.bus_width = 1;
            r.data_len = 512 * KIB;
            r.blocks = 1024;
            r.data_timeout_ns = 3_000_000_000;
        });
        assert!(slow > MAX_CARD_WAIT_MS + 10_000);
        // 4 MiB at 100 kHz on one line does not overflow.
        let huge = deadline(|r| {
            r.bus_hz = 100_000;
            r.bus_width = 1;
            r.data_len = 4 * MIB;
            r.blocks = 8192;
            r.data_timeout_ns = u32::MAX;
            r.data_timeout_clks = u32::MAX;
        });
        assert!(huge > 300_000);
        Ok(())
    }

    #[test]
    fn deadline_busy_is_capped_at_the_controller_limit() -> TestResult {
        let unset = deadline(|r| r.busy = true);
        assert!(unset > MAX_BUSY_TIMEOUT_MS);
        let capped = deadline(|r| {
            r.busy = true;
            r.busy_timeout_ms = 10 * MAX_BUSY_TIMEOUT_MS;
        });
        assert_eq!(capped, unset);
        let long = deadline(|r| {
            r.busy = true;
            r.busy_timeout_ms = 20_000;
        });
        assert!(long < unset && long > 20_000);
        // A quarter of the busy timeout on top: a card that takes all of it is not timed out.
        assert!(long >= 25_000 + DEADLINE_MARGIN_MS);
        // Busy waits and data timeouts share the ceiling.
        let both = deadline(|r| {
            r.busy = true;
            r.data_len = 512 * KIB;
            r.blocks = 1024;
            r.data_timeout_ns = 160_000_000;
        });
        assert!(both < MAX_CARD_WAIT_MS + 1000);
        Ok(())
    }

    #[test]
    fn relatch_window_covers_the_sampling_period() -> TestResult {
        // 16 clocks at 400 kHz are 40 us; at 50 MHz well under the 20 us floor.
        assert_eq!(relatch_window_us(400_000), 40);
        assert_eq!(relatch_window_us(50_000_000), 20);
        assert_eq!(relatch_window_us(100_000), 160);
        // No clock, or below 100 kHz: the 200 us ceiling.
        assert_eq!(relatch_window_us(0), 200);
        assert_eq!(relatch_window_us(50_000), 200);
        Ok(())
    }

    #[test]
    fn relatch_reading_needs_dat1_held_or_a_latch() -> TestResult {
        // Latched again: level, whether or not the card let DAT1 go after the latch.
        assert_eq!(relatch_reading(true, true), Some(true));
        assert_eq!(relatch_reading(true, false), Some(true));
        // Held low all the window and not latched: edge.
        assert_eq!(relatch_reading(false, true), Some(false));
        // Let go before anything latched: no evidence.
        assert_eq!(relatch_reading(false, false), None);
        Ok(())
    }

    #[test]
    fn stop_follows_a_frozen_transfer() -> TestResult {
        // The controller froze mid-transfer: the card may be in its data state.
        assert!(stop_after_error(Some(ErrorKind::Deadline), None));
        Ok(())
    }

    #[test]
    fn stop_follows_a_failed_data_phase_only() -> TestResult {
        use ErrorKind::*;
        // The card took the command and its data phase ended early.
        assert!(stop_after_error(None, Some(DataCrc)));
        assert!(stop_after_error(None, Some(DataTimeout)));
        assert!(stop_after_error(Some(Fifo), None));
        assert!(stop_after_error(Some(CmdCrc), Some(DataCrc)));
        // The card answered, with a CRC error: it took the command.
        assert!(stop_after_error(Some(CmdCrc), None));
        // Nothing failed, or the card may never have taken the command.
        assert!(!stop_after_error(None, None));
        assert!(!stop_after_error(Some(CmdTimeout), None));
        // The transfer completed (the controller sent its own CMD12).
        assert!(!stop_after_error(None, Some(NotReady)));
        assert!(!stop_after_error(None, Some(Flush)));
        Ok(())
    }

    #[test]
    fn held_buffers_are_freed_when_idle_or_after_the_last_try() -> TestResult {
        assert_eq!(held_release(true, 0), HeldRelease::Free);
        assert_eq!(held_release(true, HELD_MAX_TRIES - 1), HeldRelease::Free);
        assert_eq!(held_release(false, 0), HeldRelease::Keep(1));
        // Busy on every try: kept for HELD_MAX_TRIES - 1 requests, freed on the last.
        let mut tries = 0;
        for _ in 1..HELD_MAX_TRIES {
            let HeldRelease::Keep(n) = held_release(false, tries) else {
                return Err("freed before the last try");
            };
            assert_eq!(n, tries + 1);
            tries = n;
        }
        assert_eq!(held_release(false, tries), HeldRelease::Force);
        assert_eq!(held_release(false, u32::MAX), HeldRelease::Force);
        Ok(())
    }

    #[test]
    fn ready_wait_covers_the_cards_busy_time() -> TestResult {
        // A read, a command without busy: the C driver's 100 ms.
        assert_eq!(ready_wait_ms(0, false, 0), READY_WAIT_MS);
        // A write: a block's data timeout (SD: 250 ms), the card's programming after the last
        // block, in case `CMD_BUSY` covers it.
        assert_eq!(ready_wait_ms(250, false, 0), 250);
        assert_eq!(ready_wait_ms(3, false, 0), READY_WAIT_MS);
        // R1b: the core's busy timeout and a quarter; the controller's limit when unset.
        assert_eq!(ready_wait_ms(0, true, 400), 500);
        assert_eq!(ready_wait_ms(0, true, 0), MAX_BUSY_TIMEOUT_MS);
        assert_eq!(ready_wait_ms(250, true, 1000), 1250);
        // Never past the controller's limit, whatever the core asks.
        assert_eq!(ready_wait_ms(u32::MAX, true, u32::MAX), MAX_BUSY_TIMEOUT_MS);
        // A block's timeout in ms: nanoseconds rounded up, plus clocks at the bus clock
        // (below 100 kHz counted as 100 kHz).
        assert_eq!(block_timeout_ms(250_000_000, 0, 50_000_000), 250);
        assert_eq!(block_timeout_ms(1, 0, 50_000_000), 1);
        assert_eq!(block_timeout_ms(0, 100_000, 0), 1000);
        assert_eq!(block_timeout_ms(100_000_000, 1_000_000, 50_000_000), 120);
        Ok(())
    }

    #[test]
    fn expiry_times_out_only_when_due() -> TestResult {
        assert_eq!(expiry(0), Expiry::TimeOut);
        assert_eq!(expiry(-1), Expiry::TimeOut);
        assert_eq!(expiry(i64::MIN), Expiry::TimeOut);
        // Early: the rest, rounded up, never less than 1 ms and never less than what is left.
        assert_eq!(expiry(1), Expiry::Rearm(1));
        for left in [
            1_000_000i64,
            1_000_001,
            999_999,
            40_000_000,
            2_500_000_000,
            31_000_000_000,
        ] {
            let Expiry::Rearm(ms) = expiry(left) else {
                return Err("expiry before the deadline did not re-arm");
            };
            assert!(i64::from(ms) * 1_000_000 >= left);
            assert!(
                // ms * 1e6 <= left + left / 1000 + 1e6, without a 64-bit division.
                i64::from(ms) * 1_000_000_000 <= left * 1001 + 1_000_000_000
            );
        }
        // A rest beyond u32 units saturates instead of wrapping.
        assert!(matches!(expiry(i64::MAX), Expiry::Rearm(ms) if ms > 4_000_000));
        Ok(())
    }

    #[test]
    fn deadline_of_sdio_data_stays_within_the_ceiling() -> TestResult {
        // The core gives SDIO data 1 s per block (`mmc_set_data_timeout()`), no clocks. One
        // block (a CMD53 in byte mode, or the card's first block): the floor is above it.
        let one = deadline(|r| {
            r.bus_width = 4;
            r.data_len = 512;
            r.blocks = 1;
            r.data_timeout_ns = 1_000_000_000;
        });
        assert_eq!(one, DEADLINE_MIN_MS);
        // 20 blocks: 20 s of card waits, above the floor.
        let twenty = deadline(|r| {
            r.bus_width = 4;
            r.data_len = 20 * 512;
            r.blocks = 20;
            r.data_timeout_ns = 1_000_000_000;
        });
        assert!(twenty > 20_000 + DEADLINE_MARGIN_MS - 1);
        assert!(twenty < 20_000 + 1000);
        // The largest CMD53 (511 blocks of 512 bytes, 261632 bytes) would be 511 s: capped at
        // the ceiling, with its time on a 4-bit bus at 50 MHz and at 400 kHz on top.
        let fast = deadline(|r| {
            r.bus_width = 4;
            r.data_len = 511 * 512;
            r.blocks = 511;
            r.data_timeout_ns = 1_000_000_000;
        });
        assert!((MAX_CARD_WAIT_MS..MAX_CARD_WAIT_MS + 1000).contains(&fast));
        let slow = deadline(|r| {
            r.bus_hz = 400_000;
            r.bus_width = 4;
            r.data_len = 511 * 512;
            r.blocks = 511;
            r.data_timeout_ns = 1_000_000_000;
        });
        // 511 x (1024 + 64) clocks at 400 kHz: 1.39 s on the bus.
        assert!(slow > fast + 1300 && slow < fast + 2500);
        Ok(())
    }

    #[test]
    fn irq_sources_split_the_sdio_interrupt_from_the_command() -> TestResult {
        const DAT1: u32 = 1 << 10;
        const ADDI_DAT1: u32 = 1 << 14;
        const RESP_OK: u32 = 1 << 0;
        const DMA_DONE: u32 = 1 << 11;
        assert_eq!(DAT1_IRQS, DAT1 | ADDI_DAT1);
        assert_eq!(CMD_IRQS & DAT1_IRQS, 0);
        assert_eq!(CMD_IRQS | DAT1_IRQS, ALL_IRQS);
        let none = IrqSources {
            sdio: false,
            cmd: false,
        };
        // Latched but not enabled, or enabled but not latched: nothing.
        assert_eq!(IrqSources::new(0, ALL_IRQS), none);
        assert_eq!(IrqSources::new(ALL_IRQS, 0), none);
        assert_eq!(IrqSources::new(RESP_OK, DAT1), none);
        // Either DAT1 bit alone is the card's; with a command's bit, both.
        for bit in [DAT1, ADDI_DAT1] {
            let both = IrqSources::new(ALL_IRQS, bit | DMA_DONE);
            assert!(both.sdio && both.cmd);
            let sdio = IrqSources::new(ALL_IRQS, bit);
            assert!(sdio.sdio && !sdio.cmd);
        }
        // Bits above 14 (DAT1_IRQ_DELAY in ICTL) are no source.
        assert_eq!(IrqSources::new(u32::MAX, !ALL_IRQS), none);
        Ok(())
    }

    #[test]
    fn ictl_enables_keep_dat1_as_the_sdio_interrupt_has_it() -> TestResult {
        let cmd = (1 << 11) | (1 << 5) | (1 << 6) | (1 << 1);
        assert_eq!(ictl_enables(cmd, 0), cmd);
        assert_eq!(ictl_enables(cmd, DAT1_IRQS), cmd | DAT1_IRQS);
        // A command's enables never switch DAT1 on or off themselves, nor set the delay.
        assert_eq!(ictl_enables(u32::MAX, 0), CMD_IRQS);
        assert_eq!(ictl_enables(u32::MAX, DAT1_IRQS), ALL_IRQS);
        assert_eq!(ictl_enables(0, DAT1_IRQS), DAT1_IRQS);
        // Without ADDI_DAT1 (a bit that does not clear): DAT1_IRQ alone, nothing else.
        assert_eq!(
            ictl_enables(cmd, DAT1_IRQS & !ADDI_DAT1_IRQ),
            cmd | (1 << 10)
        );
        assert_eq!(ictl_enables(0, u32::MAX), DAT1_IRQS);
        Ok(())
    }

    #[test]
    fn arming_early_is_a_fault_that_keeps_at_least_a_millisecond() -> TestResult {
        assert_eq!(arm_after_ms(10_000, 0), 10_000);
        assert_eq!(arm_after_ms(10_000, 9_000), 1_000);
        assert_eq!(arm_after_ms(10_000, 10_000), 1);
        assert_eq!(arm_after_ms(10_000, u32::MAX), 1);
        Ok(())
    }

    /// Returns the window a scan of `good` settles in, as (start, len, middle).
    ///
    /// `good` has one character per phase, `#` worked, `.` failed.
    fn scan(good: &str) -> Option<(u32, u32, u32)> {
        let mut s = PhaseScan::default();
        for c in good.bytes() {
            s.push(c == b'#');
        }
        s.window().map(|w| (w.start, w.len, w.middle))
    }

    #[test]
    fn tuning_window_unwrapped_is_the_c_drivers() -> TestResult {
        // The middle of the longest run, start + len / 2; the first of equal runs.
        assert_eq!(scan("###......"), Some((0, 3, 1)));
        assert_eq!(scan("....##..."), Some((4, 2, 5)));
        assert_eq!(scan(".......##"), Some((7, 2, 8)));
        assert_eq!(scan(".##..###."), Some((5, 3, 6)));
        assert_eq!(scan(".##.##..."), Some((1, 2, 2)));
        // Runs at both ends, the one at the end the longer: no merge needed to pick it, but
        // merged with the one at 0 it is longer still.
        assert_eq!(scan("#...####."), Some((4, 4, 6)));
        Ok(())
    }

    #[test]
    fn tuning_window_wraps_from_the_last_phase_to_phase_0() -> TestResult {
        // Phases 7, 8, 0, 1, 2: the middle is 0, not 1 (the middle of 0-2 alone).
        assert_eq!(scan("###....##"), Some((7, 5, 0)));
        // The merged run beats a longer run elsewhere that each half alone does not.
        assert_eq!(scan("##.###.##"), Some((7, 4, 0)));
        assert_eq!(scan("##.###..##"), Some((8, 4, 0)));
        // The middle past the last phase goes on at 0.
        assert_eq!(scan("#......##"), Some((7, 3, 8)));
        assert_eq!(scan("##......#"), Some((8, 3, 0)));
        assert_eq!(scan("###.....#"), Some((8, 4, 1)));
        // Equal to a run elsewhere: the first (the earlier one) stays.
        assert_eq!(scan("#.###...##"), Some((2, 3, 3)));
        assert_eq!(scan("##.####.##"), Some((3, 4, 5)));
        Ok(())
    }

    #[test]
    fn tuning_window_edge_cases() -> TestResult {
        // No phase, or no phase works: nothing to settle on.
        assert_eq!(scan(""), None);
        assert_eq!(scan("........."), None);
        // Every phase: the middle of all of them (no wrap to merge).
        assert_eq!(scan("#########"), Some((0, 9, 4)));
        assert_eq!(scan("##########"), Some((0, 10, 5)));
        // One phase of one, one phase working.
        assert_eq!(scan("#"), Some((0, 1, 0)));
        assert_eq!(scan("....#...."), Some((4, 1, 4)));
        assert_eq!(scan("#........"), Some((0, 1, 0)));
        assert_eq!(scan("........#"), Some((8, 1, 8)));
        // Two phases, both ends: a wrapped run of two.
        assert_eq!(scan("#.#"), Some((2, 2, 0)));
        assert_eq!(scan("#.......#"), Some((8, 2, 0)));
        // A stale run start after the last phase failed is not merged.
        assert_eq!(scan("##...##.."), Some((0, 2, 1)));
        Ok(())
    }

    #[test]
    fn dat1_bits_that_do_not_clear_are_dropped_only_while_dat1_is_high() -> TestResult {
        const DAT1_IRQ: u32 = 1 << 10;
        // Cleared: nothing to drop.
        assert_eq!(dat1_stuck_bits(DAT1_IRQS, 0, false), 0);
        assert_eq!(dat1_stuck_bits(DAT1_IRQS, 1 << 11, false), 0);
        // Still set with DAT1 high: dropped, each bit on its own.
        assert_eq!(dat1_stuck_bits(DAT1_IRQS, DAT1_IRQ, false), DAT1_IRQ);
        assert_eq!(
            dat1_stuck_bits(DAT1_IRQS, ADDI_DAT1_IRQ, false),
            ADDI_DAT1_IRQ
        );
        assert_eq!(dat1_stuck_bits(DAT1_IRQS, ALL_IRQS, false), DAT1_IRQS);
        // DAT1 low: the card may have latched it again, nothing is decided.
        assert_eq!(dat1_stuck_bits(DAT1_IRQS, DAT1_IRQS, true), 0);
        // Only bits still in use: one dropped before stays dropped, no other bit counts.
        assert_eq!(dat1_stuck_bits(DAT1_IRQ, DAT1_IRQS, false), DAT1_IRQ);
        assert_eq!(dat1_stuck_bits(0, DAT1_IRQS, false), 0);
        assert_eq!(dat1_stuck_bits(u32::MAX, u32::MAX, false), DAT1_IRQS);
        Ok(())
    }
}
