//! Decompressed blocks kept in memory between the block that writes them and the
//! blocks that read them, bounded in bytes.

use super::format::BlockId;
use anyhow::Result;
use std::collections::HashMap;
use std::sync::Arc;

/// Blocks in memory, by id, within a byte budget.
pub struct BlockCache {
    blocks: HashMap<BlockId, Arc<Vec<i8>>>,
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

    /// Keeps a block if it fits the budget.
    pub fn insert(&mut self, id: BlockId, values: Arc<Vec<i8>>) {
        let len = values.len() as u64;
        if self.bytes + len <= self.limit && !self.blocks.contains_key(&id) {
            self.bytes += len;
            self.blocks.insert(id, values);
        }
    }

    /// The block from memory, or loaded (and kept if it fits).
    pub fn get_or_load(
        &mut self,
        id: &BlockId,
        load: impl FnOnce() -> Result<Vec<i8>>,
    ) -> Result<Arc<Vec<i8>>> {
        if let Some(b) = self.blocks.get(id) {
            return Ok(b.clone());
        }
        let values = Arc::new(load()?);
        self.insert(id.clone(), values.clone());
        Ok(values)
    }

    /// Forgets a block (no remaining block reads it).
    pub fn evict(&mut self, id: &BlockId) {
        if let Some(values) = self.blocks.remove(id) {
            self.bytes -= values.len() as u64;
        }
    }
}
