//! Conventions: shell completions and manual pages generated from the same
//! definitions as `--help` (`tb completions`, `tb man`), checked by running bash's
//! completion machinery and groff on what tb prints; and no import circle among the
//! modules of `src/` (read by [`module_graph`]).

use crate::harness;
use crate::module_graph;

use harness::{run_ok, tb};
use module_graph::{Graph, Module};
use std::path::Path;
use std::process::Command;

const COMMANDS: [&str; 9] = [
    "build",
    "probe",
    "solve",
    "export",
    "info",
    "serve",
    "verify",
    "completions",
    "man",
];

fn stdout_of(args: &[&str]) -> String {
    String::from_utf8(run_ok(tb().args(args), &args.join(" ")).stdout).unwrap()
}

/// What bash completes for the words of a command line (the last one being typed).
fn bash_complete(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; \
         _tb tb '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        words.join(" "),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bash: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn bash_completes_commands_options_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("tb.bash");
    std::fs::write(&script, stdout_of(&["completions", "bash"])).unwrap();
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(syntax.status.success(), "bash -n: {syntax:?}");

    let all = bash_complete(&script, &["tb", ""]);
    for command in COMMANDS {
        assert!(all.iter().any(|c| c == command), "{command} in {all:?}");
    }
    assert_eq!(bash_complete(&script, &["tb", "pro"]), ["probe"]);
    let options = bash_complete(&script, &["tb", "probe", "--"]);
    for option in ["--db", "--json", "--search-limit", "--help"] {
        assert!(
            options.iter().any(|o| o == option),
            "{option} in {options:?}"
        );
    }
    assert_eq!(
        bash_complete(&script, &["tb", "build", "3x3", "--symmetry", ""]),
        ["none", "wilson"]
    );
    assert_eq!(
        bash_complete(&script, &["tb", "completions", "f"]),
        ["fish"]
    );
}

#[test]
fn completions_exist_for_every_shell_clap_knows() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        for command in COMMANDS {
            assert!(script.contains(command), "{shell}: no {command}");
        }
    }
    let out = tb().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

/// The long options `tb COMMAND --help` lists.
fn help_options(command: &str) -> Vec<String> {
    let help = stdout_of(&[command, "--help"]);
    let mut options: Vec<String> = help
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| {
            w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_string()
        })
        .collect();
    options.sort();
    options.dedup();
    options
}

/// The page as groff renders it for a terminal; groff must not warn.
fn rendered(roff: &str) -> Option<String> {
    let mut child = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-P-c", "-P-b", "-P-u"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(roff.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.trim().is_empty(), "groff warns: {warnings}");
    Some(String::from_utf8(out.stdout).unwrap())
}

#[test]
fn man_pages_cover_every_command_and_option() {
    let page = stdout_of(&["man"]);
    assert!(page.contains(".TH tb 1"), "{page}");
    let text = rendered(&page);
    if text.is_none() {
        eprintln!("groff is not installed: the pages are checked as roff only");
    }
    for command in COMMANDS {
        assert!(
            page.contains(&format!("tb\\-{command}")),
            "tb(1) lists {command}"
        );
        let sub = stdout_of(&["man", command]);
        assert!(sub.contains(&format!(".TH tb-{command} 1")), "{sub}");
        let text = rendered(&sub).unwrap_or_else(|| sub.replace("\\-", "-"));
        for option in help_options(command) {
            assert!(text.contains(&option), "tb-{command}(1) lacks {option}");
        }
    }
    let out = tb().args(["man", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`nope` is not a command"));
}

/// A module of crate `root` (`lib`, `main`) by its path (`games::dots::loony`; empty
/// for the root).
fn module(root: &str, path: &str) -> Module {
    Module {
        root: root.to_string(),
        path: path
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect(),
    }
}

/// A module of the library crate.
fn lib_module(path: &str) -> Module {
    module("lib", path)
}

/// Edges (crate, from, to) that may close a circle for now, with why. Each must
/// still exist: remove it here when the reason goes. (None today.)
const ALLOWED_CIRCLE_EDGES: [(&str, &str, &str, &str); 0] = [];

#[test]
fn no_module_of_src_reaches_itself_through_its_imports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = Graph::read(&src).unwrap();
    // The reading found the crates (a broken walk would find no circle either).
    assert!(graph.files.len() > 60, "{} modules", graph.files.len());
    let names =
        |from: &Module, to: &Module| graph.edges.get(from).is_some_and(|e| e.contains_key(to));
    assert!(names(
        &lib_module("games::dots::tablebase"),
        &lib_module("games::dots::format")
    ));
    let mut allowed = Vec::new();
    for (root, from, to, why) in ALLOWED_CIRCLE_EDGES {
        let edge = (module(root, from), module(root, to));
        assert!(
            names(&edge.0, &edge.1),
            "{} no longer names {} ({why}): remove the edge from ALLOWED_CIRCLE_EDGES",
            edge.0,
            edge.1
        );
        allowed.push(edge);
    }
    let circles = graph.circles(&allowed);
    let described: Vec<String> = circles.iter().map(|c| graph.describe(c)).collect();
    assert!(
        circles.is_empty(),
        "import circles among the modules of src/ (each module and where it names the others):\n{}",
        described.join("\n")
    );
}

#[test]
fn the_circle_check_follows_every_kind_of_path() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "lib.rs",
            "pub mod a;\npub mod b;\npub mod c;\npub mod d;\npub mod e;\nmod f;\n",
        ),
        // a -> b by a use declaration, b -> a by a path in code: a circle.
        ("a.rs", "use crate::b::Thing;\npub fn h() {}\n"),
        (
            "b.rs",
            "pub struct Thing;\npub fn g() {\n    super::a::h()\n}\n",
        ),
        // c -> d by a serde attribute, d -> c from an inline module: a circle.
        (
            "c.rs",
            "#[derive(serde::Serialize)]\npub struct S {\n    #[serde(serialize_with = \"crate::d::ser\")]\n    x: u8,\n}\npub fn z() {}\n",
        ),
        (
            "d.rs",
            "// crate::a::h() in a comment, /* crate::b::g() */ and a string:\nconst S: &str = \"crate::b::g \\\" crate::a::h \\\"\";\nconst C: char = '\\'';\nconst Q: char = '\"';\npub fn ser() {}\npub use crate::e::Item;\nmod inner {\n    fn f() {\n        super::super::c::z();\n    }\n}\n",
        ),
        // e takes its own item through d's re-export: no edge to d.
        (
            "e.rs",
            "pub struct Item;\nuse crate::d::Item as Same;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
        ),
        ("f/mod.rs", "mod g;\n"),
        ("f/g.rs", "use super::super::a::{self, h};\n"),
    ];
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let graph = Graph::read(dir.path()).unwrap();
    let m = lib_module;
    assert!(graph.files.contains_key(&m("f::g")));
    let edges = |from: &str| -> Vec<String> {
        graph.edges[&m(from)]
            .keys()
            .map(|k| k.path.join("::"))
            .collect()
    };
    assert_eq!(edges("a"), ["b"]);
    assert_eq!(edges("b"), ["a"]);
    assert_eq!(edges("c"), ["d"]);
    assert_eq!(edges("d"), ["c", "e"]);
    assert!(edges("e").is_empty(), "{:?}", edges("e"));
    assert_eq!(edges("f::g"), ["a"]);
    let circles = |allowed: &[(Module, Module)]| -> Vec<Vec<String>> {
        graph
            .circles(allowed)
            .iter()
            .map(|c| c.iter().map(|m| m.path.join("::")).collect())
            .collect()
    };
    assert_eq!(circles(&[]), [["a", "b"], ["c", "d"]]);
    assert_eq!(circles(&[(m("b"), m("a"))]), [["c", "d"]]);
    assert!(
        graph
            .describe(&[m("a"), m("b")])
            .contains("b.rs:3 `super::a::h`")
    );
}
