//! Pages of the list tools: `limit` and `cursor`, and the page of a whole list they select.

use mcp_common::{CursorKey, Limit, Paged, ToolError, page::page_by_offset};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Default and largest page of the list tools.
pub const PAGE_DEFAULT: usize = 100;
pub const PAGE_MAX: usize = 1000;
/// The page sizes of the list tools.
pub const LIMIT: Limit = Limit::new(PAGE_DEFAULT, PAGE_MAX);

/// The paging arguments of a list tool without other arguments.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PageParams {
    /// Items per page (default 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: Option<u64>,
    /// The previous answer's `page.next_cursor`.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// One page of a list: `data` and where it stands in the whole list.
pub type PageResult<T> = Result<Paged<Vec<T>>, ToolError>;

/// The page of `items` (the whole list, in order, as indices or values) that `limit` and
/// `cursor` ask for, with cursors bound to `tool` and its `shape` (the arguments that decide
/// which items are listed), each item mapped by `f`.
pub fn page_of<A: Clone, B>(
    key: &CursorKey,
    tool: &str,
    shape: &impl Serialize,
    items: &[A],
    params: PageParams,
    f: impl FnMut(A) -> B,
) -> PageResult<B> {
    let limit = LIMIT.resolve(params.limit)?;
    let cursors = key.bind(tool, shape);
    let (items, page) = page_by_offset(items, &cursors, params.cursor.as_deref(), limit)?;
    Ok(Paged {
        data: items.into_iter().map(f).collect(),
        page,
    })
}
