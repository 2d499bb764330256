//! The accept loop: HTTP connections served with limits a misbehaving client cannot get
//! around.
//!
//! `axum::serve` keeps a connection for as long as the client likes. Here every connection
//! has a watchdog that closes it when a request head has been arriving for longer than the
//! header timeout (a client that sends half a head and stops), or when it has sat idle
//! between requests for longer than the idle timeout. The watchdog looks a few times per
//! header timeout rather than being woken by every request: a request then costs it a few
//! atomic writes, not a timer, and a verdict comes at most a quarter of the shorter
//! timeout late. The number of open
//! connections is capped: past the cap the loop stops accepting (new clients wait in the
//! listen backlog) and goes on serving the connections it has. On shutdown it stops
//! accepting, lets the requests in flight finish, and gives up on whatever is left after
//! the grace period, so one stuck client never keeps the process alive.
//!
//! Connections speak HTTP/1.1 (with upgrades) only: HTTP/2 belongs at the TLS-terminating
//! proxy in front, and serving both costs every connection about 5 KB more, which adds up
//! over thousands of idle live-update streams.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use axum::Router;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tower::ServiceExt;

/// How the accept loop treats connections.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionLimits {
    /// A request head must arrive whole within this time of its first byte (and a new
    /// connection's first head within this time of connecting).
    pub header_timeout: Duration,
    /// A keep-alive connection with no request for this long is closed.
    pub idle_timeout: Duration,
    /// Most connections open at once.
    pub max_connections: usize,
    /// How long shutdown waits for requests in flight before closing their connections.
    pub shutdown_grace: Duration,
}

/// Most headers in one request head.
pub const MAX_HEADERS: usize = 256;
/// Most bytes of one request head, its request line included.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Connections the kernel may queue for the accept loop (it caps this at
/// `net.core.somaxconn`): a sale's opening connects thousands at once.
pub const LISTEN_BACKLOG: u32 = 4096;

/// Binds a listener on `addr` with [`LISTEN_BACKLOG`] (a plain bind asked for 128).
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Serves `router` on `listener` until `shutdown` completes, then drains as
/// [`ConnectionLimits::shutdown_grace`] allows.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let mut builder = hyper::server::conn::http1::Builder::new();
    // One limit for a request head, by size: up to MAX_HEADERS headers, all within
    // MAX_HEAD_BYTES (hyper answers 431 past either). A browser sends a few dozen headers
    // in a few KB; hyper's defaults (100 headers, but a head of some 400 KB) refused many
    // small headers while taking one huge one.
    builder
        .max_headers(MAX_HEADERS)
        .max_buf_size(MAX_HEAD_BYTES);
    let builder = Arc::new(builder);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        // A slot first: at the cap, stop accepting and keep serving what is open.
        let slot = tokio::select! {
            () = &mut shutdown => break,
            slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of descriptors, or a connection reset before it was accepted:
                    // back off a moment rather than spin.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let connection = Connection {
            builder: builder.clone(),
            router: router.clone(),
            limits,
            stopping: stopping.clone(),
        };
        connections.spawn(async move {
            connection.run(stream, peer).await;
            drop(slot);
        });
    }
    drop(listener);
    let _ = stop.send(true);
    let drained = tokio::time::timeout(limits.shutdown_grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "shutdown grace period over: closing the connections left"
        );
        connections.shutdown().await;
    }
}

/// What one connection needs.
struct Connection {
    builder: Arc<hyper::server::conn::http1::Builder>,
    router: Router,
    limits: ConnectionLimits,
    stopping: watch::Receiver<bool>,
}

impl Connection {
    async fn run(mut self, stream: TcpStream, peer: std::net::SocketAddr) {
        let activity = Arc::new(Activity::new());
        let io = TokioIo::new(Watched {
            inner: stream,
            activity: activity.clone(),
        });
        let router = self.router.clone();
        let service_activity = activity.clone();
        let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            let guard = InFlight::start(service_activity.clone());
            req.extensions_mut().insert(ConnectInfo(peer));
            let router = router.clone();
            async move {
                let response = router.oneshot(req.map(Body::new)).await?;
                Ok::<_, std::convert::Infallible>(response.map(|body| {
                    Body::new(Tracked {
                        inner: body,
                        _guard: guard,
                    })
                }))
            }
        });
        let conn = self.builder.serve_connection(io, service).with_upgrades();
        tokio::pin!(conn);
        let mut closing = false;
        let period = (self.limits.header_timeout.min(self.limits.idle_timeout) / 4)
            .max(Duration::from_millis(10));
        let mut look = tokio::time::interval_at(Instant::now() + period, period);
        look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(%error, "connection ended with an error");
                    }
                    return;
                }
                _ = look.tick(), if !closing => match activity.verdict(self.limits) {
                    // Half a head: nothing to finish, close it now.
                    Some(Verdict::HeadTooSlow) => {
                        tracing::debug!(%peer, "request head not complete in time; closing");
                        return;
                    }
                    Some(Verdict::Idle) => {
                        conn.as_mut().graceful_shutdown();
                        closing = true;
                    }
                    None => {}
                },
                Ok(()) = self.stopping.changed(), if !closing => {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
            }
        }
    }
}

/// Why the watchdog closes a connection.
enum Verdict {
    /// A request head has been arriving for longer than the header timeout.
    HeadTooSlow,
    /// No request for longer than the idle timeout.
    Idle,
}

/// Milliseconds since `origin`, never 0 (0 means "not set").
fn stamp(origin: Instant) -> u64 {
    (origin.elapsed().as_millis() as u64).max(1)
}

/// What the watchdog knows of a connection, written by its reads and its requests.
struct Activity {
    origin: Instant,
    /// Requests whose answer has not been sent in full.
    in_flight: AtomicUsize,
    /// When the bytes of the next request head began to arrive (0: none yet). A new
    /// connection counts as a head begun when it connects.
    head_started: AtomicU64,
    /// When the connection last did anything: a read, or an answer sent in full.
    last_active: AtomicU64,
}

impl Activity {
    fn new() -> Self {
        let origin = Instant::now();
        Self {
            origin,
            in_flight: AtomicUsize::new(0),
            head_started: AtomicU64::new(1),
            last_active: AtomicU64::new(1),
        }
    }

    fn read(&self) {
        let now = stamp(self.origin);
        self.last_active.store(now, Ordering::Relaxed);
        if self.in_flight.load(Ordering::Acquire) == 0 {
            // The first bytes of a head: its clock starts (later reads leave it be).
            let _ = self
                .head_started
                .compare_exchange(0, now, Ordering::AcqRel, Ordering::Relaxed);
        }
    }

    /// Whether the connection should be closed now, and why; `None` while a request is in
    /// flight or no limit has passed.
    fn verdict(&self, limits: ConnectionLimits) -> Option<Verdict> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let now = self.origin.elapsed();
        let since = |ms: u64| now.saturating_sub(Duration::from_millis(ms));
        match self.head_started.load(Ordering::Acquire) {
            0 => (since(self.last_active.load(Ordering::Relaxed)) >= limits.idle_timeout)
                .then_some(Verdict::Idle),
            started => (since(started) >= limits.header_timeout).then_some(Verdict::HeadTooSlow),
        }
    }
}

/// Marks one request in flight until its answer's body is dropped (sent in full, or the
/// connection closed).
struct InFlight(Arc<Activity>);

impl InFlight {
    fn start(activity: Arc<Activity>) -> Self {
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        // The head is complete: the next one has not begun.
        activity.head_started.store(0, Ordering::Release);
        Self(activity)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let activity = &self.0;
        activity
            .last_active
            .store(stamp(activity.origin), Ordering::Relaxed);
        activity.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An answer's body that keeps its request counted in flight until it is dropped.
struct Tracked {
    inner: Body,
    _guard: InFlight,
}

impl hyper::body::Body for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The socket, reporting every read to the watchdog.
struct Watched {
    inner: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Raises this process's open-file limit to its hard limit and returns the connection cap
/// that fits under it: `wanted`, or fewer when descriptors are short (some are kept for
/// Postgres, Redis and the process itself).
pub fn fit_connection_cap(wanted: usize) -> usize {
    const RESERVED: u64 = 256;
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => {
            let room = limit.saturating_sub(RESERVED).max(1);
            let cap = wanted.min(usize::try_from(room).unwrap_or(usize::MAX));
            if cap < wanted {
                tracing::warn!(
                    wanted,
                    cap,
                    limit,
                    "the open-file limit allows fewer connections than configured"
                );
            }
            cap
        }
        Err(error) => {
            tracing::warn!(%error, "could not raise the open-file limit");
            wanted
        }
    }
}
