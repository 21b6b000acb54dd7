//! The MCP surface of `duvet mcp`: the eight tools of the specification, the three checks of
//! duvet 0.4.3 ([`crate::checks`]), the resource tree and the system prompt.
//!
//! A [`DuvetServer`] is one client's handler. Over HTTP there is one per session, all made by
//! [`DuvetServer::session`] from one: they share the [`Engine`] (one analysis, one file
//! watcher) and the cursor key (a cursor from one session pages in another), and each keeps
//! its own resource subscriptions (see [`crate::subscriptions`]).

use std::sync::Arc;

use mcp_common::surface::{Entry, Selection, Surface};
use mcp_common::{
    CursorKey, PagedReply, Parameters, Reply, ToolError, output_schema, paged_output_schema,
    subscribe,
};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    handler::server::router::tool::ToolRouter,
    model::*,
    service::{RequestContext, SubscriptionContext},
    tool, tool_handler, tool_router,
};

use crate::{
    checks::{self, DuplicateCitation, UnattachedCitation, UntestedCitation},
    engine::{Engine, Snapshot},
    executed,
    filter::ListParams,
    model::InvalidCitation,
    resources,
    subscriptions::Session,
    tools::{self, *},
};

pub const SYSTEM_PROMPT: &str = include_str!("system_prompt.md");
pub const PROMPT_NAME: &str = "duvet-system-prompt";

#[derive(Clone)]
pub struct DuvetServer {
    engine: Arc<Engine>,
    /// Seals the cursors of the list tools and resources.
    cursor_key: CursorKey,
    /// This session's resource subscriptions and peer.
    session: Arc<Session>,
    tool_router: ToolRouter<Self>,
    /// What the server's options offer (a request's headers narrow it: [`Surface::of`]).
    selection: Arc<Selection>,
}

/// Every tool and its toolset (`requirements`: what the specifications require and how far
/// the code meets it; `citations`: the annotations in the code), all reads: what
/// `--toolsets`, `--tools` and `--read-only` choose from.
pub const TOOLS: &[Entry] = &[
    Entry {
        name: "search_requirements",
        toolset: "requirements",
        writes: false,
    },
    Entry {
        name: "get_requirement_status",
        toolset: "requirements",
        writes: false,
    },
    Entry {
        name: "list_uncited_requirements",
        toolset: "requirements",
        writes: false,
    },
    Entry {
        name: "get_prioritized_requirements",
        toolset: "requirements",
        writes: false,
    },
    Entry {
        name: "resolve_spec_id",
        toolset: "requirements",
        writes: false,
    },
    Entry {
        name: "validate_citation",
        toolset: "citations",
        writes: false,
    },
    Entry {
        name: "get_citation_context",
        toolset: "citations",
        writes: false,
    },
    Entry {
        name: "list_invalid_citations",
        toolset: "citations",
        writes: false,
    },
    Entry {
        name: "list_untested_citations",
        toolset: "citations",
        writes: false,
    },
    Entry {
        name: "list_duplicate_citations",
        toolset: "citations",
        writes: false,
    },
    Entry {
        name: "list_unattached_citations",
        toolset: "citations",
        writes: false,
    },
    Entry {
        name: "list_unexecuted_requirements",
        toolset: "coverage",
        writes: false,
    },
];

/// Each toolset's icon color: one glyph per toolset in a client's list.
const ICON_COLORS: &[(&str, &str)] = &[
    ("requirements", "6f42c1"),
    ("citations", "d9730d"),
    ("coverage", "1a7f37"),
];

/// `router`'s tools with their titles and their toolset's icon.
fn dressed(router: ToolRouter<DuvetServer>) -> ToolRouter<DuvetServer> {
    mcp_common::surface::dress_router(router, TOOLS, ICON_COLORS)
}

impl DuvetServer {
    /// A handler for another client session: the same engine, cursor key and tools, its own
    /// resource subscriptions. Cheap: the serving kit calls it once over stdio and once per
    /// session (or stateless request) over HTTP.
    pub fn session(&self) -> Self {
        Self {
            session: Arc::new(Session::new()),
            ..self.clone()
        }
    }

    /// What the request of `context` is offered: the server's tools, narrowed by its headers.
    fn surface(&self, context: &RequestContext<RoleServer>) -> Result<Surface<'_>, McpError> {
        Surface::of(&self.selection, context, TOOLS)
    }

    /// Run `f` on the project as it is now, for a tool answering a page of a list.
    async fn with_page<T>(
        &self,
        f: impl FnOnce(&Snapshot, &CursorKey) -> PageResult<T>,
    ) -> PagedReply<Vec<T>> {
        PagedReply(
            self.engine
                .snapshot()
                .await
                .and_then(|snapshot| f(&snapshot, &self.cursor_key)),
        )
    }

    /// A requirement's status, with its executed state when coverage reports are configured
    /// (a report that cannot be read says so in it, not instead of the status).
    async fn requirement_status(
        &self,
        p: tools::RequirementParams,
    ) -> Result<tools::RequirementStatus, ToolError> {
        let snapshot = self.engine.snapshot().await?;
        let mut status = tools::get_requirement_status(&snapshot.model, p)?;
        if self.engine.has_coverage() {
            let r = tools::find_requirement(&snapshot.model, &status.identifier, None)?;
            status.execution = Some(match self.engine.coverage(&snapshot).await {
                Ok(coverage) => executed::execution(&snapshot.model, &coverage, r),
                Err(err) => executed::unreadable(err.message),
            });
        }
        Ok(status)
    }

    /// Run `f` on the project as it is now.
    async fn with_model<T>(&self, f: impl FnOnce(&Snapshot) -> Result<T, ToolError>) -> Reply<T> {
        Reply(
            self.engine
                .snapshot()
                .await
                .and_then(|snapshot| f(&snapshot)),
        )
    }
}

#[tool_router]
impl DuvetServer {
    /// A handler serving `engine`, sealing cursors with `cursor_key`. Make one and call
    /// [`Self::session`] for each further session, so that all share the engine and the key.
    pub fn new(engine: Arc<Engine>, cursor_key: CursorKey, selection: &Selection) -> Self {
        Self {
            engine,
            cursor_key,
            session: Arc::new(Session::new()),
            // Input schemas in the single-type form every client's dialect accepts.
            tool_router: mcp_common::protocol::portable_router(dressed(
                selection.apply(Self::tool_router(), TOOLS),
            )),
            selection: Arc::new(selection.clone()),
        }
    }

    #[tool(
        title = "Validate citation",
        description = "Check that a citation names an existing specification, section and requirement",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<Validation>()
    )]
    async fn validate_citation(&self, params: Parameters<ValidateParams>) -> Reply<Validation> {
        match params.into_inner() {
            Ok(p) => {
                self.with_model(|s| tools::validate_citation(&s.model, &s.config, p))
                    .await
            }
            Err(err) => Reply(Err(err)),
        }
    }

    #[tool(
        title = "Search requirements",
        description = "Search requirements by words (every one must occur, any case), in all specifications or within `spec` and `section`. Paged.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<Vec<RequirementRef>>()
    )]
    async fn search_requirements(
        &self,
        params: Parameters<SearchParams>,
    ) -> PagedReply<Vec<RequirementRef>> {
        match params.into_inner() {
            Ok(p) => {
                self.with_page(|s, key| tools::search_requirements(&s.model, key, p))
                    .await
            }
            Err(err) => PagedReply(Err(err)),
        }
    }

    #[tool(
        title = "Show requirement status",
        description = "Get a requirement's status as `duvet report` (0.4.3) computes it: fully_implemented when annotations (tests included, TODOs not) quote all its text, partially_implemented when some, not_started when none; also whether it is cited (per `--require-citations`), tested or excepted, and its TODOs",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<RequirementStatus>()
    )]
    async fn get_requirement_status(
        &self,
        params: Parameters<RequirementParams>,
    ) -> Reply<RequirementStatus> {
        match params.into_inner() {
            Ok(p) => Reply(self.requirement_status(p).await),
            Err(err) => Reply(Err(err)),
        }
    }

    #[tool(
        title = "List unexecuted requirements",
        description = "List cited requirements whose implementing code did not all run in the coverage reports, as `duvet query --check coverage` (0.4.3) decides per citation. Paged.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<Vec<executed::UnexecutedRequirement>>()
    )]
    async fn list_unexecuted_requirements(
        &self,
        params: Parameters<ListParams>,
    ) -> PagedReply<Vec<executed::UnexecutedRequirement>> {
        let answer = async {
            let p = params.into_inner()?;
            let snapshot = self.engine.snapshot().await?;
            let query = executed::UnexecutedQuery::new(&snapshot.model, &self.cursor_key, p)?;
            let coverage = self.engine.coverage(&snapshot).await?;
            query.list(&snapshot.model, &coverage, &self.cursor_key)
        };
        PagedReply(answer.await)
    }

    #[tool(
        title = "List uncited requirements",
        description = "List requirements not cited as `duvet report --ci --require-citations` (0.4.3) counts it: a line of their text no implementation, implication or exception touches (tests and TODOs do not cite). Paged.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<Vec<RequirementRef>>()
    )]
    async fn list_uncited_requirements(
        &self,
        params: Parameters<UncitedParams>,
    ) -> PagedReply<Vec<RequirementRef>> {
        match params.into_inner() {
            Ok(p) => {
                self.with_page(|s, key| tools::list_uncited_requirements(&s.model, key, p))
                    .await
            }
            Err(err) => PagedReply(Err(err)),
        }
    }

    #[tool(
        title = "List invalid citations",
        description = "List invalid citations (unknown specification, missing section, quote not found, malformed) with file, line, text and reason. Paged.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<Vec<InvalidCitation>>()
    )]
    async fn list_invalid_citations(
        &self,
        params: Parameters<PageParams>,
    ) -> PagedReply<Vec<InvalidCitation>> {
        match params.into_inner() {
            Ok(p) => {
                self.with_page(|s, key| tools::list_invalid_citations(&s.model, key, p))
                    .await
            }
            Err(err) => PagedReply(Err(err)),
        }
    }

    #[tool(
        title = "Show citation context",
        description = "Get the code around a citation",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<CitationContext>()
    )]
    async fn get_citation_context(
        &self,
        params: Parameters<ContextParams>,
    ) -> Reply<CitationContext> {
        match params.into_inner() {
            Ok(p) => {
                self.with_model(|s| tools::get_citation_context(&s.model, &s.config.root, p))
                    .await
            }
            Err(err) => Reply(Err(err)),
        }
    }

    #[tool(
        title = "Resolve specification id",
        description = "Resolve the specification id (used in resource paths) of a specification URL",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<ResolvedSpec>()
    )]
    async fn resolve_spec_id(&self, params: Parameters<ResolveParams>) -> Reply<ResolvedSpec> {
        match params.into_inner() {
            Ok(p) => {
                self.with_model(|s| tools::resolve_spec_id(&s.model, p))
                    .await
            }
            Err(err) => Reply(Err(err)),
        }
    }

    #[tool(
        title = "List requirements by priority",
        description = "List requirements in work-first order: level (MUST, SHOULD, MAY, none), then status (partially_implemented, not_started, fully_implemented), then TODO count (most first). Paged.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<Vec<PrioritizedRequirement>>()
    )]
    async fn get_prioritized_requirements(
        &self,
        params: Parameters<ListParams>,
    ) -> PagedReply<Vec<PrioritizedRequirement>> {
        match params.into_inner() {
            Ok(p) => {
                self.with_page(|s, key| tools::get_prioritized_requirements(&s.model, key, p))
                    .await
            }
            Err(err) => PagedReply(Err(err)),
        }
    }
    #[tool(
        title = "List untested citations",
        description = "List implementation annotations tests do not cover, as `duvet query --check test` (0.4.3): `tested` is `none` (no test of the section quotes any of its text) or `partial` (the `tests` quote part of it). Implications, exceptions and TODOs need no test. Paged.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<Vec<UntestedCitation>>()
    )]
    async fn list_untested_citations(
        &self,
        params: Parameters<ListParams>,
    ) -> PagedReply<Vec<UntestedCitation>> {
        match params.into_inner() {
            Ok(p) => {
                self.with_page(|s, key| checks::list_untested_citations(&s.model, key, p))
                    .await
            }
            Err(err) => PagedReply(Err(err)),
        }
    }

    #[tool(
        title = "List duplicate citations",
        description = "List duplicate annotations, as `duvet query --check duplicates` (0.4.3): those whose quote other annotations of the same type and section (`duplicates`) already quote entirely. Paged.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<Vec<DuplicateCitation>>()
    )]
    async fn list_duplicate_citations(
        &self,
        params: Parameters<ListParams>,
    ) -> PagedReply<Vec<DuplicateCitation>> {
        match params.into_inner() {
            Ok(p) => {
                self.with_page(|s, key| checks::list_duplicate_citations(&s.model, key, p))
                    .await
            }
            Err(err) => PagedReply(Err(err)),
        }
    }

    #[tool(
        title = "List unattached citations",
        description = "List valid citations that quote no requirement (a whole section, explanatory text, a section without requirements), each with `why`; no status counts them. Paged.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<Vec<UnattachedCitation>>()
    )]
    async fn list_unattached_citations(
        &self,
        params: Parameters<ListParams>,
    ) -> PagedReply<Vec<UnattachedCitation>> {
        match params.into_inner() {
            Ok(p) => {
                self.with_page(|s, key| checks::list_unattached_citations(&s.model, key, p))
                    .await
            }
            Err(err) => PagedReply(Err(err)),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DuvetServer {
    /// The tools this request is offered, in name order, with a one-hour `ttlMs` (private to
    /// the caller when its headers narrowed them).
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(self
            .surface(&context)?
            .list(self.tool_router.list_all(), TOOLS, &context))
    }

    /// A call of a tool this request is not offered (by the server's options or the
    /// request's headers) names it and lists the tools it is offered.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.surface(&context)?
            .call(&self.tool_router, self, TOOLS, request, context)
            .await
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .enable_resources_subscribe()
                .build(),
        )
        .with_server_info(Implementation::new(
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(SYSTEM_PROMPT)
    }

    /// The system prompt describes the whole server (every toolset): it is always offered.
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            PROMPT_NAME,
            Some("How to use the Duvet MCP server: its resources, tools and how to interact"),
            None,
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != PROMPT_NAME {
            return Err(McpError::invalid_params(
                format!(
                    "Unknown prompt '{}'. Available: {PROMPT_NAME}.",
                    request.name
                ),
                None,
            ));
        }
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, SYSTEM_PROMPT)])
                .with_description("The Duvet MCP system prompt")
                .into(),
        )
    }

    /// The resources of the toolsets this request is offered ([`resources::toolset`]).
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let surface = self.surface(&context)?;
        let snapshot = self.engine.snapshot().await.ok();
        let mut listed = resources::list(snapshot.as_ref().map(|s| &s.model));
        listed.retain(|r| surface.offers_toolset(resources::toolset(&r.uri), TOOLS));
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let surface = self.surface(&context)?;
        let mut listed = resources::templates();
        listed.retain(|t| surface.offers_toolset(resources::toolset(&t.uri_template), TOOLS));
        Ok(ListResourceTemplatesResult::with_all_items(listed))
    }

    /// A resource of a toolset this request is not offered does not exist for it (not found).
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let toolset = resources::toolset(&request.uri);
        if !self.surface(&context)?.offers_toolset(toolset, TOOLS) {
            return Err(Surface::hidden_resource(&request.uri, toolset));
        }
        // Resources answer protocol errors; carry the tool error's hint in the message.
        let snapshot = self.engine.snapshot().await.map_err(|err| {
            mcp_common::protocol::resource_not_found(
                &request.uri,
                format!("{}: {} {}", err.code, err.message, err.hint_text()),
            )
        })?;
        resources::read(
            &snapshot.model,
            &snapshot.config.root,
            &self.cursor_key,
            &request.uri,
        )
        .map(Into::into)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        resources::check_subscribable(&request.uri)?;
        // As reading: a resource of a toolset this request is not offered does not exist.
        let toolset = resources::toolset(&request.uri);
        if !self.surface(&context)?.offers_toolset(toolset, TOOLS) {
            return Err(Surface::hidden_resource(&request.uri, toolset));
        }
        // Let the project be analysed first: that is when its directories get watched, so a
        // change after this answer is seen.
        if let Err(err) = self.engine.snapshot().await {
            tracing::debug!(%err, "subscribed while there is no project");
        }
        self.session
            .subscribe(&self.engine, request.uri.to_string(), context.peer.clone())
            .map_err(|err| McpError::internal_error(err, None))
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.session.unsubscribe(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // The resources of the toolsets the server offers (a listen carries no headers to
        // narrow by).
        let whole = Surface::whole(&self.selection);
        let accepted = subscribe::accepted_filter(requested, |uri| {
            resources::check_subscribable(uri).is_ok()
                && whole.offers_toolset(resources::toolset(uri), TOOLS)
        });
        // The SDK acknowledges the subscription before `listen` runs: follow changes from
        // now, so that one right after the acknowledgment is not missed.
        if subscribe::has_resources(&accepted) {
            self.session.prepare_listen(&self.engine);
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.session.listen(&self.engine, context).await;
        Ok(())
    }
}
