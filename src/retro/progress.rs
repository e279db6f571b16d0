//! Progress reporting for long builds: indicatif bars on a terminal, periodic plain
//! log lines otherwise, or nothing (`--quiet`).

use crate::store::BlockStats;
use crate::units::human_bytes;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Receives build events.
pub trait Progress: Send {
    /// The build starts: positions in all layers, and those already stored.
    fn start(&mut self, total: u64, done: u64);
    /// A layer starts (`label` names it, e.g. `layer 23`) with `positions`, `done`
    /// of them already stored.
    fn start_layer(&mut self, label: &str, positions: u64, done: u64);
    /// `positions` more were computed and stored.
    fn advance(&mut self, positions: u64);
    /// The layer `label` is complete.
    fn finish_layer(&mut self, label: &str, stats: &BlockStats);
    /// The build is done; `summary` is the line to leave on the screen.
    fn finish(&mut self, summary: &str);
}

/// Picks bars for a terminal, log lines otherwise, nothing when quiet.
pub fn for_stderr(quiet: bool) -> Box<dyn Progress> {
    if quiet {
        Box::new(Quiet)
    } else if std::io::stderr().is_terminal() {
        Box::new(Bars::new())
    } else {
        Box::new(Log::new(Duration::from_secs(5)))
    }
}

/// Reports nothing.
pub struct Quiet;

impl Progress for Quiet {
    fn start(&mut self, _: u64, _: u64) {}
    fn start_layer(&mut self, _: &str, _: u64, _: u64) {}
    fn advance(&mut self, _: u64) {}
    fn finish_layer(&mut self, _: &str, _: &BlockStats) {}
    fn finish(&mut self, _: &str) {}
}

/// indicatif bars: overall and current layer.
pub struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
    layer: ProgressBar,
}

impl Bars {
    fn new() -> Bars {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{prefix:>9} [{bar:40.cyan/blue}] {percent:>3}% {human_pos}/{human_len} {rate} eta {eta}",
        )
        .expect("valid template")
        .with_key("rate", |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.1} M positions/s", state.per_sec() / 1e6);
        })
        .progress_chars("=> ");
        let overall = multi.add(
            ProgressBar::new(0)
                .with_style(style.clone())
                .with_prefix("total"),
        );
        let layer = multi.add(ProgressBar::new(0).with_style(style).with_prefix("layer"));
        Bars {
            multi,
            overall,
            layer,
        }
    }
}

impl Progress for Bars {
    fn start(&mut self, total: u64, done: u64) {
        self.overall.set_length(total);
        self.overall.set_position(done);
        self.overall.reset_eta();
    }
    fn start_layer(&mut self, label: &str, positions: u64, done: u64) {
        self.layer.set_prefix(label.to_string());
        self.layer.set_length(positions);
        self.layer.set_position(done);
        self.layer.reset_eta();
    }
    fn advance(&mut self, positions: u64) {
        self.overall.inc(positions);
        self.layer.inc(positions);
    }
    fn finish_layer(&mut self, _: &str, _: &BlockStats) {}
    fn finish(&mut self, summary: &str) {
        self.layer.finish_and_clear();
        self.overall.finish_and_clear();
        let _ = self.multi.clear();
        let _ = writeln!(std::io::stderr(), "{summary}");
    }
}

/// Plain lines on stderr at most every `every`, and one per finished layer.
pub struct Log {
    every: Duration,
    last: Instant,
    started: Instant,
    total: u64,
    done: u64,
    done_at_start: u64,
    layer: String,
    layer_len: u64,
    layer_done: u64,
}

impl Log {
    /// A logger printing at most every `every`.
    pub fn new(every: Duration) -> Log {
        Log {
            every,
            last: Instant::now(),
            started: Instant::now(),
            total: 0,
            done: 0,
            done_at_start: 0,
            layer: String::new(),
            layer_len: 0,
            layer_done: 0,
        }
    }

    fn line(&mut self) {
        let elapsed = self.started.elapsed().as_secs_f64();
        let pct = 100.0 * self.done as f64 / self.total.max(1) as f64;
        let this_run = self.done - self.done_at_start;
        let rate = this_run as f64 / elapsed.max(1e-9);
        let eta = (self.total - self.done) as f64 / rate.max(1.0);
        let _ = writeln!(
            std::io::stderr(),
            "tb: {} {}/{} positions, total {:.1}% after {:.0} s, {:.1} M positions/s, eta {:.0} s",
            self.layer,
            self.layer_done,
            self.layer_len,
            pct,
            elapsed,
            rate / 1e6,
            eta
        );
        self.last = Instant::now();
    }
}

impl Progress for Log {
    fn start(&mut self, total: u64, done: u64) {
        self.total = total;
        self.done = done;
        self.done_at_start = done;
        self.started = Instant::now();
        if done > 0 && done < total {
            let _ = writeln!(
                std::io::stderr(),
                "tb: resuming: {done} of {total} positions stored already ({:.1}%)",
                100.0 * done as f64 / total.max(1) as f64
            );
        }
    }
    fn start_layer(&mut self, label: &str, positions: u64, done: u64) {
        self.layer = label.to_string();
        self.layer_len = positions;
        self.layer_done = done;
    }
    fn advance(&mut self, positions: u64) {
        self.done += positions;
        self.layer_done += positions;
        if self.last.elapsed() >= self.every {
            self.line();
        }
    }
    fn finish_layer(&mut self, label: &str, stats: &BlockStats) {
        if self.last.elapsed() >= self.every {
            let _ = writeln!(
                std::io::stderr(),
                "tb: {label} complete: {} positions, {} stored",
                stats.positions,
                human_bytes(stats.bytes)
            );
            self.last = Instant::now();
        }
    }
    fn finish(&mut self, summary: &str) {
        let _ = writeln!(std::io::stderr(), "{summary}");
    }
}
