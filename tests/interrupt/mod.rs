//! Killing a real `tb` process in the middle, for the resume tests.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `tb ARGS --db DB` on a fresh file and kills it (SIGKILL) once `ready(db)`
/// holds (or it ended, or `timeout` passed); tries again, up to `attempts` times,
/// until the file after the kill satisfies `midway`. Returns whether it did.
pub fn kill_build_midway(
    args: &[&str],
    db: &Path,
    attempts: usize,
    timeout: Duration,
    ready: impl Fn(&Path) -> bool,
    midway: impl Fn(&Path) -> bool,
) -> bool {
    let mut all: Vec<&str> = args.to_vec();
    let db_text = db.to_str().expect("a UTF-8 path");
    all.extend(["--db", db_text]);
    kill_midway(
        &all,
        || {
            let _ = std::fs::remove_file(db);
        },
        attempts,
        timeout,
        || ready(db),
        || midway(db),
    )
}

/// Runs `tb ARGS` after `reset()` and kills it (SIGKILL) once `ready()` holds (or
/// it ended, or `timeout` passed); tries again, up to `attempts` times, until
/// `midway()` holds after the kill. Returns whether it did.
pub fn kill_midway(
    args: &[&str],
    reset: impl Fn(),
    attempts: usize,
    timeout: Duration,
    ready: impl Fn() -> bool,
    midway: impl Fn() -> bool,
) -> bool {
    for _attempt in 0..attempts {
        reset();
        run_until(args, Stdio::null(), timeout, &ready);
        if midway() {
            return true;
        }
    }
    false
}

/// Runs `tb ARGS`, its standard error to `stderr`, until `done()` holds (or it
/// ended, or `timeout` passed), then kills it (SIGKILL).
pub fn run_until(args: &[&str], stderr: Stdio, timeout: Duration, done: impl Fn() -> bool) {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("tb"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + timeout;
    while !done() && Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().ok();
    child.wait().unwrap();
}
