//! Sectors: the positions with given stones on the board and in hand of the side
//! to move and of its opponent, the unit of the rule sets where a side with
//! stones in hand may also move (Lasker Morris), whose two hands are therefore
//! independent.
//!
//! A non-capturing move (a slide) leads from sector (m, o, hm, ho) to its
//! [`Sector::swapped`] (o, m, ho, hm): the two form a pair with cycles, solved
//! together like a moving-phase pair (`solve`). Every other move leaves the pair:
//! a placement to (o, m + 1, ho, hm - 1), a placement that captures to (o - 1, m +
//! 1, ho, hm - 1), a slide that captures to (o - 1, m, ho, hm). Each lowers the
//! pair's [`Sector::rank`] (2 x stones in hand + stones on the board, both sides),
//! so pairs solved by increasing rank find their exits solved. With both hands
//! empty a sector pair is the moving-phase pair (m, o).

use super::index::MIN_STONES;

/// Stones on the board and in hand of the side to move and of its opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sector {
    /// Stones of the side to move on the board.
    pub m: u8,
    /// Stones of the opponent on the board.
    pub o: u8,
    /// Stones of the side to move in hand.
    pub hm: u8,
    /// Stones of the opponent in hand.
    pub ho: u8,
}

/// Where a kind of move out of a sector pair leads, for the side then to move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The moves win at once: the opponent is left with fewer than 3 stones.
    Win,
    /// The moves lead into this sector.
    To(Sector),
}

impl Sector {
    /// The sector of the positions with `m`, `o` stones on the board and `hm`, `ho`
    /// in hand (side to move first).
    pub const fn new(m: u8, o: u8, hm: u8, ho: u8) -> Sector {
        Sector { m, o, hm, ho }
    }

    /// The same stones with the other side to move (where a slide leads).
    pub fn swapped(self) -> Sector {
        Sector::new(self.o, self.m, self.ho, self.hm)
    }

    /// 2 x stones in hand + stones on the board, both sides: every move that leaves
    /// the pair lowers it (a placement by 1, a capture by 1, both by 2).
    pub fn rank(self) -> u32 {
        2 * (u32::from(self.hm) + u32::from(self.ho)) + u32::from(self.m) + u32::from(self.o)
    }

    /// The pair's first sector: the least of the sector and its swap.
    pub fn canonical(self) -> Sector {
        self.min(self.swapped())
    }

    /// The sectors of the pair in block order: the canonical one, then its swap
    /// unless that is the same sector.
    pub fn pair(self) -> Vec<Sector> {
        let first = self.canonical();
        if first == first.swapped() {
            vec![first]
        } else {
            vec![first, first.swapped()]
        }
    }

    /// Whether the game goes on in this sector with at most `stones` a side: both
    /// sides have 3 stones or more on the board and in hand, and no more than
    /// `stones`.
    pub fn exists(self, stones: u8) -> bool {
        let (mover, opponent) = (self.m + self.hm, self.o + self.ho);
        (MIN_STONES..=stones).contains(&mover) && (MIN_STONES..=stones).contains(&opponent)
    }

    /// Where a slide that captures leads (none while the opponent has no stone on
    /// the board: a mill closed then captures nothing, the move stays in the pair).
    pub fn slide_capture(self) -> Option<Exit> {
        (self.o > 0).then(|| self.after_capture(self.swapped()))
    }

    /// Where a placement leads (none without stones in hand).
    pub fn placement(self) -> Option<Sector> {
        (self.hm > 0).then(|| Sector::new(self.o, self.m + 1, self.ho, self.hm - 1))
    }

    /// Where a placement that captures leads (none without stones in hand, or
    /// without an opponent stone on the board).
    pub fn placement_capture(self) -> Option<Exit> {
        self.placement()
            .filter(|_| self.o > 0)
            .map(|s| self.after_capture(s))
    }

    /// `next` (the opponent to move) with one stone of the opponent captured.
    fn after_capture(self, next: Sector) -> Exit {
        if next.m + next.hm <= MIN_STONES {
            Exit::Win
        } else {
            Exit::To(Sector {
                m: next.m - 1,
                ..next
            })
        }
    }

    /// The sectors the pair's moves leave it for, each pair once (canonical
    /// sectors, sorted).
    pub fn exit_pairs(self) -> Vec<Sector> {
        let mut out: Vec<Sector> = self
            .pair()
            .into_iter()
            .flat_map(|s| {
                let captures = [s.slide_capture(), s.placement_capture()];
                captures
                    .into_iter()
                    .flatten()
                    .filter_map(|e| match e {
                        Exit::To(t) => Some(t),
                        Exit::Win => None,
                    })
                    .chain(s.placement())
                    .map(Sector::canonical)
                    .collect::<Vec<_>>()
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every sector pair of the game with `stones` a side (canonical sectors) in
    /// the order they can be solved: by [`Sector::rank`], then sector order. With
    /// `placement` false only the moving phase (both hands empty).
    pub fn all_pairs(stones: u8, placement: bool) -> Vec<Sector> {
        let hands = if placement { stones } else { 0 };
        let mut out = Vec::new();
        for m in 0..=stones {
            for o in 0..=stones {
                for hm in 0..=hands {
                    for ho in 0..=hands {
                        let s = Sector::new(m, o, hm, ho);
                        if s.exists(stones) && s.canonical() == s {
                            out.push(s);
                        }
                    }
                }
            }
        }
        out.sort_by_key(|&s| (s.rank(), s));
        out
    }

    /// `3-4 h1-0`: stones on the board, then in hand (side to move first).
    pub fn label(self) -> String {
        format!("{}-{} h{}-{}", self.m, self.o, self.hm, self.ho)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_lower_the_rank_and_stay_in_the_game() {
        for s in Sector::all_pairs(6, true) {
            for t in s.pair() {
                assert!(t.exists(6));
                assert_eq!(t.rank(), s.rank());
            }
            for e in s.exit_pairs() {
                assert!(e.exists(6), "{} -> {}", s.label(), e.label());
                assert!(e.rank() < s.rank(), "{} -> {}", s.label(), e.label());
            }
        }
        // 3 stones to the opponent (2 on the board, 1 in hand): a capture wins.
        let s = Sector::new(4, 2, 0, 1);
        assert_eq!(s.slide_capture(), Some(Exit::Win));
        assert_eq!(s.placement(), None);
        let s = Sector::new(4, 3, 2, 1);
        assert_eq!(s.slide_capture(), Some(Exit::To(Sector::new(2, 4, 1, 2))));
        // No opponent stone on the board: nothing to capture.
        assert_eq!(Sector::new(2, 0, 5, 6).slide_capture(), None);
        assert_eq!(Sector::new(2, 0, 5, 6).placement_capture(), None);
        assert_eq!(s.placement(), Some(Sector::new(3, 5, 1, 1)));
        assert_eq!(
            s.placement_capture(),
            Some(Exit::To(Sector::new(2, 5, 1, 1)))
        );
    }

    #[test]
    fn moving_pairs_are_the_hands_free_sectors() {
        let pairs = Sector::all_pairs(5, false);
        assert_eq!(pairs.len(), 6);
        assert!(pairs.iter().all(|s| s.hm == 0 && s.ho == 0 && s.m <= s.o));
    }
}
