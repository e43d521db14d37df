//! A small multiplicative hasher (FxHash) for the maps on hot paths. std's default SipHash with a
//! random seed is built for untrusted keys; ours are property names, object ids and addresses of
//! one run, and hashing them shows up in profiles.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};

#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        for b in chunks.remainder() {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(SEED);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

fn hash_of<Q: Hash + ?Sized>(key: &Q) -> u64 {
    let mut hasher = FxHasher::default();
    key.hash(&mut hasher);
    hasher.finish()
}

/// A hash map over `FxHasher`: entries in a vector, found through one open-addressing index of entry numbers.
///
/// std's `HashMap` compiles its table code (probing, growth, rehashing) once per key and value type: 17 copies of
/// `reserve_rehash` alone in the loop's wasm module (issue 43). Here everything but the key comparison is `Index`,
/// which knows only hashes and entry numbers and is compiled once. Removing swaps the last entry into the hole, so
/// iteration order is insertion order only until the first removal (std's maps promise no order at all).
pub struct FxMap<K, V> {
    entries: Vec<(K, V)>,
    index: Index,
}

impl<K, V> Default for FxMap<K, V> {
    fn default() -> Self {
        FxMap { entries: Vec::new(), index: Index::default() }
    }
}

impl<K: Hash + Eq, V> FxMap<K, V> {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn find<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<usize>
    where
        K: Borrow<Q>,
    {
        let entries = &self.entries;
        self.index.find(hash_of(key), &mut |at| entries.get(at).is_some_and(|(k, _)| k.borrow() == key))
    }

    pub fn get<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).and_then(|at| self.entries.get(at)).map(|(_, v)| v)
    }

    pub fn get_mut<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(key).and_then(|at| self.entries.get_mut(at)).map(|(_, v)| v)
    }

    pub fn contains_key<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_some()
    }

    /// Sets `key` to `value`; the value it had, if any.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if let Some(slot) = self.get_mut(&key) {
            return Some(std::mem::replace(slot, value));
        }
        self.index.push(hash_of(&key));
        self.entries.push((key, value));
        None
    }

    /// The value of `key`, inserted from `make` first when there is none.
    pub fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let at = match self.find(&key) {
            Some(at) => at,
            None => {
                self.index.push(hash_of(&key));
                self.entries.push((key, make()));
                self.entries.len() - 1
            }
        };
        let (_, v) = self.entries.get_mut(at).unwrap_or_else(|| unreachable!("an entry just found or pushed"));
        v
    }

    pub fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        let at = self.find(key)?;
        self.index.remove(at);
        Some(self.entries.swap_remove(at).1)
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.index = Index::default();
    }

    /// Room for `more` entries without reallocating, or the allocator's refusal (nothing aborts).
    pub fn try_reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.entries.try_reserve(more)?;
        self.index.try_reserve(more)
    }

    pub fn capacity(&self) -> usize {
        self.entries.capacity()
    }

    /// Gives back the memory of removed entries (all of the index's when the map is empty).
    pub fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
        if self.entries.is_empty() {
            self.index = Index::default();
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }
}

impl<K: Hash + Eq, V> FromIterator<(K, V)> for FxMap<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(items: I) -> Self {
        let mut map = FxMap::default();
        for (k, v) in items {
            map.insert(k, v);
        }
        map
    }
}

/// A set of `FxMap` keys.
pub struct FxSet<K>(FxMap<K, ()>);

impl<K> Default for FxSet<K> {
    fn default() -> Self {
        FxSet(FxMap::default())
    }
}

impl<K: Hash + Eq> FxSet<K> {
    /// Adds `key`; whether it was new.
    pub fn insert(&mut self, key: K) -> bool {
        self.0.insert(key, ()).is_none()
    }

    pub fn contains<Q: Hash + Eq + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.0.contains_key(key)
    }

    /// Takes `key` out; whether it was there.
    pub fn remove<Q: Hash + Eq + ?Sized>(&mut self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.0.remove(key).is_some()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The index of an `FxMap`: each entry's hash, and a linear-probing table of slots holding entry numbers plus one (0:
/// empty), its length a power of two kept at most 7/8 full.
#[derive(Default)]
struct Index {
    hashes: Vec<u64>,
    slots: Vec<u32>,
}

impl Index {
    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    fn start(&self, hash: u64) -> usize {
        // The high bits: FxHasher's multiply leaves the low ones poorly mixed.
        (hash >> 32) as usize & self.mask()
    }

    fn slot(&self, at: usize) -> u32 {
        self.slots.get(at).copied().unwrap_or(0)
    }

    /// The entry with `hash` that `matches`, probing from its hash's slot to the first empty one.
    fn find(&self, hash: u64, matches: &mut dyn FnMut(usize) -> bool) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        let mut at = self.start(hash);
        loop {
            let entry = (self.slot(at) as usize).checked_sub(1)?;
            if self.hashes.get(entry) == Some(&hash) && matches(entry) {
                return Some(entry);
            }
            at = (at + 1) & self.mask();
        }
    }

    /// The slot that holds `entry`.
    fn slot_of(&self, entry: usize) -> Option<usize> {
        let mut at = self.start(*self.hashes.get(entry)?);
        for _ in 0..self.slots.len() {
            match self.slot(at) as usize {
                0 => return None,
                s if s == entry + 1 => return Some(at),
                _ => at = (at + 1) & self.mask(),
            }
        }
        None
    }

    /// Puts `entry` in the first empty slot from its hash's.
    fn place(&mut self, entry: usize) {
        let Some(&hash) = self.hashes.get(entry) else { return };
        let mut at = self.start(hash);
        while self.slot(at) != 0 {
            at = (at + 1) & self.mask();
        }
        if let Some(slot) = self.slots.get_mut(at) {
            *slot = entry as u32 + 1;
        }
    }

    /// Indexes a new last entry with `hash`, growing the table first when it would be over 7/8 full.
    fn push(&mut self, hash: u64) {
        self.hashes.push(hash);
        let count = self.hashes.len();
        if count * 8 > self.slots.len() * 7 {
            self.slots = vec![0; (self.slots.len() * 2).max(8)];
            for entry in 0..count {
                self.place(entry);
            }
        } else {
            self.place(count - 1);
        }
    }

    /// Grows the table now, fallibly, so that `more` pushes will not grow it.
    fn try_reserve(&mut self, more: usize) -> Result<(), std::collections::TryReserveError> {
        self.hashes.try_reserve(more)?;
        let count = self.hashes.len().saturating_add(more);
        let mut len = self.slots.len().max(8);
        while count.saturating_mul(8) > len.saturating_mul(7) {
            len = len.saturating_mul(2);
        }
        if len > self.slots.len() {
            let mut slots = Vec::new();
            slots.try_reserve_exact(len)?;
            slots.resize(len, 0);
            self.slots = slots;
            for entry in 0..self.hashes.len() {
                self.place(entry);
            }
        }
        Ok(())
    }

    /// Forgets `entry` as the map swap-removes it: the last entry takes its number.
    fn remove(&mut self, entry: usize) {
        let Some(hole) = self.slot_of(entry) else { return };
        self.close(hole);
        let last = self.hashes.len() - 1;
        if entry != last
            && let Some(at) = self.slot_of(last)
            && let Some(slot) = self.slots.get_mut(at)
        {
            *slot = entry as u32 + 1;
        }
        self.hashes.swap_remove(entry);
    }

    /// Empties slot `hole`, moving back each later slot of its run whose probe started at or before the hole (so
    /// every entry stays reachable from its hash's slot without passing an empty one).
    fn close(&mut self, mut hole: usize) {
        let mask = self.mask();
        let mut at = (hole + 1) & mask;
        loop {
            let s = self.slot(at);
            let Some(&hash) = (s as usize).checked_sub(1).and_then(|e| self.hashes.get(e)) else { break };
            let home = self.start(hash);
            if at.wrapping_sub(home) & mask >= at.wrapping_sub(hole) & mask {
                if let Some(slot) = self.slots.get_mut(hole) {
                    *slot = s;
                }
                hole = at;
            }
            at = (at + 1) & mask;
        }
        if let Some(slot) = self.slots.get_mut(hole) {
            *slot = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u16, u32),
        Remove(u16),
        Get(u16),
        Reserve(u8),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        // Keys from a small range, so removals and overwrites hit; a few clears and reservations between.
        prop_oneof![
            6 => (0u16..200, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            3 => (0u16..200).prop_map(Op::Remove),
            3 => (0u16..200).prop_map(Op::Get),
            1 => any::<u8>().prop_map(Op::Reserve),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        /// Every operation answers as std's `HashMap` does, and the map holds the same entries after each.
        #[test]
        fn behaves_as_std_hash_map(ops in proptest::collection::vec(op(), 0..600)) {
            let mut ours: FxMap<String, u32> = FxMap::default();
            let mut std: HashMap<String, u32> = HashMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(ours.insert(k.to_string(), v), std.insert(k.to_string(), v)),
                    Op::Remove(k) => prop_assert_eq!(ours.remove(k.to_string().as_str()), std.remove(&k.to_string())),
                    Op::Get(k) => prop_assert_eq!(ours.get(k.to_string().as_str()), std.get(&k.to_string())),
                    Op::Reserve(n) => ours.try_reserve(usize::from(n)).unwrap(),
                    Op::Clear => {
                        ours.clear();
                        std.clear();
                    }
                }
                prop_assert_eq!(ours.len(), std.len());
            }
            let mut got: Vec<(String, u32)> = ours.iter().map(|(k, v)| (k.clone(), *v)).collect();
            let mut want: Vec<(String, u32)> = std.into_iter().collect();
            got.sort();
            want.sort();
            prop_assert_eq!(got, want);
        }
    }

    /// Keys whose hashes share a start slot (every multiple of 2^32 hashes to its own high bits, so these collide in
    /// a small table) stay reachable through removals in any order: the backward shift keeps probe runs unbroken.
    #[test]
    fn colliding_keys_survive_removals() {
        let mut map: FxMap<u64, u64> = FxMap::default();
        let keys: Vec<u64> = (0..40).map(|i| i << 40).collect();
        for k in &keys {
            map.insert(*k, *k + 1);
        }
        for (i, k) in keys.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
            assert_eq!(map.remove(k), Some(k + 1), "key {i}");
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(map.get(k).copied(), (i % 3 != 0).then_some(k + 1), "key {i}");
        }
        let mut set: FxSet<u64> = FxSet::default();
        assert!(set.insert(7) && !set.insert(7) && set.contains(&7) && set.remove(&7) && !set.contains(&7));
    }
}
