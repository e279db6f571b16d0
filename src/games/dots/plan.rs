//! `tb build --plan`: what a build will do, without doing it: groups, blocks per
//! layer, largest block, predicted peak memory, disk and time; with `--workers N`,
//! what a distributed build (each block a task, `python -m tb.dask`) moves and how
//! long it takes on N workers ([`Cluster`], [`DistributedPlan`]).

use super::spec::Spec;
use serde::Serialize;

/// Stored bits per position assumed for disk predictions (3x4 measures 1.85,
/// 2x5 2.26: see the README's benchmark table).
pub const ASSUMED_BITS_PER_POSITION: f64 = 2.5;

/// Stored positions per second per core assumed for time predictions: 4x4 with
/// corners measured 148 M/s on 2 cores (162 M/s since, with the boxes-left form:
/// the README's benchmark table); 3x5 goes faster, so bigger boards are predicted
/// from the biggest.
pub const ASSUMED_POSITIONS_PER_CORE_SECOND: f64 = 74e6;

/// A build plan.
#[derive(Debug, Serialize)]
pub struct Plan {
    /// Board, `RxC`.
    pub board: String,
    /// Lines free at the start.
    pub free_lines: usize,
    /// Line names per group.
    pub groups: Vec<Vec<String>>,
    /// Layers with at most this many lines are kept.
    pub book_lines: usize,
    /// Per layer, from the full board down to the start.
    pub layers: Vec<LayerPlan>,
    /// `none` or `wilson`.
    pub symmetry: String,
    /// Board symmetries in use (1: none; they must map every group onto itself).
    pub symmetries: usize,
    /// Whether corner pairs are reduced.
    pub corners: bool,
    /// Positions over all layers without any reduction.
    pub raw_positions: u64,
    /// Positions stored over all layers.
    pub total_positions: u64,
    /// Bytes of the largest block plus the child blocks it needs.
    pub peak_block_bytes: u64,
    /// Predicted peak memory for values: the largest block and its children, plus the
    /// blocks kept between layers (each side capped at a quarter of the budget).
    pub predicted_memory_bytes: u64,
    /// Predicted peak disk: the two largest consecutive layers plus the book, at
    /// [`ASSUMED_BITS_PER_POSITION`].
    pub predicted_disk_bytes: u64,
    /// Predicted size of the finished file (the book).
    pub predicted_book_bytes: u64,
    /// The `--memory` budget planned for.
    pub memory_bytes: u64,
    /// This machine's memory (null when unknown): a plan whose budget exceeds it is
    /// for a bigger machine, and a build here is refused.
    pub machine_memory_bytes: Option<u64>,
    /// Worker threads the prediction assumes (one per core).
    pub threads: usize,
    /// Predicted wall time: every stored position at
    /// [`ASSUMED_POSITIONS_PER_CORE_SECOND`] per thread.
    pub predicted_seconds: f64,
    /// The distributed build on `--workers N` (absent without).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distributed: Option<DistributedPlan>,
}

/// The workers a distributed plan is for.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Cluster {
    /// Worker processes, one thread each (a block task at a time).
    pub workers: usize,
    /// Cores the workers share: `workers` on a cluster of one core per worker,
    /// fewer when workers share a machine's cores (a `--local 4` on 2 cores).
    pub cores: usize,
    /// Stored positions a task computes per second on a core of its own.
    pub positions_per_core_second: f64,
}

impl Cluster {
    /// `workers` on `cores` at [`ASSUMED_POSITIONS_PER_CORE_SECOND`].
    pub fn new(workers: usize, cores: usize) -> Cluster {
        Cluster {
            workers: workers.max(1),
            cores: cores.max(1),
            positions_per_core_second: ASSUMED_POSITIONS_PER_CORE_SECOND,
        }
    }

    /// Blocks that make progress at once: a worker runs one block at a time, on
    /// at most one core.
    pub fn parallel(&self) -> usize {
        self.workers.min(self.cores)
    }

    /// Seconds for a layer of `positions` whose largest block has `largest`: not
    /// less than its largest block on one core, nor than its work shared out over
    /// [`Cluster::parallel`] cores; and which of the two it is.
    pub fn layer_seconds(&self, positions: u64, largest: u64) -> (f64, Bound) {
        let rate = self.positions_per_core_second;
        let block = largest as f64 / rate;
        let work = positions as f64 / (rate * self.parallel() as f64);
        if block > work {
            (block, Bound::LargestBlock)
        } else {
            (work, Bound::Work)
        }
    }
}

/// What bounds a layer's predicted time ([`Cluster::layer_seconds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Its largest block, on one core.
    LargestBlock,
    /// Its work over the cores.
    Work,
}

/// A distributed build's plan (`--plan --workers N`): each block a task that
/// reads its inputs' shards and writes its own, layers one after another, shard
/// sizes at [`ASSUMED_BITS_PER_POSITION`].
///
/// The model ignores the coordinator's time (recording blocks, merging the
/// book), shared storage and network bandwidth (bytes moved are counted, not
/// timed) and task start-up, which make it a lower bound; and the overlap of
/// layers (a block runs once its inputs exist, so the next layer starts while
/// a layer's last blocks run), which makes the sum over layers an upper bound
/// where a layer ends on one large block.
#[derive(Debug, Serialize)]
pub struct DistributedPlan {
    /// The workers planned for.
    pub cluster: Cluster,
    /// Per layer, from the full board down to the start.
    pub layers: Vec<DistributedLayer>,
    /// Predicted wall time: the layers' predicted seconds summed.
    pub predicted_seconds: f64,
    /// Core-seconds of work: every stored position at the cluster's rate.
    pub work_seconds: f64,
    /// Bytes the tasks read from shards and write, over all layers.
    pub moved_bytes: u64,
    /// Predicted peak of the shared directory: the shards of two neighbouring
    /// layers (the layer being computed and the layer it reads; a shard goes once
    /// no remaining block reads it, so the layer before is gone when a layer
    /// ends). The kept book layers go into the `.tb` file as their blocks finish
    /// ([`Plan::predicted_book_bytes`] on the coordinator's disk).
    pub peak_shared_bytes: u64,
}

/// One layer of a [`DistributedPlan`].
#[derive(Debug, Serialize)]
pub struct DistributedLayer {
    /// Lines drawn.
    pub n: usize,
    /// Blocks (tasks).
    pub blocks: u64,
    /// Bytes of the layer's shards.
    pub shard_bytes: u64,
    /// Bytes its tasks read: the shards of the blocks each block reads.
    pub read_bytes: u64,
    /// Bytes moved: read plus written (its shards).
    pub moved_bytes: u64,
    /// Predicted seconds ([`Cluster::layer_seconds`]).
    pub predicted_seconds: f64,
    /// What bounds it: `largest_block` or `work` (over the cores).
    pub bound: Bound,
}

/// One layer of a plan.
#[derive(Debug, Serialize)]
pub struct LayerPlan {
    /// Lines drawn.
    pub n: usize,
    /// Positions.
    pub positions: u64,
    /// Blocks.
    pub blocks: u64,
    /// Positions of its largest block.
    pub largest_block: u64,
}

fn stored_bytes(positions: u64) -> u64 {
    (positions as f64 * ASSUMED_BITS_PER_POSITION / 8.0).ceil() as u64
}

/// Plans a build of `spec` within `memory` bytes on `threads` cores, and when
/// `cluster` is given its distributed build there.
pub fn plan(spec: &Spec, memory: u64, threads: usize, cluster: Option<Cluster>) -> Plan {
    let layout = spec.layout();
    let first = layout.start_lines();
    let full = layout.full_layer();
    let layers: Vec<LayerPlan> = (first..=full)
        .rev()
        .map(|n| {
            let (blocks, largest_block) = layout.layer_blocks_summary(n);
            LayerPlan {
                n,
                positions: layout.layer_size(n),
                blocks,
                largest_block,
            }
        })
        .collect();
    let size = |n: usize| layers.iter().find(|l| l.n == n).map_or(0, |l| l.positions);
    let peak_block_bytes = spec.peak_block_bytes(&layout);
    let kept = (first..full)
        .map(|n| size(n).min(memory / 4) + size(n + 1).min(memory / 4))
        .max()
        .unwrap_or(0);
    let book: u64 = (first..=full.min(spec.book_lines))
        .map(|n| stored_bytes(size(n)))
        .sum();
    let busiest = (first..full)
        .map(|n| stored_bytes(size(n)) + stored_bytes(size(n + 1)))
        .max()
        .unwrap_or(0);
    let total_positions: u64 = layers.iter().map(|l| l.positions).sum();
    let distributed = cluster.map(|cluster| {
        let layers: Vec<DistributedLayer> = layers
            .iter()
            .map(|l| {
                let shard_bytes = stored_bytes(l.positions);
                let read_bytes = stored_bytes(layout.layer_read_positions(l.n));
                let (predicted_seconds, bound) =
                    cluster.layer_seconds(l.positions, l.largest_block);
                DistributedLayer {
                    n: l.n,
                    blocks: l.blocks,
                    shard_bytes,
                    read_bytes,
                    moved_bytes: shard_bytes + read_bytes,
                    predicted_seconds,
                    bound,
                }
            })
            .collect();
        DistributedPlan {
            cluster,
            predicted_seconds: layers.iter().map(|l| l.predicted_seconds).sum(),
            work_seconds: total_positions as f64 / cluster.positions_per_core_second,
            moved_bytes: layers.iter().map(|l| l.moved_bytes).sum(),
            peak_shared_bytes: busiest,
            layers,
        }
    });
    Plan {
        board: spec.board.to_string(),
        free_lines: layout.free_lines(),
        groups: spec
            .groups
            .iter()
            .map(|g| g.iter().map(|&l| spec.board.line_name(l)).collect())
            .collect(),
        book_lines: spec.book_lines,
        symmetry: spec.symmetry_name().to_string(),
        symmetries: layout.symmetries(),
        corners: layout.has_corners(),
        raw_positions: layout.raw_positions(),
        total_positions,
        layers,
        peak_block_bytes,
        predicted_memory_bytes: peak_block_bytes + kept,
        predicted_disk_bytes: busiest + book,
        predicted_book_bytes: book,
        memory_bytes: memory,
        machine_memory_bytes: crate::sys::total_memory_bytes(),
        threads,
        predicted_seconds: total_positions as f64
            / (ASSUMED_POSITIONS_PER_CORE_SECOND * threads.max(1) as f64),
        distributed,
    }
}

/// Human-readable plan.
pub fn plan_text(p: &Plan) -> String {
    use crate::units::human_bytes;
    let mut s = format!(
        "plan for {}: {} free lines, {} positions, book <= {} lines\n",
        p.board, p.free_lines, p.total_positions, p.book_lines
    );
    s += &format!(
        "symmetry {} ({}), corners {}: {:.2}x fewer positions than all {}\n",
        p.symmetry,
        crate::units::counted(p.symmetries, "symmetry", "symmetries"),
        if p.corners { "on" } else { "off" },
        p.raw_positions as f64 / p.total_positions.max(1) as f64,
        p.raw_positions
    );
    for (i, g) in p.groups.iter().enumerate() {
        s += &format!("group {} ({} lines): {}\n", i + 1, g.len(), g.join(" "));
    }
    s += &format!(
        "largest block + children {}, predicted memory {}, predicted peak disk {} (at {ASSUMED_BITS_PER_POSITION} bits/position), book {}\n",
        human_bytes(p.peak_block_bytes),
        human_bytes(p.predicted_memory_bytes),
        human_bytes(p.predicted_disk_bytes),
        human_bytes(p.predicted_book_bytes)
    );
    if let Some(machine) = p.machine_memory_bytes.filter(|&m| p.memory_bytes > m) {
        s += &format!(
            "--memory {} is more than this machine's {}: a plan for a bigger machine (a build here is refused)\n",
            human_bytes(p.memory_bytes),
            human_bytes(machine)
        );
    }
    s += &format!(
        "predicted time {} on {} cores (at {:.0} M stored positions/s per core, as 4x4+corners measured)\n",
        crate::units::human_seconds(p.predicted_seconds),
        p.threads,
        ASSUMED_POSITIONS_PER_CORE_SECOND / 1e6
    );
    if let Some(d) = &p.distributed {
        return s + &distributed_text(p, d);
    }
    s += "    n      positions  blocks  largest block\n";
    for l in &p.layers {
        s += &format!(
            "{:>5} {:>14} {:>7} {:>14}\n",
            l.n, l.positions, l.blocks, l.largest_block
        );
    }
    s
}

/// The distributed part of [`plan_text`]: its totals, the model, and the layer
/// table with shard bytes, bytes moved and predicted time.
fn distributed_text(p: &Plan, d: &DistributedPlan) -> String {
    use crate::units::{counted, human_bytes, human_seconds};
    let c = &d.cluster;
    let cores = if c.cores >= c.workers {
        "a core each".to_string()
    } else {
        format!("sharing {}", counted(c.cores, "core", "cores"))
    };
    let mut s = format!(
        "distributed on {} ({cores}, {:.0} M stored positions/s per core): predicted {}, {} of work; {} moved ({}/s on average), peak shared disk {} (+ book {} in the .tb)\n",
        counted(c.workers, "worker", "workers"),
        c.positions_per_core_second / 1e6,
        human_seconds(d.predicted_seconds),
        human_seconds(d.work_seconds),
        human_bytes(d.moved_bytes),
        human_bytes((d.moved_bytes as f64 / d.predicted_seconds.max(1.0)) as u64),
        human_bytes(d.peak_shared_bytes),
        human_bytes(p.predicted_book_bytes)
    );
    s += &format!(
        "model: layers one after another, each at least its largest block on a core and its work over {}; \
         ignores the coordinator's record time, storage and network bandwidth (bytes moved are not timed), \
         and the overlap of layers (a block starts once its inputs exist)\n",
        counted(c.parallel(), "core", "cores")
    );
    s += "    n      positions  blocks  largest block      shards       moved   predicted\n";
    for (l, dl) in p.layers.iter().zip(&d.layers) {
        s += &format!(
            "{:>5} {:>14} {:>7} {:>14} {:>11} {:>11} {:>11}{}\n",
            l.n,
            l.positions,
            l.blocks,
            l.largest_block,
            human_bytes(dl.shard_bytes),
            human_bytes(dl.moved_bytes),
            human_seconds(dl.predicted_seconds),
            if dl.bound == Bound::LargestBlock {
                " (largest block)"
            } else {
                ""
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::dots::board::Board;
    use crate::games::dots::groups::symmetric_groups;
    use crate::games::dots::groups::{auto_groups, default_book_lines, peak_block_bytes};

    /// The spec of an empty-board build of `board` in `groups`, with the default
    /// book.
    fn spec_of(board: Board, groups: Vec<Vec<usize>>, symmetry: bool, corners: bool) -> Spec {
        let mut spec = Spec {
            board,
            start_name: "empty".into(),
            start: 0,
            penalty: 0,
            groups,
            book_lines: 0,
            chunk_positions: 1 << 16,
            symmetry,
            corners,
            loony: false,
            chains: Default::default(),
            boxes_left_form: true,
            packed_format: false,
            codings: crate::store::codec::Family::Zstd,
        };
        spec.book_lines = default_book_lines(&spec.layout());
        spec
    }

    /// Small specs of every kind: boards 2x2, 2x3 and 3x3, plain, with symmetry,
    /// with corners, in two and three groups.
    fn small_specs() -> Vec<Spec> {
        let mut out = Vec::new();
        for (rows, cols) in [(2, 2), (2, 3), (3, 3)] {
            let board = Board::new(rows, cols).unwrap();
            for memory in [1u64 << 10, 1 << 14] {
                for (symmetry, corners) in [(false, false), (true, false), (true, true)] {
                    let groups = if symmetry || corners {
                        symmetric_groups(&board, 0, memory, symmetry, corners)
                    } else {
                        auto_groups(&board, 0, memory)
                    };
                    out.push(spec_of(board, groups, symmetry, corners));
                }
            }
        }
        out
    }

    #[test]
    fn bytes_moved_are_the_blocks_reads_summed_one_by_one() {
        use crate::retro::Kernel;
        let mut groups_seen = std::collections::BTreeSet::new();
        for spec in small_specs() {
            let layout = spec.layout();
            groups_seen.insert(layout.groups.len());
            let completion = spec.board.completion_masks();
            let kernel = crate::games::dots::build::DotsKernel::new(&spec, &layout, &completion);
            let p = plan(&spec, 1 << 30, 2, Some(Cluster::new(3, 3)));
            let d = p.distributed.as_ref().unwrap();
            assert_eq!(d.layers.len(), p.layers.len());
            let mut moved = 0;
            for (l, dl) in p.layers.iter().zip(&d.layers) {
                let (mut reads, mut blocks, mut written) = (0u64, 0u64, 0u64);
                for key in layout.blocks_of_layer(l.n) {
                    blocks += 1;
                    written += layout.block_size(&key);
                    for input in kernel.reads(l.n, &key) {
                        assert_eq!(input.layer, l.n + 1);
                        reads += layout.block_size(&input.key);
                    }
                }
                let what = format!("{} {:?} layer {}", spec.board, layout.sizes(), l.n);
                assert_eq!(layout.layer_read_positions(l.n), reads, "{what}");
                assert_eq!((dl.n, dl.blocks), (l.n, blocks), "{what}");
                assert_eq!(dl.shard_bytes, stored_bytes(written), "{what}");
                assert_eq!(dl.read_bytes, stored_bytes(reads), "{what}");
                assert_eq!(dl.moved_bytes, dl.read_bytes + dl.shard_bytes, "{what}");
                moved += dl.moved_bytes;
            }
            assert_eq!(d.moved_bytes, moved);
            // The full board reads nothing; every other layer reads something.
            assert_eq!(d.layers[0].read_bytes, 0);
            assert!(d.layers[1..].iter().all(|l| l.read_bytes > 0));
        }
        assert!(groups_seen.len() >= 2, "{groups_seen:?}");
    }

    #[test]
    fn one_worker_takes_all_the_work_and_more_workers_are_never_slower() {
        for spec in small_specs().into_iter().chain([
            spec_of(
                Board::new(3, 5).unwrap(),
                symmetric_groups(&Board::new(3, 5).unwrap(), 0, 12 << 30, true, true),
                true,
                true,
            ),
            spec_of(
                Board::new(4, 5).unwrap(),
                symmetric_groups(&Board::new(4, 5).unwrap(), 0, 20 << 30, true, true),
                true,
                true,
            ),
        ]) {
            let what = format!("{} {:?}", spec.board, spec.groups);
            let rate = ASSUMED_POSITIONS_PER_CORE_SECOND;
            let one = plan(&spec, 1 << 30, 2, Some(Cluster::new(1, 1)));
            let d = one.distributed.unwrap();
            let all = one.total_positions as f64 / rate;
            assert!((d.predicted_seconds - all).abs() <= 1e-9 * all, "{what}");
            assert!((d.work_seconds - all).abs() <= 1e-9 * all, "{what}");
            let mut last = f64::INFINITY;
            for workers in [1, 2, 3, 4, 7, 16, 64, 256, 1 << 20] {
                let p = plan(&spec, 1 << 30, 2, Some(Cluster::new(workers, workers)));
                let d = p.distributed.as_ref().unwrap();
                assert!(d.predicted_seconds <= last, "{what}: {workers} workers");
                last = d.predicted_seconds;
                assert!(d.predicted_seconds >= all / workers as f64 * (1.0 - 1e-9));
                for (l, dl) in p.layers.iter().zip(&d.layers) {
                    // Never below its largest block, nor its work over the workers.
                    let block = l.largest_block as f64 / rate;
                    let work = l.positions as f64 / (rate * workers as f64);
                    assert!(dl.predicted_seconds >= block, "{what}: layer {}", l.n);
                    assert!(dl.predicted_seconds >= work, "{what}: layer {}", l.n);
                    assert_eq!(dl.predicted_seconds, block.max(work), "{what}");
                }
                // Workers beyond the cores add nothing.
                let shared = plan(&spec, 1 << 30, 2, Some(Cluster::new(workers * 2, workers)));
                let shared = shared.distributed.unwrap();
                assert_eq!(shared.predicted_seconds, d.predicted_seconds, "{what}");
            }
            // So many workers that every layer waits on its largest block.
            let wide = plan(&spec, 1 << 30, 2, Some(Cluster::new(1 << 40, 1 << 40)));
            let wide = wide.distributed.unwrap();
            assert!(wide.layers.iter().all(|l| l.bound == Bound::LargestBlock));
            let largest: f64 = one
                .layers
                .iter()
                .map(|l| l.largest_block as f64 / rate)
                .sum();
            assert!((wide.predicted_seconds - largest).abs() <= 1e-9 * largest);
        }
    }

    #[test]
    fn peak_shared_disk_is_the_busiest_two_neighbouring_layers() {
        for spec in small_specs() {
            let p = plan(&spec, 1 << 30, 2, Some(Cluster::new(4, 4)));
            let d = p.distributed.as_ref().unwrap();
            let pairs = d
                .layers
                .windows(2)
                .map(|w| w[0].shard_bytes + w[1].shard_bytes);
            assert_eq!(Some(d.peak_shared_bytes), pairs.max());
            assert_eq!(
                d.peak_shared_bytes + p.predicted_book_bytes,
                p.predicted_disk_bytes
            );
        }
    }

    #[test]
    fn without_workers_the_plan_is_as_before() {
        let spec = small_specs().pop().unwrap();
        let p = plan(&spec, 1 << 30, 2, None);
        let json = serde_json::to_value(&p).unwrap();
        assert!(json.get("distributed").is_none());
        let text = plan_text(&p);
        assert!(text.contains("\n    n      positions  blocks  largest block\n"));
        assert!(text.ends_with(&format!("\n{:>5} {:>14} {:>7} {:>14}\n", 0, 1, 1, 1)));
        assert!(!text.contains("distributed"), "{text}");
        let with = plan(&spec, 1 << 30, 2, Some(Cluster::new(4, 2)));
        let text = plan_text(&with);
        assert!(
            text.contains("distributed on 4 workers (sharing 2 cores"),
            "{text}"
        );
        assert!(plan_text(&with).starts_with(plan_text(&p).split("    n ").next().unwrap()));
        let json = serde_json::to_value(&with).unwrap();
        assert_eq!(json["distributed"]["cluster"]["workers"], 4);
        assert_eq!(json["distributed"]["layers"][0]["bound"], "largest_block");
    }

    #[test]
    fn plans_for_every_board_up_to_5x5_fit_their_budget() {
        for rows in 1..=5 {
            for cols in 1..=5 {
                let board = Board::new(rows, cols).unwrap();
                for memory in [256u64 << 20, 1 << 30, 8 << 30] {
                    for (symmetry, corners) in [(false, false), (true, false), (true, true)] {
                        let groups = if symmetry || corners {
                            symmetric_groups(&board, 0, memory, symmetry, corners)
                        } else {
                            auto_groups(&board, 0, memory)
                        };
                        let what = format!("{board} {memory} {symmetry} {corners}");
                        let mut lines: Vec<usize> = groups.iter().flatten().copied().collect();
                        lines.sort_unstable();
                        assert_eq!(lines, (0..board.num_lines()).collect::<Vec<_>>(), "{what}");
                        assert!(
                            groups.iter().all(|g| !g.is_empty() && g.len() <= 16),
                            "{what}"
                        );
                        let spec = spec_of(board, groups, symmetry, corners);
                        let p = plan(&spec, memory, 2, None);
                        // Up to 40 lines (4x4) every budget fits; bigger boards need
                        // more memory.
                        if board.num_lines() <= 40 {
                            assert!(
                                p.peak_block_bytes <= memory / 4,
                                "{what}: {}",
                                p.peak_block_bytes
                            );
                            assert!(p.predicted_memory_bytes <= memory, "{what}");
                        }
                        assert_eq!(p.peak_block_bytes, peak_block_bytes(&spec.layout()));
                        assert_eq!(p.raw_positions, 1u64 << board.num_lines());
                        if symmetry || corners {
                            assert!(p.total_positions <= p.raw_positions, "{what}");
                        } else {
                            assert_eq!(p.total_positions, p.raw_positions, "{what}");
                        }
                    }
                }
            }
        }
    }
}
