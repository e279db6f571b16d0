//! Distributed builds (docs/FORMAT.md §9.12) without Dask: block tasks run in this
//! process or in child processes, their shards in a temporary shared directory,
//! and the coordinator records them in the `.tb` file. A finished distributed
//! build must be the same file as a local build of the real binary (layer rows,
//! block rows, chunks, `tb export`, `tb verify`), whatever the order the tasks
//! finish in, after a coordinator dropped midway and resumed, and with damaged
//! shards (recomputed, never recorded).

use crate::harness;
use crate::oracle;

use harness::{build_file, describe, run_ok, tb};
use oracle::Rng;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use tb::retro::BlockId;
use tb::retro::distributed::{Coordinator, TaskOutcome, run_block};
use tb::retro::shard::{ShardDir, ShardError, ShardErrorKind};
use tb::store::Store;

/// The environment variable that makes [`child_task_entry`] run one block task.
const TASK_ENV: &str = "TB_TEST_BLOCK_TASK";

/// The kernel of the game `db` holds (built once per process).
fn kernel_of(db: &Path) -> &'static dyn tb::retro::Kernel {
    tb::games::kernel_of_identity(&Store::meta_of(db).unwrap()).unwrap()
}

/// A local build with the real binary.
fn local(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    build_file(dir, name, args)
}

/// How tasks run.
#[derive(Clone, Copy)]
enum Runner {
    /// In this process.
    InProcess,
    /// Each in a child process (this test binary, [`child_task_entry`]), two at once.
    Processes,
}

/// Runs every task of `coordinator` in a random order that respects what each
/// reads (seeded), recording each as it finishes; stops after `limit` tasks.
/// Returns the outcomes of the tasks run.
fn run_tasks(
    coordinator: &mut Coordinator,
    kernel: &'static dyn tb::retro::Kernel,
    identity_db: &Path,
    shared: &Path,
    runner: Runner,
    seed: u64,
    limit: usize,
) -> Vec<TaskOutcome> {
    let mut rng = Rng::new(seed);
    let mut pending = coordinator.tasks();
    let mut outcomes = Vec::new();
    let dir = ShardDir::new(shared, kernel.format());
    while !pending.is_empty() && outcomes.len() < limit {
        let waiting: HashSet<BlockId> = pending
            .iter()
            .map(|t| BlockId {
                layer: t.layer,
                key: t.key.clone(),
            })
            .collect();
        let ready: Vec<usize> = (0..pending.len())
            .filter(|&i| {
                pending[i].reads.iter().all(|(layer, key)| {
                    !waiting.contains(&BlockId {
                        layer: *layer,
                        key: key.clone(),
                    })
                })
            })
            .collect();
        assert!(!ready.is_empty(), "no task can run: the reads form a cycle");
        let take = match runner {
            Runner::InProcess => 1,
            Runner::Processes => 2,
        }
        .min(ready.len())
        .min(limit - outcomes.len());
        let mut chosen: Vec<usize> = Vec::new();
        while chosen.len() < take {
            let i = ready[rng.below(ready.len() as u64) as usize];
            if !chosen.contains(&i) {
                chosen.push(i);
            }
        }
        let ids: Vec<BlockId> = chosen
            .iter()
            .map(|&i| BlockId {
                layer: pending[i].layer,
                key: pending[i].key.clone(),
            })
            .collect();
        match runner {
            Runner::InProcess => {
                for id in &ids {
                    outcomes.push(run_block(kernel, &dir, id).unwrap().outcome);
                }
            }
            Runner::Processes => {
                let children: Vec<_> = ids
                    .iter()
                    .map(|id| spawn_task(identity_db, shared, id))
                    .collect();
                for child in children {
                    let output = child.wait_with_output().unwrap();
                    assert!(output.status.success(), "{}", describe(&output));
                    let text = String::from_utf8_lossy(&output.stdout);
                    // The test harness prints its own words on the same line.
                    let outcome = text
                        .split("outcome ")
                        .nth(1)
                        .and_then(|rest| rest.split_whitespace().next())
                        .unwrap_or_else(|| panic!("no outcome from the task: {text}"));
                    outcomes.push(match outcome {
                        "Computed" => TaskOutcome::Computed,
                        "Reused" => TaskOutcome::Reused,
                        _ => TaskOutcome::Recomputed,
                    });
                }
            }
        }
        for id in &ids {
            coordinator.record(id).unwrap();
        }
        chosen.sort_unstable();
        for i in chosen.into_iter().rev() {
            pending.remove(i);
        }
    }
    outcomes
}

/// Runs every task left in this process (seeded order), recording each.
fn run_rest(
    coordinator: &mut Coordinator,
    kernel: &'static dyn tb::retro::Kernel,
    identity_db: &Path,
    shared: &Path,
    seed: u64,
) -> Vec<TaskOutcome> {
    run_tasks(
        coordinator,
        kernel,
        identity_db,
        shared,
        Runner::InProcess,
        seed,
        usize::MAX,
    )
}

/// Starts this test binary in a child process running one block task.
fn spawn_task(identity_db: &Path, shared: &Path, id: &BlockId) -> std::process::Child {
    let task = serde_json::json!({
        "db": identity_db,
        "shared": shared,
        "layer": id.layer,
        "key": id.key,
    });
    // The test's name as libtest knows it: this module's path without the crate's.
    let entry = format!(
        "{}::child_task_entry",
        module_path!().split_once("::").unwrap().1
    );
    Command::new(std::env::current_exe().unwrap())
        .args([entry.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(TASK_ENV, task.to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Not a test of its own: the entry point of a child process that runs one block
/// task ([`spawn_task`]); without the variable it does nothing.
#[test]
fn child_task_entry() {
    let Ok(task) = std::env::var(TASK_ENV) else {
        return;
    };
    let task: serde_json::Value = serde_json::from_str(&task).unwrap();
    let kernel = kernel_of(Path::new(task["db"].as_str().unwrap()));
    let dir = ShardDir::new(Path::new(task["shared"].as_str().unwrap()), kernel.format());
    let id = BlockId {
        layer: task["layer"].as_u64().unwrap() as usize,
        key: serde_json::from_value(task["key"].clone()).unwrap(),
    };
    let report = run_block(kernel, &dir, &id).unwrap();
    println!("outcome {:?}", report.outcome);
}

/// What two files must have in common to be the same tablebase: every layer row
/// but its seconds, every block row, every chunk row (values, checksums, bytes).
fn assert_same_file(local: &Path, distributed: &Path) {
    let (a, b) = (
        Store::open_read(local).unwrap(),
        Store::open_read(distributed).unwrap(),
    );
    let layers = |s: &Store| -> Vec<String> {
        s.layers()
            .unwrap()
            .values()
            .map(|r| {
                format!(
                    "{} {} {} {} {:?} {:?}",
                    r.n,
                    r.status.as_str(),
                    r.positions,
                    r.bytes,
                    r.histogram,
                    r.digest
                )
            })
            .collect()
    };
    assert_eq!(layers(&a), layers(&b), "layer rows");
    let blocks = |s: &Store| -> Vec<String> {
        s.block_rows()
            .unwrap()
            .iter()
            .map(|(k, r)| {
                format!(
                    "{k:?} {} {} {} {:?} {}",
                    r.positions, r.chunks, r.bytes, r.histogram, r.digest
                )
            })
            .collect()
    };
    assert_eq!(blocks(&a), blocks(&b), "block rows");
    let chunk_rows = a.chunk_rows().unwrap();
    assert_eq!(chunk_rows, b.chunk_rows().unwrap(), "chunk rows");
    assert!(!chunk_rows.is_empty(), "the book is in the file");
    for (n, key, chunk) in chunk_rows.keys() {
        let counts: Vec<u8> = key.split('.').map(|c| c.parse().unwrap()).collect();
        let (x, y) = (
            a.stored_chunk(*n as usize, &counts, *chunk as u64).unwrap(),
            b.stored_chunk(*n as usize, &counts, *chunk as u64).unwrap(),
        );
        assert_eq!(
            (x.checksum, &x.data),
            (y.checksum, &y.data),
            "chunk {n} {key} {chunk}"
        );
    }
    let export = |db: &Path| run_ok(tb().args(["export", "--db"]).arg(db), "export").stdout;
    assert_eq!(export(local), export(distributed), "tb export");
    run_ok(tb().args(["verify", "--db"]).arg(distributed), "verify");
    let meta = Store::meta_of(distributed).unwrap();
    assert!(
        !meta.keys().any(|k| k.starts_with("shard")),
        "catalog rows left: {meta:?}"
    );
    // The identity and feature keys; not what only says how a build ran.
    let identity = |mut meta: std::collections::BTreeMap<String, String>| {
        meta.retain(|k, _| {
            !matches!(
                k.as_str(),
                "tool_version" | "build_threads" | "build_cache_bytes" | "peak_file_bytes"
            )
        });
        meta
    };
    assert_eq!(
        identity(Store::meta_of(local).unwrap()),
        identity(meta),
        "meta rows"
    );
}

/// A distributed build of the game of `local_db` into `db`, all tasks run by
/// `runner` in the order `seed` picks.
fn distributed(local_db: &Path, db: &Path, shared: &Path, runner: Runner, seed: u64) {
    let kernel = kernel_of(local_db);
    let mut coordinator = Coordinator::open(db, kernel, shared).unwrap();
    let outcomes = run_tasks(
        &mut coordinator,
        kernel,
        local_db,
        shared,
        runner,
        seed,
        usize::MAX,
    );
    assert!(outcomes.iter().all(|o| *o == TaskOutcome::Computed));
    assert!(coordinator.is_done());
    coordinator.finish().unwrap();
    assert!(
        std::fs::read_dir(shared).unwrap().next().is_none(),
        "the shards are deleted at the end"
    );
}

#[test]
fn distributed_builds_equal_local_ones_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("3x3.tb", &["3x3"][..]),
        ("2x3-loony.tb", &["2x3", "--loony"][..]),
        (
            "2x3-b3.tb",
            &["2x3", "--book-lines", "3", "--chunk", "50"][..],
        ),
        (
            "morris4.tb",
            &["morris", "--stones", "4", "--phase", "all"][..],
        ),
    ] {
        let a = local(dir.path(), name, args);
        for seed in [1, 2] {
            let b = dir.path().join(format!("d{seed}-{name}"));
            let shared = dir.path().join(format!("shared-{seed}-{name}"));
            std::fs::create_dir(&shared).unwrap();
            distributed(&a, &b, &shared, Runner::InProcess, seed);
            assert_same_file(&a, &b);
        }
    }
}

#[test]
fn tasks_in_separate_processes_build_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = local(dir.path(), "2x3.tb", &["2x3"]);
    let b = dir.path().join("d.tb");
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    distributed(&a, &b, &shared, Runner::Processes, 7);
    assert_same_file(&a, &b);
}

/// Flips a byte of a file at `at` (from its end when negative).
fn flip(path: &Path, at: i64) {
    let mut bytes = std::fs::read(path).unwrap();
    let i = if at < 0 {
        (bytes.len() as i64 + at) as usize
    } else {
        at as usize
    };
    bytes[i] ^= 0x40;
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_shard_is_computed_again_and_never_read() {
    let dir = tempfile::tempdir().unwrap();
    let a = local(dir.path(), "2x3.tb", &["2x3"]);
    let kernel = kernel_of(&a);
    let format = kernel.format();
    let shared = dir.path().join("shared");
    let shards = ShardDir::new(&shared, format);
    let layer = format.layers()[0];
    let id = BlockId {
        layer,
        key: format.blocks(layer)[0].clone(),
    };
    assert_eq!(
        run_block(kernel, &shards, &id).unwrap().outcome,
        TaskOutcome::Computed
    );
    let path = shards.path(&id);
    // The shard as the header and coded chunks say (not the seconds it took).
    let contents = || {
        let shard = shards.read(format, &id).unwrap();
        let mut header = shard.header.clone();
        header.seconds = 0.0;
        let data: Vec<Vec<u8>> = shard.chunks().into_iter().map(|c| c.data).collect();
        (format!("{header:?}"), data, shard.values(format).unwrap())
    };
    let whole = contents();
    assert_eq!(
        run_block(kernel, &shards, &id).unwrap().outcome,
        TaskOutcome::Reused
    );
    // A flipped byte of the values, of the header, a truncated file, an extended one.
    let damage: [&dyn Fn(&Path); 4] = [
        &|p| flip(p, -1),
        &|p| flip(p, 20),
        &|p| {
            let bytes = std::fs::read(p).unwrap();
            std::fs::write(p, &bytes[..bytes.len() - 3]).unwrap();
        },
        &|p| {
            let mut bytes = std::fs::read(p).unwrap();
            bytes.push(0);
            std::fs::write(p, &bytes).unwrap();
        },
    ];
    for (i, damage) in damage.iter().enumerate() {
        damage(&path);
        let error = shards.read(format, &id).err().expect("damage is seen");
        assert_eq!(error.kind, ShardErrorKind::Damaged, "damage {i}: {error}");
        assert_eq!(
            run_block(kernel, &shards, &id).unwrap().outcome,
            TaskOutcome::Recomputed,
            "damage {i}"
        );
        assert!(contents() == whole, "damage {i}: another shard written");
    }
    // A damaged input: the reader's task fails naming it, and writes nothing.
    let reader = format
        .layers()
        .into_iter()
        .flat_map(|l| {
            format
                .blocks(l)
                .into_iter()
                .map(move |key| BlockId { layer: l, key })
        })
        .find(|b| kernel.reads(b.layer, &b.key).contains(&id))
        .expect("a block reads the first one");
    for input in kernel.reads(reader.layer, &reader.key) {
        run_block(kernel, &shards, &input).unwrap();
    }
    flip(&path, -1);
    let error = run_block(kernel, &shards, &reader).unwrap_err();
    let shard_error = error
        .chain()
        .find_map(|e| e.downcast_ref::<ShardError>())
        .unwrap_or_else(|| panic!("no shard error in {error:#}"));
    assert_eq!(shard_error.block, id);
    assert!(!shards.path(&reader).exists());
    // A missing input likewise.
    std::fs::remove_file(&path).unwrap();
    let error = run_block(kernel, &shards, &reader).unwrap_err();
    let shard_error = error
        .chain()
        .find_map(|e| e.downcast_ref::<ShardError>())
        .unwrap();
    assert_eq!(shard_error.kind, ShardErrorKind::Missing);
}

#[test]
fn a_coordinator_dropped_midway_resumes_without_recomputing() {
    let dir = tempfile::tempdir().unwrap();
    let a = local(dir.path(), "3x3.tb", &["3x3", "--book-lines", "4"]);
    let kernel = kernel_of(&a);
    let b = dir.path().join("d.tb");
    let shared = dir.path().join("shared");
    let total = Coordinator::open(&b, kernel, &shared)
        .unwrap()
        .tasks()
        .len();
    assert!(total > 20, "{total} blocks");
    let recorded = {
        let mut coordinator = Coordinator::open(&b, kernel, &shared).unwrap();
        // A second coordinator on the same file is refused.
        let second = Coordinator::open(&b, kernel, &shared).err().unwrap();
        assert!(format!("{second:#}").contains("already"), "{second:#}");
        run_tasks(
            &mut coordinator,
            kernel,
            &a,
            &shared,
            Runner::InProcess,
            3,
            total / 2,
        );
        // Two more blocks computed but not recorded: the coordinator "dies".
        let ready: Vec<BlockId> = coordinator
            .tasks()
            .into_iter()
            .filter(|t| {
                t.reads.iter().all(|(l, k)| {
                    !coordinator
                        .tasks()
                        .iter()
                        .any(|u| u.layer == *l && u.key == *k)
                })
            })
            .take(2)
            .map(|t| BlockId {
                layer: t.layer,
                key: t.key,
            })
            .collect();
        for id in &ready {
            run_block(kernel, coordinator.shard_dir(), id).unwrap();
        }
        total - coordinator.tasks().len()
    };
    let mut coordinator = Coordinator::open(&b, kernel, &shared).unwrap();
    assert_eq!(coordinator.resumed_blocks(), recorded);
    assert_eq!(coordinator.tasks().len(), total - recorded);
    let outcomes = run_rest(&mut coordinator, kernel, &a, &shared, 4);
    assert_eq!(
        outcomes.len(),
        total - recorded,
        "nothing recorded ran again"
    );
    let reused = outcomes
        .iter()
        .filter(|o| **o == TaskOutcome::Reused)
        .count();
    assert_eq!(reused, 2, "the shards written before the kill are used");
    coordinator.finish().unwrap();
    assert_same_file(&a, &b);
}

#[test]
fn a_recorded_shard_found_damaged_on_resume_is_computed_again() {
    let dir = tempfile::tempdir().unwrap();
    let a = local(dir.path(), "2x3.tb", &["2x3", "--book-lines", "2"]);
    let kernel = kernel_of(&a);
    let b = dir.path().join("d.tb");
    let shared = dir.path().join("shared");
    let format = kernel.format();
    // Stop once a whole layer past the book is recorded and read by blocks left.
    let first = format.layers()[0];
    let first_blocks = format.blocks(first).len();
    let damaged = {
        let mut coordinator = Coordinator::open(&b, kernel, &shared).unwrap();
        run_tasks(
            &mut coordinator,
            kernel,
            &a,
            &shared,
            Runner::InProcess,
            5,
            first_blocks,
        );
        let id = BlockId {
            layer: first,
            key: format.blocks(first)[0].clone(),
        };
        assert!(!coordinator.tasks().iter().any(|t| t.layer == first));
        flip(&coordinator.shard_dir().path(&id), -2);
        id
    };
    let mut coordinator = Coordinator::open(&b, kernel, &shared).unwrap();
    assert_eq!(coordinator.forgotten(), &[damaged.clone()][..]);
    assert!(
        coordinator
            .tasks()
            .iter()
            .any(|t| t.layer == damaged.layer && t.key == damaged.key)
    );
    let outcomes = run_rest(&mut coordinator, kernel, &a, &shared, 6);
    assert!(outcomes.contains(&TaskOutcome::Recomputed));
    coordinator.finish().unwrap();
    assert_same_file(&a, &b);
}

/// Qubic: each O reply a task (`tb::games::qubic::tasks`). The strategy the
/// coordinator stores from the tasks' shards is accepted by `tb verify`'s
/// independent walk, holds every reply the local build holds, resumes after the
/// coordinator is dropped midway (nothing stored runs again, a shard written but
/// not stored is reused), and a damaged shard is proven again, never stored.
#[test]
fn qubic_replies_as_tasks_make_a_strategy_verify_accepts() {
    use tb::games::qubic::position::Position;
    use tb::games::qubic::tasks::{Coordinator as QubicCoordinator, run_reply, shard_dir};
    const START: &str = "0-3-60-21-15-63-12";
    const MEMORY: u64 = 256 << 20;
    let dir = tempfile::tempdir().unwrap();
    let local = local(
        dir.path(),
        "local.tb",
        &["qubic", "--start", START, "--memory", "256MiB"],
    );
    let start = Position::parse(START).unwrap();
    let shared = dir.path().join("shared");
    let db = dir.path().join("tasks.tb");
    let shards = shard_dir(&shared, start);
    let mut quiet = |_: &str| {};
    let replies = {
        let mut coordinator = QubicCoordinator::open(&db, start, &shared).unwrap();
        // A second coordinator on the file is refused while this one holds it.
        assert!(QubicCoordinator::open(&db, start, &shared).is_err());
        let tasks = coordinator.tasks();
        assert!(tasks.len() > 4, "{} replies", tasks.len());
        // Two replies stored, a third written but not stored, a fourth written and damaged.
        for task in &tasks[..2] {
            let report = run_reply(start, task.reply, MEMORY, 3, &shards, &mut quiet).unwrap();
            assert_eq!(report.outcome, TaskOutcome::Computed);
            coordinator.record(task.reply).unwrap();
        }
        run_reply(start, tasks[2].reply, MEMORY, 3, &shards, &mut quiet).unwrap();
        let damaged = tasks[3].reply;
        run_reply(start, damaged, MEMORY, 3, &shards, &mut quiet).unwrap();
        let path = shards.path(&BlockId {
            layer: 0,
            key: vec![damaged],
        });
        flip(&path, -3);
        let error = coordinator.record(damaged).unwrap_err();
        let shard = error
            .chain()
            .find_map(|e| e.downcast_ref::<ShardError>())
            .expect("a shard error");
        assert_eq!(shard.kind, ShardErrorKind::Damaged);
        tasks
    };
    let mut coordinator = QubicCoordinator::open(&db, start, &shared).unwrap();
    assert_eq!(coordinator.resumed_replies(), 2);
    let left = coordinator.tasks();
    assert_eq!(left.len(), replies.len() - 2);
    let mut outcomes = Vec::new();
    for task in &left {
        let report = run_reply(start, task.reply, MEMORY, 3, &shards, &mut quiet).unwrap();
        outcomes.push((task.reply, report.outcome));
        coordinator.record(task.reply).unwrap();
    }
    assert!(outcomes.contains(&(replies[2].reply, TaskOutcome::Reused)));
    assert!(outcomes.contains(&(replies[3].reply, TaskOutcome::Recomputed)));
    assert!(!outcomes.iter().any(|&(r, _)| r == replies[0].reply));
    let summary = coordinator.finish().unwrap();
    assert!(summary.complete);
    assert!(!shards.root().exists(), "the shards are gone");
    let verified = run_ok(tb().args(["verify", "--db"]).arg(&db), "verify");
    assert!(String::from_utf8_lossy(&verified.stdout).contains("OK"));
    // The same replies as the local build, in its order.
    let info = |db: &Path| -> serde_json::Value {
        serde_json::from_slice(
            &run_ok(tb().args(["info", "--json", "--db"]).arg(db), "info").stdout,
        )
        .unwrap()
    };
    let replies_of = |v: &serde_json::Value| -> Vec<String> {
        let mut keys: Vec<String> = v["blocks_stored"]
            .as_object()
            .expect("blocks_stored")
            .keys()
            .cloned()
            .collect();
        keys.sort();
        keys
    };
    let (a, b) = (info(&local), info(&db));
    assert_eq!(replies_of(&a), replies_of(&b));
    assert_eq!(a["start"], b["start"]);
}

#[test]
fn a_batch_of_records_is_one_transaction_and_a_failed_one_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = local(dir.path(), "3x3.tb", &["3x3", "--book-lines", "4"]);
    let kernel = kernel_of(&a);
    let b = dir.path().join("d.tb");
    let shared = dir.path().join("shared");
    let shards = ShardDir::new(&shared, kernel.format());
    let ids = |c: &Coordinator| -> Vec<BlockId> {
        c.tasks()
            .into_iter()
            .map(|t| BlockId {
                layer: t.layer,
                key: t.key,
            })
            .collect()
    };
    {
        let mut coordinator = Coordinator::open(&b, kernel, &shared).unwrap();
        let all = ids(&coordinator);
        for id in &all {
            run_block(kernel, &shards, id).unwrap();
        }
        // The last block's shard damaged: the batch (given in reverse, recorded in
        // build order) fails there, after every other block was recorded in it.
        let last = all.last().unwrap().clone();
        std::fs::write(shards.path(&last), b"not a shard").unwrap();
        let reversed: Vec<BlockId> = all.iter().rev().cloned().collect();
        let error = coordinator.record_many(&reversed).unwrap_err();
        assert!(
            error
                .chain()
                .any(|e| e.downcast_ref::<ShardError>().is_some()),
            "{error:#}"
        );
        // Nothing of it is in the file, no shard was deleted, and this coordinator
        // records no more.
        assert!(
            Store::open_read(&b)
                .unwrap()
                .block_rows()
                .unwrap()
                .is_empty()
        );
        assert!(
            all[..all.len() - 1]
                .iter()
                .all(|id| shards.path(id).exists())
        );
        let again = coordinator.record_many(&all[..1]).unwrap_err();
        assert!(
            format!("{again:#}").contains("open the file again"),
            "{again:#}"
        );
    }
    // Opened again: every block is a task again; the damaged one is computed again,
    // the others' shards are taken as they are, and one batch records them all.
    let mut coordinator = Coordinator::open(&b, kernel, &shared).unwrap();
    let all = ids(&coordinator);
    let outcomes: Vec<TaskOutcome> = all
        .iter()
        .map(|id| run_block(kernel, &shards, id).unwrap().outcome)
        .collect();
    assert_eq!(
        outcomes
            .iter()
            .filter(|o| **o == TaskOutcome::Reused)
            .count(),
        all.len() - 1
    );
    let recorded = coordinator.record_many(&all).unwrap();
    assert_eq!(recorded.len(), all.len());
    let published: usize = recorded.iter().map(|r| r.published.len()).sum();
    assert!(published > 0, "layers published within the batch");
    coordinator.finish().unwrap();
    assert_same_file(&a, &b);
}
