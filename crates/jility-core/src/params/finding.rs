//! The inputs of saved views.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveView {
    /// The view's name (1 to 60 characters; letters, digits, blanks, `-`, `_`, `.`): run it
    /// as `view:NAME` in any query (`view:"my triage"` when it has blanks).
    pub name: String,
    /// Its query in the query language, e.g. `label:auth status:review updated:>7d`.
    pub query: String,
    /// Shared with the workspace (everyone sees and runs it; only its owner deletes it);
    /// default: the caller's own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListViews {}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewName {
    /// The view's name (any case).
    pub name: String,
}
