//! Game values for the side to move and their one-byte encoding.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Largest ply count a value byte can hold (`byte = p + 1 <= 255`).
pub const MAX_PLIES: u32 = 254;

/// The byte of every win in a file that stores wins without their distance
/// (`MorrisSpec::marks_wins`): `W1`'s. A reader recomputes the distance from the
/// position's moves ([`super::solve::won_value`]).
pub const WIN_MARK: u8 = 2;

/// A value byte as a file that marks wins stores it: every win's byte
/// [`WIN_MARK`], draws and losses as they are.
pub fn mark_win(byte: u8) -> u8 {
    if byte != 0 && byte.is_multiple_of(2) {
        WIN_MARK
    } else {
        byte
    }
}

/// Value of a position for the side to move (or of a move for the side playing it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// Wins; the game ends after this many plies (always odd).
    Win(u8),
    /// Loses after this many plies (always even; `Loss(0)` = has lost).
    Loss(u8),
    /// Draw.
    Draw,
}

/// Errors of value notation and encoding.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ValueError {
    /// The text is not `W<p>`, `L<p>` or `D`.
    #[error("bad value {0:?}: expected W<plies>, L<plies> or D")]
    Syntax(String),
    /// A win needs an odd ply count, a loss an even one.
    #[error("bad value {0:?}: a win has odd plies, a loss even plies")]
    Parity(String),
    /// More plies than a byte can hold.
    #[error("{0} plies do not fit a value byte (at most {MAX_PLIES})")]
    TooLong(u32),
}

impl Value {
    /// The value with `plies` plies, a win if `plies` is odd, else a loss.
    pub fn from_plies(plies: u32) -> Result<Value, ValueError> {
        if plies > MAX_PLIES {
            return Err(ValueError::TooLong(plies));
        }
        let p = plies as u8;
        Ok(if p % 2 == 1 {
            Value::Win(p)
        } else {
            Value::Loss(p)
        })
    }

    /// One byte: 0 = draw, otherwise plies + 1 (parity of the plies tells win or loss).
    pub fn to_byte(self) -> u8 {
        match self {
            Value::Draw => 0,
            Value::Win(p) | Value::Loss(p) => p + 1,
        }
    }

    /// Inverse of [`Value::to_byte`]; every byte is a valid value.
    pub fn from_byte(b: u8) -> Value {
        match b {
            0 => Value::Draw,
            b if (b - 1) % 2 == 1 => Value::Win(b - 1),
            b => Value::Loss(b - 1),
        }
    }

    /// Plies to the end of the game, `None` for a draw.
    pub fn plies(self) -> Option<u8> {
        match self {
            Value::Draw => None,
            Value::Win(p) | Value::Loss(p) => Some(p),
        }
    }

    /// The value of the move into a position of value `self` (for the side that
    /// moved): one ply longer, for the other side.
    pub fn parent(self) -> Result<Value, ValueError> {
        match self {
            Value::Draw => Ok(Value::Draw),
            Value::Win(p) | Value::Loss(p) => Value::from_plies(p as u32 + 1),
        }
    }

    /// Sort key, larger is better for the side it belongs to: short wins, then
    /// draws, then long losses.
    pub fn goodness(self) -> i32 {
        match self {
            Value::Win(p) => 1000 - p as i32,
            Value::Draw => 500,
            Value::Loss(p) => p as i32,
        }
    }
}

/// Byte form of [`Value::parent`]: the move value for a child byte (`None` if too long).
#[inline]
pub fn parent_byte(child: u8) -> Option<u8> {
    match child {
        0 => Some(0),
        255 => None,
        b => Some(b + 1),
    }
}

/// Byte form of [`Value::goodness`]: larger is better.
#[inline]
pub fn goodness_byte(b: u8) -> i32 {
    match b {
        0 => 500,
        b if b % 2 == 0 => 1001 - b as i32,
        b => b as i32 - 1,
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Ordered by goodness: `a > b` means `a` is better for its side.
impl Ord for Value {
    fn cmp(&self, other: &Self) -> Ordering {
        self.goodness().cmp(&other.goodness())
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(p) => write!(f, "W{p}"),
            Value::Loss(p) => write!(f, "L{p}"),
            Value::Draw => write!(f, "D"),
        }
    }
}

impl FromStr for Value {
    type Err = ValueError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let syntax = || ValueError::Syntax(s.to_string());
        if s == "D" {
            return Ok(Value::Draw);
        }
        let (kind, digits) = s.split_at_checked(1).ok_or_else(syntax)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(syntax());
        }
        let p: u32 = digits.parse().map_err(|_| ValueError::TooLong(u32::MAX))?;
        let v = Value::from_plies(p)?;
        match (kind, v) {
            ("W", Value::Win(_)) | ("L", Value::Loss(_)) => Ok(v),
            ("W", _) | ("L", _) => Err(ValueError::Parity(s.to_string())),
            _ => Err(syntax()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_round_trip_and_order() {
        assert_eq!(Value::Draw.to_byte(), 0);
        assert_eq!(Value::Loss(0).to_byte(), 1);
        assert_eq!(Value::Win(1).to_byte(), 2);
        assert_eq!(Value::Loss(2).to_byte(), 3);
        for b in 0..=255u8 {
            let v = Value::from_byte(b);
            assert_eq!(v.to_byte(), b);
            assert_eq!(v.goodness(), goodness_byte(b));
            assert_eq!(v.to_string().parse::<Value>(), Ok(v));
            if b < 255 {
                assert_eq!(v.parent().unwrap().to_byte(), parent_byte(b).unwrap());
            }
        }
        assert_eq!(Value::Loss(254).parent(), Err(ValueError::TooLong(255)));
        assert_eq!(parent_byte(255), None);
        assert_eq!(Value::Loss(4).parent(), Ok(Value::Win(5)));
        assert_eq!(Value::Win(1).parent(), Ok(Value::Loss(2)));
        let mut vs = vec![
            Value::Loss(2),
            Value::Win(5),
            Value::Draw,
            Value::Win(1),
            Value::Loss(8),
        ];
        vs.sort_by(|a, b| b.cmp(a));
        assert_eq!(
            vs,
            [
                Value::Win(1),
                Value::Win(5),
                Value::Draw,
                Value::Loss(8),
                Value::Loss(2)
            ]
        );
    }

    #[test]
    fn value_text_errors() {
        assert!(matches!("W2".parse::<Value>(), Err(ValueError::Parity(_))));
        assert!(matches!("L1".parse::<Value>(), Err(ValueError::Parity(_))));
        assert!(matches!("X3".parse::<Value>(), Err(ValueError::Syntax(_))));
        assert!(matches!("W".parse::<Value>(), Err(ValueError::Syntax(_))));
        assert!(matches!("W-1".parse::<Value>(), Err(ValueError::Syntax(_))));
        assert!(matches!(
            "W301".parse::<Value>(),
            Err(ValueError::TooLong(301))
        ));
        assert_eq!("W25".parse::<Value>(), Ok(Value::Win(25)));
    }
}
