//! Where a person's operations run: the API's [`ApiState`] (scope checks, audit entries,
//! events), with each write counted against a rate limit of the person's own — the same
//! number per minute as a token's (`jility serve --rate-limit`), under the workspace's
//! ceiling — since a person's requests pass no token guard. Reads (a board is many) are
//! not counted.

use jility_core::backend::{Backend, Caller};
use jility_core::ops::{Described, Operation};
use jility_core::store::StoreError;
use mcp_common::ToolError;

use crate::api::ApiState;

/// The backend of the web board's pages on `jility serve`.
#[derive(Clone)]
pub struct People {
    api: ApiState,
}

impl People {
    pub fn new(api: &ApiState) -> Self {
        Self { api: api.clone() }
    }

    /// Count one write of `caller`; refused past their limit (`rate_limit`, retryable, with
    /// when). A database that cannot be reached lets the write go on to fail as it will.
    async fn count(&self, caller: &Caller) -> Result<(), ToolError> {
        let Some(principal) = caller.principal.as_ref() else {
            return Ok(());
        };
        let key = format!("person:{}", principal.token_name);
        let workspace_id = principal.workspace_id;
        let limiter = self.api.limiter.clone();
        let decision =
            tokio::task::spawn_blocking(move || limiter.check_in_workspace(&key, workspace_id))
                .await
                .map_err(|e| ToolError::internal(format!("Counting the request failed: {e}")))?;
        match decision {
            Ok(decision) if !decision.allowed => Err(decision.error()),
            Ok(_) | Err(StoreError::Unavailable(_)) => Ok(()),
            Err(err) => Err(err.into()),
        }
    }
}

impl Backend for People {
    const PER_CALLER: bool = true;

    async fn exec<O: Operation>(
        &self,
        caller: &Caller,
        params: Result<O::Params, ToolError>,
    ) -> Result<O::Output, ToolError> {
        if O::writes() {
            self.count(caller).await?;
        }
        self.api.exec::<O>(caller, params).await
    }

    fn allows(&self, caller: &Caller, op: Described) -> bool {
        self.api.allows(caller, op)
    }

    async fn refuse(
        &self,
        caller: &Caller,
        op: Described,
        ticket: Option<String>,
    ) -> Option<ToolError> {
        self.api.refuse(caller, op, ticket).await
    }
}
