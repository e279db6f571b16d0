//! Property-based fuzzing (proptest, bounded case counts so CI stays short): the
//! notation parsers never panic on any text, and opening a tablebase file whose
//! bytes were mutated, then probing, exporting and verifying it, is an error or a
//! right answer, never a panic. (The tampered-file suite, `tests/tampered.rs`,
//! does the same through the binary for targeted changes.)

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tb::games::dots::board::Board;
use tb::games::dots::tablebase::Tablebase;
use tb::games::dots::{export, verify};
use tb::games::morris::report;
use tb::games::morris::rules::{Move, Position};
use tb::games::morris::tablebase::MorrisTablebase;
use tb::games::morris::value::Value;
use tb::games::morris::variant::Rules;

/// A text near the notations: their characters, digits and separators.
const NOTATION_CHARS: &str = "[.WBwb0-9a-gxhv, \\-+|\n]{0,40}";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn morris_positions_never_panic(text in NOTATION_CHARS) {
        if let Ok(p) = Position::parse(&text) {
            // Whatever parses prints back to itself.
            prop_assert_eq!(Position::parse(&p.to_string()).unwrap(), p);
        }
    }

    #[test]
    fn morris_positions_near_valid_ones_never_panic(
        board in "[.WB]{24}",
        side in "[wbx ]{1,2}",
        hands in "( [0-9]{1,2} [0-9]{1,2})?",
    ) {
        let _ = Position::parse(&format!("{board} {side}{hands}"));
    }

    #[test]
    fn morris_moves_and_values_never_panic(text in NOTATION_CHARS, any_text in any::<String>()) {
        for t in [&text, &any_text] {
            let _ = Move::parse(t);
            let _ = Move::parse_in(Rules::Six, t);
            let _ = t.parse::<Value>();
            let _ = Position::parse(t);
            let _ = Position::parse_in(Rules::Six, t);
        }
    }

    #[test]
    fn boards_and_sizes_never_panic(text in "[0-9xX.eEkKmMgGiBbsh -]{0,12}", any_text in any::<String>()) {
        for t in [&text, &any_text] {
            let _ = t.parse::<Board>();
            let _ = tb::units::parse_size(t);
            let _ = tb::units::parse_duration(t);
        }
    }
}

/// Small built files (once per test process): a 2x2 and a 3-stone Morris file.
fn built() -> &'static (tempfile::TempDir, PathBuf, PathBuf) {
    static FILES: OnceLock<(tempfile::TempDir, PathBuf, PathBuf)> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let dots = dir.path().join("2x2.tb");
        let morris = dir.path().join("m3.tb");
        for (args, db) in [
            (&["build", "2x2"][..], &dots),
            (&["build", "morris", "--stones", "3"][..], &morris),
        ] {
            let out = assert_cmd::Command::new(assert_cmd::cargo::cargo_bin!("tb"))
                .args(args)
                .arg("--quiet")
                .arg("--db")
                .arg(db)
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}");
        }
        (dir, dots, morris)
    })
}

/// Writes `bytes` with `flips` applied (offset, xor mask) and `cut` to a new file.
fn mutated(original: &Path, flips: &[(usize, u8)], cut: Option<usize>) -> tempfile::TempPath {
    let mut bytes = std::fs::read(original).unwrap();
    for &(at, mask) in flips {
        let at = at % bytes.len();
        bytes[at] ^= mask.max(1);
    }
    if let Some(cut) = cut {
        bytes.truncate(cut % (bytes.len() + 1));
    }
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), bytes).unwrap();
    file.into_temp_path()
}

/// Every position of a 2x2 board, probed on the good file (the answers a mutated
/// file must give whenever it answers).
fn good_dots_answers(db: &Path) -> Vec<Option<i32>> {
    let tb = Tablebase::open(db).unwrap();
    (0..1u64 << 12)
        .step_by(37)
        .map(|p| tb.probe(p).ok().map(|a| a.value))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_mutated_dots_file_is_refused_or_answers_right(
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in prop::option::weighted(0.1, any::<usize>()),
    ) {
        let (_, dots, _) = built();
        static GOOD: OnceLock<Vec<Option<i32>>> = OnceLock::new();
        let good = GOOD.get_or_init(|| good_dots_answers(dots));
        let file = mutated(dots, &flips, cut);
        if let Ok(tb) = Tablebase::open(&file) {
            for (i, p) in (0..1u64 << 12).step_by(37).enumerate() {
                if let Ok(answer) = tb.probe(p) {
                    prop_assert_eq!(Some(answer.value), good[i], "position {:012b}", p);
                }
            }
            let _ = export::export(&tb, export::Format::Csv, None, false, &mut std::io::sink());
            let _ = verify::verify(&tb, None, 0);
        }
    }

    #[test]
    fn a_mutated_morris_file_is_refused_or_answers_right(
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in prop::option::weighted(0.1, any::<usize>()),
    ) {
        let (_, _, morris) = built();
        let position = Position::parse("WWW......BBB............ w").unwrap();
        static GOOD: OnceLock<String> = OnceLock::new();
        let good = GOOD.get_or_init(|| {
            let tb = MorrisTablebase::open(morris).unwrap();
            format!("{:?}", tb.probe(&position).unwrap())
        });
        let file = mutated(morris, &flips, cut);
        if let Ok(tb) = MorrisTablebase::open(&file) {
            if let Ok(answer) = tb.probe(&position) {
                prop_assert_eq!(&format!("{answer:?}"), good);
            }
            let _ = report::export(&tb, report::Format::Csv, &mut std::io::sink());
            let _ = report::verify(&tb, Some(1000));
        }
    }
}
