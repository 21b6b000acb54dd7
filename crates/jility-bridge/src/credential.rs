//! What the bridge authenticates with: a token (`JILITY_API_TOKEN`, or the one `jility auth
//! login --token` stored), or a person's sign-in ([`crate::signin`]) — kept from `jility
//! auth login`, or started by the bridge itself when it has neither: it prints the link to
//! open (and opens a browser where there is a desktop) and answers every tool with
//! `unauthenticated` and that link until the person has signed in. A signed-in bridge
//! refreshes its access token before it expires, and once more when the API refuses it; a
//! refresh refused for good (the access was revoked) ends the sign-in until the person signs
//! in again (`jility auth login`, whose kept credentials the bridge then takes up), one that
//! could not reach the server is tried again at the next call.

use std::sync::Arc;

use jility_core::token::PlainToken;
use mcp_common_core::{ToolError, codes};
use tokio::sync::Mutex;

use crate::client;
use crate::signin::{self, Stored};

/// How the bridge authenticates.
#[derive(Clone)]
pub enum Credential {
    Token(PlainToken),
    SignIn(Arc<SignIn>),
}

/// A person's sign-in to one API.
pub struct SignIn {
    root: String,
    state: Mutex<State>,
}

enum State {
    /// The person has not signed in yet: the link they must open, once known.
    Waiting(Option<String>),
    Ready(Stored),
    /// Why, and the refresh token that was refused (kept credentials with another one are a
    /// new sign-in).
    Failed(ToolError, Option<String>),
}

impl Credential {
    /// The credential the environment gives for the API at `root`, starting a sign-in in
    /// the background when there is none.
    pub fn from_env(root: &str) -> Result<Self, ToolError> {
        if let Some(token) = client::static_token()? {
            return Ok(Self::Token(token));
        }
        if let Some(stored) = signin::load(root)? {
            return Ok(Self::SignIn(Arc::new(SignIn {
                root: root.to_string(),
                state: Mutex::new(State::Ready(stored)),
            })));
        }
        let sign_in = Arc::new(SignIn {
            root: root.to_string(),
            state: Mutex::new(State::Waiting(None)),
        });
        let handle = tokio::runtime::Handle::current();
        let waiting = sign_in.clone();
        let root = root.to_string();
        tokio::task::spawn_blocking(move || {
            let shown = waiting.clone();
            let show = |url: &str| {
                tracing::warn!("not signed in to {root}: open {url} in a browser to sign in");
                signin::open_browser(url);
                let url = url.to_string();
                let shown = shown.clone();
                handle.block_on(async move {
                    *shown.state.lock().await = State::Waiting(Some(url));
                });
            };
            let done = signin::sign_in(&root, &show);
            handle.block_on(async move {
                *waiting.state.lock().await = match done {
                    Ok(stored) => {
                        tracing::info!(root = %waiting.root, "signed in");
                        State::Ready(stored)
                    }
                    Err(err) => {
                        tracing::warn!(error = %err.message, "the sign-in failed");
                        State::Failed(err, None)
                    }
                };
            });
        });
        Ok(Self::SignIn(sign_in))
    }

    /// The credential the environment gives for the API at `root` without starting a
    /// sign-in (the command line's): a token, or the sign-in `jility auth login` kept;
    /// `None` when there is neither.
    pub fn kept(root: &str) -> Result<Option<Self>, ToolError> {
        if let Some(token) = client::static_token()? {
            return Ok(Some(Self::Token(token)));
        }
        Ok(signin::load(root)?.map(|stored| {
            Self::SignIn(Arc::new(SignIn {
                root: root.to_string(),
                state: Mutex::new(State::Ready(stored)),
            }))
        }))
    }

    /// The token to send now (a signed-in bridge's, refreshed first when it is about to
    /// expire).
    pub async fn token(&self) -> Result<PlainToken, ToolError> {
        let sign_in = match self {
            Self::Token(token) => return Ok(token.clone()),
            Self::SignIn(sign_in) => sign_in,
        };
        let mut state = sign_in.state.lock().await;
        // A sign-in that failed (or was never started here) may have been made since with
        // `jility auth login`: its kept credentials take over.
        let refused = match &*state {
            State::Failed(_, refused) => Some(refused.clone()),
            State::Waiting(None) => Some(None),
            _ => None,
        };
        if let Some(refused) = refused
            && let Ok(Some(stored)) = signin::load(&sign_in.root)
            && refused.as_deref() != Some(stored.refresh_token.as_str())
        {
            *state = State::Ready(stored);
        }
        match &*state {
            State::Ready(stored) if stored.fresh() => {
                Ok(PlainToken::new(stored.access_token.clone()))
            }
            State::Ready(stored) => match refresh(stored.clone()).await {
                Ok(renewed) => {
                    let token = PlainToken::new(renewed.access_token.clone());
                    *state = State::Ready(renewed);
                    Ok(token)
                }
                // Unreachable, or busy: the credentials stay, the next call tries again.
                Err(err) if err.retryable() => Err(err),
                Err(err) => {
                    let refused = stored.refresh_token.clone();
                    *state = State::Failed(err.clone(), Some(refused));
                    Err(err)
                }
            },
            State::Waiting(url) => Err(ToolError::new(
                codes::UNAUTHENTICATED,
                format!("Not signed in to {} yet", sign_in.root),
            )
            .with_hint(match url {
                Some(url) => {
                    format!("Open {url} in a browser, sign in and approve; then call again.")
                }
                None => "Run `jility auth login` in a terminal, then call again.".to_string(),
            })),
            State::Failed(err, _) => Err(err.clone()),
        }
    }

    /// The API refused `used`: refresh it (unless that happened meanwhile). Whether a new
    /// token is there to try.
    pub async fn refresh_after_refusal(&self, used: &PlainToken) -> bool {
        let Self::SignIn(sign_in) = self else {
            return false;
        };
        let mut state = sign_in.state.lock().await;
        let State::Ready(stored) = &*state else {
            return false;
        };
        if stored.access_token != used.expose() {
            return true;
        }
        match refresh(stored.clone()).await {
            Ok(renewed) => {
                *state = State::Ready(renewed);
                true
            }
            Err(err) => {
                tracing::warn!(error = %err.message, "cannot refresh the sign-in");
                if !err.retryable() {
                    let refused = stored.refresh_token.clone();
                    *state = State::Failed(err, Some(refused));
                }
                false
            }
        }
    }
}

async fn refresh(stored: Stored) -> Result<Stored, ToolError> {
    tokio::task::spawn_blocking(move || signin::refresh(&stored))
        .await
        .map_err(|e| ToolError::internal(format!("The refresh failed: {e}")))?
}
