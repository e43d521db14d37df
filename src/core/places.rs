//! Values by place: a vector and its free places, each place with a generation, so a key to a value that has since
//! been removed finds nothing even when its place holds another value. The executor keeps its tasks here and the JS
//! host its awaits in flight (issue 34): both grow to the most ever alive at once and never shrink, and a place costs
//! its value and 4 bytes, where a map's entry cost its key too, and its table a quarter more.

/// A place and the generation it had when the value was inserted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub index: u32,
    pub generation: u32,
}

/// A place is retired once its generation reaches this, so a key is never given twice and, as a number
/// (`Key::to_number`), stays below 2^53: exact in an f64 on the JS side.
pub const GENERATIONS: u32 = 1 << 21;

impl Key {
    /// `index + generation × 2^32`.
    pub fn to_number(self) -> u64 {
        u64::from(self.index) | (u64::from(self.generation) << 32)
    }

    /// The key `to_number` gave this number (any number is a key; one no place answers to finds nothing).
    pub fn from_number(number: u64) -> Key {
        Key { index: (number & 0xffff_ffff) as u32, generation: (number >> 32).min(u64::from(u32::MAX)) as u32 }
    }
}

pub struct Places<T> {
    places: Vec<Place<T>>,
    free: Vec<u32>,
}

struct Place<T> {
    generation: u32,
    /// `None` while the place is free (or retired).
    value: Option<T>,
}

impl<T> Default for Places<T> {
    fn default() -> Self {
        Places { places: Vec::new(), free: Vec::new() }
    }
}

impl<T> Places<T> {
    /// Puts `value` in a free place, or a new one; `None` only when 2^32 places are taken.
    pub fn insert(&mut self, value: T) -> Option<Key> {
        let index = match self.free.pop() {
            Some(index) => index,
            None => {
                let index = u32::try_from(self.places.len()).ok()?;
                self.places.push(Place { generation: 0, value: None });
                index
            }
        };
        let place = self.places.get_mut(index as usize)?;
        place.value = Some(value);
        Some(Key { index, generation: place.generation })
    }

    pub fn get_mut(&mut self, key: Key) -> Option<&mut T> {
        let place = self.places.get_mut(key.index as usize)?;
        if place.generation != key.generation {
            return None;
        }
        place.value.as_mut()
    }

    /// Takes the value out and frees its place for a later value of the next generation.
    pub fn remove(&mut self, key: Key) -> Option<T> {
        let place = self.places.get_mut(key.index as usize)?;
        if place.generation != key.generation {
            return None;
        }
        let value = place.value.take()?;
        place.generation += 1;
        if place.generation < GENERATIONS {
            self.free.push(key.index);
        }
        Some(value)
    }

    /// How many values are in place.
    pub fn len(&self) -> usize {
        self.places.iter().filter(|p| p.value.is_some()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_value_is_not_found_by_its_key_when_its_place_is_reused() {
        let mut places = Places::default();
        let a = places.insert("a").unwrap();
        let b = places.insert("b").unwrap();
        assert_eq!(places.remove(a), Some("a"));
        assert_eq!(places.remove(a), None);
        let c = places.insert("c").unwrap();
        assert_eq!(c.index, a.index, "the free place is reused");
        assert_ne!(c, a);
        assert_eq!(places.get_mut(a), None);
        assert_eq!(places.get_mut(c).copied(), Some("c"));
        assert_eq!(places.get_mut(b).copied(), Some("b"));
        assert_eq!(places.len(), 2);
        assert_eq!(places.places.len(), 2, "no place beyond the most alive at once");
    }

    #[test]
    fn keys_round_trip_as_numbers_below_2_53_and_a_place_retires_at_the_last_generation() {
        let mut places = Places::default();
        let mut key = places.insert(0).unwrap();
        for n in 1..GENERATIONS {
            assert_eq!(places.remove(key), Some(n - 1));
            key = places.insert(n).unwrap();
            assert_eq!(key.index, 0);
        }
        assert_eq!(key.generation, GENERATIONS - 1);
        assert!(key.to_number() < 1 << 53);
        assert_eq!(Key::from_number(key.to_number()), key);
        places.remove(key);
        let next = places.insert(0).unwrap();
        assert_eq!(next.index, 1, "the retired place is not reused");
        assert_eq!(places.get_mut(Key::from_number(u64::MAX)), None);
    }
}
