//! Where an operation runs: the seam below the MCP adapter. The adapter (the `jility`
//! binary's `server`) is one handler generic over a [`Backend`]; each way to serve implements
//! it where its policy already lives: local mode here ([`Service`]: the tracker on this
//! process's store), the cloud bridge in `jility-bridge` (requests to the API), and
//! `jility serve`'s own workspaces in `jility-api` (the caller's token decides the
//! workspace and the scopes, and refusals are audited as over REST).

use std::future::Future;

use mcp_common_core::ToolError;

use crate::ops::{Described, Operation};
use crate::service::Service;
use crate::store::Store;
use crate::token::Principal;

/// What the adapter knows of the caller of one request.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The author of local writes: `JILITY_ACTOR`, else the client's name from its handshake.
    pub actor: String,
    /// The token the API's authentication found for the request, if it came through
    /// `jility serve`.
    pub principal: Option<Principal>,
    /// The W3C `traceparent` the request carried in its `_meta`, for the server's traces.
    pub trace_parent: Option<String>,
}

/// Where the tools' operations run.
pub trait Backend: Clone + Send + Sync + 'static {
    /// Whether the tools offered depend on the caller (their list is then private to it).
    const PER_CALLER: bool = false;

    /// Run `O` for `caller`. The arguments arrive as decoded, or as the error that decoding
    /// them gave: a backend that checks the caller's rights first reports those first.
    fn exec<O: Operation>(
        &self,
        caller: &Caller,
        params: Result<O::Params, ToolError>,
    ) -> impl Future<Output = Result<O::Output, ToolError>> + Send;

    /// Whether `caller` may use the operation `op` (a tool is listed only then).
    fn allows(&self, _caller: &Caller, _op: Described) -> bool {
        true
    }

    /// The refusal of a call of `op` that `caller` may not make, recorded where the backend
    /// records refusals (`ticket`: the one the call's arguments name); `None` when it may.
    fn refuse(
        &self,
        _caller: &Caller,
        _op: Described,
        _ticket: Option<String>,
    ) -> impl Future<Output = Option<ToolError>> + Send {
        async { None }
    }
}

/// Local mode: the operation runs on this process's tracker, authored by the caller's actor.
impl<S> Backend for Service<S>
where
    S: Store + Clone + Send + Sync + 'static,
{
    async fn exec<O: Operation>(
        &self,
        caller: &Caller,
        params: Result<O::Params, ToolError>,
    ) -> Result<O::Output, ToolError> {
        let params = params?;
        let actor = caller.actor.clone();
        self.run(move |t| O::run(t, &actor, params)).await
    }
}
