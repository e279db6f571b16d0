//! Text and JSON renderings of probe answers (JSON shape fixed by DESIGN.md §5).

use crate::board::Board;
use crate::notation::format_position;
use crate::search::SolveResult;
use crate::tablebase::Probe;
use serde::Serialize;

/// A probe answer as serialised (field order as in DESIGN.md §5).
#[derive(Serialize)]
struct ProbeJson<'a> {
    board: String,
    position: String,
    lines: u32,
    value: i32,
    source: &'a str,
    moves: Vec<MoveJson>,
}

#[derive(Serialize)]
struct MoveJson {
    line: usize,
    name: String,
    value: Option<i32>,
    boxes: u32,
}

/// `tb solve --json`: the probe object plus search statistics.
pub fn solve_json(
    board: &Board,
    answer: &Probe,
    result: &SolveResult,
    seconds: f64,
    with_pv: bool,
) -> String {
    #[derive(Serialize)]
    struct SolveJson<'a> {
        #[serde(flatten)]
        probe: ProbeJson<'a>,
        nodes: u64,
        seconds: f64,
        peak_rss_bytes: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pv: Option<Vec<String>>,
    }
    let object = SolveJson {
        probe: probe_object(board, answer),
        nodes: result.nodes,
        seconds,
        peak_rss_bytes: crate::sys::peak_rss_bytes(),
        pv: with_pv.then(|| result.pv.iter().map(|&l| board.line_name(l)).collect()),
    };
    serde_json::to_string(&object).expect("solve answers serialise")
}

/// One JSON object (one line of text) for a probe answer.
pub fn probe_json(board: &Board, probe: &Probe) -> String {
    serde_json::to_string(&probe_object(board, probe)).expect("probe answers serialise")
}

fn probe_object<'a>(board: &Board, probe: &'a Probe) -> ProbeJson<'a> {
    ProbeJson {
        board: board.to_string(),
        position: format_position(board, probe.position),
        lines: probe.position.count_ones(),
        value: probe.value,
        source: probe.source.as_str(),
        moves: probe
            .moves
            .iter()
            .map(|m| MoveJson {
                line: m.line,
                name: board.line_name(m.line),
                value: m.value,
                boxes: m.boxes,
            })
            .collect(),
    }
}

/// The JSON object for an input line that could not be answered.
pub fn error_json(input: &str, error: &anyhow::Error) -> String {
    #[derive(Serialize)]
    struct ErrorJson<'a> {
        input: &'a str,
        error: String,
    }
    let object = ErrorJson {
        input,
        error: format!("{error:#}"),
    };
    serde_json::to_string(&object).expect("errors serialise")
}

/// A human-readable table for a probe answer.
pub fn probe_text(board: &Board, probe: &Probe) -> String {
    let mut out = format!(
        "{} {} lines {}: value {:+} ({})\n",
        board,
        format_position(board, probe.position),
        probe.position.count_ones(),
        probe.value,
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
            "  {:<7} {:+}{}\n",
            board.line_name(m.line),
            m.value.expect("filtered"),
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
