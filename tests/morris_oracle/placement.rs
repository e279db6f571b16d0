//! The placement phase by brute force, from docs/FORMAT.md §4 alone: every raw
//! position with stones still in hand, solved forward from the moving-phase
//! oracle. White places first, so with `h` stones in hand in all White is to move
//! when `h` is even (both hands `h / 2`), Black when it is odd (Black one more).
//! A placement on an empty point that closes a mill removes one opponent stone
//! (outside its mills unless all are in mills; nothing when it has none on the
//! board); a side with fewer than 3 stones on the board and in hand together has
//! lost. Each placement lowers `h` by one, so layer `h` needs only layer `h - 1`
//! (and layer 0 is the moving phase).

use super::{NUM_POINTS, Oracle, Shape, Val, binom, bits};
use std::collections::BTreeMap;

/// Values of every raw placement position of the game with `stones` a side.
pub struct Placement {
    /// Stones per side.
    pub stones: u32,
    /// `layers[h][(m, o)]`: values of the raw table (m, o) (stones on the board of
    /// the side to move and of the other) with `h` in hand, by [`Shape::index`].
    layers: Vec<BTreeMap<(u32, u32), Vec<Val>>>,
}

/// Stones in hand of (side to move, other side) with `h` in hand in all.
pub fn hands(h: u32) -> (u32, u32) {
    if h.is_multiple_of(2) {
        (h / 2, h / 2)
    } else {
        (h / 2 + 1, h / 2)
    }
}

/// Every `k`-subset of the 24 points.
fn subsets(k: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(binom(NUM_POINTS as u32, k) as usize);
    fn rec(k: u32, from: usize, acc: u32, out: &mut Vec<u32>) {
        if k == 0 {
            out.push(acc);
            return;
        }
        for p in from..NUM_POINTS {
            rec(k - 1, p + 1, acc | 1 << p, out);
        }
    }
    rec(k, 0, 0, &mut out);
    out
}

impl Placement {
    /// Solves every placement position of the game with `stones` a side; `moving`
    /// must hold the moving-phase tables up to `stones`.
    pub fn solve(moving: &Oracle, stones: u32) -> Placement {
        let geo = moving.geometry();
        let sets: Vec<Vec<u32>> = (0..=stones).map(subsets).collect();
        let mut layers: Vec<BTreeMap<(u32, u32), Vec<Val>>> = vec![BTreeMap::new()];
        for h in 1..=2 * stones {
            let (hm, ho) = hands(h);
            let mut layer = BTreeMap::new();
            for m in 0..=stones - hm {
                for o in 0..=stones - ho {
                    let shape = Shape::new(m, o);
                    let mut values = vec![Val::Draw; shape.len()];
                    // The children's tables, looked up once here rather than once
                    // per move: `next` (to move) has `o` stones, or `o - 1` after a
                    // capture, and `after` (who just placed) `m + 1`.
                    let children = |n: u32| -> Box<dyn Fn(u32, u32) -> Val + '_> {
                        let a = m + 1;
                        if n + ho < 3 {
                            Box::new(|_, _| Val::Loss(0))
                        } else if h == 1 {
                            Box::new(|next, after| moving.value(next, after))
                        } else {
                            let shape = Shape::new(n, a);
                            let t = &layers[h as usize - 1][&(n, a)];
                            Box::new(move |next, after| t[shape.index(next, after)])
                        }
                    };
                    let plain = children(o);
                    let captured = children(o.saturating_sub(1));
                    for &mover in &sets[m as usize] {
                        for &opp in &sets[o as usize] {
                            if mover & opp != 0 {
                                continue;
                            }
                            let v = if m + hm < 3 {
                                Val::Loss(0)
                            } else {
                                let empty = super::ALL & !(mover | opp);
                                let removable = geo.removable(opp);
                                let mut moves = Vec::new();
                                for p in bits(empty) {
                                    let after = mover | 1 << p;
                                    if geo.closes_mill(after, p) && removable != 0 {
                                        for c in bits(removable) {
                                            moves.push(Val::from_child(captured(
                                                opp & !(1 << c),
                                                after,
                                            )));
                                        }
                                    } else {
                                        moves.push(Val::from_child(plain(opp, after)));
                                    }
                                }
                                Val::best(moves)
                            };
                            values[shape.index(mover, opp)] = v;
                        }
                    }
                    layer.insert((m, o), values);
                }
            }
            layers.push(layer);
        }
        Placement { stones, layers }
    }

    /// Value for the side to move of (mover, opp) with `h` stones in hand in all.
    pub fn value(&self, h: u32, mover: u32, opp: u32) -> Val {
        let (m, o) = (mover.count_ones(), opp.count_ones());
        self.layers[h as usize][&(m, o)][Shape::new(m, o).index(mover, opp)]
    }

    /// The raw tables (m, o) of layer `h`.
    pub fn tables(&self, h: u32) -> Vec<(u32, u32)> {
        self.layers[h as usize].keys().copied().collect()
    }
}
