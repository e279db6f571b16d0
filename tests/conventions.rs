//! Command-line conventions: shell completions and manual pages generated from the
//! same definitions as `--help` (`tb completions`, `tb man`), checked by running
//! bash's completion machinery and groff on what tb prints.

mod harness;
mod oracle;

use harness::{run_ok, tb};
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
