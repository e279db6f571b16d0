//! The server's connections: accepted up to a cap, each served by hyper's
//! HTTP/1.1 with every wait bounded, and all of them ended within a few seconds
//! of the shutdown signal.
//!
//! * A connection whose client sends no complete request head for
//!   [`Limits::idle`] (an idle keep-alive connection, a slow head) is closed
//!   (hyper's header read timeout), and so is one whose client reads nothing of
//!   an answer for as long ([`WriteTimeout`]). A request body that stops arriving
//!   is the POST handler's to time out.
//! * At most [`Limits::max_connections`] connections are open (and never more
//!   than the descriptor limit allows, whose soft value is raised to the hard
//!   one at start): a new one past the cap closes the connection idle the
//!   longest (no request under way), or is refused with a 503 when every one is
//!   busy. Idle clients can hold descriptors, never lock others out.
//! * On shutdown: no new connection; idle ones close, busy ones finish their
//!   request, for at most [`Limits::grace`]; then the server returns whatever is
//!   still running.

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use http_body::Frame;
use hyper::body::Incoming;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, watch};
use tokio::time::Sleep;

/// How the connections are bounded.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most connections open at once.
    pub max_connections: usize,
    /// Longest a client may send no request head, or read nothing of an answer.
    pub idle: Duration,
    /// Longest requests under way are waited for at shutdown.
    pub grace: Duration,
}

/// Largest buffer per connection and direction: request heads are small, and an
/// answer streams through it in pieces (hyper's default is about 400 KiB).
const CONNECTION_BUFFER: usize = 64 << 10;

/// What a client refused at the cap is told: a 503 with a JSON error, as any
/// other refusal.
fn too_many() -> String {
    let body = r#"{"error":"too many connections at once; retry shortly"}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Accepts and serves connections on `listener` with `app` until `shutdown`
/// resolves, then waits for the requests under way (see [`Limits::grace`]).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let peers = Arc::new(Peers::default());
    let (stop, stopped) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                if out_of_descriptors(&e) {
                    // A descriptor is freed by closing the longest idle connection.
                    peers.evict_idle();
                }
                // (A connection reset before it was accepted: nothing to wait for.)
                if !connection_error(&e) {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                continue;
            }
        };
        if peers.count() >= limits.max_connections && !peers.evict_idle() {
            // Every connection is busy: say so without waiting for this one.
            let _ = tcp.try_write(too_many().as_bytes());
            continue;
        }
        let (peer, registration) = peers.add();
        tokio::spawn(connection(
            tcp,
            app.clone(),
            peer,
            registration,
            stopped.clone(),
            limits.idle,
        ));
    }
    drop(listener);
    let _ = stop.send(true);
    let _ = tokio::time::timeout(limits.grace, peers.all_closed()).await;
}

/// Serves one connection until it ends, is evicted or, after the stop, its
/// request under way is answered.
async fn connection(
    tcp: TcpStream,
    app: Router,
    peer: Arc<Peer>,
    _registration: Registration,
    mut stop: watch::Receiver<bool>,
    idle: Duration,
) {
    let app = TowerToHyperService::new(app);
    let service = {
        let peer = Arc::clone(&peer);
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let busy = Busy::new(Arc::clone(&peer));
            let answer = app.call(request);
            async move {
                let response = answer.await?;
                Ok::<_, std::convert::Infallible>(response.map(|body| Tracked { body, busy }))
            }
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(idle)
        .max_buf_size(CONNECTION_BUFFER);
    let io = TokioIo::new(WriteTimeout::new(tcp, idle));
    let mut served = pin!(http.serve_connection(io, service));
    let mut stopping = false;
    loop {
        tokio::select! {
            _ = served.as_mut() => break,
            () = peer.evict.notified() => break,
            _ = stop.wait_for(|stop| *stop), if !stopping => {
                stopping = true;
                served.as_mut().graceful_shutdown();
            }
        }
    }
}

/// Whether an accept failed for want of descriptors (the process's or the
/// system's).
fn out_of_descriptors(error: &io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// Whether an accept failed for the connection's own sake (reset or aborted
/// before it was accepted).
fn connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Milliseconds since the first call: when a connection was last busy.
fn now_millis() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// One open connection, as the accept loop sees it.
#[derive(Default)]
struct Peer {
    /// Requests whose answer is not sent yet.
    busy: AtomicUsize,
    /// When a request last started or ended ([`now_millis`]).
    last_active: AtomicU64,
    /// Closes the connection at once.
    evict: Notify,
}

/// The open connections.
#[derive(Default)]
struct Peers {
    open: Mutex<(u64, HashMap<u64, Arc<Peer>>)>,
    /// Told when the last one closes.
    emptied: Notify,
}

/// A connection's place among the open ones, given up when dropped.
struct Registration {
    peers: Arc<Peers>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut open = self.peers.lock();
        open.1.remove(&self.id);
        if open.1.is_empty() {
            self.peers.emptied.notify_waiters();
        }
    }
}

impl Peers {
    fn lock(&self) -> MutexGuard<'_, (u64, HashMap<u64, Arc<Peer>>)> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn count(&self) -> usize {
        self.lock().1.len()
    }

    /// A new connection.
    fn add(self: &Arc<Self>) -> (Arc<Peer>, Registration) {
        let peer = Arc::new(Peer::default());
        peer.last_active.store(now_millis(), Ordering::Relaxed);
        let mut open = self.lock();
        open.0 += 1;
        let id = open.0;
        open.1.insert(id, Arc::clone(&peer));
        let registration = Registration {
            peers: Arc::clone(self),
            id,
        };
        (peer, registration)
    }

    /// Closes the connection with no request under way that was busy longest
    /// ago; whether there was one.
    fn evict_idle(&self) -> bool {
        let mut open = self.lock();
        let idle = open
            .1
            .iter()
            .filter(|(_, peer)| peer.busy.load(Ordering::Relaxed) == 0)
            .min_by_key(|(_, peer)| peer.last_active.load(Ordering::Relaxed))
            .map(|(&id, _)| id);
        let Some(peer) = idle.and_then(|id| open.1.remove(&id)) else {
            return false;
        };
        peer.evict.notify_one();
        true
    }

    /// Resolves when no connection is open.
    async fn all_closed(&self) {
        loop {
            let emptied = self.emptied.notified();
            if self.count() == 0 {
                return;
            }
            emptied.await;
        }
    }
}

/// A request under way on a connection, until its answer is sent (or dropped).
struct Busy(Arc<Peer>);

impl Busy {
    fn new(peer: Arc<Peer>) -> Busy {
        peer.busy.fetch_add(1, Ordering::Relaxed);
        peer.last_active.store(now_millis(), Ordering::Relaxed);
        Busy(peer)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.last_active.store(now_millis(), Ordering::Relaxed);
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
    }
}

/// An answer's body, its request counted busy while it is sent.
struct Tracked {
    body: Body,
    #[allow(dead_code)] // held for its Drop
    busy: Busy,
}

impl HttpBody for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection whose writes fail once one has waited for `limit`: a client
/// that reads nothing of an answer lets it go (and what it held) instead of
/// keeping it buffered.
struct WriteTimeout<T> {
    io: T,
    limit: Duration,
    /// The timer of the write waiting now (kept for the next one).
    timer: Option<Pin<Box<Sleep>>>,
    /// A write is waiting (the timer runs).
    waiting: bool,
}

impl<T> WriteTimeout<T> {
    fn new(io: T, limit: Duration) -> WriteTimeout<T> {
        WriteTimeout {
            io,
            limit,
            timer: None,
            waiting: false,
        }
    }

    /// `result` of a write, flush or shutdown: a wait starts the timer (unless
    /// it runs), progress stops it, and a wait past the limit is an error.
    fn watch<R>(
        &mut self,
        cx: &mut Context<'_>,
        result: Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if result.is_ready() {
            self.waiting = false;
            return result;
        }
        let deadline = tokio::time::Instant::now() + self.limit;
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if !self.waiting {
            timer.as_mut().reset(deadline);
            self.waiting = true;
        }
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client read nothing of the answer for too long",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteTimeout<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteTimeout<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_write(cx, buf);
        this.watch(cx, result)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.watch(cx, result)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_flush(cx);
        this.watch(cx, result)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.io).poll_shutdown(cx);
        this.watch(cx, result)
    }
}

/// Raises the soft limit of open descriptors to the hard limit (the usual soft
/// limit of 1,024 is far below what a server's connections may need); returns
/// the soft limit now in force.
pub fn raise_descriptor_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    // An unlimited hard limit still has the kernel's ceiling (nr_open).
    let wanted = limit.rlim_max.min(1 << 20);
    if limit.rlim_cur < wanted {
        let raised = libc::rlimit {
            rlim_cur: wanted,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = wanted;
        }
    }
    limit.rlim_cur
}
