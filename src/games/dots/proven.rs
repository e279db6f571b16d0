//! Proven positions kept between searches (`tb solve --store FILE`), so that a
//! search of days can run in pieces: a run stopped by `--time-limit` or
//! `--max-nodes`, or one that finished, leaves the bounds it proved on positions
//! near its root in an SQLite file; the next run, of the same position or of a
//! position above it (the root after its children were solved as separate jobs),
//! starts from them.
//!
//! The file holds one row per canonical position (the search table's key, see
//! [`KEY_FORM`]): its open lines and a lower and an upper bound on its value. Rows
//! only tighten: a bound added to a known position is intersected with what is
//! there, which is sound because both are true bounds of the same value; bounds that
//! do not meet mean one of them is false and are refused. The file names the game
//! its bounds belong to (board, penalty, the chains played as units, the key form),
//! and a search of another game is refused. Its bounds are trusted as the search
//! trusts its own table: a store is a cache of a user's own searches, not a
//! tablebase to hand around (nothing re-proves it; `tb verify` is for tablebases).

use super::board::Board;
use super::chains::Chains;
use super::search::{KEY_FORM, Proven};
use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;

/// The `game` a store's metadata names.
const GAME: &str = "dots-and-boxes-search-store";

/// An open store of proven bounds.
pub struct ProvenStore {
    conn: Connection,
}

/// What a run did with its store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct StoreReport {
    /// Positions read from the store before the search.
    pub loaded: usize,
    /// Positions the search's bounds added or tightened.
    pub written: usize,
    /// Positions in the store afterwards.
    pub total: u64,
}

impl ProvenStore {
    /// Opens the store at `path`, creating it when missing, for searches of `board`
    /// with `penalty` and `chains` played as units. A store of another game is
    /// refused, naming what differs.
    pub fn open(path: &Path, board: &Board, penalty: i32, chains: &Chains) -> Result<ProvenStore> {
        let conn = Connection::open(path)
            .with_context(|| format!("cannot open the store {}", path.display()))?;
        // Several jobs (one per child of a root) may add to one store at once.
        conn.busy_timeout(std::time::Duration::from_secs(600))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS proven(
                 position INTEGER PRIMARY KEY,
                 open INTEGER NOT NULL,
                 lower INTEGER NOT NULL,
                 upper INTEGER NOT NULL,
                 best INTEGER NOT NULL);",
        )
        .with_context(|| format!("{} is not a search store", path.display()))?;
        let identity = [
            ("game", GAME.to_string()),
            ("board", board.to_string()),
            ("penalty", penalty.to_string()),
            (
                "chains",
                serde_json::to_string(&chains.line_names(board)).expect("names serialise"),
            ),
            ("key_form", KEY_FORM.to_string()),
        ];
        let tx = conn.unchecked_transaction()?;
        for (key, want) in &identity {
            let have: Option<String> = tx
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
                .optional()?;
            match have {
                None => {
                    tx.execute(
                        "INSERT INTO meta(key, value) VALUES (?1, ?2)",
                        params![key, want],
                    )?;
                }
                Some(have) if have == *want => {}
                Some(have) => bail!(
                    "the store {} holds {key} {have}, this search {key} {want}: use another store",
                    path.display()
                ),
            }
        }
        tx.commit()?;
        Ok(ProvenStore { conn })
    }

    /// Every bound in the store.
    pub fn load(&self) -> Result<Vec<Proven>> {
        let mut stmt = self
            .conn
            .prepare("SELECT position, open, lower, upper, best FROM proven")?;
        let rows = stmt.query_map([], |r| {
            let field = |i: usize| r.get::<_, i64>(i);
            Ok((field(0)?, field(1)?, field(2)?, field(3)?, field(4)?))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (position, open, lower, upper, best) = row?;
            let (Ok(open), Ok(lower), Ok(upper), Ok(best)) = (
                u8::try_from(open),
                i16::try_from(lower),
                i16::try_from(upper),
                u8::try_from(best),
            ) else {
                bail!("the store has a row out of range (position {position})");
            };
            if lower > upper || open > 64 {
                bail!("the store has an impossible row (position {position})");
            }
            out.push(Proven {
                key: position as u64,
                open,
                lower,
                upper,
                best,
            });
        }
        Ok(out)
    }

    /// Adds `proven`, each bound intersected with the store's for its position, in
    /// one transaction; the number of rows added or tightened. Bounds that do not
    /// meet the store's are refused (and nothing is written).
    pub fn add(&mut self, proven: &[Proven]) -> Result<usize> {
        let tx = self.conn.transaction()?;
        let mut written = 0;
        {
            let mut get =
                tx.prepare_cached("SELECT lower, upper, best FROM proven WHERE position = ?1")?;
            let mut put = tx.prepare_cached(
                "INSERT OR REPLACE INTO proven(position, open, lower, upper, best) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for p in proven {
                let key = p.key as i64;
                let old: Option<(i64, i64, i64)> = get
                    .query_row([key], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .optional()?;
                let (lower, upper, best) = match old {
                    None => (i64::from(p.lower), i64::from(p.upper), i64::from(p.best)),
                    Some((lower, upper, best)) => {
                        let merged = (lower.max(p.lower.into()), upper.min(p.upper.into()));
                        if merged == (lower, upper) {
                            continue;
                        }
                        let best = if p.best == u8::MAX {
                            best
                        } else {
                            p.best.into()
                        };
                        (merged.0, merged.1, best)
                    }
                };
                if lower > upper {
                    bail!(
                        "the store bounds position {:#x} by {lower}..{upper}: a search or the store is wrong",
                        p.key
                    );
                }
                put.execute(params![key, p.open, lower, upper, best])?;
                written += 1;
            }
        }
        tx.commit()?;
        Ok(written)
    }

    /// Positions in the store.
    pub fn positions(&self) -> Result<u64> {
        Ok(self
            .conn
            .query_row("SELECT count(*) FROM proven", [], |r| r.get::<_, i64>(0))?
            as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proven(key: u64, lower: i16, upper: i16) -> Proven {
        Proven {
            key,
            open: 10,
            lower,
            upper,
            best: u8::MAX,
        }
    }

    #[test]
    fn bounds_only_tighten_and_conflicts_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let board: Board = "3x3".parse().unwrap();
        let mut store = ProvenStore::open(&path, &board, 0, &Chains::none()).unwrap();
        assert_eq!(
            store
                .add(&[proven(7, -3, 5), proven(u64::MAX, 1, 1)])
                .unwrap(),
            2
        );
        assert_eq!(
            store.add(&[proven(7, -5, 9)]).unwrap(),
            0,
            "looser: nothing"
        );
        assert_eq!(store.add(&[proven(7, 1, 9)]).unwrap(), 1);
        let mut rows = store.load().unwrap();
        rows.sort_by_key(|p| p.key);
        assert_eq!((rows[0].key, rows[0].lower, rows[0].upper), (7, 1, 5));
        assert_eq!((rows[1].key, rows[1].lower), (u64::MAX, 1));
        assert!(
            store.add(&[proven(7, 6, 8)]).is_err(),
            "bounds that do not meet"
        );
        assert_eq!(store.positions().unwrap(), 2);
        drop(store);
        // Another game's search is refused.
        let err = ProvenStore::open(&path, &board, -1, &Chains::none())
            .err()
            .unwrap();
        assert!(
            err.to_string()
                .contains("penalty 0, this search penalty -1"),
            "{err}"
        );
        let other: Board = "3x4".parse().unwrap();
        assert!(ProvenStore::open(&path, &other, 0, &Chains::none()).is_err());
    }
}
