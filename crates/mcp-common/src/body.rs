//! An HTTP request body read up to a limit, keeping what an over-long one needs for its
//! answer: the id at its start ([`crate::edge::recover_id_prefix`]), not the whole body.

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt as _;
use serde_json::Value;

use crate::edge::{ID_SCAN, recover_id_prefix};

/// A body as read by [`read`].
pub(crate) enum Body {
    /// The whole body, at most the limit long.
    Whole(Bytes),
    /// Longer than the limit: the id read from its first bytes, if one could be. The rest
    /// was read and dropped up to [`DRAIN`] bytes in all, so that the client, still sending,
    /// reads the answer rather than a broken connection.
    TooLong(Option<Value>),
    /// Reading failed (a read deadline, a broken connection).
    Failed(axum::Error),
}

/// How much of an over-long body is read (and dropped) before it is answered: a client
/// writes its whole request before it reads, so a server that answers and closes while the
/// client is still writing leaves it a broken pipe instead of the answer. Past this (or the
/// read timeout, which bounds every frame) the answer goes out and the connection closes.
pub(crate) const DRAIN: usize = 64 * 1024 * 1024;

/// `body` whole when it is at most `limit` bytes long; else what [`Body::TooLong`] keeps.
/// At most `limit` bytes (plus one frame) are held.
pub(crate) async fn read(mut body: axum::body::Body, limit: usize) -> Body {
    let mut buf = BytesMut::new();
    loop {
        let data = match body.frame().await {
            None => return Body::Whole(buf.freeze()),
            Some(Err(err)) => return Body::Failed(err),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => data,
                // Trailers carry no message.
                Err(_) => continue,
            },
        };
        if buf.len().saturating_add(data.len()) > limit {
            let room = ID_SCAN.saturating_sub(buf.len()).min(data.len());
            buf.extend_from_slice(&data[..room]);
            let id = recover_id_prefix(&buf);
            drain(body, DRAIN.saturating_sub(limit)).await;
            return Body::TooLong(id);
        }
        buf.extend_from_slice(&data);
    }
}

/// Read and drop up to `most` more bytes of `body` (fewer when it ends or fails first).
async fn drain(mut body: axum::body::Body, most: usize) {
    let mut read = 0usize;
    while read < most {
        match body.frame().await {
            Some(Ok(frame)) => {
                read = read.saturating_add(frame.data_ref().map_or(0, bytes::Buf::remaining));
            }
            None | Some(Err(_)) => return,
        }
    }
}
