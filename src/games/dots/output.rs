//! Text and JSON renderings of probe answers (JSON shape fixed by docs/FORMAT.md §6.1).

use super::board::{Board, Lines};
use super::loony::Loony;
use super::notation::format_position;
use super::probe::{MoveValue, Probe};
use super::proven::StoreReport;
use super::search::{SolveResult, Stopped};
use super::solve::SolveRequest;
use serde::Serialize;

/// Renders probe answers as JSON objects (field order as in docs/FORMAT.md §6.1). Written by
/// hand with the board's line names computed once: every string in it is plain ASCII
/// (digits and line names), and serialising through serde dominated warm batches.
pub struct JsonWriter {
    board: String,
    /// Per line: `{"line":N,"name":"NAME","value":`.
    move_prefix: Vec<String>,
    /// The prefixes in fixed slots (when every one fits), and
    /// `book_suffix[(value + 128) * 3 + boxes]`: `VALUE,"boxes":BOXES}` for a move
    /// without a loony flag, value in i8 range, at most 2 boxes (every book move).
    /// A book move is then two copies of constant size into `scratch`, not a
    /// dozen pushes.
    fixed_prefix: Option<Vec<Slot<PREFIX_SLOT>>>,
    book_suffix: Vec<Slot<SUFFIX_SLOT>>,
    /// Where the moves of an answer are put together (reused).
    scratch: Vec<u8>,
    bits: Vec<u8>,
}

/// Bytes of a fixed slot for a move's text up to its value.
const PREFIX_SLOT: usize = 64;
/// Bytes of a fixed slot for a move's text from its value on (`-128,"boxes":2}`).
const SUFFIX_SLOT: usize = 16;

/// ASCII text zero-padded to `N` bytes, with its length.
struct Slot<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Slot<N> {
    /// `text` in a slot (`None` if it does not fit).
    fn new(text: &str) -> Option<Slot<N>> {
        let mut bytes = [0u8; N];
        bytes
            .get_mut(..text.len())?
            .copy_from_slice(text.as_bytes());
        Some(Slot {
            bytes,
            len: text.len(),
        })
    }

    /// Copies the whole slot to `buf` (a copy of constant size) and returns how
    /// many of its bytes count.
    #[inline]
    fn put(&self, buf: &mut [u8]) -> usize {
        buf[..N].copy_from_slice(&self.bytes);
        self.len
    }
}

/// Appends the decimal text of an integer (values, counts) without `format!`'s
/// machinery, which cost more than the rest of an answer's header.
fn push_int(out: &mut String, v: i32) {
    let mut digits = [0u8; 11];
    let mut at = digits.len();
    let mut rest = v.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if v < 0 {
        at -= 1;
        digits[at] = b'-';
    }
    out.push_str(std::str::from_utf8(&digits[at..]).expect("ASCII digits"));
}

impl JsonWriter {
    /// A writer for answers on `board`.
    pub fn new(board: &Board) -> JsonWriter {
        let move_prefix: Vec<String> = (0..board.num_lines())
            .map(|l| format!(r#"{{"line":{l},"name":"{}","value":"#, board.line_name(l)))
            .collect();
        JsonWriter {
            board: board.to_string(),
            fixed_prefix: move_prefix.iter().map(|p| Slot::new(p)).collect(),
            book_suffix: (-128..128)
                .flat_map(|v| (0..3).map(move |b| format!(r#"{v},"boxes":{b}}}"#)))
                .map(|t| Slot::new(&t).expect("a suffix fits its slot"))
                .collect(),
            move_prefix,
            scratch: Vec::new(),
            bits: vec![b'0'; board.num_lines()],
        }
    }

    /// Appends the moves of `moves` (with commas between) if each is a book move
    /// without a loony flag; false (nothing appended) otherwise.
    fn book_moves_into(&mut self, moves: &[MoveValue], s: &mut String) -> bool {
        let Some(prefixes) = &self.fixed_prefix else {
            return false;
        };
        let need = moves.len() * (1 + PREFIX_SLOT + SUFFIX_SLOT);
        if self.scratch.len() < need {
            self.scratch.resize(need, 0);
        }
        let buf = &mut self.scratch;
        let mut at = 0;
        for (i, m) in moves.iter().enumerate() {
            let (Some(v @ -128..128), 0..3, None) = (m.value, m.boxes, m.loony) else {
                return false;
            };
            buf[at] = b',';
            at += usize::from(i > 0);
            at += prefixes[m.line].put(&mut buf[at..]);
            at += self.book_suffix[(v + 128) as usize * 3 + m.boxes as usize].put(&mut buf[at..]);
        }
        s.push_str(std::str::from_utf8(&buf[..at]).expect("ASCII"));
        true
    }

    /// One JSON object (no newline) for a probe answer.
    pub fn probe(&mut self, probe: &Probe) -> String {
        let mut s = String::with_capacity(128 + 48 * probe.moves.len());
        self.probe_into(probe, &mut s);
        s
    }

    /// [`JsonWriter::probe`] appended to `s` (a batch reuses one buffer).
    pub fn probe_into(&mut self, probe: &Probe, s: &mut String) {
        for (i, b) in self.bits.iter_mut().enumerate() {
            *b = if probe.position >> i & 1 == 1 {
                b'1'
            } else {
                b'0'
            };
        }
        // Pushed piece by piece: `write!` costs more than the rest of a header.
        s.push_str(r#"{"board":""#);
        s.push_str(&self.board);
        s.push_str(r#"","position":""#);
        s.push_str(std::str::from_utf8(&self.bits).expect("ASCII"));
        s.push_str(r#"","lines":"#);
        push_int(s, probe.position.count_ones() as i32);
        s.push_str(r#","value":"#);
        push_int(s, probe.value);
        loony_field(s, probe.loony);
        s.push_str(r#","source":""#);
        s.push_str(probe.source.as_str());
        s.push_str(r#"","moves":["#);
        if self.book_moves_into(&probe.moves, s) {
            s.push_str("]}");
            return;
        }
        for (i, m) in probe.moves.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&self.move_prefix[m.line]);
            match m.value {
                Some(v) => push_int(s, v),
                None => s.push_str("null"),
            }
            loony_field(s, m.loony);
            s.push_str(r#","boxes":"#);
            push_int(s, m.boxes as i32);
            s.push('}');
        }
        s.push_str("]}");
    }
}

/// Appends `,"loony":...` (docs/FORMAT.md §3.4) for an answer with loony analysis.
fn loony_field(out: &mut String, loony: Option<Loony>) {
    if let Some(flag) = loony {
        out.push_str(r#","loony":"#);
        match flag.json() {
            Some(name) => {
                out.push('"');
                out.push_str(name);
                out.push('"');
            }
            None => out.push_str("null"),
        }
    }
}

/// A value with its loony mark (`0^`, `-2v`, `+1`).
fn value_with_mark(value: i32, loony: Option<Loony>) -> String {
    format!("{value:+}{}", loony.map_or("", Loony::mark))
}

/// `tb solve --json`: the probe object plus search statistics (and the principal
/// variation when `request` asks for it), and with chains marked in the position,
/// those played as units, the rule, and whether the answer is approximate
/// (Wilson's assumption changed the game); with a store, what it gave and took.
pub fn solve_json(
    board: &Board,
    answer: &Probe,
    result: &SolveResult,
    seconds: f64,
    request: &SolveRequest,
    store: Option<StoreReport>,
) -> String {
    #[derive(Serialize)]
    struct Extra {
        nodes: u64,
        seconds: f64,
        peak_rss_bytes: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pv: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        chains: Vec<Vec<String>>,
        /// With chains marked: `exact` or `wilson`.
        #[serde(skip_serializing_if = "Option::is_none")]
        chain_rule: Option<&'static str>,
        /// Present (true) when chains played as units may have changed the values.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        approximate: bool,
        /// Present (true) when `moves` is one best move only.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        best_only: bool,
        /// With `--losing-bounds`: the moves whose `value` is an upper bound only.
        #[serde(skip_serializing_if = "Option::is_none")]
        upper_bounds: Option<Vec<String>>,
        /// With `--store`: what the store gave and took.
        #[serde(skip_serializing_if = "Option::is_none")]
        store: Option<StoreReport>,
    }
    let played = request.played_chains(board);
    let extra = Extra {
        nodes: result.nodes,
        seconds,
        peak_rss_bytes: crate::sys::peak_rss_bytes(),
        pv: request
            .pv
            .then(|| result.pv.iter().map(|&l| board.line_name(l)).collect()),
        chains: played.line_names(board),
        chain_rule: (!request.chains.is_empty()).then(|| request.chain_rule.as_str()),
        approximate: played.approximate(board),
        best_only: result.best_only,
        upper_bounds: request.losing_bounds.then(|| {
            answer
                .moves
                .iter()
                .filter(|m| result.bounded >> m.line & 1 == 1)
                .map(|m| board.line_name(m.line))
                .collect()
        }),
        store,
    };
    // Both are objects: splice the extra fields into the probe object.
    let probe = JsonWriter::new(board).probe(answer);
    let extra = serde_json::to_string(&extra).expect("solve statistics serialise");
    format!("{},{}", &probe[..probe.len() - 1], &extra[1..])
}

/// The JSON object of a search stopped by its limits: the position, which limit,
/// and the bounds on the value proven so far.
pub fn stopped_json(
    board: &Board,
    position: Lines,
    stopped: &Stopped,
    seconds: f64,
    store: Option<StoreReport>,
) -> String {
    let mut object = serde_json::json!({
        "board": board.to_string(),
        "position": format_position(board, position),
        "stopped": stopped.reason,
        "lower": stopped.lower,
        "upper": stopped.upper,
        "nodes": stopped.nodes,
        "seconds": seconds,
    });
    if let Some(store) = store {
        object["store"] = serde_json::to_value(store).expect("a report serialises");
    }
    object.to_string()
}

/// A human-readable table for a probe answer.
pub fn probe_text(board: &Board, probe: &Probe) -> String {
    probe_text_bounded(board, probe, 0)
}

/// [`probe_text`] where the moves of `bounded` (bit per line) show an upper bound
/// on their worth (`<=`), not their value (`tb solve --losing-bounds`).
pub fn probe_text_bounded(board: &Board, probe: &Probe, bounded: Lines) -> String {
    let mut out = format!(
        "{} {} lines {}: value {} ({})\n",
        board,
        format_position(board, probe.position),
        probe.position.count_ones(),
        value_with_mark(probe.value, probe.loony),
        probe.source.as_str()
    );
    if probe.moves.is_empty() {
        out.push_str("  no moves: the board is full\n");
    }
    let unknown = probe.moves.iter().filter(|m| m.value.is_none()).count();
    for m in probe.moves.iter().filter(|m| m.value.is_some()) {
        let boxes = match m.boxes {
            0 => String::new(),
            1 => "  completes 1 box".to_string(),
            k => format!("  completes {k} boxes"),
        };
        let at_most = if bounded >> m.line & 1 == 1 { "<=" } else { "" };
        out.push_str(&format!(
            "  {:<7} {at_most}{}{}\n",
            board.line_name(m.line),
            value_with_mark(m.value.expect("filtered"), m.loony),
            boxes
        ));
    }
    if unknown > 0 {
        out.push_str(&format!(
            "  ({unknown} moves lead past the stored layers; their values need the search solver)\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::probe::Source;
    use super::*;
    use serde_json::{Value, json};

    /// The hand-written JSON against the same answer built with serde_json: book
    /// moves (the fixed-slot path) and moves with unknown values, large values or
    /// loony flags (the general path), on a small and a large board.
    #[test]
    fn probe_json_is_what_serde_writes() {
        let mut next = crate::test_rng::below(0x9e37_79b9_7f4a_7c15);
        for spec in ["2x2", "3x4", "5x5"] {
            let board: Board = spec.parse().unwrap();
            let mut writer = JsonWriter::new(&board);
            let lines = board.num_lines() as u64;
            for _ in 0..500 {
                let kind = next(4);
                let flag = |k: u64| [Loony::Mover, Loony::Neither, Loony::Opponent][k as usize];
                let loony = (kind == 3).then(|| flag(next(3)));
                let moves: Vec<MoveValue> = (0..next(lines.min(40) + 1))
                    .map(|_| MoveValue {
                        line: next(lines) as usize,
                        value: match kind {
                            1 if next(4) == 0 => None,
                            2 if next(4) == 0 => Some(next(4000) as i32 - 2000),
                            _ => Some(next(256) as i32 - 128),
                        },
                        boxes: next(3) as u32,
                        loony: loony.map(|_| flag(next(3))),
                    })
                    .collect();
                let probe = Probe {
                    position: next(1 << lines.min(63)),
                    value: next(41) as i32 - 20,
                    source: if next(2) == 0 {
                        Source::Book
                    } else {
                        Source::Search
                    },
                    moves,
                    loony,
                };
                let with_loony = |mut object: Value, flag: Option<Loony>| {
                    if let Some(flag) = flag {
                        object["loony"] = json!(flag.json());
                    }
                    object
                };
                let moves: Vec<Value> = probe
                    .moves
                    .iter()
                    .map(|m| {
                        let object = json!({
                            "line": m.line,
                            "name": board.line_name(m.line),
                            "value": m.value,
                            "boxes": m.boxes,
                        });
                        with_loony(object, m.loony)
                    })
                    .collect();
                let object = json!({
                    "board": spec,
                    "position": format_position(&board, probe.position),
                    "lines": probe.position.count_ones(),
                    "value": probe.value,
                    "source": probe.source.as_str(),
                    "moves": moves,
                });
                let expected = with_loony(object, probe.loony);
                let text = writer.probe(&probe);
                let written: Value = serde_json::from_str(&text).expect(&text);
                assert_eq!(written, expected, "{text}");
            }
        }
    }
}
