//! The person a page is for ([`Viewer`]): what every page and form knows of its caller.

use jility_core::backend::Caller;

/// The person a page is for, in one workspace.
#[derive(Debug, Clone)]
pub struct Viewer {
    /// Their name, as the tracker records their changes and as tickets are assigned to them.
    pub name: String,
    /// Their sign-in address (cloud mode).
    pub email: Option<String>,
    /// The name they chose to be shown by (cloud mode), beside `name` in the header.
    pub display_name: Option<String>,
    /// The caller the operations run as (the person's name; in cloud mode their workspace
    /// and the scopes their role gives).
    pub caller: Caller,
    /// Whether they may change tickets (a viewer may not).
    pub can_write: bool,
    /// Whether they may open the workspace's settings (members, invites, tokens, audit).
    pub manages: bool,
    /// The token every form of theirs carries (`_csrf`) and every script request sends
    /// (`X-CSRF-Token`): a request without it changes nothing.
    pub csrf: String,
    /// The workspace's name as the URL gives it (`/w/{workspace}/…`).
    pub workspace: String,
    /// The other workspaces they belong to (for the switcher), by name.
    pub workspaces: Vec<String>,
    /// How many entries of their inbox they have not read (the header's count; filled by
    /// the pages, 0 until then).
    pub unread: u64,
}

/// A [`Caller`] for a person named `name` with no token (local mode).
pub fn local_caller(name: &str) -> Caller {
    Caller {
        actor: name.to_string(),
        principal: None,
        trace_parent: None,
    }
}
