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
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import uuid
from pathlib import Path

from .tb import _dask as _core

#: Memory budgets as `tb build` defaults them.
DEFAULT_MEMORY = {"dots": 8 << 30, "morris": 16 << 30}

#: The Dask resource a worker's memory share is declared as.
MEMORY_RESOURCE = "MEMORY"

BuildError = _core.BuildError
ShardError = _core.ShardError
Coordinator = _core.Coordinator


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


def run_task(identity: str, shared: str, root: str, layer: int, key: list[int], threads: int, *_inputs) -> str:
    """One block task on a worker (``_inputs``: the results of the tasks of the
    blocks it reads, which Dask waits for). Returns the Rust task report (JSON
    text) with the worker's name, and whether an earlier attempt of this block was
    lost with its worker (a marker it left behind)."""
    from distributed import get_worker

    try:
        worker = get_worker().name
    except ValueError:  # run outside a worker (tests)
        worker = "local"
    markers = _markers(Path(root))
    markers.mkdir(parents=True, exist_ok=True)
    stem = f"{layer}-{'.'.join(map(str, key))}"
    earlier = list(markers.glob(f"{stem}.*"))
    mine = markers / f"{stem}.{os.getpid()}.{time.time_ns()}"
    mine.touch()
    try:
        report = json.loads(_core.run_block(identity, shared, layer, key, threads))
    finally:
        mine.unlink(missing_ok=True)
    for marker in earlier:
        marker.unlink(missing_ok=True)
    report["worker"] = str(worker)
    report["rerun"] = bool(earlier)
    return json.dumps(report)


class Progress:
    """Blocks done / total, positions/s, ETA on stderr every few seconds (or nothing)."""

    def __init__(self, blocks: int, positions: int, quiet: bool, every: float = 2.0):
        self.blocks, self.positions, self.quiet, self.every = blocks, positions, quiet, every
        self.done_blocks = self.done_positions = self.computed_positions = 0
        self.started = self.last = time.monotonic()
        self.tty = sys.stderr.isatty()

    def advance(self, report: dict, published: list[str]) -> None:
        self.done_blocks += 1
        self.done_positions += report["positions"]
        if report["outcome"] != "reused":
            self.computed_positions += report["positions"]
        now = time.monotonic()
        if self.quiet or (now - self.last < self.every and self.done_blocks < self.blocks):
            return
        self.last = now
        elapsed = now - self.started
        rate = self.done_positions / max(elapsed, 1e-9)
        eta = (self.positions - self.done_positions) / max(rate, 1.0)
        line = (
            f"tb.dask: blocks {self.done_blocks}/{self.blocks}, "
            f"{self.computed_positions / max(elapsed, 1e-9) / 1e6:.1f} M positions/s, "
            f"eta {eta:.0f} s" + (f", published {published[-1]}" if published else "")
        )
        print(("\r" + line + "\x1b[K") if self.tty else line, file=sys.stderr, end="" if self.tty else "\n", flush=True)

    def finish(self) -> None:
        if self.tty and not self.quiet:
            print(file=sys.stderr)


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
    from distributed import Client, LocalCluster, as_completed

    started = time.monotonic()
    game = "morris" if options.game == "morris" else "dots"
    memory = parse_size(options.memory) if options.memory else DEFAULT_MEMORY[game]
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
    )
    identity = json.loads(identity_text)
    # The open coordinator (a run that finds a damaged shard opens the file again).
    state = {"coordinator": Coordinator(db, identity_text, shared)}
    cluster = None
    own_client = client is None
    try:
        if own_client:
            if options.scheduler:
                client = Client(options.scheduler)
            else:
                import logging

                cluster = LocalCluster(
                    n_workers=options.local,
                    threads_per_worker=1,
                    processes=True,
                    resources={MEMORY_RESOURCE: memory // options.local},
                    dashboard_address=":0",
                    silence_logs=logging.ERROR,
                )
                client = Client(cluster)
        summary = _run(options, client, state, identity, identity_text, shared, on_record, as_completed)
        final = json.loads(state["coordinator"].finish())
    except BaseException:
        state["coordinator"].close()
        raise
    finally:
        if own_client and client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
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


def _worker_shares(client) -> int | None:
    """The smallest MEMORY resource the cluster's workers declare, or None when one
    declares none (tasks then run without a memory restriction)."""
    workers = client.scheduler_info().get("workers", {})
    shares = [w.get("resources", {}).get(MEMORY_RESOURCE) for w in workers.values()]
    if not shares or any(s is None for s in shares):
        return None
    return int(min(shares))


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
        "record_seconds": 0.0,
        "worker_seconds": {},
        "reopened_after_damaged_shard": 0,
    }
    share = _worker_shares(client)
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
        try:
            for future in as_completed(list(futures.values())):
                task = by_future[future.key]
                try:
                    report = json.loads(future.result())
                except ShardError as error:
                    damaged = error
                    break
                t0 = time.monotonic()
                recorded = json.loads(coordinator.record(task["layer"], task["key"]))
                summary["record_seconds"] += time.monotonic() - t0
                counts[report["outcome"]] += 1
                if report["outcome"] != "reused":
                    summary["computed_positions"] += report["positions"]
                summary["read_bytes"] += report["read_bytes"]
                summary["blocks_rerun_after_lost_worker"] += report["rerun"]
                worker = report["worker"]
                summary["worker_seconds"][worker] = summary["worker_seconds"].get(worker, 0.0) + report["seconds"]
                progress.advance(report, recorded["published"])
                future.release()
                if on_record is not None:
                    on_record(dict(summary, **{f"blocks_{k}": v for k, v in counts.items()}))
        finally:
            for future in futures.values():
                future.cancel()
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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tb.dask",
        description="Build tb tables on a Dask cluster: blocks as tasks, shards on shared storage, the .tb file as the catalog.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    b = commands.add_parser("build", help="build (or resume) a table")
    b.add_argument("game", help="RxC (Dots-and-Boxes boxes, e.g. 3x5) or morris")
    where = b.add_mutually_exclusive_group(required=True)
    where.add_argument("--local", type=int, metavar="N", help="start a LocalCluster of N worker processes on this machine")
    where.add_argument("--scheduler", metavar="ADDRESS", help="join a running Dask cluster (tcp://host:8786)")
    b.add_argument("--shared", required=True, metavar="DIR", help="directory every worker and this process see (NFS or local): the shards")
    b.add_argument("--db", required=True, metavar="FILE", help="the .tb file (local to this process; never on the shared storage's network mount)")
    b.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    b.add_argument("--quiet", action="store_true", help="no progress lines")
    b.add_argument("--threads", type=int, default=1, help="threads each block task uses [default: 1]")
    b.add_argument("--memory", help="memory budget the groups are chosen for and split between --local workers [default: 8GiB, morris 16GiB]")
    b.add_argument("--retries", type=int, default=3, help="times Dask runs a failed task again [default: 3]")
    b.add_argument("--start")
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
    return b, parser


def main(argv=None) -> int:
    build_parser, parser = _parser()
    options = parser.parse_args(argv)
    if options.local is not None and options.local < 1:
        build_parser.error("--local needs at least 1 worker")
    if options.threads < 1:
        build_parser.error("--threads needs at least 1")
    try:
        summary = build(options)
    except (BuildError, ValueError) as error:
        print(f"tb.dask: error: {error}", file=sys.stderr)
        return 1
    if options.json:
        print(json.dumps(summary))
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
