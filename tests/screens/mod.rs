//! Boards as `tb play` prints them, read back by the documented layout
//! (`src/games/dots/play.rs`), for the tests of `tb play`.

use crate::oracle::Oracle;
use std::collections::BTreeMap;

/// One board as `tb play` printed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Screen {
    /// Drawn lines.
    pub position: u64,
    /// Open line -> the value text written in its place.
    pub values: BTreeMap<usize, String>,
    /// Boxes marked A and B.
    pub marked: [u32; 2],
    /// The status line under the board.
    pub status: String,
    /// The message under it (what the command did), if any.
    pub message: Option<String>,
}

/// Columns of the layout (`src/games/dots/play.rs`): dots at 5 + 6c, a horizontal
/// line's value in the 5 columns after its left dot, a vertical line's in the 3
/// columns centred on its dot, a box's owner 3 columns right of its left dot.
fn cell(row: &str, from: usize, width: usize) -> String {
    let padded = format!("{row:<w$}", w = from + width);
    padded[from..from + width].trim().to_string()
}

/// Every board in `text` (boards start at their `h0` row).
pub fn screens(o: &Oracle, text: &str) -> Vec<Screen> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with("h0 ") {
            i += 1;
            continue;
        }
        let mut screen = Screen {
            position: 0,
            values: BTreeMap::new(),
            marked: [0, 0],
            status: String::new(),
            message: None,
        };
        for r in 0..=o.rows() {
            let row = lines[i + 2 * r];
            assert!(row.starts_with(&format!("h{r} ")), "row h{r}: {row}");
            for c in 0..o.cols() {
                let text = cell(row, 5 + 6 * c + 1, 5);
                if text == "-----" {
                    screen.position |= 1 << o.h(r, c);
                } else {
                    screen.values.insert(o.h(r, c), text);
                }
            }
            if r == o.rows() {
                break;
            }
            let row = lines[i + 2 * r + 1];
            assert!(row.starts_with(&format!("v{r} ")), "row v{r}: {row}");
            for c in 0..=o.cols() {
                let text = cell(row, 4 + 6 * c, 3);
                if text == "|" {
                    screen.position |= 1 << o.v(r, c);
                } else {
                    screen.values.insert(o.v(r, c), text);
                }
                if c < o.cols() {
                    match cell(row, 5 + 6 * c + 3, 1).as_str() {
                        "A" => screen.marked[0] += 1,
                        "B" => screen.marked[1] += 1,
                        _ => {}
                    }
                }
            }
        }
        // Footer (dot columns), then the status line.
        screen.status = lines[i + 2 * o.rows() + 2].to_string();
        i += 2 * o.rows() + 3;
        // The message follows; a board starts with its (indented) header.
        screen.message = lines
            .get(i)
            .filter(|l| !l.is_empty() && !l.starts_with(' '))
            .map(|l| l.to_string());
        out.push(screen);
    }
    out
}
