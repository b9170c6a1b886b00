//! The size of each I/O when sizes vary (`bsrange`, `bssplit`, per-direction
//! `bs`): fio's `get_next_buflen`, so the sizes come out with fio's
//! distribution (the same mean, so the same I/O count for the same bytes,
//! up to the draws).

use super::draws::Draws;

/// Draws before [`pick_len`] settles for the largest size that fits (fio
/// draws until one does; the cap keeps a pathological split finite).
const TRIES: usize = 64;

/// The size of an I/O of a direction whose sizes are `(lo, hi)` with
/// `split` (fio's `bssplit`, sorted by share as fio sorts it) or else from
/// the range, as fio draws it: `lo + hi × U`, made a multiple of `lo`
/// unless `unaligned`, capped at `hi` (so `hi` is drawn more often than
/// the others). `r` is a fresh draw; sizes that do not fit the `room` left
/// are drawn again. `None` when not even `lo` fits (fio ends the file's
/// loop there).
#[inline]
pub(super) fn pick_len(
    (lo, hi): (u64, u64),
    split: &[(u64, u32)],
    unaligned: bool,
    r: u32,
    room: u64,
    rng: &mut Draws,
) -> Option<u64> {
    if lo == hi {
        return Some(lo);
    }
    if lo > room {
        return None;
    }
    let mut r = r;
    for _ in 0..TRIES {
        let len = align(draw((lo, hi), split, r, room), lo, unaligned).min(hi);
        if len <= room {
            return Some(len);
        }
        r = rng.next_u64() as u32;
    }
    let fits = if split.is_empty() {
        align(room, lo, unaligned).min(hi)
    } else {
        (split.iter())
            .map(|&(bs, _)| align(bs, lo, unaligned).min(hi))
            .filter(|&bs| bs <= room)
            .max()
            .unwrap_or(lo)
    };
    Some(fits.max(lo))
}

/// One draw of fio's formula before alignment: a point of the range, or
/// the first split size whose running share covers `r` and that fits.
#[inline]
fn draw((lo, hi): (u64, u64), split: &[(u64, u32)], r: u32, room: u64) -> u64 {
    if split.is_empty() {
        return lo + ((hi as u128 * r as u128) >> 32) as u64;
    }
    let mut perc = 0u32;
    let mut len = lo;
    for &(bs, p) in split.iter().filter(|s| s.1 > 0) {
        len = bs;
        perc += p;
        if r / perc <= u32::MAX / 100 && bs <= room {
            break;
        }
    }
    len
}

/// fio's alignment of a drawn size: down to a multiple of the smallest.
#[inline]
fn align(len: u64, lo: u64, unaligned: bool) -> u64 {
    if unaligned {
        len
    } else if lo.is_power_of_two() {
        len & !(lo - 1)
    } else {
        len - len % lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mean of many draws of `(lo, hi)` within `room`.
    fn mean(lohi: (u64, u64), split: &[(u64, u32)], room: u64) -> f64 {
        let mut rng = Draws::new(7);
        let n = 200_000;
        let sum: u64 = (0..n)
            .map(|_| {
                let r = rng.next_u64() as u32;
                pick_len(lohi, split, false, r, room, &mut rng).unwrap()
            })
            .sum();
        sum as f64 / n as f64
    }

    #[test]
    fn a_range_has_fios_mean() {
        // 2k + 8k·U aligned to 2k, capped at 8k: 2k, 4k, 6k, 8k equally.
        let m = mean((2048, 8192), &[], u64::MAX);
        assert!((m - 5120.0).abs() < 30.0, "{m}");
        // A minimum that is no power of two aligns too: 3k, 6k, 9k, 12k
        // with 12k taking U >= 0.75 of 3k + 12k·U.
        let mut rng = Draws::new(1);
        for _ in 0..10_000 {
            let r = rng.next_u64() as u32;
            let len = pick_len((3072, 12288), &[], false, r, u64::MAX, &mut rng).unwrap();
            assert_eq!(len % 3072, 0, "{len}");
        }
    }

    #[test]
    fn a_split_follows_its_shares_and_the_room() {
        let split = [(32768, 4), (2048, 7), (8192, 89)];
        let m = mean((2048, 32768), &split, u64::MAX);
        let want = 0.04 * 32768.0 + 0.07 * 2048.0 + 0.89 * 8192.0;
        assert!((m - want).abs() / want < 0.01, "{m} vs {want}");
        // Only sizes that fit are drawn.
        let m = mean((2048, 32768), &split, 8192);
        assert!(m <= 8192.0 && m > 2048.0, "{m}");
    }

    #[test]
    fn nothing_fits_below_the_minimum() {
        let mut rng = Draws::new(1);
        assert_eq!(pick_len((4096, 8192), &[], false, 5, 2048, &mut rng), None);
        assert_eq!(
            pick_len((4096, 4096), &[], false, 5, 2048, &mut rng),
            Some(4096)
        );
    }
}
