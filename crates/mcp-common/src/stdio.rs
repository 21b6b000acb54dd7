//! A stdio transport that ends at a `shutdown` request (for servers whose contract defines one; see
//! [`crate::serve::ServeOptions`]): nothing after it is read, the requests before it are
//! answered, then it is answered `null`, and the transport closes.
//!
//! `shutdown` is handled here rather than by a request handler so that it works at any
//! point of the session (before `initialize` too) and so that requests the client pipelined
//! after it are never started: the service sees the end of its input right after it, writes
//! the answers still in flight, and closes the transport, which answers `shutdown` last.

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, CustomResult, JsonRpcMessage, RequestId};
use rmcp::model::{ServerJsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::io::{StdioReader, StdioWriter};

pub const SHUTDOWN: &str = "shutdown";

/// A transport that ends its input at `shutdown`.
pub struct UntilShutdown<T> {
    inner: T,
    /// `initialize` was received: the service loop runs, and closes the transport at the end.
    initialized: bool,
    stopped: bool,
    /// The `shutdown` request to answer when the transport closes.
    shutdown: Option<RequestId>,
}

/// Standard input and output (as pipes where they are pipes), ending at `shutdown`.
pub fn stdio() -> UntilShutdown<AsyncRwTransport<RoleServer, StdioReader, StdioWriter>> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    UntilShutdown::new(AsyncRwTransport::new_server(read, write))
}

impl<T> UntilShutdown<T> {
    pub fn new(inner: T) -> Self {
        Self {
            inner,
            initialized: false,
            stopped: false,
            shutdown: None,
        }
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
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        if self.stopped {
            return None;
        }
        let message = self.inner.receive().await?;
        let JsonRpcMessage::Request(request) = &message else {
            return Some(message);
        };
        match &request.request {
            ClientRequest::InitializeRequest(_) => self.initialized = true,
            ClientRequest::CustomRequest(custom) if custom.method == SHUTDOWN => {
                tracing::info!("shutdown requested");
                self.stopped = true;
                if self.initialized {
                    self.shutdown = Some(request.id.clone());
                } else if let Err(err) = self.inner.send(null_answer(request.id.clone())).await {
                    // Before `initialize` nothing is in flight and nothing closes the
                    // transport: answer now.
                    tracing::warn!(%err, "could not answer shutdown");
                }
                return None;
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
