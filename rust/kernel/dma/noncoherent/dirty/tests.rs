// SPDX-License-Identifier: GPL-2.0

//! Tests of the dirty-line bookkeeping, as KUnit tests in the kernel and `cargo test`s on the host.

/// The dirty-line bookkeeping test suite.
#[cfg_attr(
    not(test),
    kernel::macros::kunit_tests(rust_kernel_dma_noncoherent_dirty)
)]
mod suite {
    use super::super::*;

    const KIB: u32 = 1024;
    const SIZE: u32 = 512 * KIB;

    /// The result of a test.
    ///
    /// `Err` says what went wrong (a panic would oops the kernel).
    type TestResult = Result<(), &'static str>;

    fn check(ok: bool, what: &'static str) -> TestResult {
        if ok {
            Ok(())
        } else {
            Err(what)
        }
    }

    #[test]
    fn allocated_is_dirty_until_all_cleaned() -> TestResult {
        let d = Dirty::all(SIZE);
        check(!d.may_skip_sync(), "a new buffer may be dirty")?;
        // Reads of 128 KiB invalidate only their range: the rest stays maybe dirty.
        let d = d.maintained(0, 128 * KIB);
        check(!d.may_skip_sync(), "the tail of a new buffer may be dirty")?;
        check(
            d.range() == Some((128 * KIB, SIZE)),
            "the head was maintained",
        )?;
        let d = d.maintained(0, SIZE);
        check(d.may_skip_sync(), "a buffer cleaned whole is clean")?;
        check(
            Dirty::all(SIZE).maintained(0, SIZE) == Dirty::clean(),
            "clean",
        )
    }

    #[test]
    fn every_write_makes_it_dirty() -> TestResult {
        for len in [1, 512, 4 * KIB, 128 * KIB, SIZE] {
            let d = Dirty::clean().cpu_write(0, len);
            check(!d.may_skip_sync(), "a write leaves the buffer maybe dirty")?;
            // Its clean (the write's mapping) makes it clean again.
            check(d.maintained(0, len).may_skip_sync(), "a write cleaned")?;
            // A shorter clean does not.
            if len > 1 {
                check(!d.maintained(0, len - 1).may_skip_sync(), "a part cleaned")?;
            }
        }
        // A write of nothing changes nothing.
        check(
            Dirty::clean().cpu_write(0, 0).may_skip_sync(),
            "empty write",
        )
    }

    #[test]
    fn a_failed_write_stays_dirty() -> TestResult {
        // The write is noted before it starts; when it fails nothing is mapped, so nothing
        // cleans it: the next read must invalidate.
        let d = Dirty::clean().cpu_write(0, 128 * KIB);
        check(!d.may_skip_sync(), "a failed write")?;
        // The read's unmap invalidates only the read's range.
        let d = d.maintained(0, 64 * KIB);
        check(
            !d.may_skip_sync(),
            "a shorter read after a longer failed write",
        )?;
        check(
            d.range() == Some((64 * KIB, 128 * KIB)),
            "the rest of the write",
        )
    }

    #[test]
    fn the_interval_is_a_superset() -> TestResult {
        let d = Dirty::clean()
            .cpu_write(8 * KIB, 4 * KIB)
            .cpu_write(32 * KIB, 4 * KIB);
        check(d.range() == Some((8 * KIB, 36 * KIB)), "union")?;
        // A range inside cannot be removed (the interval has no hole).
        check(d.maintained(16 * KIB, 4 * KIB) == d, "inside")?;
        // Ranges outside change nothing.
        check(d.maintained(0, 8 * KIB) == d, "below")?;
        check(d.maintained(36 * KIB, 4 * KIB) == d, "above")?;
        // Covering one end shrinks it from that end.
        check(
            d.maintained(0, 12 * KIB).range() == Some((12 * KIB, 36 * KIB)),
            "low end",
        )?;
        check(
            d.maintained(20 * KIB, SIZE).range() == Some((8 * KIB, 20 * KIB)),
            "high end",
        )?;
        check(d.maintained(8 * KIB, 28 * KIB).may_skip_sync(), "exactly")
    }

    #[test]
    fn bits_round_trip() -> TestResult {
        for d in [
            Dirty::clean(),
            Dirty::all(SIZE),
            Dirty::all(u32::MAX),
            Dirty::clean().cpu_write(3, 5),
            Dirty::clean().cpu_write(u32::MAX - 1, 10),
        ] {
            check(Dirty::from_bits(d.to_bits()) == d, "round trip")?;
        }
        check(Dirty::from_bits(0).may_skip_sync(), "zero is clean")
    }

    #[test]
    fn directions() -> TestResult {
        // (to_device, from_device): to the device, from it, both ways.
        check(leaves_clean(true, false, true), "map to the device cleans")?;
        check(
            leaves_clean(false, true, true),
            "map from the device invalidates",
        )?;
        check(leaves_clean(true, true, true), "map both ways cleans")?;
        check(
            !leaves_clean(true, false, false),
            "unmap to the device does nothing",
        )?;
        check(
            leaves_clean(false, true, false),
            "unmap from the device invalidates",
        )?;
        check(
            leaves_clean(true, true, false),
            "unmap both ways invalidates",
        )
    }
}
