"""probe_many throughput on a warm Dots-and-Boxes book.

    python python/bench_probe_many.py 3x4.tb [--positions 400000] [--batch 10000]

Random positions with fewer lines than the deepest book layer (so every move's
value is in the book too), as 0/1 strings; one warm-up pass over all of them
(the chunk cache fills), then the timed passes (best of --passes):

* probe_many: `t.probe_many(batch)` batch after batch, each list of answers
  dropped when the next one is made (its deallocation is timed too);
* probe_many(moves=False): the same, values only;
* probe_iter: `for answer in t.probe_iter(positions)`, counting each answer's
  moves;
* probe: `t.probe(p)` one position at a time, 100,000 of them.
"""

import argparse
import os
import platform
import random
import time

import tb


def positions(lines, most, count, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        bits = ["0"] * lines
        for i in rng.sample(range(lines), rng.randint(0, most)):
            bits[i] = "1"
        out.append("".join(bits))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--positions", type=int, default=400_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--readers", type=int, default=None)
    args = parser.parse_args()

    t = tb.open(args.db, readers=args.readers)
    info = t.info()
    book = info["book_lines"]
    ps = positions(info["lines"], book - 1, args.positions, 1)
    batches = [ps[i : i + args.batch] for i in range(0, len(ps), args.batch)]

    def run(moves=True):
        started = time.perf_counter()
        for batch in batches:
            answers = t.probe_many(batch, moves=moves)
            assert len(answers) == len(batch)
        return time.perf_counter() - started

    warm = run()
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores")
    print(f"{info['board']}: {len(ps)} positions of at most {book - 1} lines, "
          f"batches of {args.batch}; warm-up pass {len(ps) / warm:,.0f} positions/s")
    best = min(run() for _ in range(args.passes))
    print(f"probe_many: {len(ps) / best:,.0f} positions/s (best of {args.passes} passes, "
          f"{best:.2f} s per pass)")
    best = min(run(moves=False) for _ in range(args.passes))
    print(f"probe_many(moves=False): {len(ps) / best:,.0f} positions/s (best of "
          f"{args.passes} passes, {best:.2f} s per pass)")

    def stream():
        started = time.perf_counter()
        moves = 0
        for answer in t.probe_iter(ps):
            moves += len(answer["moves"])
        return time.perf_counter() - started

    best = min(stream() for _ in range(args.passes))
    print(f"probe_iter: {len(ps) / best:,.0f} positions/s (best of {args.passes} passes, "
          f"each answer's moves counted)")
    started = time.perf_counter()
    sample = ps[:100_000]
    for p in sample:
        t.probe(p)
    single = time.perf_counter() - started
    print(f"probe (one at a time): {len(sample) / single:,.0f} positions/s")


if __name__ == "__main__":
    main()
