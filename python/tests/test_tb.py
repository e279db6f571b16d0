"""The Python module `tb` against the `tb` binary: every answer, error object, info
and search result equal to the CLI's JSON for the same input.

The binary is $TB_BIN (default: target/release/tb of this checkout); the tables
are built with it in a temporary directory.
"""

import json
import os
import random
import shutil
import sqlite3
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import tb

ROOT = Path(__file__).resolve().parents[2]
TB_BIN = os.environ.get("TB_BIN", str(ROOT / "target" / "release" / "tb"))


def run(*args, stdin=None, ok=(0,)):
    """Runs the binary; returns its stdout."""
    done = subprocess.run(
        [TB_BIN, *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in ok, f"tb {args}: exit {done.returncode}\n{done.stderr}"
    return done.stdout


def cli_probe(db, positions, *flags):
    """`tb probe --json` of positions on stdin: one object (or error object) each."""
    out = run("probe", "--db", db, "--json", *flags, stdin="".join(p + "\n" for p in positions), ok=(0, 1))
    answers = [json.loads(line) for line in out.splitlines()]
    assert len(answers) == len(positions)
    return answers


@pytest.fixture(scope="session")
def tables(tmp_path_factory):
    """Small tables of both games: name -> path."""
    assert Path(TB_BIN).is_file(), f"no tb binary at {TB_BIN} (set TB_BIN)"
    d = tmp_path_factory.mktemp("tables")
    built = {
        "1x1": ["1x1"],
        "2x2": ["2x2"],
        "3x3": ["3x3"],
        # The book holds 0..5 lines: deeper positions are searched.
        "2x3b5": ["2x3", "--book-lines", "5"],
        # A book of 0..2 lines: searches past it run long (4.6 s to build).
        "3x4b2": ["3x4", "--book-lines", "2"],
        "morris": ["morris", "--stones", "3"],
    }
    paths = {}
    for name, args in built.items():
        path = d / f"{name}.tb"
        run("build", *args, "--db", path, "--quiet")
        paths[name] = path
    return paths


def dots_positions(lines, count, most, seed):
    """Random 0/1 strings with at most `most` lines, move lists and the empty board."""
    rng = random.Random(seed)
    out = ["-", "0" * lines]
    for _ in range(count):
        drawn = rng.sample(range(lines), rng.randint(0, most))
        out.append("".join("1" if i in drawn else "0" for i in range(lines)))
    return out


def board_lines(rows, cols):
    return (rows + 1) * cols + rows * (cols + 1)


# (Blank lines are skipped by `tb probe` on stdin: the empty text is tested alone.)
BAD_DOTS = ["h9.9", "x", "0101", "h0.0,h0.0", "2" * 24, "h0.0,,h0.1"]


def morris_positions(db, count, seed):
    """Stored classes (from `tb export`), the same with the other side to move,
    and one bad text."""
    rows = [json.loads(line)["position"] for line in run("export", "--db", db).splitlines()]
    rng = random.Random(seed)
    chosen = rng.sample(rows, count)
    flipped = [p[:-1] + ("b" if p.endswith("w") else "w") for p in chosen]
    return chosen + flipped


# --- probe -------------------------------------------------------------------


@pytest.mark.parametrize("name,rows,cols,most", [("3x3", 3, 3, 24), ("2x2", 2, 2, 12), ("2x3b5", 2, 3, 9)])
def test_probe_equals_cli_json(tables, name, rows, cols, most):
    db = tables[name]
    positions = dots_positions(board_lines(rows, cols), 300, most, seed=1)
    t = tb.open(db)
    expected = cli_probe(db, positions)
    for position, want in zip(positions, expected):
        if "error" in want:
            with pytest.raises(tb.PositionError) as caught:
                t.probe(position)
            assert caught.value.error == want["error"]
            assert caught.value.input == position
            continue
        got = t.probe(position)
        assert got == want, position
        assert list(got) == list(want)
        assert [list(m) for m in got["moves"]] == [list(m) for m in want["moves"]]
    sources = {a.get("source") for a in expected}
    if name == "2x3b5":
        assert {"book", "search"} <= sources


def test_probe_errors_equal_cli(tables):
    db = tables["3x3"]
    t = tb.open(db)
    for position, want in zip(BAD_DOTS, cli_probe(db, BAD_DOTS)):
        assert set(want) == {"input", "error", "kind"} and want["kind"] == "position"
        with pytest.raises(tb.PositionError) as caught:
            t.probe(position)
        e = caught.value
        assert isinstance(e, tb.Error)
        assert (e.input, e.error) == (want["input"], want["error"])
        assert want["error"] in str(e)
    with pytest.raises(tb.PositionError):
        t.probe("")
    with pytest.raises(TypeError):
        t.probe(3)


def test_probe_morris_equals_cli_json(tables):
    db = tables["morris"]
    positions = morris_positions(db, 200, seed=2) + ["WWW", "WWWBBB.................. x"]
    t = tb.open(db)
    assert t.game == "morris" and t.board is None
    for position, want in zip(positions, cli_probe(db, positions)):
        if "error" in want:
            with pytest.raises(tb.PositionError) as caught:
                t.probe(position)
            assert caught.value.error == want["error"]
        else:
            got = t.probe(position)
            assert got == want and list(got) == list(want)
    expected = cli_probe(db, positions)
    assert t.probe_many(positions, errors="return") == expected
    values = t.probe_many(positions, errors="return", moves=False)
    assert values == [without_moves(a) for a in expected]
    assert [list(a) for a in values] == [list(without_moves(a)) for a in expected]
    # Without the tie-break: what `tb probe --no-tie-break` prints; the same moves
    # and values, the counts null, and some tied moves did carry counts before.
    untied = cli_probe(db, positions, "--no-tie-break")
    assert t.probe_many(positions, errors="return", tie_break=False) == untied
    assert [t.probe(p, tie_break=False) for p in positions[:20]] == untied[:20]
    counted = 0
    for want, got in zip(expected, untied):
        if "error" in want:
            assert got == want
            continue
        assert without_moves(got) == without_moves(want)
        assert all(m["opponent_errors"] is None and m["opponent_replies"] is None for m in got["moves"])
        assert sorted((m["move"], m["value"]) for m in got["moves"]) == sorted((m["move"], m["value"]) for m in want["moves"])
        counted += sum(m["opponent_replies"] is not None for m in want["moves"])
    assert counted > 0


def test_loony_tables_answer_with_their_flags(tmp_path):
    db = tmp_path / "2x2-loony.tb"
    run("build", "2x2", "--loony", "--quiet", "--db", db)
    positions = dots_positions(12, 300, 12, seed=10)
    expected = cli_probe(db, positions)
    assert any(a.get("loony") == "mover" for a in expected)
    assert any(a.get("loony") == "opponent" for a in expected)
    t = tb.open(db)
    answers = t.probe_many(positions, errors="return")
    assert answers == expected
    assert [list(a) for a in answers] == [list(a) for a in expected]
    assert t.probe_many(positions, errors="return", moves=False) == [without_moves(a) for a in expected]


def test_wilson_text_and_its_penalty(tables):
    t = tb.open(tables["1x1"])
    grid = "+ +\n\n+ +\n"
    assert t.probe("0\n" + grid) == t.probe("0000")
    with pytest.raises(tb.PositionError, match="penalty 1"):
        t.probe("1\n" + grid)


def without_moves(answer):
    """An answer (or error object) of `tb probe --json` without its moves."""
    return {k: v for k, v in answer.items() if k != "moves"}


@pytest.mark.parametrize("name,lines,most", [("3x3", 24, 24), ("2x3b5", 17, 17)])
def test_values_only_equal_the_cli_answers_values(tables, name, lines, most):
    db = tables[name]
    t = tb.open(db)
    book = int(t.info()["book_lines"])
    positions = dots_positions(lines, 3000, most, seed=8) + BAD_DOTS
    random.Random(9).shuffle(positions)
    full = cli_probe(db, positions)
    values = t.probe_many(positions, errors="return", moves=False)
    assert list(t.probe_iter(positions, errors="return", moves=False)) == values
    sources = set()
    for position, want, got in zip(positions, full, values):
        if "error" in want:
            assert got == want
            continue
        expected = without_moves(want)
        # A stored position's value is read, even where its moves' values are
        # searched (children past the book).
        if got["lines"] <= book:
            expected["source"] = "book"
        assert got == expected and list(got) == list(expected), position
        sources.add(got["source"])
    assert t.probe(positions[0], moves=False) == values[0]
    if name == "2x3b5":
        assert sources == {"book", "search"}


# --- probe_many and probe_iter -------------------------------------------------


def test_probe_many_equals_probes_in_order(tables):
    db = tables["3x3"]
    t = tb.open(db)
    # Several chunks of the worker threads, in a shuffled order.
    positions = dots_positions(24, 5000, 24, seed=3)
    random.Random(4).shuffle(positions)
    many = t.probe_many(positions)
    assert isinstance(many, list) and len(many) == len(positions)
    assert many == [t.probe(p) for p in positions]
    assert [a["position"] for a in many[:50]] == [t.probe(p)["position"] for p in positions[:50]]
    # Any iterable: a generator, a tuple, an empty list.
    assert t.probe_many(p for p in positions[:3000]) == many[:3000]
    assert t.probe_many(tuple(positions[:10])) == many[:10]
    assert t.probe_many([]) == []


def test_probe_many_return_errors_equal_cli(tables):
    db = tables["2x3b5"]
    t = tb.open(db)
    positions = dots_positions(17, 3000, 17, seed=5)
    positions[100:100] = BAD_DOTS
    positions.append("x")
    answers = t.probe_many(positions, errors="return")
    assert answers == cli_probe(db, positions)
    assert list(t.probe_iter(positions, errors="return")) == answers


def test_probe_many_raises_the_first_error_in_order(tables):
    t = tb.open(tables["3x3"])
    good = dots_positions(24, 3000, 24, seed=6)
    positions = good[:2500] + ["h9.9"] + good[2500:] + ["x"]
    with pytest.raises(tb.PositionError) as caught:
        t.probe_many(positions)
    assert (caught.value.index, caught.value.input) == (2500, "h9.9")
    with pytest.raises(tb.PositionError) as caught:
        list(t.probe_iter(positions))
    assert caught.value.index == 2500
    with pytest.raises(ValueError):
        t.probe_many(good, errors="ignore")
    with pytest.raises(TypeError, match=r"positions\[1\]"):
        t.probe_many(["-", 5])
    with pytest.raises(TypeError):
        t.probe_many(5)


def test_probe_iter_streams_a_generator(tables):
    t = tb.open(tables["3x3"])
    positions = dots_positions(24, 20000, 24, seed=7)
    pulled = []

    def source():
        for p in positions:
            pulled.append(p)
            yield p

    stream = t.probe_iter(source())
    first = next(stream)
    assert first == t.probe(positions[0])
    # Read ahead a few chunks only, not the whole generator.
    assert len(pulled) < len(positions)
    assert [first, *stream] == t.probe_many(positions)
    with pytest.raises(StopIteration):
        next(stream)


# --- search fallback and limits ------------------------------------------------


def test_search_fallback_bounds(tables):
    db = tables["2x3b5"]
    deep = "h0.0,h0.1,h0.2,h1.0,h1.1,h1.2"
    # max_nodes=1: stopped, with the bounds of the CLI's message.
    t = tb.open(db, max_nodes=1)
    [want] = cli_probe(db, [deep], "--max-nodes", "1")
    with pytest.raises(tb.SearchLimitError) as caught:
        t.probe(deep)
    e = caught.value
    assert e.error == want["error"] and e.reason == "node limit"
    assert e.lower <= e.upper and e.nodes >= 1
    assert t.probe_many([deep], errors="return") == [want]
    # search_limit=0: never searched.
    t = tb.open(db, search_limit=0)
    [want] = cli_probe(db, [deep], "--search-limit", "0")
    with pytest.raises(tb.PositionError) as caught:
        t.probe(deep)
    assert caught.value.error == want["error"]
    # Defaults: searched, as the CLI does.
    assert tb.open(db).probe(deep) == cli_probe(db, [deep])[0]


# --- info ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["3x3", "2x3b5", "morris"])
def test_info_equals_cli(tables, name):
    db = tables[name]
    assert tb.open(db).info() == json.loads(run("info", "--db", db, "--json"))


def test_table_attributes(tables):
    t = tb.open(str(tables["3x3"]))
    assert (t.game, t.board) == ("dots-and-boxes", "3x3")
    assert Path(t.path) == tables["3x3"]
    assert "3x3" in repr(t)
    assert tb.open(tables["3x3"]).board == "3x3"  # os.PathLike


# --- solve -----------------------------------------------------------------------

VOLATILE = {"seconds", "peak_rss_bytes"}


def steady(answer):
    return {k: v for k, v in answer.items() if k not in VOLATILE}


@pytest.mark.parametrize(
    "cli,args,kwargs",
    [
        (["2x2"], ["2x2"], {}),
        (["2x3", "h0.0,v1.1"], ["2x3", "h0.0,v1.1"], {}),
        (["2x3", "h0.0,v1.1", "--pv"], ["2x3", "h0.0,v1.1"], {"pv": True}),
        (["3x3", "h0.0,v1.1", "--best"], ["3x3", "h0.0,v1.1"], {"best": True}),
        (["2x3", "--start", "swedish"], ["2x3"], {"start": "swedish"}),
        (["2x2", "--penalty=-1"], ["2x2"], {"penalty": -1}),
        (["3x3", "000000000000000000000011", "--tt", "16MiB"], ["3x3", "000000000000000000000011"], {"tt": "16MiB"}),
        (["2x2", "-", "--tt", "1MiB"], ["2x2", "-"], {"tt": 1 << 20}),
    ],
)
def test_solve_equals_cli(cli, args, kwargs):
    # One thread, as tb.solve: with more, node counts vary from run to run.
    want = json.loads(run("solve", *cli, "--json", "--threads", "1"))
    got = tb.solve(*args, **kwargs)
    assert steady(got) == steady(want)
    assert list(got) == list(want)
    assert set(VOLATILE) <= set(got)
    assert got["source"] == "search"


# 3x3: box (1,1) with its left and right sides drawn, its top and bottom dotted (a
# one-box chain inside the board), and v0.0 drawn.
CHAIN_TEXT = """0
+     +     +     +
|
|
|
+     +  .  +     +
      |     |
      |     |
      |     |
+     +  .  +     +




+     +     +     +
"""


def test_solve_chains_exact_or_wilson_and_a_store(tmp_path):
    exact = tb.solve("3x3", CHAIN_TEXT)
    plain = tb.solve("3x3", CHAIN_TEXT.replace(".", " "))
    assert exact["chain_rule"] == "exact" and "approximate" not in exact and "chains" not in exact
    assert exact["value"] == plain["value"] and exact["moves"] == plain["moves"]
    wilson = tb.solve("3x3", CHAIN_TEXT, wilson_chains=True)
    assert wilson["chain_rule"] == "wilson" and wilson["approximate"] is True
    assert wilson["chains"] == [["h1.1", "h2.1"]]
    text = tmp_path / "chain.txt"
    text.write_text(CHAIN_TEXT)
    want = json.loads(run("solve", "3x3", text, "--json", "--threads", "1", "--wilson-chains"))
    assert steady(wilson) == steady(want)
    # A store: the second search starts from what the first proved.
    store = tmp_path / "s.db"
    first = tb.solve("3x3", "h0.0", store=store)
    second = tb.solve("3x3", "h0.0", store=str(store), store_depth=4)
    assert first["store"]["loaded"] == 0 and first["store"]["total"] > 0
    assert second["store"]["loaded"] == first["store"]["total"]
    assert second["nodes"] < first["nodes"] and second["moves"] == first["moves"]
    with pytest.raises(ValueError, match="penalty"):
        tb.solve("3x3", "h0.0", store=store, penalty=-1)


def test_solve_on_several_threads():
    one = tb.solve("3x3", "h0.0,v1.1")
    two = tb.solve("3x3", "h0.0,v1.1", threads=2)
    same = lambda answer: {k: v for k, v in answer.items() if k not in VOLATILE | {"nodes"}}
    assert same(two) == same(one)


def test_solve_limits_and_errors():
    with pytest.raises(tb.SearchLimitError) as caught:
        tb.solve("3x3", max_nodes=1000)
    e = caught.value
    want = json.loads(run("solve", "3x3", "--max-nodes", "1000", "--json", "--threads", "1", ok=(1,)))
    assert steady(e.info) == steady(want)
    assert (e.lower, e.upper, e.nodes, e.reason) == (want["lower"], want["upper"], want["nodes"], want["stopped"])
    with pytest.raises(tb.SearchLimitError):
        tb.solve("3x4", time_limit=0.05)
    with pytest.raises(tb.PositionError):
        tb.solve("2x2", "h9.9")
    with pytest.raises(tb.PositionError):
        tb.solve("2x2", start="h9.9")
    for bad in [dict(board="3y3"), dict(board="morris"), dict(board="2x2", penalty=99), dict(board="2x2", tt="lots"), dict(board="2x2", threads=0)]:
        with pytest.raises(ValueError):
            tb.solve(**bad)
    with pytest.raises(ValueError):
        tb.solve("2x2", time_limit=-1)


# --- damaged and missing files -----------------------------------------------------


def test_table_errors(tables, tmp_path):
    with pytest.raises(tb.TableError, match="no tablebase file"):
        tb.open(tmp_path / "missing.tb")
    text = tmp_path / "text.tb"
    text.write_text("not a table\n" * 100)
    with pytest.raises(tb.TableError):
        tb.open(text)
    empty = tmp_path / "empty.tb"
    sqlite3.connect(empty).close()
    with pytest.raises(tb.TableError):
        tb.open(empty)
    assert issubclass(tb.TableError, tb.Error) and not issubclass(tb.TableError, tb.PositionError)
    # A truncated copy: refused at open, or when a probe reads what is gone.
    data = tables["3x3"].read_bytes()
    cut = tmp_path / "cut.tb"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(tb.TableError):
        tb.open(cut).probe_many(dots_positions(24, 2000, 24, seed=8))


def tampered_3x3(tables, path, sql):
    """A copy of the 3x3 table at `path` with `sql` run on it."""
    shutil.copy(tables["3x3"], path)
    with sqlite3.connect(path) as c:
        c.execute(sql)
    c.close()
    return path


def test_damaged_chunks(tables, tmp_path):
    db = tampered_3x3(tables, tmp_path / "damaged.tb", "UPDATE chunks SET checksum = checksum + 1 WHERE n = 2")
    t = tb.open(db)
    # Layer 2 is read for positions of 1 line (children) and of 2 lines.
    one = "h0.0"
    with pytest.raises(tb.TableError, match="checksum"):
        t.probe(one)
    positions = dots_positions(24, 500, 3, seed=9)
    answers = t.probe_many(positions, errors="return")
    assert answers == cli_probe(db, positions)
    assert any("error" in a for a in answers) and any("error" not in a for a in answers)
    with pytest.raises(tb.TableError):
        t.probe_many(positions)
    # Positions that read no damaged chunk are still answered.
    assert t.probe("1" * 24) == tb.open(tables["3x3"]).probe("1" * 24)


def test_wrong_layer_size(tables, tmp_path):
    # A layer row whose size disagrees with the layout: found when the layer is first
    # read, a damaged table (not a bad position); other layers still answer.
    t = tb.open(tampered_3x3(tables, tmp_path / "sized.tb", "UPDATE layers SET positions = positions + 1 WHERE n = 2"))
    with pytest.raises(tb.TableError, match="layer 2 claims"):
        t.probe("h0.0")
    assert t.probe("1" * 24) == tb.open(tables["3x3"]).probe("1" * 24)
    with pytest.raises(tb.TableError, match="layer 2 claims"):
        t.info()


# --- threads and the GIL -------------------------------------------------------------


def test_threads_share_a_table(tables):
    t = tb.open(tables["3x3"], readers=3)
    positions = dots_positions(24, 1500, 24, seed=10)
    expected = [t.probe(p) for p in positions]

    def work(k):
        part = positions[k::4]
        if k % 2:
            return part, t.probe_many(part)
        return part, [t.probe(p) for p in part]

    with ThreadPoolExecutor(max_workers=8) as pool:
        for part, answers in pool.map(work, range(16)):
            assert answers == [expected[positions.index(p)] for p in part]


def assert_runs_beside(work, done, too_short):
    """Runs `work` (which sets `done` when it ends) in a thread and counts in this
    one meanwhile: with the GIL held by `work`, this thread could not count."""
    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(0.2)
    ticks = 0
    started = time.monotonic()
    while time.monotonic() - started < 0.5:
        ticks += 1
    running = not done.is_set()
    worker.join()
    assert running, too_short
    assert ticks > 10_000


def test_solve_releases_the_gil():
    """A second thread runs while a search does: with the GIL held it could not."""
    done = threading.Event()

    def search():
        try:
            tb.solve("3x4", time_limit=1.5)
        except tb.SearchLimitError:
            pass
        done.set()

    assert_runs_beside(search, done, "the search ended before the check (it should take 1.5 s)")


def test_probe_releases_the_gil(tables):
    """The same for a probe whose search fallback runs long (29 open lines of 3x4)."""
    t = tb.open(tables["3x4b2"], search_limit=31, time_limit=1.5)
    done = threading.Event()
    results = []

    def probe():
        try:
            results.append(t.probe("h0.0,h0.1"))
        except tb.SearchLimitError as e:
            results.append(e)
        done.set()

    assert_runs_beside(
        probe, done, "the probe ended before the check (its search should take 1.5 s)"
    )
    assert isinstance(results[0], tb.SearchLimitError)
    assert results[0].reason == "time limit"


# --- every game through one interface -------------------------------------------------

# A Qubic start whose strategy is proven in a few seconds (as in tests/qubic_strategy.rs).
QUBIC_START = "0-3-60-21-15-63-12"


@pytest.fixture(scope="session")
def qubic_table(tmp_path_factory):
    path = tmp_path_factory.mktemp("qubic") / "q.tb"
    run("build", "qubic", "--start", QUBIC_START, "--db", path, "--quiet")
    return path


def test_qubic_probes_equal_cli_json(qubic_table):
    t = tb.open(qubic_table)
    assert (t.game, t.board) == ("qubic", None)
    empty = [c for c in range(64) if str(c) not in QUBIC_START.split("-")]
    positions = ["start", QUBIC_START] + [f"{QUBIC_START}-{c}" for c in empty[:12]] + ["0-0", "nonsense"]
    want = cli_probe(qubic_table, positions)
    assert t.probe_many(positions, errors="return") == want
    assert t.probe("start") == want[0] and want[0]["to_move"] == "O"
    # X to move after any O reply: X wins with a move (the strategy covers every reply).
    for answer in want[2:14]:
        assert answer["to_move"] == "X" and answer["result"] == "win", answer
    with pytest.raises(tb.PositionError):
        t.probe("0-0")
    assert t.info() == json.loads(run("info", "--db", qubic_table, "--json"))


def test_search_bounds_do_not_apply_to_tables_without_search(tables, qubic_table):
    for db in [tables["morris"], qubic_table]:
        for bound in [dict(search_limit=3), dict(max_nodes=10), dict(time_limit=1.0)]:
            with pytest.raises(ValueError, match="no search fallback"):
                tb.open(db, **bound)


def test_close_and_context_manager(tables):
    db = tables["2x2"]
    with tb.open(db) as t:
        assert t.probe("start") == cli_probe(db, ["start"])[0]
        assert not t.closed
    assert t.closed and "closed" in repr(t)
    with pytest.raises(tb.TableError, match="closed"):
        t.probe("start")
    with pytest.raises(tb.TableError):
        t.probe_many(["start"] * 100)
    t.close()  # twice is harmless


def test_table_error_kinds(tables, tmp_path):
    with pytest.raises(tb.TableError) as caught:
        tb.open(tmp_path / "missing.tb")
    assert caught.value.kind == "missing"
    text = tmp_path / "text.tb"
    text.write_text("not a table\n" * 100)
    with pytest.raises(tb.TableError) as caught:
        tb.open(text)
    assert caught.value.kind == "not_a_table"
    empty = tmp_path / "empty.tb"
    sqlite3.connect(empty).close()
    with pytest.raises(tb.TableError) as caught:
        tb.open(empty)
    assert caught.value.kind == "schema"
    db = tampered_3x3(tables, tmp_path / "kinds.tb", "UPDATE chunks SET checksum = checksum + 1 WHERE n = 2")
    with pytest.raises(tb.TableError) as caught:
        tb.open(db).probe("h0.0")
    assert caught.value.kind == "damaged"
    [want] = cli_probe(db, ["h0.0"])
    assert (want["kind"], want["table_error"]) == ("table", "damaged")
