// SPDX-License-Identifier: GPL-2.0

//! Tests of the bounce buffer's path decisions.
//!
//! KUnit tests in the kernel (`CONFIG_KUNIT`), `cargo test`s on the host.

/// The suite.
#[cfg_attr(not(test), kernel::macros::kunit_tests(meson_mx_sdhc_rs_bounce_policy))]
mod suite {
    use super::super::*;

    const KIB: u32 = 1024;
    const MIB: u32 = 1024 * 1024;
    /// The longest transfer sent direct in these tests.
    const DIRECT: u32 = 512 * KIB;

    /// What a test returns.
    ///
    /// `Err` says what went wrong (a panic would oops the kernel).
    type TestResult = Result<(), &'static str>;

    #[test]
    fn pre_map_only_what_goes_direct() -> TestResult {
        // One entry of a write that goes direct: mapped in pre_req.
        assert!(pre_map(1, 0, 4 * KIB, 512 * KIB, DIRECT, false, true));
        assert!(pre_map(1, 0, 512 * KIB, 0, DIRECT, false, true));
        // Never a read (two reads into the same memory would be mapped at once).
        assert!(!pre_map(1, 0, 4 * KIB, 512 * KIB, DIRECT, false, false));
        // The same decision as `request`: forced bounce, too long, more entries, no data.
        assert!(!pre_map(1, 0, 4 * KIB, 512 * KIB, DIRECT, true, true));
        assert!(pre_map(1, 0, 4 * KIB, 0, DIRECT, true, true));
        assert!(!pre_map(
            1,
            0,
            512 * KIB + 512,
            4 * MIB,
            DIRECT,
            false,
            true
        ));
        assert!(!pre_map(2, 0, 8 * KIB, 512 * KIB, DIRECT, false, true));
        assert!(!pre_map(0, 0, 0, 512 * KIB, DIRECT, false, true));
        // A host that trusts one address with 128 KiB maps no longer write ahead.
        assert!(!pre_map(
            1,
            0,
            128 * KIB + 512,
            4 * MIB,
            128 * KIB,
            false,
            true
        ));
        for (sg_len, len, bounce, force) in [
            (1, 4 * KIB, 512 * KIB, false),
            (1, 4 * KIB, 512 * KIB, true),
            (1, 1024 * KIB, 4 * MIB, false),
            (1, 1024 * KIB, 128 * KIB, false),
        ] {
            assert_eq!(
                pre_map(sg_len, 0, len, bounce, DIRECT, force, true),
                data_path(1, 0, len, bounce, DIRECT, force) == Ok(DataPath::Direct)
            );
        }
        Ok(())
    }

    #[test]
    fn path_decision() -> TestResult {
        assert_eq!(data_path(1, 0, 512, 0, DIRECT, false), Ok(DataPath::Direct));
        assert_eq!(
            data_path(1, 0, 512 * KIB, 128 * KIB, DIRECT, false),
            Ok(DataPath::Direct)
        );
        // Never more than 512 KiB to one address: longer single segments are bounced.
        assert_eq!(
            data_path(1, 0, 512 * KIB + 512, 4 * MIB, DIRECT, false),
            Ok(DataPath::Bounce)
        );
        assert_eq!(
            data_path(1, 0, 4 * MIB, 4 * MIB, DIRECT, false),
            Ok(DataPath::Bounce)
        );
        assert_eq!(
            data_path(1, 0, 4 * MIB, 128 * KIB, DIRECT, false),
            Err(PathError::TooBig {
                segments: 1,
                len: 4 * MIB,
                bounce: 128 * KIB
            })
        );
        assert_eq!(
            data_path(2, 0, 4 * KIB, 128 * KIB, DIRECT, false),
            Ok(DataPath::Bounce)
        );
        assert_eq!(
            data_path(64, 0, 128 * KIB, 128 * KIB, DIRECT, false),
            Ok(DataPath::Bounce)
        );
        assert_eq!(
            data_path(64, 0, 4 * KIB, 4 * KIB, DIRECT, false),
            Ok(DataPath::Bounce)
        );
        assert_eq!(
            data_path(64, 0, 128 * KIB + 512, 128 * KIB, DIRECT, false),
            Err(PathError::TooBig {
                segments: 64,
                len: 128 * KIB + 512,
                bounce: 128 * KIB
            })
        );
        assert_eq!(
            data_path(2, 0, 1024, 0, DIRECT, false),
            Err(PathError::TooBig {
                segments: 2,
                len: 1024,
                bounce: 0
            })
        );
        assert_eq!(
            data_path(0, 0, 512, 128 * KIB, DIRECT, false),
            Err(PathError::NoSegments)
        );
        // force_bounce: one segment is bounced when it fits, left direct when it does not.
        assert_eq!(
            data_path(1, 0, 4 * KIB, 128 * KIB, DIRECT, true),
            Ok(DataPath::Bounce)
        );
        assert_eq!(
            data_path(1, 0, 128 * KIB, 128 * KIB, DIRECT, true),
            Ok(DataPath::Bounce)
        );
        assert_eq!(
            data_path(1, 0, 128 * KIB + 512, 128 * KIB, DIRECT, true),
            Ok(DataPath::Direct)
        );
        assert_eq!(data_path(1, 0, 512, 0, DIRECT, true), Ok(DataPath::Direct));
        assert_eq!(
            data_path(2, 0, 4 * KIB, 128 * KIB, DIRECT, true),
            Ok(DataPath::Bounce)
        );
        assert_eq!(
            data_path(0, 0, 512, 128 * KIB, DIRECT, true),
            Err(PathError::NoSegments)
        );
        Ok(())
    }

    #[test]
    fn segments_known_without_mapping() -> TestResult {
        // No merging (dma-direct: merge boundary 0): more than one entry is that many segments.
        assert_eq!(segments_without_mapping(2, 0), Some(2));
        assert_eq!(segments_without_mapping(16, 0), Some(16));
        assert_eq!(segments_without_mapping(256, 0), Some(256));
        // One entry is always mapped: it may be used directly.
        assert_eq!(segments_without_mapping(1, 0), None);
        // No entries: mapped, so that the mapping reports the failure.
        assert_eq!(segments_without_mapping(0, 0), None);
        // An IOMMU may merge entries into fewer segments: map and count.
        assert_eq!(segments_without_mapping(2, 0xfff), None);
        assert_eq!(segments_without_mapping(64, usize::MAX), None);
        // The known counts lead to the bounce buffer, or to an error without one.
        let n = segments_without_mapping(16, 0).ok_or("segment count unknown")?;
        assert_eq!(
            data_path(n, 0, 64 * KIB, 128 * KIB, DIRECT, false),
            Ok(DataPath::Bounce)
        );
        assert!(matches!(
            data_path(n, 0, 64 * KIB, 0, DIRECT, false),
            Err(PathError::TooBig { segments: 16, .. })
        ));
        Ok(())
    }

    #[test]
    fn max_direct_is_the_hosts() -> TestResult {
        // A host that trusts one address with 128 KiB only bounces what is longer.
        assert_eq!(
            data_path(1, 0, 128 * KIB, 4 * MIB, 128 * KIB, false),
            Ok(DataPath::Direct)
        );
        assert_eq!(
            data_path(1, 0, 128 * KIB + 512, 4 * MIB, 128 * KIB, false),
            Ok(DataPath::Bounce)
        );
        // Without a buffer, too long to go direct is an error naming the sizes.
        assert_eq!(
            data_path(1, 0, 128 * KIB + 512, 0, 128 * KIB, false),
            Err(PathError::TooBig {
                segments: 1,
                len: 128 * KIB + 512,
                bounce: 0
            })
        );
        Ok(())
    }

    #[test]
    fn unaligned_or_short_segments_are_bounced() -> TestResult {
        assert!(granule_aligned(0, 512));
        assert!(granule_aligned(64, 64));
        assert!(granule_aligned(512, 4 * KIB));
        assert!(!granule_aligned(1, 512));
        assert!(!granule_aligned(32, 512));
        assert!(!granule_aligned(0, 8));
        assert!(!granule_aligned(0, 3));
        // mmc_test's badly aligned reads, a weird size, the SD card's SCR: bounced.
        for (offset, len) in [(1, 512), (7, 8 * KIB), (0, 3), (0, 8), (0, 510), (4, 512)] {
            assert_eq!(
                data_path(1, offset, len, 128 * KIB, DIRECT, false),
                Ok(DataPath::Bounce)
            );
        }
        // Sector-aligned block I/O stays direct.
        assert_eq!(
            data_path(1, 512, 512, 0, DIRECT, false),
            Ok(DataPath::Direct)
        );
        assert_eq!(
            data_path(1, 64, 64, 128 * KIB, DIRECT, false),
            Ok(DataPath::Direct)
        );
        // Unaligned and longer than a transfer to one address: bounced when it fits.
        assert_eq!(
            data_path(1, 3, 512 * KIB + 1, 4 * MIB, DIRECT, false),
            Ok(DataPath::Bounce)
        );
        // No buffer that holds it: refused, never sent.
        assert_eq!(
            data_path(1, 0, 8, 0, DIRECT, false),
            Err(PathError::Unaligned {
                offset: 0,
                len: 8,
                bounce: 0
            })
        );
        assert_eq!(
            data_path(1, 4, 8 * KIB, 4 * KIB, DIRECT, false),
            Err(PathError::Unaligned {
                offset: 4,
                len: 8 * KIB,
                bounce: 4 * KIB
            })
        );
        // More segments are bounced whatever the first one's offset.
        assert_eq!(
            data_path(2, 1, 1024, 4 * KIB, DIRECT, false),
            Ok(DataPath::Bounce)
        );
        Ok(())
    }

    #[test]
    fn pre_map_never_an_unaligned_segment() -> TestResult {
        assert!(pre_map(1, 0, 4 * KIB, 512 * KIB, DIRECT, false, true));
        assert!(!pre_map(1, 1, 4 * KIB, 512 * KIB, DIRECT, false, true));
        assert!(!pre_map(1, 0, 8, 0, DIRECT, false, true));
        assert!(!pre_map(1, 0, 100, 4 * KIB, DIRECT, false, true));
        for offset in [0, 1, 4, 32, 64, 512] {
            for len in [3, 8, 64, 100, 512, 4 * KIB + 4] {
                for bounce in [0, 4 * KIB, 512 * KIB] {
                    assert_eq!(
                        pre_map(1, offset, len, bounce, DIRECT, false, true),
                        data_path(1, offset, len, bounce, DIRECT, false) == Ok(DataPath::Direct)
                    );
                }
            }
        }
        Ok(())
    }

    #[test]
    fn device_len_whole_units_inside_the_buffer() -> TestResult {
        assert_eq!(device_len(8, 4 * KIB), 64);
        assert_eq!(device_len(64, 4 * KIB), 64);
        assert_eq!(device_len(65, 4 * KIB), 128);
        assert_eq!(device_len(0, 4 * KIB), 0);
        assert_eq!(device_len(4 * KIB, 4 * KIB), 4 * KIB);
        assert_eq!(device_len(4 * KIB - 1, 4 * KIB), 4 * KIB);
        assert_eq!(device_len(u32::MAX, 4 * MIB), 4 * MIB);
        Ok(())
    }

    #[test]
    fn tail_marks_cover_the_last_words() -> TestResult {
        let offsets = |len: u32| {
            let m = TailMarks::of(len);
            let mut v = [0u32; TAIL_MARKS_MAX as usize];
            for (i, off) in m.iter() {
                v[i as usize] = off;
            }
            (m.count(), v)
        };
        // Up to 8 words: every whole word, the last first.
        assert_eq!(TailMarks::of(8).count(), 2);
        assert_eq!(TailMarks::of(8).offset(0), 4);
        assert_eq!(TailMarks::of(8).offset(1), 0);
        assert_eq!(TailMarks::of(4).count(), 1);
        assert_eq!(TailMarks::of(7).count(), 1);
        assert_eq!(TailMarks::of(32).count(), 8);
        assert_eq!(TailMarks::of(32).span(), (0, 32));
        // Not a multiple of a word: its whole words, the last 8 and one before them.
        assert_eq!(TailMarks::of(39).span(), (0, 36));
        assert_eq!(TailMarks::of(39).count(), 9);
        // Shorter than a word: not marked.
        assert_eq!(TailMarks::of(3).count(), 0);
        assert_eq!(TailMarks::of(0).count(), 0);
        assert_eq!(TailMarks::of(0).span(), (0, 0));
        // A sector: the last 8 words and one word in each 32 bytes before them.
        let (n, v) = offsets(512);
        assert_eq!(n, 8 + 15);
        assert_eq!(&v[..8], &[508, 504, 500, 496, 492, 488, 484, 480]);
        assert_eq!(v[8], 476);
        assert_eq!(v[22], 28);
        assert_eq!(TailMarks::of(512).span(), (28, 484));
        // Long: the last 8 words and 64 bursts before them.
        assert_eq!(TailMarks::of(128 * KIB).count(), TAIL_MARKS_MAX);
        assert_eq!(TAIL_MARKS_MAX, 72);
        assert_eq!(TailMarks::of(128 * KIB).span(), (128 * KIB - 2052, 2052));
        Ok(())
    }

    #[test]
    fn tail_marks_hold_one_word_of_every_burst_of_their_span() -> TestResult {
        // The last 8 words and 64 bursts of 32 bytes before them, wherever the bursts start:
        // the emulated board's dram-late-bursts=64 holds back the 64 bursts before a tail of up
        // to 8 words.
        const SPAN: u32 = TAIL_MARK_WORDS * 4 + TAIL_MARK_BURSTS * TAIL_MARK_STRIDE;
        for len in (0..3000u32).chain([64 * KIB + 12, 128 * KIB, 512 * KIB]) {
            let m = TailMarks::of(len);
            let end = len / 4 * 4;
            let mut marked = [false; (SPAN / 4) as usize];
            let lowest = end.saturating_sub(SPAN);
            for (_, off) in m.iter() {
                // Inside the read's whole words, in the span, word-aligned, once.
                if off % 4 != 0 || off + 4 > end || off < lowest {
                    return Err("a mark outside the read's span");
                }
                let slot = &mut marked[((off - lowest) / 4) as usize];
                if *slot {
                    return Err("a word marked twice");
                }
                *slot = true;
            }
            // Any run of 8 words (a burst, whatever its start) inside the span holds a mark.
            let words = ((end - lowest) / 4) as usize;
            for start in 0..words.saturating_sub(7) {
                if !marked[start..start + 8].iter().any(|m| *m) {
                    return Err("a burst of the span without a mark");
                }
            }
            // The last words are all marked.
            let last = words.saturating_sub(TAIL_MARK_WORDS as usize);
            if !marked[last..words].iter().all(|m| *m) {
                return Err("one of the last words not marked");
            }
            if m.count() > TAIL_MARKS_MAX {
                return Err("more marks than TAIL_MARKS_MAX");
            }
        }
        Ok(())
    }

    #[test]
    fn tail_mark_values_change_and_avoid_erased_memory() -> TestResult {
        for seq in 0..2000u32 {
            for i in 0..TAIL_MARKS_MAX {
                let m = tail_mark(seq, i);
                assert!(m != 0 && m != u32::MAX);
                // The next read's mark of the same word differs: a retry has other marks.
                assert!(m != tail_mark(seq.wrapping_add(1), i));
                if i > 0 {
                    assert!(m != tail_mark(seq, i - 1));
                }
            }
        }
        assert!(tail_mark(u32::MAX, 7) != tail_mark(0, 7));
        Ok(())
    }

    #[test]
    fn tail_landed_when_every_word_changed() -> TestResult {
        let marks = |seq: u32, n: u32| (0..n).map(move |i| tail_mark(seq, i));
        // Untouched: not landed.
        assert!(!tail_landed(5, marks(5, 8)));
        assert!(!tail_landed(5, marks(5, 1)));
        // The DMA wrote the first words, the flush's last ones are missing: not landed.
        for written in 0..8u32 {
            let words = (0..8u32).map(|i| {
                if i < written {
                    !tail_mark(5, i)
                } else {
                    tail_mark(5, i)
                }
            });
            assert!(!tail_landed(5, words));
        }
        // All written.
        assert!(tail_landed(5, marks(5, 8).map(|w| !w)));
        // Data equal to another read's marks is data.
        assert!(tail_landed(5, marks(4, 8)));
        // Zeroes or ones: landed.
        assert!(tail_landed(9, [0u32; 8]));
        assert!(tail_landed(9, [u32::MAX; 8]));
        // Nothing marked: nothing to wait for.
        assert!(tail_landed(9, []));
        Ok(())
    }
}
