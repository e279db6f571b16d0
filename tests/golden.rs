//! Golden layer digests (`data/golden_digests.tsv`): every layer's position count
//! and digest of small tablebases, compared with what `tb info --json` reports for a
//! fresh build. The file is computed by the oracle: `tools/bless-golden` rewrites it
//! (`TB_BLESS=1 cargo test --release --test golden -- --ignored`).

use crate::harness;
use crate::oracle;

use harness::{build_with, hex, info, info_layers};
use oracle::Oracle;
use std::fmt::Write as _;
use std::path::PathBuf;

const HEADER: &str = "board\tstart\tpenalty\tn\tpositions\tdigest";

#[derive(Clone, Debug, PartialEq, Eq)]
struct Row {
    board: String,
    start: String,
    penalty: i32,
    n: usize,
    positions: u64,
    digest: String,
}

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/golden_digests.tsv")
}

fn parse_board(board: &str) -> (usize, usize) {
    let (r, c) = board.split_once('x').expect("board RxC");
    (r.parse().expect("rows"), c.parse().expect("cols"))
}

fn render(rows: &[Row]) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for r in rows {
        writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}",
            r.board, r.start, r.penalty, r.n, r.positions, r.digest
        )
        .unwrap();
    }
    out
}

fn read_golden() -> Vec<Row> {
    let path = golden_path();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run tools/bless-golden)", path.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(HEADER), "{}: header", path.display());
    lines
        .filter(|l| !l.is_empty())
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 6, "{}: row {line:?}", path.display());
            let bad = |what: &str| format!("{}: {what} in row {line:?}", path.display());
            Row {
                board: f[0].to_string(),
                start: f[1].to_string(),
                penalty: f[2]
                    .parse()
                    .unwrap_or_else(|_| panic!("{}", bad("penalty"))),
                n: f[3].parse().unwrap_or_else(|_| panic!("{}", bad("n"))),
                positions: f[4]
                    .parse()
                    .unwrap_or_else(|_| panic!("{}", bad("positions"))),
                digest: f[5].to_string(),
            }
        })
        .collect()
}

/// The rows of one tablebase, computed by the oracle.
fn oracle_rows(board: &str, start: &str, penalty: i32) -> Vec<Row> {
    let (r, c) = parse_board(board);
    let mut o = Oracle::new(r, c, penalty);
    let s = o.start(start);
    o.layers(s)
        .into_iter()
        .map(|layer| Row {
            board: board.to_string(),
            start: start.to_string(),
            penalty,
            n: layer.n,
            positions: layer.positions,
            digest: hex(layer.digest),
        })
        .collect()
}

fn all_oracle_rows() -> Vec<Row> {
    GROUPS
        .iter()
        .flat_map(|&(board, start, penalty)| oracle_rows(board, start, penalty))
        .collect()
}

/// Builds one tablebase with the binary (default book, so most layers are pruned)
/// and compares every layer `tb info --json` lists with the golden rows.
fn check_group(board: &str, start: &str, penalty: i32) {
    let golden: Vec<Row> = read_golden()
        .into_iter()
        .filter(|r| r.board == board && r.start == start && r.penalty == penalty)
        .collect();
    assert!(
        !golden.is_empty(),
        "no golden rows for {board} {start} {penalty}"
    );
    let (r, c) = parse_board(board);
    let o = Oracle::new(r, c, penalty);
    // The goldens hold every position's value: build without a reduction.
    let b = build_with(&o, start, o.start(start), None, &["--symmetry", "none"]);
    let layers = info_layers(&info(&b.db));
    let mut problems = String::new();
    for row in &golden {
        match layers.get(&row.n) {
            None => writeln!(problems, "layer {} missing from tb info", row.n).unwrap(),
            Some((positions, digest, status)) => {
                if (*positions, digest) != (row.positions, &row.digest) {
                    writeln!(
                        problems,
                        "layer {} ({status}): tb {positions} positions, digest {digest}; golden {} positions, digest {}",
                        row.n, row.positions, row.digest
                    )
                    .unwrap();
                }
            }
        }
    }
    if layers.len() != golden.len() {
        let mut extra: Vec<usize> = layers
            .keys()
            .filter(|n| !golden.iter().any(|r| r.n == **n))
            .copied()
            .collect();
        extra.sort_unstable();
        writeln!(
            problems,
            "tb info lists layers not in the golden file: {extra:?}"
        )
        .unwrap();
    }
    assert!(problems.is_empty(), "{}:\n{problems}", b.label());
}

macro_rules! golden_groups {
    ($($name:ident: $board:literal, $start:literal, $penalty:literal;)*) => {
        /// The tablebases of the golden file, in file order.
        const GROUPS: &[(&str, &str, i32)] = &[$(($board, $start, $penalty)),*];
        $(
            #[test]
            fn $name() {
                check_group($board, $start, $penalty);
            }
        )*
    };
}

golden_groups! {
    golden_1x1: "1x1", "empty", 0;
    golden_1x1_penalty: "1x1", "empty", -1;
    golden_1x2: "1x2", "empty", 0;
    golden_1x2_penalty: "1x2", "empty", -1;
    golden_2x1: "2x1", "empty", 0;
    golden_2x1_penalty: "2x1", "empty", -1;
    golden_1x3: "1x3", "empty", 0;
    golden_1x3_penalty: "1x3", "empty", -1;
    golden_2x2: "2x2", "empty", 0;
    golden_2x2_penalty: "2x2", "empty", -1;
    golden_2x3: "2x3", "empty", 0;
    golden_2x3_penalty: "2x3", "empty", -1;
    golden_3x2: "3x2", "empty", 0;
    golden_3x2_penalty: "3x2", "empty", -1;
    golden_3x3: "3x3", "empty", 0;
    golden_3x3_penalty: "3x3", "empty", -1;
    golden_3x3_swedish: "3x3", "swedish", 0;
    golden_3x3_icelandic: "3x3", "icelandic", 0;
}

/// The file lists exactly the tablebases above, each with every layer from the
/// start's line count to the full board, counted right.
#[test]
fn golden_file_is_complete() {
    let rows = read_golden();
    let mut at = 0;
    for &(board, start, penalty) in GROUPS {
        let (r, c) = parse_board(board);
        let o = Oracle::new(r, c, penalty);
        let s = o.start(start);
        let first = s.count_ones() as usize;
        let open = (o.num_lines() - first) as u64;
        let mut binom = 1u64;
        for n in first..=o.num_lines() {
            let row = rows.get(at).unwrap_or_else(|| {
                panic!("golden file ends before {board} {start} {penalty} layer {n}")
            });
            assert_eq!(
                (
                    row.board.as_str(),
                    row.start.as_str(),
                    row.penalty,
                    row.n,
                    row.positions
                ),
                (board, start, penalty, n, binom),
                "golden row {}",
                at + 2
            );
            assert!(
                row.digest.len() == 16
                    && row
                        .digest
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "golden row {}: digest {:?} is not 16 lowercase hex digits",
                at + 2,
                row.digest
            );
            let k = (n - first) as u64;
            binom = if k < open {
                binom * (open - k) / (k + 1)
            } else {
                0
            };
            at += 1;
        }
    }
    assert_eq!(
        at,
        rows.len(),
        "golden file has extra rows after row {}",
        at + 1
    );
}

/// The committed file is what the oracle computes today (a change to the oracle
/// or to the digest definition shows up here).
#[test]
fn golden_file_agrees_with_the_oracle() {
    let golden = read_golden();
    let computed = all_oracle_rows();
    let differ: Vec<String> = golden
        .iter()
        .zip(&computed)
        .filter(|(g, c)| g != c)
        .take(10)
        .map(|(g, c)| format!("file {g:?}\noracle {c:?}"))
        .collect();
    assert!(
        differ.is_empty() && golden.len() == computed.len(),
        "{} golden rows, oracle {}; differences:\n{}",
        golden.len(),
        computed.len(),
        differ.join("\n")
    );
}

/// Rewrites `data/golden_digests.tsv` from the oracle when `TB_BLESS=1`; otherwise
/// only compares. Run through `tools/bless-golden`.
#[test]
#[ignore = "rewrites data/golden_digests.tsv with TB_BLESS=1; see tools/bless-golden"]
fn bless_golden_digests() {
    let text = render(&all_oracle_rows());
    let path = golden_path();
    if std::env::var("TB_BLESS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().expect("data dir")).expect("create data/");
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        eprintln!(
            "wrote {} ({} rows)",
            path.display(),
            text.lines().count() - 1
        );
    } else {
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            current == text,
            "{} differs from the oracle; set TB_BLESS=1 to rewrite it",
            path.display()
        );
    }
}
