"""Distributed builds on Dask.

``python -m tb.dask build GAME [tb build options] (--local N | --scheduler ADDRESS)
--shared DIR --db FILE [--json]``

This process is the coordinator: the only one that opens the ``.tb`` file (locked,
as ``tb build`` locks it). Every block not recorded in the file yet is a Dask task
(``run_task``) that depends on the tasks of the blocks it reads, so a block runs as
soon as its inputs are written (Dots-and-Boxes layers overlap, Morris table pairs
form a DAG). A task reads its inputs' shard files under ``--shared``, computes its
block with the Rust kernel and writes its own shard; only the block's key, the
shared directory and a small report travel through Dask. The coordinator records
each finished block in the file in a transaction (the kept layers' chunks merged),
deletes shards no remaining block reads and publishes layers in build order.

Faults: Dask runs a lost worker's tasks again (``--retries`` more times for other
failures); a task whose shard is already whole does nothing, so rerunning the same
command after the coordinator died resumes where the file says, recomputing nothing
that was finished; a shard found damaged is computed again, never recorded.

Qubic (``build qubic``): each O reply to the start is a task (``run_qubic_task``)
with a prover of its own, no task waiting for another; the coordinator stores each
reply's strategy from its shard and finishes the file as ``tb build qubic`` does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import time
import uuid
from pathlib import Path

from .tb import _dask as _core


#: The Dask resource a worker's memory share is declared as.
MEMORY_RESOURCE = "MEMORY"

BuildError = _core.BuildError
ShardError = _core.ShardError
Coordinator = _core.Coordinator
QubicCoordinator = _core.QubicCoordinator


def parse_size(text: str) -> int:
    """A size like ``12GiB``, ``500M``, ``2e9`` in bytes (K, M, G, T: powers of 1024)."""
    match = re.fullmatch(r"\s*([0-9.eE+]+)\s*([kKmMgGtT]?)(i?[bB])?\s*", text)
    if not match:
        raise ValueError(f"not a size: {text!r} (e.g. 8GiB, 512M)")
    number = float(match.group(1))
    power = "kmgt".find(match.group(2).lower()) + 1 if match.group(2) else 0
    return int(number * 1024**power)


def _markers(root: Path) -> Path:
    return root / ".running"


def _worker_name() -> str:
    from distributed import get_worker

    try:
        return str(get_worker().name)
    except ValueError:  # run outside a worker (tests)
        return "local"


def _run_marked(root: str, stem: str, work) -> str:
    """Runs ``work()`` (a Rust task: its report as JSON text) with a marker file
    under ``root`` naming the task ``stem``: a marker left by an earlier attempt
    means that attempt was lost with its worker. Returns the report with the
    worker's name and whether there was such an attempt (``rerun``)."""
    markers = _markers(Path(root))
    markers.mkdir(parents=True, exist_ok=True)
    earlier = list(markers.glob(f"{stem}.*"))
    mine = markers / f"{stem}.{os.getpid()}.{time.time_ns()}"
    mine.touch()
    try:
        report = json.loads(work())
    finally:
        mine.unlink(missing_ok=True)
    for marker in earlier:
        marker.unlink(missing_ok=True)
    report["worker"] = _worker_name()
    report["rerun"] = bool(earlier)
    return json.dumps(report)


def run_task(identity: str, shared: str, root: str, layer: int, key: list[int], threads: int, input_cache: int, *_inputs) -> str:
    """One block task on a worker (``_inputs``: the results of the tasks of the
    blocks it reads, which Dask waits for; ``input_cache``: bytes of decoded inputs
    the worker keeps for its next tasks). Returns the Rust task report (JSON text)
    with the worker's name, and whether an earlier attempt of this block was lost
    with its worker (a marker it left behind)."""
    stem = f"{layer}-{'.'.join(map(str, key))}"
    return _run_marked(root, stem, lambda: _core.run_block(identity, shared, layer, key, threads, input_cache))


def run_qubic_task(start: str, shared: str, root: str, reply: int, memory: int, shrink: int) -> str:
    """One Qubic reply task on a worker: proves O's reply ``reply`` to ``start``
    with ``memory`` bytes of tables into its shard. Returns the Rust report (JSON
    text) with the worker's name and whether an earlier attempt was lost."""
    return _run_marked(root, f"q-{reply}", lambda: _core.run_qubic_reply(start, shared, reply, memory, shrink))


def _tally_worker(summary: dict, report: dict) -> None:
    """Adds a task's seconds to its worker's in the summary."""
    worker = report["worker"]
    summary["worker_seconds"][worker] = summary["worker_seconds"].get(worker, 0.0) + report["seconds"]


class Progress:
    """Tasks done / total, positions/s, ETA on stderr every few seconds (or
    nothing). ``positions``: all the build's positions, which the ETA is reckoned
    by (None: by tasks, for Qubic's replies whose sizes are known only once
    proven)."""

    def __init__(self, tasks: int, positions: int | None, quiet: bool, unit: str = "blocks", every: float = 2.0):
        self.tasks, self.positions, self.quiet, self.unit, self.every = tasks, positions, quiet, unit, every
        self.done_tasks = self.done_positions = self.computed_positions = 0
        self.started = self.last = time.monotonic()
        self.tty = sys.stderr.isatty()

    def advance(self, report: dict, published: list[str] = ()) -> None:
        self.done_tasks += 1
        self.done_positions += report["positions"]
        if report["outcome"] != "reused":
            self.computed_positions += report["positions"]
        now = time.monotonic()
        if self.quiet or (now - self.last < self.every and self.done_tasks < self.tasks):
            return
        self.last = now
        elapsed = now - self.started
        if self.positions is None:
            eta = elapsed / self.done_tasks * (self.tasks - self.done_tasks)
            rate = ""
        else:
            eta = (self.positions - self.done_positions) / max(self.done_positions / max(elapsed, 1e-9), 1.0)
            rate = f"{self.computed_positions / max(elapsed, 1e-9) / 1e6:.1f} M positions/s, "
        line = (
            f"tb.dask: {self.unit} {self.done_tasks}/{self.tasks}, {rate}eta {eta:.0f} s"
            + (f", published {published[-1]}" if published else "")
        )
        print(("\r" + line + "\x1b[K") if self.tty else line, file=sys.stderr, end="" if self.tty else "\n", flush=True)

    def finish(self) -> None:
        if self.tty and not self.quiet:
            print(file=sys.stderr)


def _release(future, released: set) -> None:
    """Lets Dask forget a recorded task's result, noting its key in ``released``."""
    future.release()
    released.add(future.key)


def _cancel_unreleased(futures, released: set) -> None:
    """Cancels the futures of a stopped run but those ``released``: cancelling a
    key its client released trips an assertion of Dask's scheduler (``assert
    ts.who_wants`` in ``stimulus_cancel``) that drops the client's connection, and
    the next build on that client fails."""
    for future in futures:
        if future.key not in released:
            future.cancel()


def memory_need(task: dict, identity: dict) -> int:
    """Bytes a block task holds: its inputs and its block (3 bytes a position in a
    loony Dots-and-Boxes build, whose kernel works on move keys)."""
    per_position = 3 if identity.get("loony") == "true" else 1
    return task["positions"] * per_position + task["input_bytes"]


def _block_key(task: dict) -> tuple[int, tuple[int, ...]]:
    return task["layer"], tuple(task["key"])


def build(options: argparse.Namespace, client=None, on_record=None) -> dict:
    """Runs (or resumes) a distributed build; returns its summary. ``client``: a
    connected ``distributed.Client`` (else one is made from ``options``);
    ``on_record(summary_so_far)`` is called after each block is recorded (tests
    use it to kill workers mid-build)."""
    from distributed import as_completed

    if options.game == "qubic":
        return build_qubic(options, client, on_record)
    started = time.monotonic()
    game = "morris" if options.game == "morris" else "dots"
    memory = parse_size(options.memory) if options.memory else _core.default_memory(game)
    shared = Path(options.shared).resolve()
    shared.mkdir(parents=True, exist_ok=True)
    db = Path(options.db)
    identity_text = _core.build_identity(
        options.game,
        db,
        memory=memory,
        start=options.start,
        penalty=options.penalty,
        book_lines=options.book_lines,
        groups=options.groups,
        chunk=options.chunk,
        symmetry=None if options.symmetry is None else options.symmetry != "none",
        corners=True if options.corners else (False if options.no_corners else None),
        loony=options.loony,
        stones=options.stones,
        phase=options.phase,
        rules=options.rules,
    )
    identity = json.loads(identity_text)
    # The open coordinator (a run that finds a damaged shard opens the file again).
    state = {"coordinator": Coordinator(db, identity_text, shared)}
    try:
        with _connected(options, memory, client) as connected:
            summary = _run(options, connected, state, identity, identity_text, shared, on_record, as_completed)
        final = json.loads(state["coordinator"].finish())
    except BaseException:
        state["coordinator"].close()
        raise
    summary.update(final)
    summary["seconds"] = time.monotonic() - started
    summary["positions_per_second"] = summary["computed_positions"] / max(summary["seconds"], 1e-9)
    if game == "dots":
        from . import open as open_table

        with open_table(str(db)) as table:
            answer = table.probe(identity["start_position"], moves=False)
        summary["start_value"] = answer["value"]
        if "loony" in answer:
            summary["loony"] = answer["loony"]
    return summary


@contextlib.contextmanager
def _connected(options, memory: int, client=None):
    """The client to run on: ``client`` when given, else one to ``--scheduler`` or
    to a LocalCluster of ``--local`` workers (``memory`` shared out as their
    MEMORY resource), closed on leaving. Waits for ``--min-workers`` workers: a
    cluster's MEMORY shares are read when the build starts."""
    from distributed import Client, LocalCluster

    if client is not None:
        yield client
        return
    cluster = None
    if options.scheduler:
        client = Client(options.scheduler)
    else:
        import logging

        import dask

        # The workers' statistical profiler (sampling every task thread every 10 ms
        # on the worker's event loop, for the dashboard) cost a 3x5 build on 2
        # cores several CPU-seconds that the tasks wanted.
        with dask.config.set({"distributed.worker.profile.enabled": False}):
            cluster = LocalCluster(
                n_workers=options.local,
                threads_per_worker=1,
                processes=True,
                resources={MEMORY_RESOURCE: memory // options.local},
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            )
        client = Client(cluster)
    try:
        wanted = options.local or options.min_workers
        if wanted:
            client.wait_for_workers(wanted, timeout=options.wait)
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _worker_shares(client) -> int | None:
    """The smallest MEMORY resource the cluster's workers declare, or None when one
    declares none (tasks then run without a memory restriction)."""
    workers = client.scheduler_info().get("workers", {})
    shares = [w.get("resources", {}).get(MEMORY_RESOURCE) for w in workers.values()]
    if not shares or any(s is None for s in shares):
        return None
    return int(min(shares))


def _input_cache_bytes(options, share: int | None) -> int:
    """Bytes of decoded inputs each worker keeps between its tasks: ``--input-cache``,
    else a quarter of the workers' MEMORY share (none when they declare none)."""
    if options.input_cache is not None:
        return parse_size(options.input_cache)
    return 0 if share is None else share // 4


def _run(options, client, state, identity, identity_text, shared, on_record, as_completed) -> dict:
    coordinator = state["coordinator"]
    counts = {"computed": 0, "reused": 0, "recomputed": 0}
    summary = {
        "game": options.game,
        "db": str(options.db),
        "shared": str(shared),
        "workers": len(client.scheduler_info().get("workers", {})),
        "threads_per_task": options.threads,
        "resumed_blocks": coordinator.resumed_blocks(),
        "forgotten_blocks": len(coordinator.forgotten()),
        "blocks_rerun_after_lost_worker": 0,
        "computed_positions": 0,
        "read_bytes": 0,
        "cached_inputs": 0,
        # Seconds all tasks spent reading and decoding inputs, in the kernel, and
        # coding and writing their shards.
        "task_phase_seconds": {"load": 0.0, "kernel": 0.0, "write": 0.0},
        "record_seconds": 0.0,
        # Transactions the blocks were recorded in (finished blocks are recorded
        # together).
        "record_batches": 0,
        "worker_seconds": {},
        "reopened_after_damaged_shard": 0,
    }
    share = _worker_shares(client)
    input_cache = _input_cache_bytes(options, share)
    summary["input_cache_bytes"] = input_cache
    # Task keys unique to this run (a client may run several builds).
    run_id = uuid.uuid4().hex[:12]
    attempt = 0
    total_blocks = None
    progress = None
    while True:
        tasks = json.loads(coordinator.tasks())
        if total_blocks is None:
            total_blocks = len(tasks)
            progress = Progress(total_blocks, sum(t["positions"] for t in tasks), options.quiet)
        root = str(coordinator.shard_root())
        futures = {}
        by_future = {}
        for task in tasks:
            inputs = [futures[r] for r in map(lambda r: (r[0], tuple(r[1])), task["reads"]) if r in futures]
            resources = None
            if share is not None:
                resources = {MEMORY_RESOURCE: min(memory_need(task, identity), share)}
            future = client.submit(
                run_task,
                identity_text,
                str(shared),
                root,
                task["layer"],
                task["key"],
                options.threads,
                input_cache,
                *inputs,
                key=f"tb-{run_id}-{attempt}-{task['layer']}-{task['key_text']}",
                resources=resources,
                retries=options.retries,
                priority=-task["order"],
                pure=False,
            )
            futures[_block_key(task)] = future
            by_future[future.key] = task
        damaged = None
        released = set()
        try:
            # The blocks finished since the last batch are recorded together, in
            # one transaction of the file: with many workers and small blocks the
            # batches grow and the coordinator keeps up.
            for batch in as_completed(list(futures.values())).batches():
                finished = []
                for future in batch:
                    try:
                        finished.append((future, json.loads(future.result())))
                    except ShardError as error:
                        damaged = error
                        break
                t0 = time.monotonic()
                recorded_all = json.loads(
                    coordinator.record_many([(by_future[f.key]["layer"], by_future[f.key]["key"]) for f, _ in finished])
                )
                summary["record_seconds"] += time.monotonic() - t0
                summary["record_batches"] += 1
                for (future, report), recorded in zip(finished, recorded_all):
                    counts[report["outcome"]] += 1
                    if report["outcome"] != "reused":
                        summary["computed_positions"] += report["positions"]
                    summary["read_bytes"] += report["read_bytes"]
                    summary["cached_inputs"] += report["cached_inputs"]
                    for phase in ("load", "kernel", "write"):
                        summary["task_phase_seconds"][phase] += report[f"{phase}_seconds"]
                    summary["blocks_rerun_after_lost_worker"] += report["rerun"]
                    _tally_worker(summary, report)
                    progress.advance(report, recorded["published"])
                    _release(future, released)
                    if on_record is not None:
                        on_record(dict(summary, **{f"blocks_{k}": v for k, v in counts.items()}))
                if damaged is not None:
                    break
        finally:
            _cancel_unreleased(futures.values(), released)
        if damaged is None:
            break
        # A shard a task reads is damaged: the file is opened again, which finds
        # the damaged shards of recorded blocks and forgets them (computed again
        # when what they read is still there).
        attempt += 1
        summary["reopened_after_damaged_shard"] += 1
        if attempt > 3:
            raise damaged
        coordinator.close()
        coordinator = state["coordinator"] = Coordinator(Path(options.db), identity_text, shared)
        summary["forgotten_blocks"] += len(coordinator.forgotten())
    progress.finish()
    summary.update({f"blocks_{k}": v for k, v in counts.items()})
    return summary


def build_qubic(options: argparse.Namespace, client=None, on_record=None) -> dict:
    """Runs (or resumes) a distributed Qubic strategy build, each O reply to the
    start a task with a prover of its own; returns the summary (``tb build qubic
    --json``'s, with the distributed counts). Each task's tables get ``--memory``,
    or the workers' MEMORY share when smaller (``--local N``: a N-th each)."""
    from distributed import as_completed

    started = time.monotonic()
    memory = parse_size(options.memory) if options.memory else _core.default_memory("qubic")
    shared = Path(options.shared).resolve()
    shared.mkdir(parents=True, exist_ok=True)
    start, _ = _core.qubic_start(options.first, options.start)
    db = Path(options.db)
    coordinator = QubicCoordinator(db, start, shared)
    counts = {"computed": 0, "reused": 0, "recomputed": 0}
    try:
        with _connected(options, memory, client) as connected:
            share = _worker_shares(connected)
            task_memory = memory if share is None else min(memory, share)
            summary = {
                "game": "qubic",
                "db": str(db),
                "shared": str(shared),
                "workers": len(connected.scheduler_info().get("workers", {})),
                "task_memory_bytes": task_memory,
                "resumed_replies": coordinator.resumed_replies(),
                "replies_rerun_after_lost_worker": 0,
                "worker_seconds": {},
                "task_expansions": 0,
                "shards_damaged_before_stored": 0,
            }
            tasks = json.loads(coordinator.tasks())
            progress = Progress(len(tasks), None, options.quiet, unit="replies")
            root = str(coordinator.shard_root())
            run_id = uuid.uuid4().hex[:12]
            # A shard found damaged when it is stored is proven again (its task
            # finds it damaged), a few times at most.
            for attempt in range(4):
                futures = [
                    connected.submit(
                        run_qubic_task,
                        start,
                        str(shared),
                        root,
                        task["reply"],
                        task_memory,
                        options.shrink,
                        key=f"tb-{run_id}-{attempt}-qubic-{task['reply']}",
                        resources=None if share is None else {MEMORY_RESOURCE: task_memory},
                        retries=options.retries,
                        priority=-task["index"],
                        pure=False,
                    )
                    for task in tasks
                ]
                damaged = None
                released = set()
                try:
                    for future in as_completed(futures):
                        report = json.loads(future.result())
                        try:
                            coordinator.record(report["reply"])
                        except ShardError as error:
                            damaged = error
                            summary["shards_damaged_before_stored"] += 1
                            continue
                        counts[report["outcome"]] += 1
                        summary["task_expansions"] += report["expansions"]
                        summary["replies_rerun_after_lost_worker"] += report["rerun"]
                        _tally_worker(summary, report)
                        progress.advance(report)
                        _release(future, released)
                        if on_record is not None:
                            on_record(dict(summary, **{f"replies_{k}": v for k, v in counts.items()}))
                finally:
                    _cancel_unreleased(futures, released)
                tasks = json.loads(coordinator.tasks())
                if not tasks:
                    break
            else:
                raise damaged
            progress.finish()
        final = json.loads(coordinator.finish())
    except BaseException:
        coordinator.close()
        raise
    summary.update(final)
    summary.update({f"replies_{k}": v for k, v in counts.items()})
    summary["seconds"] = time.monotonic() - started
    return summary


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tb.dask",
        description="Build tb tables on a Dask cluster: blocks as tasks, shards on shared storage, the .tb file as the catalog.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("build", help="build (or resume) a table")
    b.add_argument("game", help="RxC (Dots-and-Boxes boxes, e.g. 3x5), morris or qubic")
    where = b.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", type=int, metavar="N", help="start a LocalCluster of N worker processes on this machine")
    where.add_argument("--scheduler", metavar="ADDRESS", help="join a running Dask cluster (tcp://host:8786)")
    b.add_argument("--shared", required=True, metavar="DIR", help="directory every worker and this process see (NFS or local): the shards")
    b.add_argument("--db", required=True, metavar="FILE", help="the .tb file (local to this process; never on the shared storage's network mount)")
    b.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    b.add_argument("--quiet", action="store_true", help="no progress lines")
    b.add_argument("--threads", type=int, default=1, help="threads each block task uses [default: 1]")
    b.add_argument("--memory", help="memory budget the groups are chosen for and split between --local workers [default: 8GiB, morris 16GiB]")
    b.add_argument(
        "--input-cache",
        metavar="SIZE",
        help="decoded input blocks each worker keeps between its block tasks (a block is read by up to one block per group) [default: a quarter of the worker's MEMORY share; 0: none]",
    )
    b.add_argument("--retries", type=int, default=3, help="times Dask runs a failed task again [default: 3]")
    b.add_argument(
        "--min-workers",
        type=int,
        default=1,
        metavar="N",
        help="with --scheduler: wait until N workers have joined before starting (their MEMORY shares are read then) [default: 1]",
    )
    b.add_argument("--wait", type=float, default=600, metavar="SECONDS", help="how long to wait for them [default: 600]")
    b.add_argument("--start", help="the start position (Dots-and-Boxes: as tb build --start; qubic: a position with O to move)")
    b.add_argument("--penalty", type=int)
    b.add_argument("--book-lines", type=int)
    b.add_argument("--groups")
    b.add_argument("--chunk", type=int)
    b.add_argument("--symmetry", choices=["none", "wilson"])
    corners = b.add_mutually_exclusive_group()
    corners.add_argument("--corners", action="store_true")
    corners.add_argument("--no-corners", action="store_true")
    b.add_argument("--loony", action="store_true")
    b.add_argument("--stones", type=int, help="morris: stones per side")
    b.add_argument("--phase", choices=["moving", "all"], help="morris: moving-phase tables, or all with placement")
    b.add_argument(
        "--rules",
        choices=_core.morris_rules(),
        help="morris: the rule set (nine: Nine Men's Morris, the default; six: Six Men's Morris; six-flying: with flying; lasker: Lasker Morris, moves during placement; morabaraba: Morabaraba, 12 stones and diagonal mills)",
    )
    b.add_argument("--first", type=int, metavar="CELL", help="qubic: X's first move, a cell 0..63 [default: 0]")
    b.add_argument("--shrink", type=int, default=3, help="qubic: the shrinking search's bound, as tb build qubic --shrink [default: 3]")
    return b, parser


def main(argv=None) -> int:
    build_parser, parser = _parser()
    options = parser.parse_args(argv)
    if options.local is not None and options.local < 1:
        build_parser.error("--local needs at least 1 worker")
    if options.threads < 1:
        build_parser.error("--threads needs at least 1")
    only = {
        "qubic": ["first"],
        "morris": ["stones", "phase", "rules"],
        "dots": ["penalty", "book_lines", "groups", "symmetry", "corners", "no_corners", "loony"],
    }
    game = options.game if options.game in ("qubic", "morris") else "dots"
    for owner, names in only.items():
        for name in names:
            if owner != game and getattr(options, name) not in (None, False):
                build_parser.error(f"--{name.replace('_', '-')} is for {owner} builds, not {options.game}")
    if game == "qubic" and options.chunk is not None:
        build_parser.error("--chunk is not for qubic builds")
    try:
        summary = build(options)
    except (BuildError, ValueError) as error:
        print(f"tb.dask: error: {error}", file=sys.stderr)
        return 1
    if options.json:
        print(json.dumps(summary))
    elif options.game == "qubic":
        print(
            f"X wins from {summary['start']} (O to move): {summary['strategic_moves']} strategic moves "
            f"({summary['strategic']} positions with forced blocks), {len(summary['replies'])} O replies -> {summary['path']}: "
            f"{summary['replies_computed']} replies proven, {summary['replies_reused']} from shards already written, "
            f"{summary['replies_recomputed']} proven again (damaged shards), {summary['replies_rerun_after_lost_worker']} rerun after a lost worker, "
            f"{summary['resumed_replies']} stored before; {summary['seconds']:.2f} s on {summary['workers']} workers"
        )
    else:
        value = f" start value {summary['start_value']:+d}" if "start_value" in summary else ""
        print(
            f"built {options.game}{value} -> {options.db}: {summary['total_positions']} positions, "
            f"{summary['blocks_computed']} blocks computed, {summary['blocks_reused']} from shards already written, "
            f"{summary['blocks_recomputed']} recomputed (damaged shards), {summary['blocks_rerun_after_lost_worker']} rerun after a lost worker, "
            f"{summary['resumed_blocks']} recorded before; {summary['seconds']:.2f} s on {summary['workers']} workers, "
            f"{summary['positions_per_second'] / 1e6:.1f} M positions/s"
        )
    return 0


if __name__ == "__main__":
    from tb.dask import main as _main  # tasks pickled by reference to tb.dask

    sys.exit(_main())
