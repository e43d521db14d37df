//! One sort for the crate: `u64` keys ascending. Core's slice sorts are instantiated per element type and cost each
//! wasm module 2 to 3.5 KiB gzip (issue 43); every sort of the library orders a handful of items by a small number, so
//! callers pack that number and the item's position into a key, sort the keys here, and read the positions back
//! (the position also makes the order stable).

/// `number` in the high half and `position` in the low: keys that sort by number, then position.
pub(crate) fn key(number: u32, position: usize) -> u64 {
    (u64::from(number) << 32) | (position as u64 & 0xffff_ffff)
}

/// The position packed into a `key`.
pub(crate) fn position(key: u64) -> usize {
    (key & 0xffff_ffff) as usize
}

/// Sorts `keys` ascending in place: heapsort, O(n log n) in the worst case, no allocation.
pub(crate) fn sort_keys(keys: &mut [u64]) {
    let n = keys.len();
    for root in (0..n / 2).rev() {
        sift_down(keys, root, n);
    }
    for end in (1..n).rev() {
        keys.swap(0, end);
        sift_down(keys, 0, end);
    }
}

/// Moves `keys[root]` down the max-heap `keys[..end]` until both children are smaller.
fn sift_down(keys: &mut [u64], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && keys.get(child) < keys.get(child + 1) {
            child += 1;
        }
        if keys.get(root) >= keys.get(child) {
            return;
        }
        keys.swap(root, child);
        root = child;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorts_as_core_sorts(mut keys in proptest::collection::vec(any::<u64>(), 0..300)) {
            let mut want = keys.clone();
            want.sort_unstable();
            sort_keys(&mut keys);
            prop_assert_eq!(keys, want);
        }

        #[test]
        fn keys_order_by_number_then_position(numbers in proptest::collection::vec(0u32..5, 0..50)) {
            let mut keys: Vec<u64> = numbers.iter().enumerate().map(|(at, n)| key(*n, at)).collect();
            sort_keys(&mut keys);
            let got: Vec<usize> = keys.into_iter().map(position).collect();
            let mut want: Vec<usize> = (0..numbers.len()).collect();
            want.sort_by_key(|at| numbers.get(*at).copied());
            prop_assert_eq!(got, want);
        }
    }
}
