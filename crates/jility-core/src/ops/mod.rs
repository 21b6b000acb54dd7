//! The tracker's operations as one table: for each, its name (the MCP tool's), the scope a
//! cloud token needs, its REST route, how long the bridge may cache its answer, and the
//! tracker call that does it. Every surface reads this table instead of restating it:
//! - the MCP tools (the `jility` binary's adapter) run an operation on whichever backend serves them
//!   (the local database, the cloud API through the bridge, or the API server's own
//!   workspace at `/mcp`);
//! - the REST API (`jility-api`) routes every operation to one generic handler;
//! - the bridge (`jility-bridge`) turns a tool call into the operation's request;
//! - the OpenAPI document is generated from it.
//!
//! A request's parameters are the tool's arguments: the route's `{…}` segments are
//! arguments of the same name, the rest travels as the JSON body (writes) or the query
//! (the three listings).

use mcp_common_core::{Page, Paged, ToolError};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::errors::{self, clip};
use crate::store::Store;
use crate::token::Scope;
use crate::tracker::Tracker;

/// Where the REST API lives (`jility serve`); the routes below are under it.
pub const API_PREFIX: &str = "/api/v1";

/// The HTTP method of an operation's route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Post,
    Delete,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Delete => "DELETE",
        }
    }
}

/// A request of an operation as the bridge sends it: the path under `/api/v1` (segments
/// percent-encoded), the query (without `?`, maybe empty) and the JSON body of a write.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub verb: Verb,
    pub path: String,
    pub query: String,
    pub body: Option<Value>,
}

/// An operation's answer as a future ([`Operation::waiting`]).
pub type Answer<T> = std::pin::Pin<Box<dyn Future<Output = Result<T, ToolError>> + Send + 'static>>;

/// One operation of the tracker.
pub trait Operation: Send + Sync + 'static {
    /// Its arguments (the tool's input schema).
    type Params: Clone + Serialize + DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// Its answer as the tracker returns it; it says which tickets the operation touched.
    type Output: Touches + Send + 'static;

    /// The MCP tool's name (also the operation's name in events and the OpenAPI document).
    const NAME: &'static str;
    /// Its name in the audit log (writes).
    const AUDIT: &'static str;
    /// What a cloud token must hold to run it.
    const SCOPE: Scope;
    const VERB: Verb;
    /// The route under `/api/v1`; `{name}` segments are arguments.
    const PATH: &'static str;
    /// How long the bridge may answer it from its cache (0: never cached; every write).
    const CACHE_SECS: u64;
    /// Whether success is `201 Created`.
    const CREATES: bool = false;
    /// One line for the OpenAPI document.
    const SUMMARY: &'static str;
    /// Whether its answer is a page (`Paged<…>`: a list tool).
    const PAGED: bool = false;
    /// Whether it is an MCP tool (every operation but the API's and the CLI's delete).
    const TOOL: bool = false;
    /// The MCP tool's description (empty for an operation that is no tool).
    const DESCRIPTION: &'static str = "";
    /// The tool's `destructiveHint` (writes only), and its `idempotentHint`.
    const DESTRUCTIVE: Option<bool> = None;
    const IDEMPOTENT: bool = false;

    /// What the answer carries as data (a page's items; else the whole answer).
    type Data: Serialize + JsonSchema + Send + 'static;

    /// The answer's markdown (the tool's text, the CLI's output).
    fn markdown(out: &Self::Output) -> String;
    /// The answer as its data and, for a listing, its page.
    fn split(out: Self::Output) -> (Self::Data, Option<Page>);

    fn run<S: Store>(
        t: &mut Tracker<S>,
        actor: &str,
        p: Self::Params,
    ) -> Result<Self::Output, ToolError>;

    /// Whether [`Self::waiting`] answers: a read whose only wait is the store's (a ticket,
    /// whole), which an async caller awaits on its own task instead of a blocking thread.
    const WAITS: bool = false;

    /// The read as a future, when [`Self::WAITS`] (what [`Self::run`] waits for).
    fn waiting<S: Store>(_t: &mut Tracker<S>, _p: &Self::Params) -> Option<Answer<Self::Output>> {
        None
    }

    /// The answer as JSON (a page: the data's members with `page` beside them).
    fn encode(out: &Self::Output) -> Result<Value, ToolError>;
    /// The answer back from that JSON (the bridge).
    fn decode(value: Value) -> Result<Self::Output, ToolError>;

    /// The arguments of a GET from its query (only the listings take one).
    fn from_query(query: &str) -> Result<Map<String, Value>, ToolError> {
        if query.is_empty() {
            Ok(Map::new())
        } else {
            Err(invalid(
                format!(
                    "{} {} takes no query parameters",
                    Self::VERB.as_str(),
                    Self::PATH
                ),
                "Leave out the query string.",
            ))
        }
    }

    /// The query a GET sends for `args` (its members that are not path segments).
    fn to_query(args: &Map<String, Value>) -> Result<String, ToolError> {
        match args.keys().next() {
            None => Ok(String::new()),
            Some(name) => Err(ToolError::internal(format!(
                "{} has no query parameter `{name}`",
                Self::NAME
            ))),
        }
    }

    /// Whether this operation changes anything.
    fn writes() -> bool {
        Self::VERB != Verb::Get
    }
}

fn invalid(message: impl Into<String>, hint: impl Into<String>) -> ToolError {
    ToolError::new(errors::INVALID_INPUT, message).with_hint(hint)
}

fn cannot_encode(e: serde_json::Error) -> ToolError {
    ToolError::internal(format!("Cannot encode JSON: {e}"))
}

fn plain_encode<T: Serialize>(out: &T) -> Result<Value, ToolError> {
    serde_json::to_value(out).map_err(cannot_encode)
}

fn plain_decode<T: DeserializeOwned>(name: &str, value: Value) -> Result<T, ToolError> {
    serde_json::from_value(value).map_err(|e| {
        ToolError::internal(format!(
            "The API's answer to {name} does not have the expected shape: {e}"
        ))
        .with_hint("The bridge and the server may be of different versions; update both.")
    })
}

/// A page as the API answers it: the data's members and `page` beside them.
pub fn paged_encode<T: Serialize>(out: &Paged<T>) -> Result<Value, ToolError> {
    let mut value = serde_json::to_value(&out.data).map_err(cannot_encode)?;
    let page = serde_json::to_value(&out.page).map_err(cannot_encode)?;
    match &mut value {
        Value::Object(members) => {
            members.insert("page".to_string(), page);
        }
        _ => value = serde_json::json!({"data": value, "page": page}),
    }
    Ok(value)
}

fn paged_decode<T: DeserializeOwned>(name: &str, mut value: Value) -> Result<Paged<T>, ToolError> {
    let page = value
        .as_object_mut()
        .and_then(|members| members.remove("page"))
        .ok_or_else(|| ToolError::internal(format!("The API's answer to {name} has no page")))?;
    let page: Page = plain_decode(name, page)?;
    Ok(Paged {
        data: plain_decode(name, value)?,
        page,
    })
}

/// The parameters of a request: the route's segments as arguments of the same name, merged
/// into the JSON body (writes) or the query's arguments (reads), then read as `O::Params`.
pub fn params_from_request<O: Operation>(
    segments: Vec<(String, String)>,
    query: &str,
    body: Option<&[u8]>,
) -> Result<O::Params, ToolError> {
    let mut args = if O::VERB == Verb::Get {
        O::from_query(query)?
    } else {
        if !query.is_empty() {
            return Err(invalid(
                format!("{} {} takes no query parameters", O::VERB.as_str(), O::PATH),
                "Send the arguments as the JSON body.",
            ));
        }
        match body.filter(|b| !b.iter().all(u8::is_ascii_whitespace)) {
            None => Map::new(),
            Some(bytes) => match serde_json::from_slice::<Value>(bytes) {
                Ok(Value::Object(members)) => members,
                Ok(_) => {
                    return Err(invalid(
                        "The request body must be a JSON object",
                        shape_hint::<O>(),
                    ));
                }
                Err(e) => {
                    return Err(invalid(
                        format!(
                            "The request body is not valid JSON: {}",
                            clip(&e.to_string())
                        ),
                        shape_hint::<O>(),
                    ));
                }
            },
        }
    };
    for (name, value) in segments {
        if args.contains_key(&name) {
            return Err(invalid(
                format!("`{name}` is given twice: in the path and in the body"),
                format!("Leave `{name}` out of the body; the path names it."),
            ));
        }
        args.insert(name, Value::String(value));
    }
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        invalid(
            format!(
                "The arguments do not have the expected shape: {}",
                clip(&e.to_string())
            ),
            shape_hint::<O>(),
        )
    })
}

fn shape_hint<O: Operation>() -> String {
    // What the path's segments name: `{ticket_id}` a ticket, `{sprint}` a sprint…
    let segments: Vec<&str> = O::PATH
        .split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
        .collect();
    let named = match segments.as_slice() {
        [] => String::new(),
        names => format!("; the path gives {}", names.join(" and ")),
    };
    format!(
        "{} {}{} takes the arguments of the MCP tool {} (see /api/v1/openapi.json){named}.",
        O::VERB.as_str(),
        crate::ops::API_PREFIX,
        O::PATH,
        O::NAME
    )
}

/// Longest path argument the bridge sends (a ticket reference or a template's name is far
/// shorter).
const MAX_SEGMENT_BYTES: usize = 1_000;

/// The request the bridge sends for `params`.
pub fn request_of<O: Operation>(params: &O::Params) -> Result<Request, ToolError> {
    let mut args = match serde_json::to_value(params).map_err(cannot_encode)? {
        Value::Object(members) => members,
        _ => return Err(ToolError::internal("Arguments must encode as an object")),
    };
    let mut path = String::new();
    for part in O::PATH.split('/').filter(|p| !p.is_empty()) {
        path.push('/');
        match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            Some(name) => {
                let value = match args.remove(name) {
                    Some(Value::String(value)) => value,
                    _ => {
                        return Err(ToolError::internal(format!(
                            "{} has no text argument `{name}` for its path",
                            O::NAME
                        )));
                    }
                };
                if value.trim().is_empty() || value.len() > MAX_SEGMENT_BYTES {
                    return Err(invalid(
                        format!("`{name}` must be given, in at most {MAX_SEGMENT_BYTES} bytes"),
                        "Name the ticket as KEY-N (e.g. TASK-42) or by its UUID.",
                    ));
                }
                match value.as_str() {
                    // Dots alone would be read as a path step by every URL parser.
                    "." => path.push_str("%2E"),
                    ".." => path.push_str("%2E%2E"),
                    // Percent-encoded as a path segment: a blank is `%20` (a `+` in a
                    // path is a plus; form encoding's `+` for a blank is the query's).
                    _ => {
                        for part in form_urlencoded::byte_serialize(value.as_bytes()) {
                            path.push_str(&part.replace('+', "%20"));
                        }
                    }
                }
            }
            None => path.push_str(part),
        }
    }
    let (query, body) = if O::VERB == Verb::Get {
        (O::to_query(&args)?, None)
    } else {
        (String::new(), Some(Value::Object(args)))
    };
    Ok(Request {
        verb: O::VERB,
        path,
        query,
        body,
    })
}

/// Every ticket number (`KEY-N`) a JSON value mentions: what the bridge's cache indexes a
/// cached read by, and what a failed write's request named.
pub fn ticket_numbers(value: &Value, into: &mut Vec<String>) {
    const MOST: usize = 1_000;
    match value {
        Value::String(s)
            if is_ticket_number(s) && into.len() < MOST && !into.iter().any(|t| t == s) =>
        {
            into.push(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|v| ticket_numbers(v, into)),
        Value::Object(members) => members.values().for_each(|v| ticket_numbers(v, into)),
        _ => {}
    }
}

/// `KEY-N`: an upper-case key (letters and digits, starting with a letter), `-`, a number.
pub fn is_ticket_number(text: &str) -> bool {
    let Some((key, number)) = text.split_once('-') else {
        return false;
    };
    key.len() <= 10
        && key.starts_with(|c: char| c.is_ascii_uppercase())
        && key
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && !number.is_empty()
        && number.len() <= 18
        && number.chars().all(|c| c.is_ascii_digit())
}

mod query;
mod touches;

use query::*;
pub use touches::Touches;

// ---------------------------------------------------------------------------------------
// The table.

/// Declare an operation: a unit type implementing [`Operation`].
macro_rules! operation {
    (
        $(#[$doc:meta])*
        $ty:ident: $params:ty => $output:ty, $name:literal, $audit:literal, $scope:ident,
        $verb:ident $path:literal, cache $cache:literal, $summary:literal,
        $(creates $creates:literal,)?
        $(tool $description:literal, $(destructive $destructive:literal,)? idempotent $idempotent:literal,)?
        $(query ($from:path, $rename:expr),)?
        $(paged $paged:ty,)?
        $(waits |$wt:ident, $wp:ident| $wait:expr,)?
        render $render:path,
        |$t:ident, $a:ident, $p:ident| $run:expr
    ) => {
        $(#[$doc])*
        pub struct $ty;

        impl Operation for $ty {
            type Params = $params;
            type Output = $output;
            const NAME: &'static str = $name;
            const AUDIT: &'static str = $audit;
            const SCOPE: Scope = Scope::$scope;
            const VERB: Verb = Verb::$verb;
            const PATH: &'static str = $path;
            const CACHE_SECS: u64 = $cache;
            const SUMMARY: &'static str = $summary;
            $(const CREATES: bool = $creates;)?
            $(
                const TOOL: bool = true;
                const DESCRIPTION: &'static str = $description;
                $(const DESTRUCTIVE: Option<bool> = Some($destructive);)?
                const IDEMPOTENT: bool = $idempotent;
            )?
            type Data = operation!(@data $output $(, $paged)?);

            fn markdown(out: &Self::Output) -> String {
                operation!(@markdown $render, out $(, $paged)?)
            }

            fn split(out: Self::Output) -> (Self::Data, Option<Page>) {
                operation!(@split out $(, $paged)?)
            }
            $(const PAGED: bool = operation!(@paged $paged);)?

            #[allow(unused_variables)]
            fn run<S: Store>(
                $t: &mut Tracker<S>,
                $a: &str,
                $p: Self::Params,
            ) -> Result<Self::Output, ToolError> {
                $run
            }

            $(
                const WAITS: bool = true;

                fn waiting<S: Store>(
                    $wt: &mut Tracker<S>,
                    $wp: &Self::Params,
                ) -> Option<Answer<Self::Output>> {
                    Some(Box::pin($wait))
                }
            )?

            fn encode(out: &Self::Output) -> Result<Value, ToolError> {
                operation!(@encode out $(, $paged)?)
            }

            fn decode(value: Value) -> Result<Self::Output, ToolError> {
                operation!(@decode value, $name $(, $paged)?)
            }

            $(
                fn from_query(query: &str) -> Result<Map<String, Value>, ToolError> {
                    $from(query)
                }

                fn to_query(args: &Map<String, Value>) -> Result<String, ToolError> {
                    Ok(encode_query(args, $rename))
                }
            )?
        }
    };
    (@paged $paged:ty) => { true };
    (@data $output:ty) => { $output };
    (@data $output:ty, $paged:ty) => { $paged };
    (@markdown $render:path, $out:ident) => { $render($out) };
    (@markdown $render:path, $out:ident, $paged:ty) => { $render(&$out.data, &$out.page) };
    (@split $out:ident) => { ($out, None) };
    (@split $out:ident, $paged:ty) => { ($out.data, Some($out.page)) };
    (@encode $out:ident) => { plain_encode($out) };
    (@encode $out:ident, $paged:ty) => { paged_encode($out) };
    (@decode $value:ident, $name:literal) => { plain_decode($name, $value) };
    (@decode $value:ident, $name:literal, $paged:ty) => { paged_decode($name, $value) };
}

/// The table: every operation once. Each entry declares its type and its row (see
/// [`operation!`]); [`for_each_operation!`](crate::for_each_operation) walks the entries in
/// this order, so the REST routes, the OpenAPI document and the tools' lookup
/// ([`describe_tool`]) can miss none.
macro_rules! operations {
    ($( $(#[$doc:meta])* $ty:ident { $($row:tt)* } )*) => {
        $( operation!($(#[$doc])* $ty: $($row)*); )*
        operations!(@list ($) $($ty)*);
    };
    (@list ($d:tt) $($ty:ident)*) => {
        /// Calls `$m!(Type)` for every operation of the table (the MCP tools', then delete and
        /// edit).
        #[macro_export]
        macro_rules! for_each_operation {
            ($d m:ident) => { $( $d m!($ty); )* };
        }
    };
}

#[macro_use]
mod table;

pub use table::*;

/// What the table says of one operation, without its types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Described {
    /// The MCP tool's name.
    pub name: &'static str,
    pub scope: Scope,
    pub audit: &'static str,
    pub verb: Verb,
    pub writes: bool,
    /// Whether its answer is a page.
    pub paged: bool,
    /// Whether it is an MCP tool.
    pub tool: bool,
}

impl Described {
    fn of<O: Operation>() -> Self {
        Self {
            name: O::NAME,
            scope: O::SCOPE,
            audit: O::AUDIT,
            verb: O::VERB,
            writes: O::writes(),
            paged: O::PAGED,
            tool: O::TOOL,
        }
    }
}

/// Every operation of the table, in its order.
pub fn table() -> &'static [Described] {
    static TABLE: std::sync::LazyLock<Vec<Described>> = std::sync::LazyLock::new(|| {
        let mut all = Vec::new();
        macro_rules! describe {
            ($op:ident) => {
                all.push(Described::of::<$op>());
            };
        }
        for_each_operation!(describe);
        all
    });
    &TABLE
}

/// The operation whose MCP tool is `name` (none for an operation that is no tool).
pub fn describe_tool(name: &str) -> Option<Described> {
    table()
        .iter()
        .find(|op| op.tool && op.name == name)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params;
    use crate::params::StatusName;
    use crate::tracker;

    fn status_names(names: &[&str]) -> Vec<StatusName> {
        names.iter().map(|n| StatusName(n.to_string())).collect()
    }

    #[test]
    fn list_queries_round_trip() {
        let args = list_query(
            "status=todo,review&status=done&label=a&labels=b%20c&assignee=al&unassigned&limit=5&cursor=x",
        )
        .unwrap();
        let p: params::ListTickets = serde_json::from_value(Value::Object(args)).unwrap();
        assert_eq!(p.status, status_names(&["todo", "review", "done"]));
        assert_eq!(p.labels, vec!["a".to_string(), "b c".to_string()]);
        assert_eq!(p.assignee.as_deref(), Some("al"));
        assert!(p.unassigned);
        assert_eq!(p.limit, Some(5));
        let request = request_of::<ListTickets>(&p).unwrap();
        assert_eq!(request.path, "/tickets");
        let back = params_from_request::<ListTickets>(vec![], &request.query, None).unwrap();
        assert_eq!(
            serde_json::to_value(back).unwrap(),
            serde_json::to_value(&p).unwrap()
        );
        assert!(list_query("bogus=1").is_err());
        assert!(list_query("limit=many").is_err());
    }

    #[test]
    fn search_needs_q_and_round_trips() {
        assert!(search_query("").is_err());
        let p = params::SearchTickets {
            query: "\"exact phrase\" & more".into(),
            limit: Some(3),
            cursor: None,
            sprint: None,
        };
        let request = request_of::<SearchTickets>(&p).unwrap();
        assert!(request.query.contains("q=%22exact"), "{}", request.query);
        let back = params_from_request::<SearchTickets>(vec![], &request.query, None).unwrap();
        assert_eq!(back.query, p.query);
        assert_eq!(back.limit, Some(3));
    }

    #[test]
    fn path_segments_are_arguments() {
        let p = params::Dependency {
            ticket_id: "TASK-1".into(),
            depends_on: "a/b?c".into(),
        };
        let request = request_of::<RemoveDependency>(&p).unwrap();
        assert_eq!(request.verb, Verb::Delete);
        assert_eq!(request.path, "/tickets/TASK-1/dependencies/a%2Fb%3Fc");
        assert_eq!(request.body, Some(serde_json::json!({})));
        let back = params_from_request::<RemoveDependency>(
            vec![
                ("ticket_id".into(), "TASK-1".into()),
                ("depends_on".into(), "a/b?c".into()),
            ],
            "",
            None,
        )
        .unwrap();
        assert_eq!(back.depends_on, "a/b?c");
        let named = params::SprintName {
            sprint: "Sprint 1+2".into(),
        };
        let request = request_of::<StartSprint>(&named).unwrap();
        assert_eq!(request.path, "/sprints/Sprint%201%2B2/start");
        let dots = params::Dependency {
            ticket_id: "..".into(),
            depends_on: ".".into(),
        };
        let request = request_of::<RemoveDependency>(&dots).unwrap();
        assert_eq!(request.path, "/tickets/%2E%2E/dependencies/%2E");
        let empty = params::TicketId {
            ticket_id: " ".into(),
        };
        assert_eq!(
            request_of::<GetTicket>(&empty).unwrap_err().code,
            errors::INVALID_INPUT
        );
        // A path argument given again in the body is refused, not silently overridden.
        let body: &[u8] = br#"{"ticket_id":"TASK-9","content":"x"}"#;
        let err = params_from_request::<AddComment>(
            vec![("ticket_id".into(), "TASK-1".into())],
            "",
            Some(body),
        )
        .unwrap_err();
        assert!(err.message.contains("twice"), "{}", err.message);
        assert!(params_from_request::<GetTicket>(vec![], "x=1", None).is_err());
    }

    #[test]
    fn ticket_numbers_are_found() {
        let mut found = Vec::new();
        ticket_numbers(
            &serde_json::json!({"a": "TASK-1", "b": ["WEB2-30", "task-1", "X-", "TASK-1"], "c": {"d": "Z-9"}}),
            &mut found,
        );
        assert_eq!(found, vec!["TASK-1", "WEB2-30", "Z-9"]);
    }

    #[test]
    fn answers_declare_what_they_touched_in_their_members_order() {
        let r = |n: &str| crate::model::TicketRef {
            number: n.into(),
            title: "t".into(),
            status: crate::model::Status::Todo,
        };
        let added = tracker::DependencyAdded {
            ticket: r("A-1"),
            depends_on: r("A-2"),
            chain: vec![r("A-3"), r("A-2")],
            is_blocked: true,
            already_existed: false,
        };
        assert_eq!(added.touched(), ["A-3", "A-2", "A-1"]);
        assert_eq!(added.main_ticket().as_deref(), Some("A-1"));
        let batch = tracker::BatchCreated {
            tickets: vec![tracker::BatchTicket {
                number: "A-9".into(),
                title: "x".into(),
                story_points: None,
                assignees: vec![],
                labels: vec![],
                depends_on: vec!["A-5".into()],
            }],
            parent: Some(r("A-4")),
            total_story_points: 0,
        };
        // As the answer's JSON lists them: the parent, then each item's dependencies and
        // the item; the audit entry names the first.
        assert_eq!(batch.touched(), ["A-4", "A-5", "A-9"]);
        assert_eq!(batch.main_ticket().as_deref(), Some("A-4"));
    }

    #[test]
    fn every_tool_has_a_scope() {
        let get = describe_tool("jility_get_ticket").unwrap();
        assert_eq!((get.scope, get.writes), (Scope::TicketsRead, false));
        let comment = describe_tool("jility_add_comment").unwrap();
        assert_eq!(comment.scope, Scope::CommentsWrite);
        assert_eq!(comment.audit, "tickets.comment");
        assert!(comment.writes);
        assert_eq!(describe_tool("nope"), None);
        let delete = describe_tool("jility_delete_ticket").unwrap();
        assert_eq!((delete.scope, delete.writes), (Scope::TicketsDelete, true));
        assert_eq!(describe_tool("jility_edit_ticket"), None);
        assert_eq!(table().len(), 41);
        assert_eq!(table().iter().filter(|op| op.tool).count(), 39);
        assert!(table().iter().all(|op| op.paged
            == ((op.name.starts_with("jility_list") && op.name != "jility_list_views")
                || op.name == "jility_search_tickets"
                || op.name == "jility_get_epic")));
        // Planning: reading needs tickets:read, changing tickets:write.
        for (name, scope) in [
            ("jility_list_epics", Scope::TicketsRead),
            ("jility_get_epic", Scope::TicketsRead),
            ("jility_sprint_stats", Scope::TicketsRead),
            ("jility_plan_sprint", Scope::TicketsRead),
            ("jility_list_sprints", Scope::TicketsRead),
            ("jility_create_sprint", Scope::TicketsWrite),
            ("jility_add_to_sprint", Scope::TicketsWrite),
            ("jility_remove_from_sprint", Scope::TicketsWrite),
            ("jility_start_sprint", Scope::TicketsWrite),
            ("jility_complete_sprint", Scope::TicketsWrite),
            // Related tickets and estimates read.
            ("jility_suggest_related", Scope::TicketsRead),
            ("jility_estimate_effort", Scope::TicketsRead),
        ] {
            let op = describe_tool(name).unwrap();
            assert_eq!(
                (op.scope, op.writes),
                (scope, scope == Scope::TicketsWrite),
                "{name}"
            );
        }
    }
}
