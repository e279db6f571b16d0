//! Board geometry of Nine Men's Morris, derived from the point coordinates alone.
//!
//! Files a..g are x = 0..6, ranks 1..7 are y = 0..6; the centre (3, 3) is not a point.
//! A point's ring is its Chebyshev distance from the centre: 3 outer, 2 middle, 1 inner.

/// Number of points on the board.
pub const NUM_POINTS: usize = 24;

/// Mask of all 24 points.
pub const ALL: u32 = (1 << NUM_POINTS) - 1;

/// Point names in the fixed algebraic order (index 0..23), docs/FORMAT.md §4.1.
pub const POINT_NAMES: [&str; NUM_POINTS] = [
    "a1", "d1", "g1", "b2", "d2", "f2", "c3", "d3", "e3", "a4", "b4", "c4", "e4", "f4", "g4", "c5",
    "d5", "e5", "b6", "d6", "f6", "a7", "d7", "g7",
];

/// Coordinates (x, y) of a point, read off its name.
pub fn coords(p: usize) -> (i32, i32) {
    let b = POINT_NAMES[p].as_bytes();
    (i32::from(b[0] - b'a'), i32::from(b[1] - b'1'))
}

/// The point at (x, y), if there is one.
pub fn point_at(x: i32, y: i32) -> Option<usize> {
    (0..NUM_POINTS).find(|&p| coords(p) == (x, y))
}

/// Index of a point name such as `d6`.
pub fn parse_point(name: &str) -> Option<usize> {
    POINT_NAMES.iter().position(|&n| n == name)
}

/// Ring of a point: 3 outer, 2 middle, 1 inner.
pub fn ring(p: usize) -> i32 {
    let (x, y) = coords(p);
    (x - 3).abs().max((y - 3).abs())
}

/// Iterates over the indices of the set bits of a mask, lowest first.
pub fn bits(mut mask: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if mask == 0 {
            None
        } else {
            let p = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            Some(p)
        }
    })
}

/// Adjacency and mills, as bit masks over the 24 points.
#[derive(Clone, Debug)]
pub struct Geometry {
    /// `adjacent[p]`: the points one step from `p`.
    pub adjacent: [u32; NUM_POINTS],
    /// The 16 mills (3-point masks).
    pub mills: Vec<u32>,
    /// `mills_of[p]`: the two mills through `p`.
    pub mills_of: [[u32; 2]; NUM_POINTS],
}

impl Default for Geometry {
    fn default() -> Self {
        Self::new()
    }
}

impl Geometry {
    /// Derives adjacency and mills from the coordinates.
    pub fn new() -> Self {
        let mask_of = |pred: &dyn Fn(i32, i32, i32) -> bool| -> u32 {
            (0..NUM_POINTS)
                .filter(|&p| {
                    let (x, y) = coords(p);
                    pred(x, y, ring(p))
                })
                .fold(0, |m, p| m | 1 << p)
        };

        // Two points are adjacent when they share a row or column and are either
        // consecutive on the same ring (distance = ring size) or consecutive on a
        // cross line (neighbouring rings, distance 1).
        let mut adjacent = [0u32; NUM_POINTS];
        for (p, adj) in adjacent.iter_mut().enumerate() {
            let (x1, y1) = coords(p);
            for q in 0..NUM_POINTS {
                let (x2, y2) = coords(q);
                if p == q || (x1 != x2 && y1 != y2) {
                    continue;
                }
                let d = (x1 - x2).abs() + (y1 - y2).abs();
                let (r1, r2) = (ring(p), ring(q));
                if (r1 == r2 && d == r1) || ((r1 - r2).abs() == 1 && d == 1) {
                    *adj |= 1 << q;
                }
            }
        }

        // Mills: the 3 points of each side of each ring, then the 4 cross lines.
        let mut mills = Vec::new();
        for r in 1..=3 {
            for c in [3 - r, 3 + r] {
                mills.push(mask_of(&|x, _, ring| ring == r && x == c));
                mills.push(mask_of(&|_, y, ring| ring == r && y == c));
            }
        }
        mills.push(mask_of(&|x, y, _| x == 3 && y < 3));
        mills.push(mask_of(&|x, y, _| x == 3 && y > 3));
        mills.push(mask_of(&|x, y, _| y == 3 && x < 3));
        mills.push(mask_of(&|x, y, _| y == 3 && x > 3));

        let mut mills_of = [[0u32; 2]; NUM_POINTS];
        for (p, slot) in mills_of.iter_mut().enumerate() {
            let through: Vec<u32> = mills.iter().copied().filter(|m| m >> p & 1 == 1).collect();
            assert_eq!(through.len(), 2, "every point lies on exactly two mills");
            *slot = [through[0], through[1]];
        }
        Geometry {
            adjacent,
            mills,
            mills_of,
        }
    }

    /// Whether `stones` (a side's stones after a move) has a complete mill through `to`.
    pub fn closes_mill(&self, stones: u32, to: usize) -> bool {
        let [a, b] = self.mills_of[to];
        stones & a == a || stones & b == b
    }

    /// The stones of `stones` that stand in one of its complete mills.
    pub fn in_mills(&self, stones: u32) -> u32 {
        self.mills
            .iter()
            .filter(|&&m| stones & m == m)
            .fold(0, |acc, &m| acc | m)
    }

    /// The stones of `stones` that the other side may remove: those outside mills,
    /// or all of them when every one stands in a mill.
    pub fn removable(&self, stones: u32) -> u32 {
        let free = stones & !self.in_mills(stones);
        if free == 0 { stones } else { free }
    }

    /// Calls `f(from, to, capture)` for every legal move of `mover` against `opp`:
    /// one call per distinct (move, capture) choice; `capture` is `None` for a move
    /// that closes no mill.
    pub fn for_each_move(
        &self,
        mover: u32,
        opp: u32,
        mut f: impl FnMut(usize, usize, Option<usize>),
    ) {
        let empty = ALL & !(mover | opp);
        let flying = mover.count_ones() == 3;
        let removable = self.removable(opp);
        for from in bits(mover) {
            let targets = if flying {
                empty
            } else {
                self.adjacent[from] & empty
            };
            for to in bits(targets) {
                let after = mover ^ (1 << from) ^ (1 << to);
                if self.closes_mill(after, to) {
                    for c in bits(removable) {
                        f(from, to, Some(c));
                    }
                } else {
                    f(from, to, None);
                }
            }
        }
    }

    /// Calls `f(pred_mover, pred_opp)` for every position from which a non-capturing
    /// move leads to (`mover` to move, `opp`): the side owning `opp` just moved a stone
    /// onto a point where it closed no mill.
    pub fn for_each_unmove(&self, mover: u32, opp: u32, mut f: impl FnMut(u32, u32)) {
        let empty = ALL & !(mover | opp);
        let flying = opp.count_ones() == 3;
        for to in bits(opp) {
            if self.closes_mill(opp, to) {
                continue; // that move would have captured, leaving the table pair
            }
            let sources = if flying {
                empty
            } else {
                self.adjacent[to] & empty
            };
            for from in bits(sources) {
                f(opp ^ (1 << to) ^ (1 << from), mover);
            }
        }
    }
}
