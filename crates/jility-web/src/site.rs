//! What the pages need from whoever serves them: the [`Site`]. Local mode's is
//! [`crate::LocalSite`] (one person, the local database); `jility serve`'s lives in
//! `jility-cloud` (people with accounts, a workspace each page names).

use std::future::Future;

use axum::http::HeaderMap;
use axum::response::Response;
use futures::stream::BoxStream;
use jility_core::backend::Backend;

use crate::errors::WebError;
pub use crate::viewer::{Viewer, local_caller};

/// What the live stream tells an open page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveEvent {
    /// Tickets changed (their numbers; empty when the source cannot say which).
    Changed { tickets: Vec<String>, actor: String },
    /// Changes may have been missed: reload everything.
    Reset,
}

/// Who serves the pages.
pub trait Site: Clone + Send + Sync + 'static {
    /// Where the operations run.
    type Backend: Backend;

    fn backend(&self) -> &Self::Backend;

    /// The person asking for a page of `workspace`: from their session, else
    /// [`WebError::SignIn`]; a workspace they are no member of is [`WebError::NotFound`]
    /// (not told apart from one that does not exist).
    fn viewer(
        &self,
        headers: &HeaderMap,
        workspace: &str,
    ) -> impl Future<Output = Result<Viewer, WebError>> + Send;

    /// The changes of the viewer's workspace from now on, never another workspace's.
    fn changes(
        &self,
        viewer: &Viewer,
    ) -> impl Future<Output = Result<BoxStream<'static, LiveEvent>, WebError>> + Send;

    /// What `/` answers (a redirect to a board, or to the sign-in page).
    fn home(&self, headers: &HeaderMap) -> impl Future<Output = Response> + Send;

    /// Whether people sign in (and out): the header then offers "Sign out".
    fn accounts(&self) -> bool {
        false
    }

    /// The names of the workspace's people (to tell them apart from agents on cards).
    fn people(&self, viewer: &Viewer) -> impl Future<Output = Vec<String>> + Send {
        let name = viewer.name.clone();
        async move { vec![name] }
    }
}
