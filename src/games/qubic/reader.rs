//! A Qubic strategy file behind the one read interface
//! ([`crate::games::read::Reader`]).

use super::answer::QubicAnswer;
use super::position::Position;
use super::report;
use super::stored::{self, StrategyFile, first_move};
use crate::games::read::{
    Answer, Ask, ExportFormat, ExportOptions, ProbeError, ReadOptions, Reader, Report, START,
    VerifyOptions,
};
use crate::store::Store;
use anyhow::{Result, bail};
use serde_json::{Map, Value};
use std::any::Any;
use std::io::Write;
use std::path::Path;

/// An open strategy file.
pub struct QubicReader {
    file: StrategyFile,
}

impl Answer for QubicAnswer {
    fn json(&self) -> String {
        QubicAnswer::json(self)
    }

    fn text(&self) -> String {
        QubicAnswer::text(self) + "\n"
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl QubicReader {
    /// Reads the strategy file `path` opened as `store` (a strategy has no search
    /// fallback: search bounds in `options` are refused).
    pub fn from_store(path: &Path, store: Store, options: &ReadOptions) -> Result<QubicReader> {
        options.refuse_search("Qubic")?;
        Ok(QubicReader {
            file: StrategyFile::from_store(path, store)?,
        })
    }

    /// The strategy.
    pub fn strategy(&self) -> &StrategyFile {
        &self.file
    }
}

impl Reader for QubicReader {
    fn game(&self) -> &'static str {
        stored::GAME
    }

    fn describe(&self) -> Map<String, Value> {
        let mut fields = Map::new();
        fields.insert("game".into(), stored::GAME.into());
        fields.insert("rules".into(), stored::RULES.into());
        fields.insert("start".into(), self.file.start.to_string().into());
        fields.insert("first_move".into(), first_move(self.file.start).into());
        fields.insert("positions".into(), self.file.records.len().into());
        fields
    }

    fn probe(&mut self, position: &str, _: Ask) -> Result<Option<Box<dyn Answer>>, ProbeError> {
        let position = if position.trim() == START {
            self.file.start
        } else {
            Position::parse(position).map_err(ProbeError::Position)?
        };
        Ok(Some(Box::new(self.file.probe(position))))
    }

    fn info(&self) -> Result<Report> {
        let info = report::info(&self.file);
        Report::new(&info, report::info_text(&info), true)
    }

    fn verify(&self, options: &VerifyOptions) -> Result<Report> {
        if options.sample.is_some() || options.search.is_some() {
            bail!("--sample and --search do not apply to a Qubic strategy (it is checked whole)");
        }
        let r = report::verify(&self.file);
        Report::new(&r, r.text(), r.ok())
    }

    fn export(&self, options: &ExportOptions, sink: &mut dyn Write) -> Result<u64> {
        options.refuse(
            &[
                ExportFormat::Jsonl,
                ExportFormat::Csv,
                ExportFormat::Patashnik,
            ],
            "a Qubic export lists every strategic position",
        )?;
        let format = match options.format {
            ExportFormat::Jsonl => report::ExportFormat::Jsonl,
            ExportFormat::Csv => report::ExportFormat::Csv,
            ExportFormat::Patashnik => report::ExportFormat::Patashnik,
        };
        report::export(&self.file, format, sink)
    }
}
