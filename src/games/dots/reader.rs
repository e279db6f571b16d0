//! A Dots-and-Boxes tablebase behind the one read interface
//! ([`crate::games::read::Reader`]): positions as text in, probe answers out as
//! JSON or text, and info, verify and export as reports.

use super::board::Board;
use super::export;
use super::notation::{self, ParsedPosition};
use super::output::{JsonWriter, probe_text};
use super::probe::{MoveValue, Probe};
use super::search::{Limits, Stopped};
use super::tablebase::Tablebase;
use crate::games::read::{
    Answer, Ask, Bounds, Detail, ExportFormat, ExportOptions, Form, ProbeError, ReadOptions,
    Reader, Report, START, VerifyOptions, typed_fields,
};
use crate::store::{Store, readable_layers};
use anyhow::Result;
use serde_json::{Map, Value};
use std::any::Any;
use std::io::Write;
use std::path::Path;

/// The game's name in files and answers.
pub const GAME: &str = "dots-and-boxes";

/// An open Dots-and-Boxes tablebase and what it renders answers with.
pub struct DotsReader {
    tb: Tablebase,
    /// Renders JSON answers (the board's line names made once).
    writer: JsonWriter,
    /// The moves of the last answer written, reused by the next.
    spare: Vec<MoveValue>,
}

/// A Dots-and-Boxes probe answer with its board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DotsAnswer {
    /// The table's board.
    pub board: Board,
    /// The answer.
    pub probe: Probe,
}

impl Answer for DotsAnswer {
    fn json(&self) -> String {
        JsonWriter::new(&self.board).probe(&self.probe)
    }

    fn text(&self) -> String {
        probe_text(&self.board, &self.probe)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl DotsReader {
    /// Reads the Dots-and-Boxes file `path` opened as `store`, with the probe
    /// fallback's search bounds of `options`.
    pub fn from_store(path: &Path, store: Store, options: &ReadOptions) -> Result<DotsReader> {
        let mut tb = Tablebase::from_store(path, store)?;
        if let Some(limit) = options.search_limit {
            tb.set_search_limit(limit);
        }
        tb.set_search_bounds(Limits {
            max_nodes: options.max_nodes,
            time_limit: options.time_limit,
        });
        let writer = JsonWriter::new(&tb.board());
        Ok(DotsReader {
            tb,
            writer,
            spare: Vec::new(),
        })
    }

    /// The tablebase.
    pub fn tablebase(&self) -> &Tablebase {
        &self.tb
    }

    /// A position text (`start`: the table's start); with `files`, a path names a
    /// file holding the position.
    fn parse(&self, text: &str, files: bool) -> Result<ParsedPosition, ProbeError> {
        let board = self.tb.board();
        if text.trim() == START {
            return Ok(ParsedPosition::from_lines(self.tb.start()));
        }
        let parsed = if files {
            notation::parse_position_arg(&board, text)
        } else {
            notation::parse_position(&board, text)
        };
        parsed.map_err(|e| ProbeError::Position(e.into()))
    }

    /// The probe of `text` as `ask` asks (`None`: it would take more than
    /// [`Ask::cached_only`] allows).
    fn probe_probe(
        &mut self,
        text: &str,
        ask: Ask,
        moves: Vec<MoveValue>,
    ) -> Result<Option<Probe>, ProbeError> {
        let parsed = self.parse(text, ask.files)?;
        let _reads = self.tb.store().bound_reads(ask.cached_only, ask.deadline);
        let answer = match (ask.detail, ask.cached_only) {
            (Detail::Moves | Detail::MovesUntied, true) => self.tb.probe_parsed_from_book(&parsed),
            // The value alone may take a search: not from memory only.
            (Detail::Value, true) => Ok(None),
            (Detail::Value, false) => self.tb.probe_value_parsed(&parsed).map(Some),
            (Detail::Moves | Detail::MovesUntied, false) => {
                self.tb.probe_parsed_with(&parsed, moves).map(Some)
            }
        };
        match answer {
            Err(e) if ask.needs_more(&e) => Ok(None),
            answer => answer.map_err(classify),
        }
    }
}

/// A reader's error classified: a stopped search with its bounds, else as
/// [`ProbeError::of`].
fn classify(error: anyhow::Error) -> ProbeError {
    match crate::store::error::find_in::<Stopped>(&error) {
        Some(stopped) => ProbeError::Stopped {
            bounds: Bounds {
                lower: stopped.lower,
                upper: stopped.upper,
                nodes: stopped.nodes,
                reason: stopped.reason,
            },
            message: format!("{error:#}"),
        },
        None => ProbeError::of(error),
    }
}

impl Reader for DotsReader {
    fn game(&self) -> &'static str {
        GAME
    }

    fn describe(&self) -> Map<String, Value> {
        let mut fields = typed_fields(
            self.tb.spec().to_meta(),
            &["penalty", "book_lines", "chunk_positions", "format_version"],
            &["corners", "loony"],
            &["groups", "chains"],
        );
        let layers: Vec<usize> = readable_layers(self.tb.layers()).collect();
        fields.insert("layers".into(), layers.into());
        fields
    }

    fn searches(&self) -> bool {
        true
    }

    fn probe(&mut self, position: &str, ask: Ask) -> Result<Option<Box<dyn Answer>>, ProbeError> {
        let board = self.tb.board();
        let probe = self.probe_probe(position, ask, Vec::new())?;
        Ok(probe.map(|probe| Box::new(DotsAnswer { board, probe }) as Box<dyn Answer>))
    }

    fn answer_into(
        &mut self,
        position: &str,
        ask: Ask,
        form: Form,
        out: &mut String,
    ) -> Result<bool, ProbeError> {
        let moves = std::mem::take(&mut self.spare);
        let Some(probe) = self.probe_probe(position, ask, moves)? else {
            return Ok(false);
        };
        match form {
            Form::Json => self.writer.probe_into(&probe, out),
            Form::Text => out.push_str(&probe_text(&self.tb.board(), &probe)),
        }
        self.spare = probe.moves;
        Ok(true)
    }

    fn share_chunks(&mut self, shared: &crate::store::reader::SharedChunks) {
        self.tb.share_chunks(shared);
    }

    fn info(&self) -> Result<Report> {
        let report = super::info::info(&self.tb)?;
        Report::new(&report, super::info::info_text(&report), true)
    }

    fn verify(&self, options: &VerifyOptions) -> Result<Report> {
        let report = super::verify::verify(&self.tb, options.sample, options.search.unwrap_or(0))?;
        Ok(Report {
            json: report.to_json(),
            text: report.text(),
            ok: report.ok(),
        })
    }

    fn export(&self, options: &ExportOptions, sink: &mut dyn Write) -> Result<u64> {
        let format = match options.format {
            ExportFormat::Jsonl => export::Format::Jsonl,
            ExportFormat::Csv => export::Format::Csv,
            ExportFormat::Patashnik => {
                anyhow::bail!("--format patashnik is for Qubic strategy files")
            }
        };
        export::export(&self.tb, format, options.max_lines, options.expand, sink)
    }
}
