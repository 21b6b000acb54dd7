//! The MCP server of `git mile mcp-server`: the tools `git_mile.list` and `git_mile.show`,
//! the writes of [`crate::writes`] (unless `--read-only`), and `ping`, with the error model of the contract (`docs/reference/git-mile-mcp.md`).
//! `main` serves it through `mcp_common::serve` over stdio (where the kit's transport
//! answers the contract's `shutdown`) or Streamable HTTP, one [`GitMileServer`] per session
//! over one [`Shared`] repository and cursor key.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CustomRequest, CustomResult, ErrorCode, GetMeta as _, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::Deserialize;
use serde_json::{Value, json};

use mcp_common::surface::{Entry, Selection, Surface};
use mcp_common::{CursorKey, ErrorClass, ToJsonRpc as _, ToolError};

use crate::catalog::{Catalog, Lookup, Snapshot};
use crate::confirm;
use crate::errors;
use crate::listing::{self, ListError, ListRequest, MAX_LIMIT, Target};
use crate::log::{LogError, LogPage, LogPlan};
use crate::model::Kind;
use crate::query::cursor::cursor_key;
use crate::quote;
use crate::schema::{
    cursor_schema, id_schema, output_schema, read_entity_schema, read_hints, tool,
};
use crate::task::TaskLookup;
use crate::task::view::TaskView;
use crate::task_write::tool as task_tool;
use crate::views::{EntityView, ListResponse};
use crate::writes::{self, COMMENT, CREATE, UPDATE};

pub const LIST: &str = "git_mile.list";
pub const SHOW: &str = "git_mile.show";
pub const LOG: &str = "git_mile.log";

const INSTRUCTIONS: &str = "git-mile keeps issues and milestones inside this git repository. \
Use git_mile.list to find them (filter like `status == \"open\" and labels contains \"bug\"`, \
sort like [\"updated:desc\"], page with nextCursor), git_mile.show for one entity whole \
(description, comments, milestone), and git_mile.log for its events (who changed what, when).";

/// The entity a read names: the catalog's kinds, or upstream's tasks.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ReadEntity {
    Milestone,
    Issue,
    Task,
}

impl ReadEntity {
    fn target(self) -> Target {
        match self {
            ReadEntity::Milestone => Target::Entity(Kind::Milestone),
            ReadEntity::Issue => Target::Entity(Kind::Issue),
            ReadEntity::Task => Target::Task,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    entity: ReadEntity,
    #[serde(default)]
    filter: Option<String>,
    #[serde(default)]
    sort: Option<Vec<String>>,
    #[serde(default)]
    limit: Option<serde_json::Number>,
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default, rename = "includeClosed")]
    include_closed: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LogArgs {
    entity: ReadEntity,
    id: String,
    #[serde(default)]
    limit: Option<serde_json::Number>,
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShowArgs {
    entity: ReadEntity,
    id: String,
}

/// What `git_mile.show` answers: an issue or a milestone, or a task.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // only its schema is used
enum ShowOutput {
    Entity(EntityView),
    Task(TaskView),
}

/// Why a call failed, before it becomes a JSON-RPC error or an `isError` result.
enum Failure {
    /// `-32600`: the arguments cannot be decoded.
    Decode(String),
    /// Everything else; its class decides (see [`crate::errors`]).
    Tool(ToolError),
}

impl From<ToolError> for Failure {
    fn from(err: ToolError) -> Self {
        Self::Tool(err)
    }
}

/// What every session of a server process shares: the repository, the cursor key, and
/// which tools are offered.
pub struct Shared {
    catalog: Result<Arc<Catalog>, String>,
    cursor_key: CursorKey,
    selection: Selection,
    /// Seals the state of questions put to the user (crate::confirm), with this process's
    /// own key.
    asker: mcp_common::ask::Asker,
}

impl Shared {
    /// `catalog` is the repository to serve, or why there is none (the server still starts
    /// and says so on each call). `selection` chooses the tools offered.
    pub fn new(catalog: Result<Arc<Catalog>, String>, selection: Selection) -> Arc<Self> {
        let cursor_key = match &catalog {
            Ok(catalog) => cursor_key(catalog.store().git_dir()),
            // Without a repository no cursor was ever issued: any is refused.
            Err(_) => CursorKey::random(),
        };
        // Its own key, not the cursors' (which every process of the repository shares): a
        // question opens once, in the process that asked it.
        let asker = mcp_common::ask::Asker::new(&CursorKey::random());
        Arc::new(Self {
            catalog,
            cursor_key,
            selection,
            asker,
        })
    }

    /// What the instructions add about this repository's upstream tasks and the refs this
    /// version does not read (nothing when there are none).
    fn repository_note(&self) -> String {
        let Ok(catalog) = &self.catalog else {
            return String::new();
        };
        // The refs' names alone: no task is read before the server answers `initialize`.
        let tasks = match catalog.task_names() {
            Ok(tasks) => tasks,
            Err(err) => crate::task::unread(&err),
        };
        crate::task::note(&tasks)
    }

    /// Read every entity in the background, so the first call finds them ready. Call it
    /// inside the runtime.
    pub fn warm_up(&self) {
        if let Ok(catalog) = &self.catalog {
            let catalog = catalog.clone();
            tokio::task::spawn_blocking(move || {
                if let Err(err) = catalog.snapshot() {
                    tracing::warn!(%err, "could not read the entities");
                }
            });
        }
    }
}

/// The handler of one MCP session (one over stdio; one per session over HTTP): cheap to make,
/// everything it reads is in [`Shared`].
#[derive(Clone)]
pub struct GitMileServer {
    shared: Arc<Shared>,
}

impl GitMileServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    fn catalog(&self) -> Result<Arc<Catalog>, ToolError> {
        Ok(self
            .shared
            .catalog
            .as_ref()
            .map_err(|why| errors::no_repository(why))?
            .clone())
    }

    async fn snapshot(&self) -> Result<Arc<Snapshot>, ToolError> {
        let catalog = self.catalog()?;
        tokio::task::spawn_blocking(move || catalog.snapshot())
            .await
            .map_err(errors::internal)?
            .map_err(|err| errors::repository(&err))
    }

    async fn list(&self, args: Value) -> Result<Payload, Failure> {
        let args: ListArgs = decode(LIST, args)?;
        let request = ListRequest {
            filter: args.filter,
            sort: args.sort.unwrap_or_default(),
            limit: args.limit,
            cursor: args.cursor,
            include_closed: args.include_closed.unwrap_or(false),
        };
        // Arguments first: a bad one is -32602 even where there is no repository.
        let target = args.entity.target();
        let plan = listing::Plan::of(target, &request, &self.shared.cursor_key)
            .map_err(|err| ToolError::from(&err))?;
        let catalog = self.catalog()?;
        let listed = tokio::task::spawn_blocking(move || plan.read(&catalog))
            .await
            .map_err(errors::internal)?
            .map_err(|err| errors::repository(&err))?;
        Ok(Payload::of(&listed.page)?)
    }

    async fn show_task(&self, id: &str) -> Result<Payload, Failure> {
        let catalog = self.catalog()?;
        let id = id.to_string();
        // The tasks the id may name, then the one found's parents and children.
        let view = tokio::task::spawn_blocking(move || -> Result<TaskView, ToolError> {
            let tasks = catalog
                .tasks_named(&id)
                .map_err(|err| errors::repository(&err))?;
            match tasks.lookup(&id) {
                TaskLookup::Found(row) => TaskView::shown(&row, |ids| catalog.tasks_among(ids))
                    .map_err(|err| errors::repository(&err)),
                TaskLookup::NotFound => Err(errors::not_found_named("task", &id)),
                TaskLookup::Ambiguous(ids) => Err(errors::ambiguous_named("task", &id, &ids)),
                TaskLookup::Unreadable(id, why) => {
                    Err(errors::unreadable_named("task", id, why.to_string()))
                }
            }
        })
        .await
        .map_err(errors::internal)??;
        Ok(Payload::of(&view)?)
    }

    async fn log(&self, args: Value) -> Result<Payload, Failure> {
        let args: LogArgs = decode(LOG, args)?;
        // Arguments first: a bad limit or cursor is -32602 even where there is no repository.
        let plan = LogPlan::new(
            Some(args.entity.target()),
            &args.id,
            args.limit.as_ref(),
            args.cursor.as_deref(),
            &self.shared.cursor_key,
        )
        .map_err(|err| log_args_error(&err))?;
        let catalog = self.catalog()?;
        let page = tokio::task::spawn_blocking(move || plan.run(&catalog))
            .await
            .map_err(errors::internal)?
            .map_err(|err| match err {
                LogError::Args(err) => log_args_error(&err),
                LogError::Op(err) => writes::read_failure(args.entity.target().as_str(), err),
            })?;
        Ok(Payload::of(&page)?)
    }

    async fn show(&self, args: Value) -> Result<Payload, Failure> {
        let args: ShowArgs = decode(SHOW, args)?;
        let kind = match args.entity.target() {
            Target::Entity(kind) => kind,
            Target::Task => return self.show_task(&args.id).await,
        };
        let snapshot = self.snapshot().await?;
        Ok(match snapshot.lookup(kind, &args.id) {
            Lookup::Found(row) => Payload::of(&EntityView::from_row(&row))?,
            Lookup::NotFound => return Err(errors::not_found(kind, &args.id).into()),
            Lookup::Ambiguous(ids) => {
                return Err(errors::ambiguous_id(kind, &args.id, &ids).into());
            }
            // The contract's internal failure: the repository is damaged.
            Lookup::Unreadable(id, why) => {
                return Err(errors::unreadable(kind, id, why.to_string()).into());
            }
        })
    }
}

impl GitMileServer {
    /// Check a write's arguments (before anything is read: a bad one is -32602 even where
    /// there is no repository), then run it on a blocking thread (it reads and writes git
    /// objects and refs) and answer the entity it leaves.
    async fn write<A: serde::de::DeserializeOwned, C: Send + 'static, T>(
        &self,
        tool: &str,
        args: Value,
        check: fn(A) -> Result<C, ToolError>,
        run: fn(&Catalog, C) -> Result<T, ToolError>,
    ) -> Result<Payload, Failure>
    where
        T: serde::Serialize + Send + 'static,
    {
        let args = check(decode(tool, args)?)?;
        let catalog = self.catalog()?;
        let view = tokio::task::spawn_blocking(move || run(&catalog, args))
            .await
            .map_err(errors::internal)??;
        Ok(Payload::of(&view)?)
    }
}

/// A tool's answer: `structuredContent`, and its JSON text with the fields in the order of
/// the contract (a `Value` would sort them).
struct Payload {
    value: Value,
    text: String,
}

impl Payload {
    fn of<T: serde::Serialize>(data: &T) -> Result<Self, ToolError> {
        Ok(Self {
            value: serde_json::to_value(data).map_err(errors::internal)?,
            text: serde_json::to_string(data).map_err(errors::internal)?,
        })
    }

    fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::structured(self.value);
        result.content = vec![rmcp::model::ContentBlock::text(self.text)];
        result
    }
}

/// A tool-level failure as the contract has it: `isError: true`, and the error object as the
/// JSON text `{"error":{"code","message","hint","retryable"}}`.
///
/// The reads' results carry no `structuredContent`: it would have to validate against their
/// `outputSchema` (the entity or the page, unchanged from the original surface), which
/// clients check on error results too (Claude Code's TypeScript SDK refuses the result
/// otherwise), and the error object is neither. The writes' `outputSchema` admits it, so
/// theirs carry it too ([`write_error_result`]).
pub fn error_result(err: &ToolError) -> CallToolResult {
    #[derive(serde::Serialize)]
    struct Body<'a> {
        error: &'a ToolError,
    }
    let text = serde_json::to_string(&Body { error: err }).unwrap_or_else(|_| {
        // Strings and booleans always serialize; this is never reached.
        json!({"error": {"code": err.code.as_str(), "message": err.message}}).to_string()
    });
    CallToolResult::error(vec![rmcp::model::ContentBlock::text(text)])
}

/// A write's tool-level failure: [`error_result`] with the error object as
/// `structuredContent` too.
fn write_error_result(err: &ToolError) -> CallToolResult {
    let mut result = error_result(err);
    result.structured_content = serde_json::to_value(mcp_common::WireError::from(err))
        .ok()
        .map(|error| json!({ "error": error }));
    result
}

/// `args` as a tool's arguments; `-32600` when they do not decode. The decoder's message
/// quotes what it refused (an unknown field's name, a value of the wrong type): at most an
/// excerpt of it is kept.
fn decode<T: serde::de::DeserializeOwned>(tool: &str, args: Value) -> Result<T, Failure> {
    T::deserialize(&args).map_err(|err| {
        let mut sent = Vec::new();
        texts(&args, &mut sent);
        let message = quote::quoting_excerpts(&err.to_string(), sent);
        Failure::Decode(format!("invalid arguments for {tool}: {message}"))
    })
}

/// Every text in `value`: its strings and the names of its fields.
fn texts<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(text) => out.push(text),
        Value::Array(items) => items.iter().for_each(|item| texts(item, out)),
        Value::Object(fields) => {
            for (name, value) in fields {
                out.push(name);
                texts(value, out);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Every tool, the two reads first, built once: their schemas do not change while the
/// server runs.
pub fn tools() -> &'static [Tool] {
    static TOOLS: std::sync::LazyLock<Vec<Tool>> = std::sync::LazyLock::new(|| {
        let mut tools = build_tools();
        tools.extend(writes::tools());
        // Each with its title where clients look first (not in the annotations, where
        // 2025-03-26 put it), and the icon of its one toolset.
        let icon = mcp_common::surface::icon("8250df");
        tools
            .into_iter()
            .map(|mut tool| {
                let title = tool
                    .annotations
                    .as_mut()
                    .and_then(|hints| hints.title.take())
                    .unwrap_or_else(|| tool.name.to_string());
                mcp_common::surface::dress(tool, &title, &icon)
            })
            .collect()
    });
    &TOOLS
}

/// Every tool, tagged once as a read or a write, in the one toolset `entities` (each tool
/// takes any kind of entity): what `--toolsets`, `--tools` and `--read-only` choose from,
/// in tools/list and in calls alike ([`offers`]).
pub const TOOLS: &[Entry] = &[
    Entry {
        name: LIST,
        toolset: "entities",
        writes: false,
    },
    Entry {
        name: SHOW,
        toolset: "entities",
        writes: false,
    },
    Entry {
        name: LOG,
        toolset: "entities",
        writes: false,
    },
    Entry {
        name: CREATE,
        toolset: "entities",
        writes: true,
    },
    Entry {
        name: UPDATE,
        toolset: "entities",
        writes: true,
    },
    Entry {
        name: COMMENT,
        toolset: "entities",
        writes: true,
    },
];

/// Whether the tool `name` writes, `None` for a name that is no tool.
pub fn writes(name: &str) -> Option<bool> {
    TOOLS.iter().find(|e| e.name == name).map(|e| e.writes)
}

/// Whether a server with `selection` offers the tool `name`.
pub fn offers(name: &str, selection: &Selection) -> bool {
    selection.offers(name, TOOLS)
}

/// The tools a server with `selection` offers, in the order of [`tools`].
pub fn offered(selection: &Selection) -> impl Iterator<Item = &'static Tool> {
    tools()
        .iter()
        .filter(move |tool| offers(&tool.name, selection))
}

fn build_tools() -> Vec<Tool> {
    let list_input = json!({
        "type": "object",
        "properties": {
            "entity": read_entity_schema(),
            "filter": {
                "type": "string",
                "description": "Filter. Operators: == != < <= > >= in [..] contains and or not ( ). Fields: id title description status labels milestone author created updated comment_count open_issues has_comments has_milestone; tasks: state state_kind assignees parents children, no milestone."
            },
            "sort": {
                "type": "array",
                "items": { "type": "string" },
                "description": "`field[:asc|desc]` keys; default [\"updated:desc\"]."
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_LIMIT,
                "description": "Page size (default 20)."
            },
            "cursor": cursor_schema(),
            "includeClosed": {
                "type": "boolean",
                "description": "Default false; a status filter overrides."
            }
        },
        "required": ["entity"],
        "additionalProperties": false
    });
    let show_input = json!({
        "type": "object",
        "properties": {
            "entity": read_entity_schema(),
            "id": id_schema()
        },
        "required": ["entity", "id"],
        "additionalProperties": false
    });
    let log_input = json!({
        "type": "object",
        "properties": {
            "entity": read_entity_schema(),
            "id": id_schema(),
            "limit": { "type": "integer", "minimum": 1, "maximum": MAX_LIMIT },
            "cursor": cursor_schema()
        },
        "required": ["entity", "id"],
        "additionalProperties": false
    });
    let list = tool(
        LIST,
        "List issues, milestones or upstream git-mile's tasks: filtered, sorted, paged (other_refs: refs not read).",
        list_input,
        read_hints("List entities"),
        output_schema::<ListResponse>(),
    );
    let show = tool(
        SHOW,
        "Show one issue, milestone or task whole, comments included.",
        show_input,
        read_hints("Show entity"),
        output_schema::<ShowOutput>(),
    );
    let log = tool(
        LOG,
        "Events of an issue, milestone or task, newest first: who changed what, when.",
        log_input,
        read_hints("Event log"),
        output_schema::<LogPage>(),
    );
    vec![list, show, log]
}

/// A log's bad `limit` or `cursor` (`-32602`).
fn log_args_error(err: &ListError) -> ToolError {
    match err {
        ListError::Cursor(cursor) => ToolError::new(
            errors::INVALID_CURSOR,
            crate::log::cursor_refusal(*cursor),
        )
        .with_hint("Pass the nextCursor of the previous page unchanged, with the same entity and id, or drop the cursor."),
        other => ToolError::from(other),
    }
}

impl ServerHandler for GitMileServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(
                if !offered(&self.shared.selection).any(|t| writes(&t.name) == Some(true)) {
                    format!("{INSTRUCTIONS}{}", self.shared.repository_note())
                } else {
                    format!(
                        "{INSTRUCTIONS}{}{}",
                        writes::INSTRUCTIONS,
                        self.shared.repository_note()
                    )
                },
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // Narrowed by the request's headers (X-MCP-Toolsets, X-MCP-Tools, X-MCP-Readonly).
        let surface = Surface::of(&self.shared.selection, &context, TOOLS)?;
        let tools = tools()
            .iter()
            .filter(|tool| surface.offers(&tool.name, TOOLS))
            .cloned()
            .collect();
        Ok(mcp_common::surface::listing(
            tools,
            &context,
            surface.narrowed(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        offered(&self.shared.selection)
            .find(|t| t.name == name)
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut args = Value::Object(request.arguments.unwrap_or_default());
        let name = request.name.as_ref();
        let selection = &self.shared.selection;
        let surface = Surface::of(selection, &context, TOOLS)?;
        let writing = writes(name);
        if writing.is_some() && !surface.offers(name, TOOLS) {
            let why = if writing == Some(true) && surface.read_only() {
                format!(
                    "`{name}` writes, and this server is read-only (--read-only, or the request's X-MCP-Readonly)"
                )
            } else {
                format!(
                    "`{name}` is not offered (--toolsets, --tools, or the request's X-MCP-Toolsets, X-MCP-Tools)"
                )
            };
            return Err(no_such_tool(&why, &surface));
        }
        // An ambiguous id, or closing a milestone with open issues, asks the user first when
        // the client can be asked (2026-07-28); a call that cannot read the repository goes
        // on to fail as it would.
        if matches!(name, SHOW | UPDATE | COMMENT)
            && mcp_common::ask::can_ask(&context)
            && let Ok(snapshot) = self.snapshot().await
        {
            match confirm::step(
                &self.shared.asker,
                &snapshot,
                name,
                writing == Some(true),
                args,
                request.request_state.as_deref(),
                request.input_responses.as_ref(),
            )? {
                confirm::Step::Run(chosen) => args = chosen,
                confirm::Step::Ask(question) => {
                    return Ok(CallToolResponse::InputRequired(question));
                }
                confirm::Step::Declined(err) if writing == Some(true) => {
                    return Ok(write_error_result(&err).into());
                }
                confirm::Step::Declined(err) => return Ok(error_result(&err).into()),
            }
        }
        let outcome = match name {
            LIST => self.list(args).await,
            SHOW => self.show(args).await,
            LOG => self.log(args).await,
            // Upstream git-mile's tasks: their own arguments and answer.
            CREATE if task_tool::is_task(&args) => {
                self.write(CREATE, args, task_tool::check_create, task_tool::create)
                    .await
            }
            UPDATE if task_tool::is_task(&args) => {
                self.write(UPDATE, args, task_tool::check_update, task_tool::update)
                    .await
            }
            COMMENT if task_tool::is_task(&args) => {
                self.write(COMMENT, args, task_tool::check_comment, task_tool::comment)
                    .await
            }
            CREATE => {
                self.write(CREATE, args, writes::check_create, writes::create)
                    .await
            }
            UPDATE => {
                self.write(UPDATE, args, writes::check_update, writes::update)
                    .await
            }
            COMMENT => {
                self.write(COMMENT, args, writes::check_comment, writes::comment)
                    .await
            }
            other => {
                let why = format!("unknown tool `{}`", quote::excerpt(other));
                return Err(no_such_tool(&why, &surface));
            }
        };
        match outcome {
            Ok(payload) => Ok(payload.into_result().into()),
            Err(Failure::Decode(message)) => {
                Err(ErrorData::new(ErrorCode::INVALID_REQUEST, message, None))
            }
            Err(Failure::Tool(err)) if err.class().is_protocol_error() => {
                if err.class() == ErrorClass::Internal {
                    tracing::error!(code = %err.code, message = %err.message, "internal failure");
                }
                Err(err.to_json_rpc())
            }
            Err(Failure::Tool(err)) if writing == Some(true) => Ok(write_error_result(&err).into()),
            Err(Failure::Tool(err)) => Ok(error_result(&err).into()),
        }
    }

    /// The resource, prompt and completion lists rmcp would answer empty: the contract has
    /// none of them, so they are unknown methods like any other.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Err(unknown_method("resources/list"))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(unknown_method("resources/templates/list"))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Err(unknown_method("prompts/list"))
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Err(unknown_method("completion/complete"))
    }

    /// rmcp hands over here every request it could not decode. A method of MCP arrives here
    /// only when its params do not decode (`-32600`); `shutdown` is answered by the transport
    /// (`mcp_common::stdio`, `ServeOptions { shutdown_request: true }`); anything else is unknown.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let method = request.method.as_str();
        // A request of the stateless generation (2026-07-28 on, its version in `_meta`, as
        // the `MCP-Protocol-Version` header says over HTTP) has no `initialize`: that is an
        // unknown method (`-32601`, HTTP 404), whatever its params, as rmcp answers for the
        // servers it routes. The version is looked at before the params are.
        let stateless = context.meta.protocol_version().is_some()
            || request.get_meta().protocol_version().is_some();
        if method == "initialize" && stateless {
            return Err(unknown_method(method));
        }
        match expected_params(method) {
            Some(expected) => Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!("the params of `{method}` cannot be decoded: expected {expected}"),
                None,
            )),
            None => Err(unknown_method(method)),
        }
    }
}

/// A call of a tool this server does not offer (`-32601`): `why`, and the tools it offers.
fn no_such_tool(why: &str, surface: &Surface<'_>) -> ErrorData {
    let offered: Vec<&str> = tools()
        .iter()
        .filter(|t| surface.offers(&t.name, TOOLS))
        .map(|t| t.name.as_ref())
        .collect();
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("{why}: the tools are {}", offered.join(", ")),
        None,
    )
}

fn unknown_method(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "unknown method `{}`: this server offers tools/list, tools/call ({LIST}, {SHOW}, {LOG}, and unless read-only {CREATE}, {UPDATE}, {COMMENT}), ping and shutdown",
            quote::excerpt(method)
        ),
        None,
    )
}

/// The params a method of MCP this server serves takes, for the message of a request whose
/// params do not decode.
fn expected_params(method: &str) -> Option<&'static str> {
    Some(match method {
        "tools/call" => "an object {\"name\": string, \"arguments\": object}",
        "tools/list" => "nothing or an object {\"cursor\": string}",
        "initialize" => {
            "an object {\"protocolVersion\": string, \"capabilities\": object, \"clientInfo\": {\"name\", \"version\"}}"
        }
        "ping" => "nothing or an object",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_tagged_as_its_annotations_say() {
        let names: Vec<&str> = tools().iter().map(|t| t.name.as_ref()).collect();
        let tagged: Vec<&str> = TOOLS.iter().map(|e| e.name).collect();
        assert_eq!(names, tagged);
        for tool in tools() {
            // A write's `readOnlyHint: false` is the specification's default, left out.
            let read_only_hint = tool
                .annotations
                .as_ref()
                .map(|a| a.read_only_hint.unwrap_or(false));
            assert_eq!(
                read_only_hint,
                writes(&tool.name).map(|w| !w),
                "{}",
                tool.name
            );
        }
    }

    #[test]
    fn read_only_offers_the_reads_alone() {
        let names = |read_only| -> Vec<&str> {
            let args = mcp_common::surface::SurfaceArgs {
                read_only,
                ..Default::default()
            };
            let selection = Selection::new(&args, TOOLS).unwrap();
            offered(&selection).map(|t| t.name.as_ref()).collect()
        };
        assert_eq!(names(true), [LIST, SHOW, LOG]);
        assert_eq!(names(false), [LIST, SHOW, LOG, CREATE, UPDATE, COMMENT]);
        assert!(!offers("git_mile.other", &Selection::all()));
    }
}
