//! A Nine Men's Morris file behind the one read interface
//! ([`crate::games::read::Reader`]).

use super::report::{self, Format};
use super::rules::Position;
use super::solve::Probe;
use super::spec::table_label;
use super::tablebase::{MorrisTablebase, probe_json, probe_text, write_probe_json};
use crate::games::read::{
    Answer, Ask, Detail, ExportFormat, ExportOptions, ProbeError, ReadOptions, Reader, Report,
    START, VerifyOptions, typed_fields,
};
use crate::store::{Store, readable_layers};
use anyhow::{Result, bail};
use serde_json::{Map, Value};
use std::any::Any;
use std::io::Write;
use std::path::Path;

/// The game's name in files and answers.
pub const GAME: &str = "morris";

/// An open Morris file.
pub struct MorrisReader {
    tb: MorrisTablebase,
}

/// A Morris probe answer: the position and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MorrisAnswer {
    /// The position asked.
    pub position: Position,
    /// Its value and every legal move's.
    pub probe: Probe,
}

impl Answer for MorrisAnswer {
    fn json(&self) -> String {
        probe_json(&self.position, &self.probe)
    }

    fn write_json(&self, out: &mut String) {
        write_probe_json(out, &self.position, &self.probe)
    }

    fn text(&self) -> String {
        probe_text(&self.position, &self.probe)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl MorrisReader {
    /// Reads the Morris file `path` opened as `store` (Morris has no search: search
    /// bounds in `options` are refused).
    pub fn from_store(path: &Path, store: Store, options: &ReadOptions) -> Result<MorrisReader> {
        options.refuse_search("Morris")?;
        Ok(MorrisReader {
            tb: MorrisTablebase::from_store(path, store)?,
        })
    }

    /// The tablebase.
    pub fn tablebase(&self) -> &MorrisTablebase {
        &self.tb
    }

    /// A position text; `start` is the empty board with every stone in hand.
    fn parse(&self, text: &str) -> Result<Position> {
        if text.trim() == START {
            let n = self.tb.spec().stones;
            return Ok(Position::with_mover(0, 0, true, [n, n]).on(self.tb.spec().rules));
        }
        self.tb.parse_position(text)
    }
}

impl Reader for MorrisReader {
    fn game(&self) -> &'static str {
        GAME
    }

    fn describe(&self) -> Map<String, Value> {
        let mut fields = typed_fields(
            self.tb.spec().to_meta(),
            &["stones", "chunk_positions", "format_version"],
            &[],
            &[],
        );
        let tables: Vec<String> = readable_layers(self.tb.layers()).map(table_label).collect();
        fields.insert("tables".into(), tables.into());
        fields
    }

    fn probe(&mut self, position: &str, ask: Ask) -> Result<Option<Box<dyn Answer>>, ProbeError> {
        let position = self.parse(position).map_err(ProbeError::Position)?;
        // Reads off: only cached chunks answer, and the preload that decodes
        // chunks on every core is skipped.
        let _reads = self.tb.store().bound_reads(ask.cached_only, ask.deadline);
        let probe = match ask.detail {
            Detail::Moves => self.tb.probe(&position),
            Detail::MovesUntied => self.tb.probe_untied(&position),
            Detail::Value => self.tb.value(&position).map(|value| Probe {
                value,
                moves: Vec::new(),
                chances: Vec::new(),
            }),
        };
        match probe {
            Ok(probe) => Ok(Some(Box::new(MorrisAnswer { position, probe }))),
            Err(e) if ask.needs_more(&e) => Ok(None),
            Err(e) => Err(ProbeError::of(e)),
        }
    }

    fn share_chunks(&mut self, shared: &crate::store::reader::SharedChunks) {
        self.tb.share_chunks(shared);
    }

    fn info(&self) -> Result<Report> {
        let info = report::info(&self.tb)?;
        Report::new(&info, report::info_text(&info), true)
    }

    fn verify(&self, options: &VerifyOptions) -> Result<Report> {
        if options.search.is_some() {
            bail!("--search is a Dots-and-Boxes option (Morris has no search solver)");
        }
        let r = report::verify(&self.tb, options.sample)?;
        Report::new(&r, r.text(), r.ok())
    }

    fn export(&self, options: &ExportOptions, sink: &mut dyn Write) -> Result<u64> {
        options.refuse(
            &[ExportFormat::Jsonl, ExportFormat::Csv],
            "a Morris export lists every stored class",
        )?;
        let format = match options.format {
            ExportFormat::Csv => Format::Csv,
            _ => Format::Jsonl,
        };
        report::export(&self.tb, format, sink)
    }
}
