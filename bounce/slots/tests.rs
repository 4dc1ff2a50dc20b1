// SPDX-License-Identifier: GPL-2.0

//! Tests of the double-buffer state machine under the MMC core's orderings.
//!
//! KUnit tests in the kernel (`CONFIG_KUNIT`), `cargo test`s on the host.

/// The suite.
#[cfg_attr(not(test), kernel::macros::kunit_tests(meson_mx_sdhc_rs_bounce_slots))]
mod suite {
    use super::super::*;

    /// What a test returns.
    ///
    /// `Err` names the step that found nothing.
    type TestResult = Result<(), &'static str>;

    const A: usize = 0x1000;
    const B: usize = 0x2000;
    const C: usize = 0x3000;

    /// Runs pre_req then request for `owner`.
    ///
    /// Its buffer and token.
    fn prepare_and_start(s: &mut Slots, owner: usize) -> Result<(Slot, i32), &'static str> {
        let (i, t) = s.prepare(owner).ok_or("no free buffer")?;
        s.prepared(i, owner, t);
        if s.start(owner, t) != Start::Prepared(i) {
            return Err("the prepared buffer was not used");
        }
        Ok((i, t))
    }

    /// Tests pre_req(N+1) while N is in flight, start(N+1), post_req(N).
    ///
    /// The read data of N waits in its buffer until post_req, and the other buffer carries N+1.
    #[test]
    fn pipelined_reads_alternate_buffers() -> TestResult {
        let mut s = Slots::new(2);
        let (a, ta) = s.prepare(A).ok_or("no free buffer")?;
        s.prepared(a, A, ta);
        assert_eq!(s.start(A, ta), Start::Prepared(a));
        let (b, tb) = s.prepare(B).ok_or("no free buffer")?;
        assert!(a != b);
        s.prepared(b, B, tb);
        assert!(s.defers_copy_out(a));
        // A prepared read waits for post_req.
        assert!(s.finish(a, Some(4096)));
        assert_eq!(s.start(B, tb), Start::Prepared(b));
        assert_eq!(s.post(A, ta), Post::CopyOut { slot: a, len: 4096 });
        // Being copied out: nobody else may take it.
        assert_eq!(s.prepare(C), None);
        s.free(a);
        let (c, _) = s.prepare(C).ok_or("no free buffer")?;
        assert_eq!(c, a);
        Ok(())
    }

    /// Checks that a failed read frees its buffer at completion.
    ///
    /// post_req has nothing to copy.
    #[test]
    fn failed_read_is_not_copied() -> TestResult {
        let mut s = Slots::new(2);
        let (a, ta) = prepare_and_start(&mut s, A)?;
        assert!(!s.finish(a, None));
        assert_eq!(s.get(a), State::Free);
        assert_eq!(s.post(A, ta), Post::Nothing);
        Ok(())
    }

    /// Checks that error recovery that prepares the same request again (cookie zeroed) and reissues
    /// it drops its old read data.
    ///
    /// Its old read data is never copied over the new.
    #[test]
    fn reprepared_request_drops_stale_read() -> TestResult {
        let mut s = Slots::new(2);
        let (a, ta) = prepare_and_start(&mut s, A)?;
        assert!(s.finish(a, Some(512)));
        // Recovery: the same request, cookie 0, started without pre_req.
        let got = s.start(A, 0);
        assert!(matches!(got, Start::Claimed(_)));
        let Start::Claimed(i) = got else {
            return Err("no buffer claimed");
        };
        // An unprepared request copies at completion.
        assert!(!s.defers_copy_out(i));
        assert!(!s.finish(i, Some(512)));
        assert_eq!(s.post(A, 0), Post::Nothing);
        // The stale data was dropped.
        assert_eq!(s.post(A, ta), Post::Nothing);
        assert_eq!((s.get(Slot(0)), s.get(Slot(1))), (State::Free, State::Free));
        Ok(())
    }

    /// Checks that post_req after a request that never started (mmc_start_request failed) frees its
    /// buffer.
    #[test]
    fn unstarted_prepared_request_is_freed() -> TestResult {
        let mut s = Slots::new(2);
        let (a, ta) = s.prepare(A).ok_or("no free buffer")?;
        s.prepared(a, A, ta);
        assert_eq!(s.post(A, ta), Post::Nothing);
        assert_eq!(s.get(a), State::Free);
        Ok(())
    }

    /// Checks that a request without a buffer at start takes one prepared for another request,
    /// never read data waiting for post_req.
    ///
    /// The robbed request copies again at its start.
    #[test]
    fn start_takes_prepared_never_pending_read() -> TestResult {
        let mut s = Slots::new(2);
        let (a, ta) = prepare_and_start(&mut s, A)?;
        assert!(s.finish(a, Some(1024)));
        let (b, tb) = s.prepare(B).ok_or("no free buffer")?;
        s.prepared(b, B, tb);
        assert_eq!(s.start(C, 0), Start::Claimed(b));
        assert!(!s.finish(b, None));
        // B starts later: its buffer is gone, so it gets a claimed one.
        assert_eq!(s.start(B, tb), Start::Claimed(b));
        assert_eq!(s.post(A, ta), Post::CopyOut { slot: a, len: 1024 });
        // Nothing left to take while A's data is copied and B is in flight.
        assert_eq!(s.start(C, 0), Start::None);
        Ok(())
    }

    /// Tests one buffer (double buffering off).
    ///
    /// Never prepared, the single buffer serves each start.
    #[test]
    fn single_buffer_never_defers() -> TestResult {
        let mut s = Slots::new(1);
        let (a, ta) = s.prepare(A).ok_or("no free buffer")?;
        assert_eq!(s.prepare(B), None);
        s.prepared(a, A, ta);
        assert_eq!(s.start(B, 0), Start::Claimed(a));
        assert!(!s.finish(a, Some(512)));
        assert_eq!(s.start(A, ta), Start::Claimed(a));
        Ok(())
    }

    /// Tokens are positive and differ between consecutive preparations, also at wrap-around.
    #[test]
    fn tokens_positive_and_distinct() -> TestResult {
        let mut s = Slots::new(2);
        let mut last = 0;
        for _ in 0..5 {
            let (i, t) = s.prepare(A).ok_or("no free buffer")?;
            assert!(t > 0 && t != last);
            last = t;
            s.free(i);
        }
        Ok(())
    }

    /// Checks that a completion or post_req for a buffer in another state changes nothing.
    #[test]
    fn out_of_order_calls_are_ignored() -> TestResult {
        let mut s = Slots::new(2);
        assert!(!s.finish(Slot(0), Some(512)));
        assert!(!s.finish(Slot(7), None));
        s.free(Slot(1));
        s.prepared(Slot(5), A, 1);
        assert_eq!(s.post(B, 3), Post::Nothing);
        assert_eq!((s.get(Slot(0)), s.get(Slot(1))), (State::Free, State::Free));
        Ok(())
    }
}
