//! Blocks a worker process keeps between its block tasks
//! ([`super::distributed::run_block`]), those it decoded as inputs and those it
//! computed: a block of one layer is read by up to one block of the next per group,
//! and a task that finds it here neither reads its shard nor decodes it again. Bounded in bytes, least recently used first out.
//! A shard's values never change once written (a block computed again has the
//! same values), so an entry stays right after its shard is pruned.

use super::format::BlockId;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A cached block: its build's shard directory and id, and its values.
type Entry = ((PathBuf, BlockId), Arc<Vec<i8>>);

/// Values of decoded blocks, by build directory and block.
pub struct InputCache {
    budget: u64,
    used: u64,
    /// Least recently used first.
    entries: VecDeque<Entry>,
    hits: u64,
    misses: u64,
}

impl InputCache {
    /// An empty cache of at most `budget` bytes.
    pub const fn new(budget: u64) -> InputCache {
        InputCache {
            budget,
            used: 0,
            entries: VecDeque::new(),
            hits: 0,
            misses: 0,
        }
    }

    /// The values of block `id` of the build under `root`, if kept (now the most
    /// recently used).
    pub fn get(&mut self, root: &Path, id: &BlockId) -> Option<Arc<Vec<i8>>> {
        let at = self
            .entries
            .iter()
            .position(|((r, b), _)| b == id && r == root);
        let Some(at) = at else {
            self.misses += 1;
            return None;
        };
        self.hits += 1;
        let entry = self.entries.remove(at).expect("found");
        let values = entry.1.clone();
        self.entries.push_back(entry);
        Some(values)
    }

    /// Keeps `values` of block `id` (when they fit the budget), forgetting the
    /// least recently used blocks to make room.
    pub fn put(&mut self, root: &Path, id: &BlockId, values: Arc<Vec<i8>>) {
        let bytes = values.len() as u64;
        if bytes > self.budget {
            return;
        }
        while self.used + bytes > self.budget {
            let Some((_, old)) = self.entries.pop_front() else {
                break;
            };
            self.used -= old.len() as u64;
        }
        self.used += bytes;
        self.entries
            .push_back(((root.to_path_buf(), id.clone()), values));
    }

    /// Sets the budget, forgetting blocks beyond it.
    pub fn set_budget(&mut self, budget: u64) {
        self.budget = budget;
        while self.used > self.budget {
            let Some((_, old)) = self.entries.pop_front() else {
                break;
            };
            self.used -= old.len() as u64;
        }
    }

    /// Lookups that found their block, and those that did not.
    pub fn hits_misses(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }
}

/// The cache of this process (off until a budget is set).
pub static WORKER_INPUTS: Mutex<InputCache> = Mutex::new(InputCache::new(0));

#[cfg(test)]
mod tests {
    use super::*;

    fn id(key: u8) -> BlockId {
        BlockId {
            layer: 1,
            key: vec![key],
        }
    }

    #[test]
    fn keeps_the_most_recently_used_within_its_budget() {
        let root = Path::new("/s");
        let mut cache = InputCache::new(10);
        cache.put(root, &id(1), Arc::new(vec![1; 4]));
        cache.put(root, &id(2), Arc::new(vec![2; 4]));
        // 1 used again: 2 is the least recent and goes for 3.
        assert_eq!(cache.get(root, &id(1)).unwrap()[0], 1);
        cache.put(root, &id(3), Arc::new(vec![3; 4]));
        assert!(cache.get(root, &id(2)).is_none());
        assert_eq!(cache.get(root, &id(3)).unwrap()[0], 3);
        assert_eq!(cache.get(root, &id(1)).unwrap()[0], 1);
        // Another build's block of the same key is another entry.
        assert!(cache.get(Path::new("/t"), &id(1)).is_none());
        // Too big for the budget: not kept, nothing forgotten for it.
        cache.put(root, &id(4), Arc::new(vec![4; 11]));
        assert!(cache.get(root, &id(4)).is_none());
        assert!(cache.get(root, &id(1)).is_some());
        cache.set_budget(4);
        assert!(cache.get(root, &id(3)).is_none());
        assert_eq!(cache.hits_misses(), (4, 4));
    }
}
