//! The stdio transport of every server: its input ends only once every tool call read
//! before the end has been answered, and (for servers whose contract defines one; see
//! [`crate::serve::ServeOptions`]) at a `shutdown` request: nothing after it is read, the
//! requests before it are answered, then it is answered `null`, and the transport closes.
//!
//! rmcp's service stops reading at the end of its input and gives the handlers still running
//! 5 s to answer before it cancels them, so a client that pipelined a hundred writes and then
//! closed stdin (or sent `shutdown`) would lose the answers of the slow ones, and some would
//! never run. Here the end of input is held back until the tool calls handed to the service
//! have been answered (or cancelled by the client), for at most [`DRAIN_LIMIT`].
//!
//! `shutdown` is handled here rather than by a request handler so that it works at any
//! point of the session (before `initialize` too) and so that requests the client pipelined
//! after it are never started: the service sees the end of its input right after it, writes
//! the answers still in flight, and closes the transport, which answers `shutdown` last.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, ClientRequest, CustomResult, JsonRpcMessage, RequestId};
use rmcp::model::{ServerJsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::io::{StdioReader, StdioWriter};

pub const SHUTDOWN: &str = "shutdown";

/// How long the end of input waits for the tool calls still running.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(120);

/// A transport whose input ends once the tool calls before its end are answered, and, when
/// asked, at `shutdown`.
pub struct UntilShutdown<T> {
    inner: T,
    /// Whether `shutdown` ends the input (the contract of the server defines it).
    shutdown_request: bool,
    /// `initialize` was received: the service loop runs, and closes the transport at the end.
    initialized: bool,
    /// When the input ended (end of stdin, or `shutdown`): nothing more is read.
    ended: Option<tokio::time::Instant>,
    /// The `shutdown` request to answer when the transport closes.
    shutdown: Option<RequestId>,
    /// Tool calls handed to the service and not answered yet.
    in_flight: HashSet<RequestId>,
}

/// Standard input and output (as pipes where they are pipes); `shutdown_request`: the input
/// also ends at `shutdown`.
pub fn stdio(
    shutdown_request: bool,
) -> UntilShutdown<AsyncRwTransport<RoleServer, StdioReader, StdioWriter>> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    UntilShutdown::new(AsyncRwTransport::new_server(read, write), shutdown_request)
}

impl<T> UntilShutdown<T> {
    pub fn new(inner: T, shutdown_request: bool) -> Self {
        Self {
            inner,
            shutdown_request,
            initialized: false,
            ended: None,
            shutdown: None,
            in_flight: HashSet::new(),
        }
    }

    /// The end of the input, once the tool calls before it are answered. rmcp polls this
    /// anew after each message it handles, so it is re-checked after every answer sent.
    async fn end(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let ended = *self.ended.get_or_insert_with(tokio::time::Instant::now);
        if !self.in_flight.is_empty() {
            tokio::time::sleep_until(ended + DRAIN_LIMIT).await;
            tracing::warn!(
                unanswered = self.in_flight.len(),
                "input ended; stopped waiting for the tool calls still running"
            );
        }
        None
    }
}

fn null_answer(id: RequestId) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::response(
        ServerResult::CustomResult(CustomResult(serde_json::Value::Null)),
        id,
    )
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for UntilShutdown<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Response(response) => {
                self.in_flight.remove(&response.id);
            }
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.in_flight.remove(id);
                }
            }
            _ => {}
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        if self.ended.is_some() {
            return self.end().await;
        }
        let Some(message) = self.inner.receive().await else {
            return self.end().await;
        };
        match &message {
            JsonRpcMessage::Request(request) => match &request.request {
                ClientRequest::InitializeRequest(_) => self.initialized = true,
                ClientRequest::CallToolRequest(_) => {
                    self.in_flight.insert(request.id.clone());
                }
                ClientRequest::CustomRequest(custom)
                    if self.shutdown_request && custom.method == SHUTDOWN =>
                {
                    tracing::info!("shutdown requested");
                    if self.initialized {
                        self.shutdown = Some(request.id.clone());
                    } else if let Err(err) = self.inner.send(null_answer(request.id.clone())).await
                    {
                        // Before `initialize` nothing is in flight and nothing closes the
                        // transport: answer now.
                        tracing::warn!(%err, "could not answer shutdown");
                    }
                    return self.end().await;
                }
                _ => {}
            },
            // A call the client cancelled is not answered.
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.in_flight.remove(id);
                }
            }
            _ => {}
        }
        Some(message)
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(id) = self.shutdown.take()
            && let Err(err) = self.inner.send(null_answer(id)).await
        {
            tracing::warn!(%err, "could not answer shutdown");
        }
        self.inner.close().await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use rmcp::model::{CallToolResult, ServerResult};
    use tokio::io::AsyncWriteExt;

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    fn call(id: u64) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"slow","arguments":{{}}}}}}"#
        )
    }

    fn answer(id: u64) -> TxJsonRpcMessage<RoleServer> {
        ServerJsonRpcMessage::response(
            ServerResult::CallToolResult(CallToolResult::success(Vec::new())),
            RequestId::Number(id as i64),
        )
    }

    /// A transport over an in-memory pipe, and the client's end of it.
    fn pipe(
        shutdown_request: bool,
    ) -> (
        UntilShutdown<impl Transport<RoleServer>>,
        tokio::io::DuplexStream,
        tokio::io::DuplexStream,
    ) {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let inner = AsyncRwTransport::new_server(server_in, server_out);
        (
            UntilShutdown::new(inner, shutdown_request),
            client_out,
            client_in,
        )
    }

    async fn still_open(transport: &mut UntilShutdown<impl Transport<RoleServer>>) -> bool {
        tokio::time::timeout(Duration::from_millis(200), transport.receive())
            .await
            .is_err()
    }

    #[tokio::test]
    async fn the_end_of_input_waits_for_the_calls_in_flight() {
        let (mut transport, mut client, _answers) = pipe(false);
        let lines = format!("{INITIALIZE}\n{}\n{}\n", call(2), call(3));
        client.write_all(lines.as_bytes()).await.unwrap();
        drop(client); // end of input
        for _ in 0..3 {
            assert!(transport.receive().await.is_some());
        }
        assert!(still_open(&mut transport).await, "two calls unanswered");
        let _ = transport.send(answer(2)).await;
        assert!(still_open(&mut transport).await, "one call unanswered");
        let _ = transport.send(answer(3)).await;
        assert!(
            transport.receive().await.is_none(),
            "all answered: the input ends"
        );
    }

    #[tokio::test]
    async fn shutdown_waits_too_and_a_cancelled_call_is_not_waited_for() {
        let (mut transport, mut client, _answers) = pipe(true);
        let cancel =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#;
        let lines = format!(
            "{INITIALIZE}\n{}\n{}\n{cancel}\n{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"shutdown\"}}\n{}\n",
            call(2),
            call(3),
            call(4)
        );
        client.write_all(lines.as_bytes()).await.unwrap();
        for _ in 0..4 {
            assert!(transport.receive().await.is_some());
        }
        // `shutdown`: call 2 is still running, call 3 was cancelled, call 4 is never read.
        assert!(still_open(&mut transport).await);
        let _ = transport.send(answer(2)).await;
        assert!(transport.receive().await.is_none());
        assert!(
            transport.receive().await.is_none(),
            "nothing after shutdown"
        );
    }
}
