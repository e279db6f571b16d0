//! A minimal HTTP/1.1 client for the tests (no shared code with the server) and a
//! running `tb serve` process.

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A running server, killed when dropped.
pub struct Server {
    pub child: Child,
    pub address: String,
}

impl Server {
    /// Starts `tb serve ARGS` on a free loopback port and waits until it listens.
    pub fn start(args: &[&str]) -> Server {
        Server::start_with(args, |_| {})
    }

    /// [`Server::start`] with the command changed by `configure` first.
    pub fn start_with(args: &[&str], configure: impl FnOnce(&mut Command)) -> Server {
        let mut command = Command::new(assert_cmd::cargo::cargo_bin!("tb"));
        command
            .arg("serve")
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        configure(&mut command);
        let mut child = command.spawn().expect("spawn tb serve");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let address = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        Server { child, address }
    }

    /// One request on a fresh connection: (status, body).
    pub fn request(&self, method: &str, target: &str, body: &[u8]) -> (u16, String) {
        request(&self.address, method, target, body)
    }

    /// A GET request: (status, body).
    pub fn get(&self, target: &str) -> (u16, String) {
        self.request("GET", target, b"")
    }

    /// A GET request that fails (instead of waiting on) when no answer comes
    /// within `limit`; how long the answer took.
    pub fn get_within(&self, target: &str, limit: Duration) -> io::Result<(u16, String, Duration)> {
        let start = Instant::now();
        let (status, body) = exchange(&self.address, "GET", target, b"", Some(limit))?;
        Ok((status, body, start.elapsed()))
    }

    /// Peak RSS of the server so far (`VmHWM`), in bytes.
    pub fn peak_rss(&self) -> u64 {
        peak_rss(self.child.id())
    }

    /// Sends SIGTERM and waits for the server to end: its exit status and how
    /// long it took. Panics (after killing it) when it has not ended within
    /// `limit`.
    pub fn terminate(&mut self, limit: Duration) -> (ExitStatus, Duration) {
        let start = Instant::now();
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status, start.elapsed());
            }
            if start.elapsed() > limit {
                let _ = self.child.kill();
                panic!("the server still runs {limit:?} after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `VmHWM` (peak RSS) of a process, in bytes.
pub fn peak_rss(pid: u32) -> u64 {
    memory(pid, "VmHWM:")
}

/// A memory line of a process's `/proc/PID/status` (`VmHWM:`, `VmRSS:`), in
/// bytes.
pub fn memory(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// The lines `tb probe --json` prints for `positions` of the table `db` (an
/// error object for a bad one): what a server of that table must answer for
/// each.
pub fn probe_json(db: &std::path::Path, positions: &[impl AsRef<std::ffi::OsStr>]) -> Vec<String> {
    let out = Command::new(assert_cmd::cargo::cargo_bin!("tb"))
        .args(["probe", "--json", "--db"])
        .arg(db)
        .args(positions)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// One HTTP/1.1 request to `address` on a fresh connection: (status, body). The
/// body is read by its length (or chunks), so a peer that keeps the connection
/// open (chromedriver) does not hang the client.
pub fn request(address: &str, method: &str, target: &str, body: &[u8]) -> (u16, String) {
    exchange(address, method, target, body, None).unwrap()
}

/// [`request`], failing when a read or write waits longer than `limit`.
pub fn exchange(
    address: &str,
    method: &str,
    target: &str,
    body: &[u8],
    limit: Option<Duration>,
) -> io::Result<(u16, String)> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(limit)?;
    stream.set_write_timeout(limit)?;
    write!(
        stream,
        "{method} {target} HTTP/1.1\r\nHost: {address}\r\nContent-Length: {}\r\n\
         Content-Type: application/json\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    // A server may answer before it has read the whole body (413 for a body over
    // its limit) and close: the rest of the body then meets a broken pipe or a
    // reset, and the answer is already on its way to be read.
    if let Err(e) = stream.write_all(body) {
        if !matches!(
            e.kind(),
            io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
        ) {
            return Err(e);
        }
        return read_response(&mut BufReader::new(stream)).map_err(|_| e);
    }
    read_response(&mut BufReader::new(stream))
}

/// An HTTP/1.1 response: (status, body).
pub fn read_response(reader: &mut impl BufRead) -> io::Result<(u16, String)> {
    let mut status_line = String::new();
    reader.read_line(&mut status_line)?;
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::other(format!("no status in {status_line:?}")))?;
    let (mut length, mut chunked) = (None, false);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end().to_ascii_lowercase();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("content-length:") {
            length = Some(value.trim().parse::<usize>().unwrap());
        }
        chunked |= line == "transfer-encoding: chunked";
    }
    let mut body = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size)?;
            let size = usize::from_str_radix(size.trim(), 16)
                .map_err(|_| io::Error::other(format!("no chunk size in {size:?}")))?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = length {
        body.resize(length, 0);
        reader.read_exact(&mut body)?;
    } else {
        reader.read_to_end(&mut body)?;
    }
    Ok((status, String::from_utf8(body).unwrap()))
}

/// `%`-encodes a query value.
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
