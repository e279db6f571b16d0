//! Text and JSON renderings of probe answers (JSON shape fixed by DESIGN.md §5).

use super::board::{Board, Lines};
use super::chains::Chains;
use super::loony::Loony;
use super::notation::format_position;
use super::search::{SolveResult, Stopped};
use super::tablebase::Probe;
use serde::Serialize;

/// Renders probe answers as JSON objects (field order as in DESIGN.md §5). Written by
/// hand with the board's line names computed once: every string in it is plain ASCII
/// (digits and line names), and serialising through serde dominated warm batches.
pub struct JsonWriter {
    board: String,
    /// Per line: `{"line":N,"name":"NAME","value":`.
    move_prefix: Vec<String>,
    /// `move_suffix[(value + 128) * 3 + boxes]`: `VALUE,"boxes":BOXES}` for a move
    /// without a loony flag, value in i8 range, at most 2 boxes (every book move).
    move_suffix: Vec<String>,
    bits: Vec<u8>,
}

/// Appends the decimal text of a small integer (values, box counts).
fn small_int(out: &mut String, v: i32) {
    if v < 0 {
        out.push('-');
    }
    let v = v.unsigned_abs();
    if v >= 100 {
        out.push(char::from(b'0' + (v / 100 % 10) as u8));
    }
    if v >= 10 {
        out.push(char::from(b'0' + (v / 10 % 10) as u8));
    }
    out.push(char::from(b'0' + (v % 10) as u8));
}

impl JsonWriter {
    /// A writer for answers on `board`.
    pub fn new(board: &Board) -> JsonWriter {
        JsonWriter {
            board: board.to_string(),
            move_prefix: (0..board.num_lines())
                .map(|l| format!(r#"{{"line":{l},"name":"{}","value":"#, board.line_name(l)))
                .collect(),
            move_suffix: (-128..128)
                .flat_map(|v| (0..3).map(move |b| format!(r#"{v},"boxes":{b}}}"#)))
                .collect(),
            bits: vec![b'0'; board.num_lines()],
        }
    }

    /// One JSON object (no newline) for a probe answer.
    pub fn probe(&mut self, probe: &Probe) -> String {
        let mut s = String::with_capacity(128 + 48 * probe.moves.len());
        self.probe_into(probe, &mut s);
        s
    }

    /// [`JsonWriter::probe`] appended to `s` (a batch reuses one buffer).
    pub fn probe_into(&mut self, probe: &Probe, s: &mut String) {
        use std::fmt::Write as _;
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
        small_int(s, probe.position.count_ones() as i32);
        s.push_str(r#","value":"#);
        match probe.value {
            v if v.abs() < 1000 => small_int(s, v),
            v => {
                let _ = write!(s, "{v}");
            }
        }
        loony_field(s, probe.loony);
        s.push_str(r#","source":""#);
        s.push_str(probe.source.as_str());
        s.push_str(r#"","moves":["#);
        for (i, m) in probe.moves.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&self.move_prefix[m.line]);
            if let (Some(v @ -128..128), 0..3, None) = (m.value, m.boxes, m.loony) {
                s.push_str(&self.move_suffix[(v + 128) as usize * 3 + m.boxes as usize]);
                continue;
            }
            match m.value {
                // Book values are i8; search values are bounded by boxes + |penalty|.
                Some(v) if v.abs() < 1000 => small_int(s, v),
                Some(v) => {
                    let _ = write!(s, "{v}");
                }
                None => s.push_str("null"),
            }
            loony_field(s, m.loony);
            s.push_str(r#","boxes":"#);
            small_int(s, m.boxes as i32);
            s.push('}');
        }
        s.push_str("]}");
    }
}

/// Appends `,"loony":...` (DESIGN.md section 6) for an answer with loony analysis.
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

/// `tb solve --json`: the probe object plus search statistics.
pub fn solve_json(
    board: &Board,
    answer: &Probe,
    result: &SolveResult,
    seconds: f64,
    with_pv: bool,
    chains: &Chains,
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
    }
    let extra = Extra {
        nodes: result.nodes,
        seconds,
        peak_rss_bytes: crate::sys::peak_rss_bytes(),
        pv: with_pv.then(|| result.pv.iter().map(|&l| board.line_name(l)).collect()),
        chains: chains.line_names(board),
    };
    // Both are objects: splice the extra fields into the probe object.
    let probe = JsonWriter::new(board).probe(answer);
    let extra = serde_json::to_string(&extra).expect("solve statistics serialise");
    format!("{},{}", &probe[..probe.len() - 1], &extra[1..])
}

/// The JSON object of a search stopped by its limits: the position, which limit,
/// and the bounds on the value proven so far.
pub fn stopped_json(board: &Board, position: Lines, stopped: &Stopped, seconds: f64) -> String {
    serde_json::json!({
        "board": board.to_string(),
        "position": format_position(board, position),
        "stopped": stopped.reason,
        "lower": stopped.lower,
        "upper": stopped.upper,
        "nodes": stopped.nodes,
        "seconds": seconds,
    })
    .to_string()
}

/// A human-readable table for a probe answer.
pub fn probe_text(board: &Board, probe: &Probe) -> String {
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
        out.push_str(&format!(
            "  {:<7} {}{}\n",
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
