//! Where a ticket command runs: on the local database (local mode), or through the API of
//! `jility serve` (cloud mode, `JILITY_MODE=cloud`) with the same client the bridge uses.
//! Either way a command is one operation of the table ([`jility_core::ops`]), so its
//! answer, its `--json` and its errors are the same in both modes.

use std::path::{Path, PathBuf};

use jility_core::errors;
use jility_core::ops::Operation;
use jility_sqlite::local::{LocalTracker, Location, open};
use mcp_common::ToolError;

/// The tracker a command works on.
pub enum Target {
    Local {
        tracker: Box<LocalTracker>,
        actor: String,
    },
    #[cfg(feature = "cloud")]
    Cloud(Box<cloud::Remote>),
}

impl Target {
    /// The local database at `db`, else the nearest `.jility/data.db` above `cwd`.
    pub fn local(db: Option<PathBuf>, cwd: &Path) -> Result<(Self, Location), ToolError> {
        let location = match db {
            Some(db) => Location::explicit(db),
            None => Location::find(cwd).ok_or_else(|| {
                ToolError::not_found(format!(
                    "No Jility database found in {} or its parents",
                    cwd.display()
                ))
                .with_hint(
                    "Run `jility init` in the project's root, or pass --db PATH / set JILITY_DB (for a team's server: JILITY_MODE=cloud).",
                )
            })?,
        };
        let tracker = open(&location, false)?;
        Ok((
            Self::Local {
                tracker: Box::new(tracker),
                actor: super::cli_actor(),
            },
            location,
        ))
    }

    /// Run `O` with `params`.
    pub fn exec<O: Operation>(&mut self, params: O::Params) -> Result<O::Output, ToolError> {
        match self {
            Self::Local { tracker, actor } => O::run(tracker, actor, params),
            #[cfg(feature = "cloud")]
            Self::Cloud(remote) => remote.exec::<O>(params),
        }
    }
}

/// The error of a command cloud mode does not have.
pub fn local_only(command: &str, instead: &str) -> ToolError {
    ToolError::new(
        errors::INVALID_INPUT,
        format!("`jility {command}` works on a local database, and JILITY_MODE is cloud"),
    )
    .with_hint(instead.to_string())
}

#[cfg(feature = "cloud")]
pub mod cloud {
    //! Cloud mode's target: the API at `JILITY_API_URL`.

    use std::sync::Arc;

    use jility_bridge::bridge::Bridge;
    use jility_bridge::client;
    use jility_bridge::credential::Credential;
    use jility_core::errors;
    use jility_core::ops::Operation;
    use mcp_common::ToolError;

    /// The API and a runtime to call it on.
    pub struct Remote {
        bridge: Arc<Bridge>,
        runtime: tokio::runtime::Runtime,
    }

    impl Remote {
        /// The API of `JILITY_API_URL`, with `JILITY_API_TOKEN`, the stored token or the
        /// sign-in of `jility auth login` (never a new sign-in: that is `jility auth login`).
        pub fn from_env() -> Result<Self, ToolError> {
            let base = client::api_base()?;
            let root = client::api_root()?;
            let credential = Credential::kept(&root)?.ok_or_else(|| {
                ToolError::new(
                    errors::UNAUTHENTICATED,
                    format!("Not signed in to {root}"),
                )
                .with_hint(format!(
                    "Sign in with `jility auth login` (a browser opens), or set {} to a token of the workspace.",
                    client::TOKEN_VAR
                ))
            })?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| ToolError::internal(format!("Cannot start the runtime: {e}")))?;
            let bridge = {
                let _entered = runtime.enter();
                Bridge::new(base, credential)?
            };
            Ok(Self { bridge, runtime })
        }

        /// Run `O` through the API; an error says which server answered it.
        pub fn exec<O: Operation>(&self, params: O::Params) -> Result<O::Output, ToolError> {
            self.runtime
                .block_on(self.bridge.exec::<O>(params))
                .map_err(|err| self.name_server(err))
        }

        /// `err` with the server's address in its hint (its message may already name it).
        fn name_server(&self, err: ToolError) -> ToolError {
            let root = self
                .bridge
                .base()
                .strip_suffix(jility_core::ops::API_PREFIX)
                .unwrap_or(self.bridge.base())
                .to_string();
            if err.message.contains(&root) || err.hint_text().contains(&root) {
                return err;
            }
            let hint = match err.hint_text() {
                "" => format!("The server at {root} answered so."),
                hint => format!("{hint} (server: {root})"),
            };
            err.with_hint(hint)
        }
    }
}
