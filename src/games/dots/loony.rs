//! Loony-move analysis (Wilson's `analyzeL`): besides its value, which side can be
//! forced to make the next loony move under best play.
//!
//! **Loony move.** Berlekamp calls a move loony when it lets the opponent choose
//! between taking everything offered and declining the last two boxes (keeping
//! control): offering a long chain or a loop, or a two-chain the half-hearted way.
//! Wilson's program finds them with a local test, which we adopt as the definition:
//! a position *offers a loony capture* when the side to move can complete a box X
//! by drawing a line whose other box Y has exactly two of its other three lines
//! drawn (so after taking X the mover could take Y too, or decline both). A move
//! that completes no box is loony when the position after it offers a loony
//! capture ([`Detector::offers`]).
//!
//! **The flag.** Under best play on the value (net future boxes, unchanged), each
//! side prefers, among its value-best moves, that the other side makes the next
//! loony move, and else that nobody does ([`Loony`], ordered by that preference
//! for the side to move). A loony move makes its maker the one who made the next
//! loony move; a move that completes boxes keeps the side to move, any other move
//! swaps the sides' roles. The result is a minimax on (value, flag), which
//! [`key`] packs into one comparable number: `4 * value + flag`.
//!
//! **Stored form.** A position stores its value, its flag and whether it offers a
//! loony capture (what its parents need) in one byte: `(value - MIN_VALUE) * 6 +
//! flag + 3 * offers` ([`encode`]), values `MIN_VALUE..=MAX_VALUE`.

use super::board::{Board, Lines};

/// Who can be forced to make the next loony move, seen from the side to move, in
/// the order the side to move prefers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Loony {
    /// The side to move (Wilson's `v` when it is A).
    Mover = 0,
    /// Neither: no loony move is left under best play.
    Neither = 1,
    /// The opponent of the side to move.
    Opponent = 2,
}

impl Loony {
    fn from_bits(bits: u8) -> Loony {
        match bits {
            0 => Loony::Mover,
            1 => Loony::Neither,
            _ => Loony::Opponent,
        }
    }

    /// The same fact seen from the other side.
    pub fn swapped(self) -> Loony {
        match self {
            Loony::Mover => Loony::Opponent,
            Loony::Neither => Loony::Neither,
            Loony::Opponent => Loony::Mover,
        }
    }

    /// The mark after a value (docs/FORMAT.md §3.4): `^` when the opponent can be
    /// forced to make the next loony move, `v` when the side to move can, nothing
    /// when neither.
    pub fn mark(self) -> &'static str {
        match self {
            Loony::Mover => "v",
            Loony::Neither => "",
            Loony::Opponent => "^",
        }
    }

    /// The JSON field value: `"mover"`, `"opponent"`, or `None` for null.
    pub fn json(self) -> Option<&'static str> {
        match self {
            Loony::Mover => Some("mover"),
            Loony::Neither => None,
            Loony::Opponent => Some("opponent"),
        }
    }
}

/// Serialises a present flag as docs/FORMAT.md §3.4 fixes it in JSON (`"mover"`,
/// `"opponent"`, null for neither); for `Option<Loony>` fields skipped when `None`.
pub fn serialize_flag<S: serde::Serializer>(flag: &Option<Loony>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_some(&flag.and_then(Loony::json))
}

/// Least value a loony byte holds.
pub const MIN_VALUE: i32 = -21;
/// Greatest value a loony byte holds (42 values times 6 flag states fit a byte).
pub const MAX_VALUE: i32 = 20;

/// A position's value, flag and whether it offers a loony capture, as stored.
pub fn encode(value: i32, flag: Loony, offers: bool) -> u8 {
    assert!(
        (MIN_VALUE..=MAX_VALUE).contains(&value),
        "loony values are {MIN_VALUE}..={MAX_VALUE}"
    );
    ((value - MIN_VALUE) * 6 + flag as i32 + 3 * offers as i32) as u8
}

/// The inverse of [`encode`]; `None` for a byte [`encode`] never gives.
pub fn decode(byte: u8) -> Option<(i32, Loony, bool)> {
    let (value, rest) = (byte as i32 / 6 + MIN_VALUE, byte % 6);
    (value <= MAX_VALUE).then(|| (value, Loony::from_bits(rest % 3), rest >= 3))
}

/// What a pass over a block's loony bytes does to each, told whether its position
/// offers a loony capture ([`Detector::map_offers`]).
pub trait OfferMap: Copy {
    /// The new byte of a position whose byte is `x`.
    fn map(self, offers: bool, x: i8) -> i8;
}

/// A byte of [`encode`] with its offer bit set: files leave the bit out (all but
/// legacy format 2; it follows from the position), readers put it back. A byte [`encode`]
/// never gives is left as it is, for the reader to refuse. Branch-free arithmetic,
/// so that a block's pass vectorises.
#[derive(Debug, Clone, Copy)]
pub struct SetOffers;

impl OfferMap for SetOffers {
    #[inline(always)]
    fn map(self, offers: bool, x: i8) -> i8 {
        let byte = x as u8 as u32;
        let (index, flag, _) = split(byte);
        if byte >= ENCODED_BYTES {
            x
        } else {
            (6 * index + flag + 3 * offers as u32) as u8 as i8
        }
    }
}

/// Values a loony byte holds.
const SPAN: u32 = (MAX_VALUE - MIN_VALUE + 1) as u32;
/// Bytes [`encode`] gives: `0..ENCODED_BYTES`.
const ENCODED_BYTES: u32 = 6 * SPAN;

/// A byte below [`ENCODED_BYTES`] split as [`decode`] does, in branch-free
/// arithmetic (so that a block's pass vectorises): the value's index
/// (`value - MIN_VALUE`), the flag's bits and the offer bit (3 when set).
#[inline(always)]
fn split(byte: u32) -> (u32, u32, u32) {
    // byte / 6, exact for every byte (171 / 1024 errs by less than 1/12 of 6).
    let index = (byte * 171) >> 10;
    let rest = byte - 6 * index;
    let offers = if rest >= 3 { 3 } else { 0 };
    (index, rest - offers, offers)
}

/// The kernel's key (the best move's, see [`key`]) turned into the position's byte
/// ([`entry_of_key`]) in branch-free arithmetic; a key no kernel gives becomes 255,
/// a byte [`encode`] never gives, which readers refuse.
#[derive(Debug, Clone, Copy)]
pub struct EntryOfKey;

impl OfferMap for EntryOfKey {
    #[inline(always)]
    fn map(self, offers: bool, key: i8) -> i8 {
        let key = key as i32;
        let (value, flag) = (key >> 2, key & 3);
        let byte = 6 * (value - MIN_VALUE) + flag + 3 * offers as i32;
        if flag == 3 || !(MIN_VALUE..=MAX_VALUE).contains(&value) {
            -1
        } else {
            byte as u8 as i8
        }
    }
}

/// A loony byte (of [`encode`]) with its value `v` replaced by `left - v`, wrapped
/// into the 42 values a byte holds so that the map is its own inverse on every byte:
/// loony files of `value_form=boxes-left` store values in the boxes-left form
/// ([`super::boxes_left`]), `left` being the position's boxes left (at most 32). With
/// `clear_offers` the offer bit is cleared too (a byte's stored form). Branch-free
/// arithmetic, so that a block's pass vectorises; a byte [`encode`] never gives is
/// left as it is, for the reader to refuse.
#[derive(Debug, Clone, Copy)]
pub struct FlipLoony {
    /// Clear the offer bit as well.
    pub clear_offers: bool,
}

impl super::boxes_left::LeftMap for FlipLoony {
    #[inline(always)]
    fn map(self, left: u32, x: i8) -> i8 {
        let byte = x as u8 as u32;
        let (index, flag, offers) = split(byte);
        let rest = if self.clear_offers {
            flag
        } else {
            flag + offers
        };
        // The value `index + MIN_VALUE` becomes `left - value`, wrapped into 42.
        let flipped = left + SPAN - index;
        let flipped = if flipped >= SPAN {
            flipped - SPAN
        } else {
            flipped
        };
        if byte >= ENCODED_BYTES {
            x
        } else {
            (flipped * 6 + rest) as u8 as i8
        }
    }
}

/// The comparable key of a value and flag: a greater key is better for the side
/// it belongs to (value first, then the flag).
pub fn key(value: i32, flag: Loony) -> i32 {
    4 * value + flag as i32
}

/// The value and flag of a key.
pub fn unkey(key: i32) -> (i32, Loony) {
    (key.div_euclid(4), Loony::from_bits(key.rem_euclid(4) as u8))
}

/// The key of a move, for the side making it, from the child's stored byte and the
/// boxes the move completes.
pub fn move_key(boxes: u32, child: u8) -> Option<i32> {
    let (value, flag, offers) = decode(child)?;
    Some(if boxes > 0 {
        key(value + boxes as i32, flag)
    } else if offers {
        // A loony move: its maker made the next loony move.
        key(-value, Loony::Mover)
    } else {
        key(-value, flag.swapped())
    })
}

/// The stored byte of a position from the kernel's key (the best move's) and
/// whether the position offers a loony capture.
pub fn entry_of_key(key: i8, offers: bool) -> u8 {
    let (value, flag) = unkey(key as i32);
    encode(value, flag, offers)
}

/// Finds loony captures with a few shifts and masks per position: per box, four
/// bit maps (which of its top, bottom, left and right lines are drawn), their sum
/// bit-sliced.
#[derive(Debug, Clone)]
pub struct Detector {
    cols: usize,
    rows: usize,
    /// Boxes of the board, bit r * cols + c.
    boxes: u32,
    /// Boxes in the first and in the last column.
    first_col: u32,
    last_col: u32,
    /// Index of the first vertical line.
    verticals: usize,
}

impl Detector {
    /// The detector for `board`.
    pub fn new(board: &Board) -> Detector {
        let (rows, cols) = (board.rows(), board.cols());
        // A box per bit of a u32 (half the width of a u64, twice the positions per
        // vector in the passes): a board of at most 64 lines has at most 25 boxes.
        assert!(rows * cols <= 32, "box maps of 32 bits");
        let mut first_col = 0;
        let mut last_col = 0;
        for r in 0..rows {
            first_col |= 1 << (r * cols);
            last_col |= 1 << (r * cols + cols - 1);
        }
        Detector {
            cols,
            rows,
            boxes: board_box_mask(rows * cols),
            first_col,
            last_col,
            verticals: (rows + 1) * cols,
        }
    }

    /// Whether the side to move in `lines` can make a loony capture (see the module
    /// documentation): the move before was loony if it completed no box.
    pub fn offers(&self, lines: Lines) -> bool {
        self.offers_in(self.sides(lines))
    }

    /// Which sides of each box `lines` draws. Per side a linear map, so the sides of
    /// a union are the union of the sides ([`BoxSides::union`]).
    pub fn sides(&self, lines: Lines) -> BoxSides {
        let cols = self.cols;
        let row = board_box_mask(cols) as Lines;
        let (mut left, mut right) = (0u32, 0u32);
        for r in 0..self.rows {
            let first = self.verticals + r * (cols + 1);
            left |= (((lines >> first) & row) as u32) << (r * cols);
            right |= (((lines >> (first + 1)) & row) as u32) << (r * cols);
        }
        BoxSides {
            top: lines as u32 & self.boxes,
            bottom: (lines >> cols) as u32 & self.boxes,
            left,
            right,
        }
    }

    /// [`Detector::offers`] of the position whose box sides are `sides`.
    #[inline]
    pub fn offers_in(&self, sides: BoxSides) -> bool {
        let BoxSides {
            top,
            bottom,
            left,
            right,
        } = sides;
        // Bit-sliced count of the four maps: low + 2 mid + 4 high.
        let (x, y) = (top ^ bottom, left ^ right);
        let (xy, lr) = (top & bottom, left & right);
        let low = x ^ y;
        let carry = x & y;
        let mid = xy ^ lr ^ carry;
        let high = (xy & lr) | ((xy ^ lr) & carry);
        let three = low & mid & !high;
        let two = !low & mid & !high & self.boxes;
        // A three-sided box whose open side leads to a box with two others drawn.
        let cols = self.cols;
        let up = three & !top & (two << cols);
        let down = three & !bottom & (two >> cols);
        let west = three & !left & (two << 1) & !self.first_col;
        let east = three & !right & (two >> 1) & !self.last_col;
        (up | down | west | east) != 0
    }
}

/// [`Detector::map_offers`]'s loop, compiled twice (see [`crate::sys::cpu_dispatch`]).
#[inline(always)]
fn map_offers_body<M: OfferMap>(
    detector: &Detector,
    base: BoxSides,
    sides: &[BoxSides],
    values: &mut [i8],
    m: M,
) {
    // Two loops per slice of a run, each of which vectorises (one loop doing both
    // does not: a third of a loony build when it was tried).
    let mut offers = [0u8; 256];
    for (values, sides) in values
        .chunks_mut(offers.len())
        .zip(sides.chunks(offers.len()))
    {
        let offers = &mut offers[..values.len()];
        for (o, &s) in offers.iter_mut().zip(sides) {
            *o = detector.offers_in(base.union(s)) as u8;
        }
        for (x, &o) in values.iter_mut().zip(offers.iter()) {
            *x = m.map(o != 0, *x);
        }
    }
}

crate::sys::cpu_dispatch!(
    map_offers_dispatch,
    map_offers_avx2,
    map_offers_body,
    [M: OfferMap],
    (detector: &Detector, base: BoxSides, sides: &[BoxSides], values: &mut [i8], m: M),
    ["avx2"]
);

impl Detector {
    /// Maps each of `values` by `m`, told whether the position of `base` united
    /// with the matching `sides` offers a loony capture ([`Detector::offers_in`]):
    /// one vectorised loop over a run's positions.
    pub fn map_offers<M: OfferMap>(
        &self,
        base: BoxSides,
        sides: &[BoxSides],
        values: &mut [i8],
        m: M,
    ) {
        assert_eq!(sides.len(), values.len(), "one position per value");
        map_offers_dispatch(self, base, sides, values, m);
    }
}

/// Which sides of each box a set of lines draws: bit `r * cols + c` of each map for
/// box (r, c).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BoxSides {
    /// Top sides.
    pub top: u32,
    /// Bottom sides.
    pub bottom: u32,
    /// Left sides.
    pub left: u32,
    /// Right sides.
    pub right: u32,
}

impl BoxSides {
    /// The sides of the union of two sets of lines.
    #[inline]
    pub fn union(self, other: BoxSides) -> BoxSides {
        BoxSides {
            top: self.top | other.top,
            bottom: self.bottom | other.bottom,
            left: self.left | other.left,
            right: self.right | other.right,
        }
    }
}

/// The lowest `n` bits.
fn board_box_mask(n: usize) -> u32 {
    if n >= 32 { u32::MAX } else { (1 << n) - 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`SetOffers`] by its definition: decode, encode with the offer bit.
    fn with_offers(byte: u8, offers: bool) -> u8 {
        match decode(byte) {
            Some((value, flag, _)) => encode(value, flag, offers),
            None => byte,
        }
    }

    #[test]
    fn the_arithmetic_offer_maps_are_their_definitions() {
        for offers in [false, true] {
            for byte in 0..=255u8 {
                let got = SetOffers.map(offers, byte as i8) as u8;
                assert_eq!(got, with_offers(byte, offers), "{byte} {offers}");
            }
            for k in -128..=127i32 {
                let (value, flag) = (k.div_euclid(4), k.rem_euclid(4));
                let expected = if (MIN_VALUE..=MAX_VALUE).contains(&value) && flag < 3 {
                    entry_of_key(k as i8, offers)
                } else {
                    255
                };
                assert_eq!(
                    EntryOfKey.map(offers, k as i8) as u8,
                    expected,
                    "{k} {offers}"
                );
            }
        }
    }

    /// The boxes-left flip of a loony byte by its definition: decode, `left - v`
    /// wrapped into the 42 values, encode.
    fn flip_value(left: u32, byte: u8) -> u8 {
        match decode(byte) {
            Some((value, flag, offers)) => {
                let span = MAX_VALUE - MIN_VALUE + 1;
                let flipped = (left as i32 - value - MIN_VALUE).rem_euclid(span) + MIN_VALUE;
                encode(flipped, flag, offers)
            }
            None => byte,
        }
    }

    #[test]
    fn the_arithmetic_flip_is_flip_value() {
        use crate::games::dots::boxes_left::LeftMap;
        for left in 0..=32 {
            for byte in 0..=255u8 {
                let keep = FlipLoony {
                    clear_offers: false,
                };
                let clear = FlipLoony { clear_offers: true };
                assert_eq!(keep.map(left, byte as i8) as u8, flip_value(left, byte));
                let stored = flip_value(left, with_offers(byte, false));
                assert_eq!(clear.map(left, byte as i8) as u8, stored, "{left} {byte}");
            }
        }
    }

    #[test]
    fn flip_value_is_its_own_inverse_and_subtracts_from_boxes_left() {
        for left in 0..=25 {
            for byte in 0..=255u8 {
                let flipped = flip_value(left, byte);
                assert_eq!(flip_value(left, flipped), byte, "{left} {byte}");
                match (decode(byte), decode(flipped)) {
                    (Some((v, f, o)), Some((w, g, p))) => {
                        assert_eq!((f, o), (g, p));
                        assert_eq!((left as i32 - v).rem_euclid(42), w.rem_euclid(42));
                        if (MIN_VALUE..=MAX_VALUE).contains(&(left as i32 - v)) {
                            assert_eq!(w, left as i32 - v);
                        }
                    }
                    (None, None) => assert_eq!(flipped, byte),
                    _ => panic!("{left} {byte}: a byte and its flip of different kinds"),
                }
            }
        }
    }

    /// The definition, box by box.
    fn offers_slowly(board: &Board, lines: Lines) -> bool {
        let drawn = |l: usize| lines >> l & 1 == 1;
        (0..board.num_lines()).filter(|&l| !drawn(l)).any(|l| {
            let boxes = board.boxes_of_line(l);
            let sides = |&(r, c): &(usize, usize)| {
                board.box_lines(r, c).iter().filter(|&&m| drawn(m)).count()
            };
            boxes.len() == 2
                && ((sides(&boxes[0]) == 3 && sides(&boxes[1]) == 2)
                    || (sides(&boxes[1]) == 3 && sides(&boxes[0]) == 2))
        })
    }

    #[test]
    fn the_bit_maps_find_what_the_definition_finds() {
        let mut random = crate::test_rng::xorshift(0x9e37_79b9_7f4a_7c15);
        let mut found = 0;
        for (rows, cols) in [
            (1, 2),
            (2, 2),
            (2, 3),
            (3, 3),
            (3, 4),
            (4, 4),
            (4, 5),
            (5, 5),
            // The longest rows of boards of at most 64 lines: 2x12 (box bits up to
            // 23, shifts by 12) and 1x21 (shifts by 21; one row, so only the
            // left and right neighbours count).
            (2, 12),
            (1, 21),
        ] {
            let board = Board::new(rows, cols).unwrap();
            let detector = Detector::new(&board);
            for _ in 0..4000 {
                let seed = random();
                // Dense positions, where boxes have two or three sides.
                let lines = (seed | seed.rotate_left(23)) & board.all_lines();
                let expected = offers_slowly(&board, lines);
                assert_eq!(detector.offers(lines), expected, "{rows}x{cols} {lines:#x}");
                // Sides of a union, as the block passes take them (a base and a
                // last-group subset).
                let part = seed.rotate_left(7) & lines;
                let union = detector.sides(part).union(detector.sides(lines & !part));
                assert_eq!(
                    detector.offers_in(union),
                    expected,
                    "{rows}x{cols} {lines:#x}"
                );
                found += expected as u32;
            }
        }
        assert!(found > 1000, "{found}");
    }

    #[test]
    fn bytes_round_trip_and_keys_order_value_first() {
        for value in MIN_VALUE..=MAX_VALUE {
            for flag in [Loony::Mover, Loony::Neither, Loony::Opponent] {
                for offers in [false, true] {
                    let byte = encode(value, flag, offers);
                    assert_eq!(decode(byte), Some((value, flag, offers)));
                    assert_eq!(unkey(key(value, flag)), (value, flag));
                }
            }
        }
        assert_eq!(decode(252), None);
        assert!(key(1, Loony::Mover) > key(0, Loony::Opponent));
        assert!(key(-1, Loony::Opponent) > key(-1, Loony::Neither));
    }

    #[test]
    fn moves_carry_the_flag_as_the_rules_say() {
        let child = encode(3, Loony::Opponent, false);
        // A capture keeps the side to move: its flag as it is.
        assert_eq!(move_key(2, child), Some(key(5, Loony::Opponent)));
        // A quiet move swaps the roles.
        assert_eq!(move_key(0, child), Some(key(-3, Loony::Mover)));
        let neither = encode(-2, Loony::Neither, false);
        assert_eq!(move_key(0, neither), Some(key(2, Loony::Neither)));
        // A quiet move into a loony capture is the loony move.
        let offered = encode(-2, Loony::Mover, true);
        assert_eq!(move_key(0, offered), Some(key(2, Loony::Mover)));
        assert_eq!(move_key(1, offered), Some(key(-1, Loony::Mover)));
    }
}
