// SPDX-License-Identifier: GPL-2.0

//! Host unit tests of the driver's `logic.rs`.

#![no_std]
#![allow(dead_code)]

#[cfg(test)]
extern crate std;

#[path = "../../logic.rs"]
mod logic;

#[cfg(test)]
mod tests {
    use super::logic::*;
    use std::string::ToString;

    const KIB: u32 = 1024;
    const MIB: u32 = 1024 * 1024;

    #[test]
    fn bounce_size_boundaries() {
        for ok in [0, 4 * KIB, 8 * KIB, 128 * KIB, 512 * KIB, 4 * MIB] {
            assert_eq!(Params::new(ok, 64).unwrap().bounce_size, ok, "{ok}");
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
                Params::new(bad, 64),
                Err(ParamError::BounceSize(bad)),
                "{bad}"
            );
        }
    }

    #[test]
    fn max_segs_boundaries() {
        for ok in [1, 2, 64, 255, 256] {
            assert_eq!(Params::new(128 * KIB, ok).unwrap().max_segs, ok);
        }
        for bad in [0, 257, 1000, u32::MAX] {
            assert_eq!(Params::new(128 * KIB, bad), Err(ParamError::MaxSegs(bad)));
        }
    }

    #[test]
    fn defaults_are_valid() {
        let p = Params::new(BOUNCE_DEFAULT, MAX_SEGS_DEFAULT).unwrap();
        assert_eq!(p.bounce_size, 131072);
        assert_eq!(p.max_segs, 64);
    }

    #[test]
    fn error_messages_name_parameter_value_and_range() {
        let m = Params::new(3000, 64).unwrap_err().to_string();
        assert!(m.contains("bounce_size=3000"), "{m}");
        assert!(
            m.contains("4096") && m.contains("4194304") && m.contains("power of two"),
            "{m}"
        );
        let m = Params::new(0, 0).unwrap_err().to_string();
        assert!(m.contains("max_segs=0"), "{m}");
        assert!(m.contains("1 to 256"), "{m}");
        // Both wrong: bounce_size is reported first.
        assert_eq!(Params::new(3000, 0), Err(ParamError::BounceSize(3000)));
    }

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
    fn limits_without_buffer_are_the_c_drivers() {
        let p = Params::new(0, 64).unwrap();
        assert_eq!(Limits::new(&p, 0), c_limits());
        // Allocation failed: same.
        let p = Params::new(128 * KIB, 64).unwrap();
        assert_eq!(Limits::new(&p, 0), c_limits());
    }

    #[test]
    fn limits_with_buffer() {
        let p = Params::new(128 * KIB, 64).unwrap();
        assert_eq!(
            Limits::new(&p, 128 * KIB),
            Limits {
                max_segs: 64,
                max_req_size: 128 * KIB,
                max_seg_size: 128 * KIB,
                max_blk_size: 512,
                max_blk_count: 256,
            }
        );
        let p = Params::new(4 * KIB, 1).unwrap();
        let l = Limits::new(&p, 4 * KIB);
        assert_eq!(
            (l.max_segs, l.max_req_size, l.max_blk_count),
            (1, 4 * KIB, 8)
        );
        let p = Params::new(4 * MIB, 256).unwrap();
        let l = Limits::new(&p, 4 * MIB);
        assert_eq!(
            (l.max_segs, l.max_req_size, l.max_seg_size),
            (256, 4 * MIB, 4 * MIB)
        );
        assert_eq!(l.max_blk_count, 8192);
        assert!(l.max_blk_count <= MAX_BLK_COUNT_HW);
    }

    #[test]
    fn path_decision() {
        assert_eq!(data_path(1, 512, 0), Ok(DataPath::Direct));
        assert_eq!(data_path(1, 4 * MIB, 128 * KIB), Ok(DataPath::Direct));
        assert_eq!(data_path(2, 4 * KIB, 128 * KIB), Ok(DataPath::Bounce));
        assert_eq!(data_path(64, 128 * KIB, 128 * KIB), Ok(DataPath::Bounce));
        assert_eq!(data_path(64, 4 * KIB, 4 * KIB), Ok(DataPath::Bounce));
        assert_eq!(
            data_path(64, 128 * KIB + 512, 128 * KIB),
            Err(PathError::TooBig {
                segments: 64,
                len: 128 * KIB + 512,
                bounce: 128 * KIB
            })
        );
        assert_eq!(
            data_path(2, 1024, 0),
            Err(PathError::TooBig {
                segments: 2,
                len: 1024,
                bounce: 0
            })
        );
        assert_eq!(data_path(0, 512, 128 * KIB), Err(PathError::NoSegments));
    }

    #[test]
    fn bytes_xfered_zero_on_any_error() {
        assert_eq!(bytes_xfered(false, false, 4096), 4096);
        assert_eq!(bytes_xfered(true, false, 4096), 0);
        assert_eq!(bytes_xfered(false, true, 4096), 0);
        assert_eq!(bytes_xfered(true, true, 4096), 0);
    }

    #[test]
    fn copy_back_rule() {
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
    }
}
