//! Killing a real `tb build` in the middle, for the resume tests.
#![allow(dead_code)]

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
    for _attempt in 0..attempts {
        let _ = std::fs::remove_file(db);
        let mut child = Command::new(assert_cmd::cargo::cargo_bin!("tb"))
            .args(args)
            .arg("--db")
            .arg(db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + timeout;
        while !ready(db) && Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        child.kill().ok();
        child.wait().unwrap();
        if midway(db) {
            return true;
        }
    }
    false
}
