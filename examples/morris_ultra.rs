//! Measures the probe's tie-break among moves of equal value (docs/FORMAT.md §4.3,
//! the opponent's chances to go wrong): games from the empty board of a Morris file
//! built with `--phase all`, the table's side playing either the first move of the
//! probe (best value, then the largest share of the opponent's replies that go
//! wrong: "ultra") or a uniformly random move among those of the best value
//! ("any best"), against a random-but-legal opponent or a one-ply-greedy one
//! (a move that closes a mill, and so captures, if it has one, else random), with
//! the table's side White and Black:
//!
//!   cargo run --release --example morris_ultra -- FILE [GAMES] [SEED] [CAP] [ERR]
//!
//! GAMES per line (default 1000), SEED the first seed (default 1; game g of a line
//! uses SEED + g, the same seeds on every line), CAP the plies after which a game is
//! a draw (default 200), ERR a list of percentages (default `10,30`): an opponent
//! for each that plays a move of its best value from the same tables but a random
//! legal move with that probability. Prints one line per (side, opponent, colour):
//! the table side's wins, draws and losses, and the mean length of its wins.

use anyhow::{Context, Result};
use std::path::Path;
use std::time::Instant;
use tb::games::morris::rules::{Outcome, Position};
use tb::games::morris::tablebase::MorrisTablebase;

/// Xorshift64 (seed not zero).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // SplitMix64 of the seed: nearby seeds give unrelated streams.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    /// The probe's first move.
    Ultra,
    /// Uniform among the moves of the best value.
    AnyBest,
}

#[derive(Clone, Copy, PartialEq)]
enum Opponent {
    Random,
    Greedy,
    /// A move of its best value (uniform among them) from the same tables, but a
    /// random legal move instead with this probability in percent.
    Noisy(u32),
}

impl Opponent {
    fn name(self) -> String {
        match self {
            Opponent::Random => "random".into(),
            Opponent::Greedy => "greedy".into(),
            Opponent::Noisy(p) => format!("err{p}%"),
        }
    }
}

/// How a game ended, for the table's side.
#[derive(Clone, Copy)]
enum End {
    /// Won after this many plies.
    Win(u32),
    Draw,
    Loss,
}

fn play(
    tb: &MorrisTablebase,
    side: Side,
    opponent: Opponent,
    table_white: bool,
    seed: u64,
    cap: u32,
) -> Result<End> {
    let mut rng = Rng::new(seed);
    let n = tb.spec().stones;
    let mut pos = Position::with_mover(0, 0, true, [n, n]).on(tb.spec().rules);
    for ply in 0..cap {
        let table_to_move = pos.white_to_move == table_white;
        let legal = pos.legal_moves();
        if legal.is_empty() {
            // The side to move is blocked (or has too few stones): it has lost.
            return Ok(if table_to_move {
                End::Loss
            } else {
                End::Win(ply)
            });
        }
        let outcome = if table_to_move {
            let probe = tb.probe(&pos)?;
            let best = probe.moves[0].1;
            let mv = match side {
                Side::Ultra => probe.moves[0].0,
                Side::AnyBest => {
                    let k = probe.moves.iter().take_while(|m| m.1 == best).count();
                    probe.moves[rng.below(k)].0
                }
            };
            legal
                .iter()
                .find(|(m, _)| *m == mv)
                .context("probe move not legal")?
                .1
        } else {
            let pool: Vec<&(_, Outcome)> = match opponent {
                Opponent::Random => legal.iter().collect(),
                Opponent::Greedy => {
                    let captures: Vec<_> = legal
                        .iter()
                        .filter(|(m, _)| m.capture().is_some())
                        .collect();
                    if captures.is_empty() {
                        legal.iter().collect()
                    } else {
                        captures
                    }
                }
                Opponent::Noisy(p) => {
                    if rng.below(100) < p as usize {
                        legal.iter().collect()
                    } else {
                        let probe = tb.probe(&pos)?;
                        let best = probe.moves[0].1;
                        legal
                            .iter()
                            .filter(|(m, _)| {
                                probe.moves.iter().any(|(pm, v)| pm == m && *v == best)
                            })
                            .collect()
                    }
                }
            };
            pool[rng.below(pool.len())].1
        };
        match outcome {
            Outcome::Win => {
                return Ok(if table_to_move {
                    End::Win(ply + 1)
                } else {
                    End::Loss
                });
            }
            Outcome::Child(next) => pos = next,
        }
    }
    Ok(End::Draw)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let file = args
        .first()
        .context("usage: morris_ultra FILE [GAMES] [SEED] [CAP]")?;
    let games: u64 = args.get(1).map_or(Ok(1000), |s| s.parse())?;
    let seed: u64 = args.get(2).map_or(Ok(1), |s| s.parse())?;
    let cap: u32 = args.get(3).map_or(Ok(200), |s| s.parse())?;
    // Opponents: random, greedy, and err<P>% for each P of ERR (default 10,30).
    let noisy: Vec<u32> = match args.get(4) {
        Some(list) => list
            .split(',')
            .map(|p| p.parse())
            .collect::<Result<_, _>>()?,
        None => vec![10, 30],
    };
    let opponents: Vec<Opponent> = [Opponent::Random, Opponent::Greedy]
        .into_iter()
        .chain(noisy.into_iter().map(Opponent::Noisy))
        .collect();
    let tb = MorrisTablebase::open(Path::new(file))?;
    println!(
        "{file}: {games} games a line, seeds {seed}..{}, draw after {cap} plies",
        seed + games - 1
    );
    println!(
        "{:<9} {:<7} {:<6} {:>6} {:>6} {:>6} {:>10} {:>8}",
        "side", "against", "plays", "wins", "draws", "losses", "win plies", "seconds"
    );
    for side in [Side::Ultra, Side::AnyBest] {
        for &opponent in &opponents {
            for white in [true, false] {
                let start = Instant::now();
                let (mut w, mut d, mut l, mut plies) = (0, 0, 0, 0u64);
                for g in 0..games {
                    match play(&tb, side, opponent, white, seed + g, cap)? {
                        End::Win(p) => {
                            w += 1;
                            plies += u64::from(p);
                        }
                        End::Draw => d += 1,
                        End::Loss => l += 1,
                    }
                }
                println!(
                    "{:<9} {:<7} {:<6} {w:>6} {d:>6} {l:>6} {:>10.1} {:>8.1}",
                    if side == Side::Ultra {
                        "ultra"
                    } else {
                        "any-best"
                    },
                    opponent.name(),
                    if white { "White" } else { "Black" },
                    plies as f64 / w.max(1) as f64,
                    start.elapsed().as_secs_f64()
                );
            }
        }
    }
    Ok(())
}
