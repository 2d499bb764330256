//! Request bodies an answer left unread are read to their end before the answer goes.
//!
//! A handler may answer without reading the whole body: a body past its size limit is
//! refused with 413 at the limit, a token is refused with 401 before the body is read.
//! hyper then closes the connection after the answer, with the rest of the body still on
//! its way; the kernel answers what arrives after the close with a reset, and a client
//! still sending may see the reset before it reads the answer (seen under load: a 413
//! arriving as a dropped connection). So the rest is read, and thrown away, before the
//! answer is sent, up to [`DRAIN_BYTES`] and [`DRAIN_TIME`]: the client then reads its
//! answer on a connection that stays open. A client sending more than that is cut off.
//! Only bodies that may be larger than [`SMALL_BODY`] (declared so, or streamed in chunks)
//! are watched.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;
use tokio::sync::oneshot;

/// The most of an unread body read past the answer's decision.
pub const DRAIN_BYTES: usize = 16 * 1024 * 1024;

/// The longest an unread body is read for (as long as nginx's `lingering_timeout`).
pub const DRAIN_TIME: Duration = Duration::from_secs(5);

/// Bodies up to this size are left alone: hyper reads that much from the socket at once,
/// so none of it is left in the kernel to cause a reset, and the hot path's small JSON
/// bodies pay nothing for this layer.
pub const SMALL_BODY: u64 = 64 * 1024;

/// Middleware: hands a request whose body may be large on with a body that, dropped
/// unfinished, comes back here, and reads that rest before the answer goes.
pub async fn drain(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let streamed = headers.contains_key(header::TRANSFER_ENCODING);
    if !streamed && declared.is_none_or(|length| length <= SMALL_BODY) {
        return next.run(request).await;
    }
    let (back, mut rest) = oneshot::channel();
    let request = request.map(|body| {
        Body::new(Returning {
            inner: Some(body),
            back: Some(back),
        })
    });
    let response = next.run(request).await;
    // The request, and so its body, is gone once the answer is made (or it lives on
    // elsewhere, and is not this layer's to read).
    if let Ok(rest) = rest.try_recv() {
        read_out(rest).await;
    }
    response
}

/// Reads `body` to its end, within [`DRAIN_BYTES`] and [`DRAIN_TIME`].
async fn read_out(mut body: Body) {
    let reading = async {
        let mut read = 0;
        while let Some(Ok(frame)) = body.frame().await {
            read += frame.data_ref().map_or(0, Bytes::len);
            if read > DRAIN_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, reading).await;
}

/// A request body that, dropped before its end, sends itself back.
struct Returning {
    inner: Option<Body>,
    back: Option<oneshot::Sender<Body>>,
}

impl http_body::Body for Returning {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        match self.inner.as_mut() {
            Some(inner) => Pin::new(inner).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(|b| b.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), |b| b.size_hint())
    }
}

impl Drop for Returning {
    fn drop(&mut self) {
        if let (Some(inner), Some(back)) = (self.inner.take(), self.back.take()) {
            if !http_body::Body::is_end_stream(&inner) {
                let _ = back.send(inner);
            }
        }
    }
}
