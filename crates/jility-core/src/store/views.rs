//! Storage for saved views: a query under a name, a person's own or shared.

use super::StoreResult;

/// A saved view as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewRow {
    pub id: i64,
    pub name: String,
    pub query: String,
    pub owner: String,
    pub shared: bool,
    pub created_at: String,
}

/// A view to save.
pub struct NewView<'a> {
    pub name: &'a str,
    pub query: &'a str,
    pub owner: &'a str,
    pub shared: bool,
    pub at: &'a str,
}

/// Saved views' reads and writes.
pub trait ViewsTx {
    /// The views `owner` sees: their own and the shared ones, by name (any case), then id.
    fn views(&mut self, owner: &str) -> StoreResult<Vec<ViewRow>>;
    fn insert_view(&mut self, view: &NewView<'_>) -> StoreResult<ViewRow>;
    /// `false` when there was no such view.
    fn delete_view(&mut self, id: i64) -> StoreResult<bool>;
}
