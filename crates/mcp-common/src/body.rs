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
    /// was not read.
    TooLong(Option<Value>),
    /// Reading failed (a read deadline, a broken connection).
    Failed(axum::Error),
}

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
            return Body::TooLong(recover_id_prefix(&buf));
        }
        buf.extend_from_slice(&data);
    }
}
