"""Distributed builds on Dask (`tb.dask`) against local builds of the `tb`
binary: on a LocalCluster of worker processes, the same file (meta, layer and
block rows, every stored chunk byte for byte, `tb export` of 3x3 whole and of
3x4's positions of at most 9 lines, `tb verify` of 3x3), also after a worker
killed (SIGKILL) mid-layer, the coordinator killed (SIGKILL, with its cluster)
and rerun, and damaged shards.

The binary is $TB_BIN (default: target/release/tb of this checkout).
"""

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

import tb  # noqa: E402
import tb.dask  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TB_BIN = os.environ.get("TB_BIN", str(ROOT / "target" / "release" / "tb"))


def run(*args):
    done = subprocess.run([TB_BIN, *map(str, args)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"tb {args}: exit {done.returncode}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def local_tables(tmp_path_factory):
    """Local builds by the binary: name -> (file, build arguments)."""
    d = tmp_path_factory.mktemp("local")
    builds = {
        "3x4": ["3x4"],
        "3x3": ["3x3"],
        "3x3-loony": ["3x3", "--loony"],
        "morris5": ["morris", "--stones", "5"],
        "six": ["morris", "--rules", "six", "--phase", "all"],
        "lasker4": ["morris", "--rules", "lasker", "--stones", "4", "--phase", "all"],
    }
    tables = {}
    for name, args in builds.items():
        db = d / f"{name}.tb"
        run("build", *args, "--quiet", "--db", db)
        tables[name] = (db, args)
    return tables


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of two worker processes, one thread each, 2 GiB shares."""
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        resources={"MEMORY": 2 << 30},
        dashboard_address=":0",
    )
    with distributed.Client(cluster) as c:
        # Both workers must have joined before the first build submits: a
        # build that starts with one worker may give it every block.
        c.wait_for_workers(2, timeout=120)
        yield c
    cluster.close()


def options(args, shared, db, *extra):
    _, parser = tb.dask._parser()
    return parser.parse_args(["build", *args, "--local", "2", "--shared", str(shared), "--db", str(db), "--quiet", *extra])


def rows(db, query):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute(query).fetchall()


def export_digest(db, *options):
    """SHA-256 of `tb export --db DB OPTIONS`, streamed (a 3x4 book is 175 M rows)."""
    digest = hashlib.sha256()
    with subprocess.Popen([TB_BIN, "export", "--db", str(db), *options], stdout=subprocess.PIPE) as child:
        for block in iter(lambda: child.stdout.read(1 << 20), b""):
            digest.update(block)
    assert child.returncode == 0, f"tb export --db {db} {options}: exit {child.returncode}"
    return digest.hexdigest()


def assert_same_file(local, built, export=(), verify=False):
    """The same tablebase: meta rows (but how the build ran), layer rows (but their
    seconds), block rows (but their seconds), every chunk row with its bytes (so
    every stored value); `tb export EXPORT` (a tuple of its options, None: not
    run) identical, through the read side; `tb verify` OK when `verify` (it
    recomputes every stored position: 3x4 takes minutes)."""
    for query in (
        "SELECT n, status, positions, bytes, histogram, digest FROM layers ORDER BY n",
        "SELECT n, counts, positions, chunks, bytes, histogram, digest FROM blocks ORDER BY n, counts",
        "SELECT n, counts, chunk, raw_len, checksum, data FROM chunks ORDER BY n, counts, chunk",
    ):
        a, b = rows(local, query), rows(built, query)
        assert len(a) == len(b) and a == b, query
    assert rows(built, "SELECT count(*) FROM chunks")[0][0] > 0
    assert not rows(built, "SELECT key FROM meta WHERE key LIKE 'shard%'")
    # The identity and feature keys; not what only says how a build ran.
    how = "('tool_version', 'build_threads', 'build_cache_bytes', 'peak_file_bytes')"
    meta = f"SELECT key, value FROM meta WHERE key NOT IN {how} ORDER BY key"
    assert rows(local, meta) == rows(built, meta)
    if export is not None:
        assert export_digest(local, *export) == export_digest(built, *export)
    if verify:
        assert run("verify", "--db", built).strip().endswith("OK")


#: How much of each table the tests export and verify: 3x3 whole; of the 3x4
#: book (175 M rows) the positions of at most 9 lines (3.5 M rows); Morris (61 M
#: rows, verify 80 s) by its chunks alone.
CHECKS = {
    "3x3": {"export": (), "verify": True},
    "3x3-loony": {"export": (), "verify": True},
    "3x4": {"export": ("--max-lines", "9")},
    "morris5": {"export": None},
    "six": {"export": (), "verify": True},
    "lasker4": {"export": (), "verify": True},
}


@pytest.mark.parametrize("name", ["3x4", "3x3-loony", "morris5", "six", "lasker4"])
def test_a_distributed_build_is_the_local_build(local_tables, client, tmp_path, name):
    local, args = local_tables[name]
    db, shared = tmp_path / "d.tb", tmp_path / "shared"
    summary = tb.dask.build(options(args, shared, db), client=client)
    assert_same_file(local, db, **CHECKS[name])
    blocks = rows(db, "SELECT count(*) FROM blocks")[0][0]
    assert summary["blocks_computed"] == blocks
    assert summary["blocks_reused"] == summary["blocks_recomputed"] == 0
    assert summary["computed_positions"] == summary["total_positions"]
    layers = {str(n): d for n, d in rows(local, "SELECT n, digest FROM layers")}
    assert summary["layer_digests"] == layers
    if name == "3x4":
        # The blocks ran on the cluster's workers. Not asserted: that both got
        # some. Dask places a block beside the results of the blocks it reads, so
        # 3x4's small blocks all went to one worker in one CI run of five.
        assert set(summary["worker_seconds"]) <= {"0", "1"} and summary["worker_seconds"]
        # Inputs came decoded from the workers' caches too (a quarter of their 2
        # GiB shares), and the file is the same.
        assert summary["input_cache_bytes"] == 512 << 20
        assert summary["cached_inputs"] > 0
    if name not in ("morris5", "six", "lasker4"):
        (start,), = rows(local, "SELECT value FROM meta WHERE key = 'start_position'")
        answer = json.loads(run("probe", "--db", local, "--json", start))
        assert summary["start_value"] == answer["value"]
    assert list(shared.iterdir()) == [], "the shards are deleted"


def test_a_worker_killed_mid_layer_costs_its_block_only(local_tables, tmp_path):
    local, args = local_tables["3x4"]
    db, shared = tmp_path / "d.tb", tmp_path / "shared"
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    killed = []
    with distributed.Client(cluster) as client:
        pids = set(client.run(os.getpid).values())

        def kill_one_busy_worker(progress):
            if killed or progress["blocks_computed"] < 60:
                return
            # A worker with a block in flight: its task's marker names its pid.
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                for marker in shared.glob("*/.running/*"):
                    pid = int(marker.name.split(".")[-2])
                    if pid in pids:
                        os.kill(pid, signal.SIGKILL)
                        killed.append(pid)
                        return
                time.sleep(0.001)

        summary = tb.dask.build(options(args, shared, db), client=client, on_record=kill_one_busy_worker)
    cluster.close()
    assert killed, "no worker was seen computing"
    assert_same_file(local, db, **CHECKS["3x4"])
    # The block in flight ran again (its shard half written or not at all, or
    # written and found whole); no other block did.
    assert summary["blocks_rerun_after_lost_worker"] <= 1
    assert summary["blocks_rerun_after_lost_worker"] + summary["blocks_reused"] >= 1
    assert summary["blocks_computed"] + summary["blocks_reused"] + summary["blocks_recomputed"] == 272


def driver(*args):
    """`python -m tb.dask build ...` in a session of its own (its workers with it)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tb.dask", "build", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def live_processes_of_group(pgid, wait=10.0):
    """The processes of group `pgid` that are not zombies, once none is or `wait`
    seconds have passed."""
    deadline = time.monotonic() + wait
    while True:
        live = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                live.append(int(stat.parent.name))
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(0.1)


def test_the_coordinator_killed_and_rerun_recomputes_nothing_finished(local_tables, tmp_path):
    local, args = local_tables["3x4"]
    db, shared = tmp_path / "d.tb", tmp_path / "shared"
    command = [*args, "--local", "2", "--shared", shared, "--db", db, "--json", "--quiet"]
    first = driver(*command)
    recorded = 0
    deadline = time.monotonic() + 120
    while first.poll() is None and time.monotonic() < deadline:
        if db.exists():
            try:
                recorded = rows(db, "SELECT count(*) FROM blocks")[0][0]
            except sqlite3.OperationalError:
                recorded = 0  # the schema is not there yet
        if recorded >= 80:
            os.killpg(first.pid, signal.SIGKILL)
            break
        time.sleep(0.05)
    first.wait(timeout=60)
    assert first.returncode == -signal.SIGKILL, first.stderr.read()
    # Every process of its session (the LocalCluster's workers) is gone.
    assert not live_processes_of_group(first.pid)
    recorded = rows(db, "SELECT count(*) FROM blocks")[0][0]
    assert 80 <= recorded < 272
    second = driver(*command)
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["resumed_blocks"] == recorded
    assert summary["blocks_computed"] + summary["blocks_reused"] == 272 - recorded
    assert_same_file(local, db, **CHECKS["3x4"])


class Stop(Exception):
    pass


def stop_at_first_block(progress):
    raise Stop


def recomputable_shard(db, identity, shared, every_task):
    """The shard of a recorded block that a resumed build checks (a remaining
    block reads it) and can compute again (the shards it reads are all there),
    or None."""
    coordinator = tb.dask.Coordinator(db, identity, shared)
    remaining = json.loads(coordinator.tasks())
    root = Path(coordinator.shard_root())
    coordinator.close()
    text = {(t["layer"], tuple(t["key"])): t["key_text"] for t in every_task}
    reads = {(t["layer"], t["key_text"]): t["reads"] for t in every_task}

    def shard(layer, key_text):
        return root / str(layer) / f"{key_text}.shard"

    read_by_remaining = {(layer, text[(layer, tuple(key))]) for t in remaining for layer, key in t["reads"]}
    for layer, key_text in rows(db, "SELECT n, counts FROM blocks"):
        if (layer, key_text) not in read_by_remaining or not shard(layer, key_text).exists():
            continue
        if all(shard(n, text[(n, tuple(key))]).exists() for n, key in reads[(layer, key_text)]):
            return shard(layer, key_text)
    return None


def test_damaged_shards_are_computed_again_never_recorded(local_tables, client, tmp_path):
    local, args = local_tables["3x3"]
    db, shared = tmp_path / "d.tb", tmp_path / "shared"
    # A damaged shard where a block's task will look (a truncated copy of
    # nothing in particular): the task computes the block again.
    identity = tb.dask._core.build_identity("3x3", db, memory=8 << 30)
    coordinator = tb.dask.Coordinator(db, identity, shared)
    every_task = json.loads(coordinator.tasks())
    first = every_task[0]
    root = coordinator.shard_root()
    coordinator.close()
    path = Path(root) / str(first["layer"]) / f"{first['key_text']}.shard"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"TBSHARD1\x10\x00\x00\x00{}")
    # Stopped after the first block is recorded: the coordinator "dies".
    with pytest.raises(Stop):
        tb.dask.build(options(args, shared, db), client=client, on_record=stop_at_first_block)
    # Two coordinators on one file are refused (before the damage below: opening
    # the file is what finds it).
    coordinator = tb.dask.Coordinator(db, identity, shared)
    with pytest.raises(tb.dask.BuildError, match="already"):
        tb.dask.Coordinator(db, identity, shared)
    coordinator.close()
    # The blocks finished together with the first were recorded with it (one
    # transaction a batch): one whose shard a remaining block reads, and which
    # can be computed again, is damaged. Which blocks that batch held depends on
    # timing: while none qualifies (every shard its layer read already deleted),
    # the build goes on a batch more.
    while (recorded := recomputable_shard(db, identity, shared, every_task)) is None:
        with pytest.raises(Stop):
            tb.dask.build(options(args, shared, db), client=client, on_record=stop_at_first_block)
    stored = rows(db, "SELECT n, counts FROM blocks")
    data = bytearray(recorded.read_bytes())
    data[-1] ^= 0x40
    recorded.write_bytes(bytes(data))
    summary = tb.dask.build(options(args, shared, db), client=client)
    assert summary["resumed_blocks"] == len(stored) - 1, "the damaged recorded block is forgotten"
    assert summary["forgotten_blocks"] == 1
    assert summary["blocks_recomputed"] >= 1
    assert_same_file(local, db, **CHECKS["3x3"])


#: A Qubic start whose 57 O replies are each proven in a fraction of a second.
QUBIC_START = "0-3-60-21-15-63-12"


def test_qubic_replies_as_tasks_stopped_and_resumed_verify(client, tmp_path):
    local = tmp_path / "local.tb"
    run("build", "qubic", "--start", QUBIC_START, "--memory", "256MiB", "--quiet", "--db", local)
    db, shared = tmp_path / "d.tb", tmp_path / "shared"
    args = ["qubic", "--start", QUBIC_START, "--memory", "256MiB"]
    stopped = []

    def stop_after_five(progress):
        if progress["replies_computed"] + progress["replies_reused"] >= 5:
            stopped.append(progress)
            raise Stop

    with pytest.raises(Stop):
        tb.dask.build(options(args, shared, db), client=client, on_record=stop_after_five)
    stored = rows(db, "SELECT count(*) FROM blocks")[0][0]
    assert stored == 5
    # Resumed; at its first reply stored, the shards other tasks wrote meanwhile
    # are damaged before the coordinator stores them: proven again, never stored.
    damaged = []

    def damage_written_shards(progress):
        if damaged:
            return
        time.sleep(2)
        for shard in shared.glob("*/0/*.shard"):
            data = bytearray(shard.read_bytes())
            data[-1] ^= 0x40
            shard.write_bytes(bytes(data))
            damaged.append(shard)

    summary = tb.dask.build(options(args, shared, db), client=client, on_record=damage_written_shards)
    assert summary["resumed_replies"] == 5
    replies = rows(local, "SELECT count(*) FROM blocks WHERE counts != '64'")[0][0]
    assert damaged, "no shard was waiting to be stored"
    assert summary["shards_damaged_before_stored"] >= 1
    assert summary["replies_recomputed"] >= 1
    # Nothing stored ran again; shards written after the stop are taken as they are.
    assert summary["replies_computed"] + summary["replies_reused"] + summary["replies_recomputed"] == replies - 5
    assert summary["complete"] and len(summary["replies"]) == replies
    assert sorted(summary["worker_seconds"]) == ["0", "1"] or summary["replies_computed"] < 2
    # The same blocks as the local build (the strategies may differ: each task has
    # a proof table of its own), and the independent walk accepts it.
    keys = "SELECT counts FROM blocks ORDER BY counts"
    assert rows(local, keys) == rows(db, keys)
    assert run("verify", "--db", db).strip().endswith("OK, X wins against every defence")
    assert not any(shared.iterdir()), "the shards are deleted"
    # A second run has nothing to do, and the file stays whole.
    assert json.loads(run("info", "--db", db, "--json"))["strategic"] == summary["strategic"]
