//! Decompressed blocks kept in memory between the block that writes them and the
//! blocks that read them, bounded in bytes. The build knows its whole order, so each
//! block is kept with the build position that needs it next, and a block that does
//! not fit makes room by dropping those needed later than it, the latest first
//! (Belady's rule): a block read by the next few blocks is not decoded again because
//! blocks read only a layer later filled the cache first.

use super::format::BlockId;
use anyhow::Result;
use std::collections::HashMap;
use std::sync::Arc;

/// Blocks in memory, by id, within a byte budget.
pub struct BlockCache {
    /// Each block's values and the build position that needs it next.
    blocks: HashMap<BlockId, (Arc<Vec<i8>>, usize)>,
    bytes: u64,
    limit: u64,
}

impl BlockCache {
    /// An empty cache holding at most `limit` bytes of values.
    pub fn new(limit: u64) -> BlockCache {
        BlockCache {
            blocks: HashMap::new(),
            bytes: 0,
            limit,
        }
    }

    /// Keeps a block needed next at build position `next_use`, if it fits the budget
    /// once the blocks needed later than it are dropped (the latest first); if even
    /// that leaves too little room, nothing is dropped and it is not kept.
    pub fn insert(&mut self, id: BlockId, values: Arc<Vec<i8>>, next_use: usize) {
        let len = values.len() as u64;
        if self.renew(&id, next_use).is_some() {
            return;
        }
        if self.bytes + len > self.limit {
            let mut later: Vec<(usize, &BlockId, u64)> = self
                .blocks
                .iter()
                .filter(|(_, (_, next))| *next > next_use)
                .map(|(id, (values, next))| (*next, id, values.len() as u64))
                .collect();
            // Latest first; ties by id, so that a build's loads do not vary from run
            // to run with the map's order.
            later.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
            let mut freed = 0;
            let mut dropped = Vec::new();
            for (_, id, bytes) in later {
                if self.bytes - freed + len <= self.limit {
                    break;
                }
                freed += bytes;
                dropped.push(id.clone());
            }
            if self.bytes - freed + len > self.limit {
                return;
            }
            for id in dropped {
                self.evict(&id);
            }
        }
        self.bytes += len;
        self.blocks.insert(id, (values, next_use));
    }

    /// The block from memory, or loaded and kept if it fits (a cache without a build
    /// order: every block counts as needed now, none is dropped for another).
    pub fn get_or_load(
        &mut self,
        id: &BlockId,
        load: impl FnOnce() -> Result<Vec<i8>>,
    ) -> Result<Arc<Vec<i8>>> {
        self.get_or_load_needed_at(id, 0, load)
    }

    /// The block from memory, or loaded (and kept as [`BlockCache::insert`] keeps
    /// it); either way it is next needed at build position `next_use`.
    pub fn get_or_load_needed_at(
        &mut self,
        id: &BlockId,
        next_use: usize,
        load: impl FnOnce() -> Result<Vec<i8>>,
    ) -> Result<Arc<Vec<i8>>> {
        if let Some(values) = self.renew(id, next_use) {
            return Ok(values);
        }
        let values = Arc::new(load()?);
        self.insert(id.clone(), values.clone(), next_use);
        Ok(values)
    }

    /// A kept block, now next needed at build position `next_use` (`None`: not kept).
    fn renew(&mut self, id: &BlockId, next_use: usize) -> Option<Arc<Vec<i8>>> {
        let (values, next) = self.blocks.get_mut(id)?;
        *next = next_use;
        Some(values.clone())
    }

    /// Forgets a block (no remaining block reads it).
    pub fn evict(&mut self, id: &BlockId) {
        if let Some((values, _)) = self.blocks.remove(id) {
            self.bytes -= values.len() as u64;
        }
    }

    /// Whether the block is kept.
    pub fn holds(&self, id: &BlockId) -> bool {
        self.blocks.contains_key(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(key: u8) -> BlockId {
        BlockId {
            layer: 0,
            key: vec![key],
        }
    }

    fn values(len: usize) -> Arc<Vec<i8>> {
        Arc::new(vec![0; len])
    }

    /// A block needed sooner takes the room of those needed later, the latest
    /// first; one needed later than everything kept is not kept.
    #[test]
    fn the_blocks_needed_latest_make_room() {
        let mut cache = BlockCache::new(30);
        cache.insert(block(1), values(10), 50);
        cache.insert(block(2), values(10), 40);
        cache.insert(block(3), values(10), 60);
        // Full: a block needed at 45 drops the one needed at 60 only.
        cache.insert(block(4), values(10), 45);
        assert!(!cache.holds(&block(3)));
        assert!(cache.holds(&block(1)) && cache.holds(&block(2)) && cache.holds(&block(4)));
        // Needed after all of them: not kept, nothing dropped.
        cache.insert(block(5), values(10), 70);
        assert!(!cache.holds(&block(5)));
        assert_eq!(cache.bytes, 30);
        // Needing 20 bytes at 42: both later blocks (50, 45) go, 40 stays.
        cache.insert(block(6), values(20), 42);
        assert!(cache.holds(&block(6)) && cache.holds(&block(2)));
        assert!(!cache.holds(&block(1)) && !cache.holds(&block(4)));
        // Too big even with every later block dropped: nothing changes.
        cache.insert(block(7), values(35), 10);
        assert!(!cache.holds(&block(7)));
        assert!(cache.holds(&block(6)) && cache.holds(&block(2)));
        // A hit moves the block's next use: block 2, read at 40, is next needed at
        // 90, so a block needed at 80 may now take its room.
        let mut loads = 0;
        cache
            .get_or_load_needed_at(&block(2), 90, || {
                loads += 1;
                Ok(vec![])
            })
            .unwrap();
        assert_eq!(loads, 0);
        cache.insert(block(8), values(10), 80);
        assert!(cache.holds(&block(8)) && !cache.holds(&block(2)));
        assert_eq!(cache.bytes, 30);
    }

    /// Without a build order (`get_or_load`), every block counts as needed now:
    /// kept while it fits, none dropped for another.
    #[test]
    fn without_an_order_the_first_blocks_stay() {
        let mut cache = BlockCache::new(20);
        for key in 1..=3 {
            cache.get_or_load(&block(key), || Ok(vec![0; 10])).unwrap();
        }
        assert!(cache.holds(&block(1)) && cache.holds(&block(2)));
        assert!(!cache.holds(&block(3)));
    }
}
