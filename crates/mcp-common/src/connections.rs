//! The connections of an HTTP server: accepted, served with deadlines, and drained on stop.
//!
//! `axum::serve` sets no timer, so a client that sends its headers (or its body) a byte at a
//! time, opens connections and sends nothing, or never reads its answers, holds a task, a file
//! descriptor and the answer's memory for as long as it likes. Here every connection is served
//! by hyper's HTTP/1.1 with a timer, from the moment it is accepted:
//! - the headers of a request (on a kept-alive connection: the next request) must arrive
//!   within the read timeout, else the connection is closed;
//! - its body within the same time of its headers, else the body fails with [`BodyTimedOut`]
//!   (the MCP endpoint answers `408`);
//! - an answer the client does not read for that long (the server cannot write) ends the
//!   connection.
//!
//! HTTP/1.1 only: hyper has no header or idle timer for HTTP/2, and telling the two apart
//! means waiting for 24 bytes without one (a client that sent one byte held its connection
//! for ever). MCP clients speak HTTP/1.1.
//!
//! A request whose URI is longer than hyper reads (65,534 bytes, also `http::Uri`'s limit)
//! is answered by hyper itself, `414` with an empty body, before any router: a server that
//! wants its own body there says what it is ([`OverlongUri`], [`serve_app_with`]), from the
//! start of the request the connection kept.
//!
//! The timeout is [`DEFAULT_READ_TIMEOUT`], or `MCP_HTTP_READ_TIMEOUT_SECS` (1 to 3600).
//! Handlers see the peer's address as `axum::extract::ConnectInfo<L::Addr>`.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::{ConnectInfo, Request};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// How long a client has to send the headers of a request, counted from the moment the server
/// waits for it (an idle kept-alive connection is closed after this long), and then its body.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The environment variable that sets the read timeout, in seconds.
pub const READ_TIMEOUT_VAR: &str = "MCP_HTTP_READ_TIMEOUT_SECS";

/// The read timeout of the environment ([`READ_TIMEOUT_VAR`]), else [`DEFAULT_READ_TIMEOUT`].
pub fn read_timeout() -> Duration {
    let Ok(value) = std::env::var(READ_TIMEOUT_VAR) else {
        return DEFAULT_READ_TIMEOUT;
    };
    match value.trim().parse::<u64>() {
        Ok(secs @ 1..=3600) => Duration::from_secs(secs),
        _ => {
            tracing::warn!(
                "{READ_TIMEOUT_VAR} must be a number of seconds from 1 to 3600; using {} s",
                DEFAULT_READ_TIMEOUT.as_secs()
            );
            DEFAULT_READ_TIMEOUT
        }
    }
}

/// The error a request body yields once the read timeout has passed.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
pub struct BodyTimedOut;

/// Whether an error of type `E` is among the causes of `error` (e.g. [`BodyTimedOut`] of a
/// request body that could not be read).
pub fn caused_by<E: std::error::Error + 'static>(
    error: &(dyn std::error::Error + 'static),
) -> bool {
    let mut source = Some(error);
    while let Some(error) = source {
        if error.is::<E>() {
            return true;
        }
        source = error.source();
    }
    false
}

/// What a server answers, in place of hyper's empty `414`, for a request whose URI is longer
/// than hyper reads (65,534 bytes, `http::Uri`'s limit too: no router ever sees it): given
/// the first bytes of its request line (up to [`REQUEST_START`]), a content type and a body,
/// or `None` for hyper's own answer.
pub type OverlongUri = Arc<dyn Fn(&[u8]) -> Option<(&'static str, String)> + Send + Sync>;

/// How much of the start of each request a connection keeps for [`OverlongUri`].
pub const REQUEST_START: usize = 512;

/// Serve `app` on the connections of `listener`, with `read_timeout` for each request's
/// headers and for its body, until `stop` resolves; then accept no more and wait until the
/// open connections finish their requests and close.
pub async fn serve_app<L>(
    listener: L,
    app: axum::Router,
    read_timeout: Duration,
    stop: impl Future<Output = ()> + Send,
) where
    L: axum::serve::Listener,
    L::Addr: Clone + Send + Sync + 'static,
{
    serve_app_with(listener, app, read_timeout, stop, None).await;
}

/// [`serve_app`], with `overlong` answering the requests whose URI hyper refuses as too long.
pub async fn serve_app_with<L>(
    mut listener: L,
    app: axum::Router,
    read_timeout: Duration,
    stop: impl Future<Output = ()> + Send,
    overlong: Option<OverlongUri>,
) where
    L: axum::serve::Listener,
    L::Addr: Clone + Send + Sync + 'static,
{
    use hyper_util::rt::{TokioIo, TokioTimer};

    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(read_timeout);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        let (io, addr) = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let app = app.clone();
        let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
            let (mut parts, body) = request.into_parts();
            parts.extensions.insert(ConnectInfo(addr.clone()));
            let body = axum::body::Body::new(Deadline::new(body, read_timeout));
            tower::ServiceExt::oneshot(app.clone(), Request::from_parts(parts, body))
        });
        let io = StalledWrites::new(OverlongAnswer::new(io, overlong.clone()), read_timeout);
        let connection = builder.serve_connection(TokioIo::new(io), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(err) = connection.await {
                tracing::trace!("connection ended: {err}");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// A connection whose writes fail once the client has read nothing for the timeout while an
/// answer waits to be sent (a client that never reads would keep the answer in memory).
struct StalledWrites<I> {
    io: I,
    limit: Duration,
    /// Since when writing has waited for the client, if it does.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<I> StalledWrites<I> {
    fn new(io: I, limit: Duration) -> Self {
        Self {
            io,
            limit,
            stalled: None,
        }
    }

    /// What a write that returned `written` means, given the stall it may have made.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if written.is_ready() {
            self.stalled = None;
            return written;
        }
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client read nothing of its answer in time",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for StalledWrites<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for StalledWrites<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write(cx, buf);
        self.watch(cx, written)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let flushed = Pin::new(&mut self.io).poll_flush(cx);
        self.watch(cx, flushed)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.watch(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// The start of hyper's own answer to a URI too long (it has no body: `content-length: 0`).
const HYPER_414: &[u8] = b"HTTP/1.1 414 URI Too Long\r\n";

/// A connection whose hyper-made `414` (a URI too long, answered before any router) is
/// replaced by what [`OverlongUri`] says for the request's start. The start kept is that of
/// the bytes read first after the last answer was written (a client sends its next request
/// after it has read the answer; a pipelined one is answered by hyper as before, since its
/// start cannot be told apart): at most [`REQUEST_START`] bytes copied per request.
struct OverlongAnswer<I> {
    io: I,
    answer: Option<OverlongUri>,
    /// The start of the current request (cleared by the first read after a write).
    start: Vec<u8>,
    fresh: bool,
    /// The answer being written in place of hyper's: its bytes, how many are written, and
    /// how many of hyper's bytes it stands for.
    replacing: Option<(Vec<u8>, usize, usize)>,
}

impl<I> OverlongAnswer<I> {
    fn new(io: I, answer: Option<OverlongUri>) -> Self {
        Self {
            io,
            answer,
            start: Vec::new(),
            fresh: true,
            replacing: None,
        }
    }

    /// The whole answer in place of `head` (hyper's `414`), if the request's start asks for one.
    fn replacement(&self, head: &[u8]) -> Option<Vec<u8>> {
        let answer = self.answer.as_ref()?;
        if !head.starts_with(HYPER_414) {
            return None;
        }
        let (content_type, body) = answer(&self.start)?;
        let mut out = format!(
            "HTTP/1.1 414 URI Too Long\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        out.extend_from_slice(body.as_bytes());
        Some(out)
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for OverlongAnswer<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.io).poll_read(cx, buf);
        if self.answer.is_some() && matches!(read, Poll::Ready(Ok(()))) {
            let this = &mut *self;
            let new = &buf.filled()[before..];
            if !new.is_empty() {
                if this.fresh {
                    this.start.clear();
                    this.fresh = false;
                }
                let room = REQUEST_START
                    .saturating_sub(this.start.len())
                    .min(new.len());
                this.start.extend_from_slice(&new[..room]);
            }
        }
        read
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for OverlongAnswer<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        if this.replacing.is_none()
            && let Some(answer) = this.replacement(buf)
        {
            this.replacing = Some((answer, 0, buf.len()));
        }
        if let Some((answer, written, stands_for)) = &mut this.replacing {
            while *written < answer.len() {
                match Pin::new(&mut this.io).poll_write(cx, &answer[*written..]) {
                    Poll::Ready(Ok(0)) => {
                        return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
                    }
                    Poll::Ready(Ok(n)) => *written += n,
                    Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                    Poll::Pending => return Poll::Pending,
                }
            }
            let stands_for = *stands_for;
            this.replacing = None;
            this.fresh = true;
            return Poll::Ready(Ok(stands_for));
        }
        let written = Pin::new(&mut this.io).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.fresh = true;
        }
        written
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        // hyper's `414` is its head alone, the first buffer: written as one.
        let first = bufs.iter().find(|b| !b.is_empty());
        if self.replacing.is_some() || first.is_some_and(|b| b.starts_with(HYPER_414)) {
            let first = first.map_or(&[][..], |b| &b[..]);
            return self.poll_write(cx, first);
        }
        let written = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            self.fresh = true;
        }
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// A request body that fails with [`BodyTimedOut`] when it is not read to its end in time.
struct Deadline<B> {
    body: B,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl<B> Deadline<B> {
    fn new(body: B, limit: Duration) -> Self {
        Self {
            body,
            timer: Box::pin(tokio::time::sleep(limit)),
        }
    }
}

impl<B> Body for Deadline<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<axum::BoxError>,
{
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.body).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        match this.timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut)))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
