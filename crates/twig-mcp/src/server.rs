//! The protocol surface: tools, prompts and resources of `twig-mcp`, wired to rmcp.

use std::{collections::HashSet, sync::Arc};

use mcp_common::subscribe::{self, SessionSubscriptions};
use mcp_common::surface::{Entry, Selection, Surface};
use mcp_common::{PagedReply, Parameters, Reply, output_schema, paged_output_schema};
use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    handler::server::router::tool::ToolRouter,
    model::*,
    service::{RequestContext, SubscriptionContext},
    tool, tool_handler, tool_router,
};

use crate::{
    context::ServerContext,
    include::Include,
    prompts, resources,
    subscriptions::Subscriptions,
    tools::{github, health, jira, local},
    types::*,
};

/// Features that `--disable` can switch off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Feature {
    /// The GitHub tools (get_pull_request, get_pr_status, list_pull_requests) and PR data in
    /// other answers.
    Github,
    /// The Jira tools (get_jira_issue, list_jira_issues) and issue data in other answers.
    Jira,
    /// The MCP prompts.
    Prompts,
    /// The MCP resources (twig://…) and their subscriptions.
    Resources,
}

pub const INSTRUCTIONS: &str = "Twig MCP server. Provides read-only access to branch metadata, \
Jira issues, and GitHub PRs for the current repository. Before changing a stack, call \
get_stack_health: what needs a rebase and in which order, what is merged, stale or missing, \
and what could be pruned.";

/// Every tool, its toolset (`local`: the repository and twig's data; `github`; `jira`), all
/// reads: what `--toolsets`, `--tools` and `--read-only` choose from.
pub const TOOLS: &[Entry] = &[
    Entry {
        name: "get_current_branch",
        toolset: "local",
        writes: false,
    },
    Entry {
        name: "get_branch_metadata",
        toolset: "local",
        writes: false,
    },
    Entry {
        name: "get_branch_stack",
        toolset: "local",
        writes: false,
    },
    Entry {
        name: "get_branch_tree",
        toolset: "local",
        writes: false,
    },
    Entry {
        name: "list_branches",
        toolset: "local",
        writes: false,
    },
    Entry {
        name: "list_repositories",
        toolset: "local",
        writes: false,
    },
    Entry {
        name: "get_worktrees",
        toolset: "local",
        writes: false,
    },
    Entry {
        name: "get_stack_health",
        toolset: "local",
        writes: false,
    },
    Entry {
        name: "get_pull_request",
        toolset: "github",
        writes: false,
    },
    Entry {
        name: "get_pr_status",
        toolset: "github",
        writes: false,
    },
    Entry {
        name: "list_pull_requests",
        toolset: "github",
        writes: false,
    },
    Entry {
        name: "get_jira_issue",
        toolset: "jira",
        writes: false,
    },
    Entry {
        name: "list_jira_issues",
        toolset: "jira",
        writes: false,
    },
];

/// Each toolset's icon color: one glyph per toolset in a client's list.
const ICON_COLORS: &[(&str, &str)] = &[
    ("local", "2a7f62"),
    ("github", "24292f"),
    ("jira", "0052cc"),
];

/// The toolset of every prompt and resource (and the resource template): `local`. Each is
/// built from the repository and twig's state, what the local tools read; the GitHub and
/// Jira data some of them carry (a PR's review status, a branch's linked issue) is the same
/// the local tools carry, switched off by `--disable github`/`--disable jira`. So they are
/// offered while a local tool is — by `--toolsets`/`--tools`/`--read-only` and by a
/// request's `X-MCP-*` headers — and otherwise neither listed nor readable.
pub const CONTENT_TOOLSET: &str = "local";

/// The MCP handler of one client session. Everything but the session's legacy
/// subscriptions is shared by every session of the process (see [`Self::session`]).
#[derive(Clone)]
pub struct TwigMcpServer {
    ctx: Arc<ServerContext>,
    disabled: Arc<HashSet<Feature>>,
    /// The file watcher and its stream of changes: one per process.
    subscriptions: Arc<Subscriptions>,
    /// This session's `resources/subscribe` subscriptions and peer.
    legacy: Arc<SessionSubscriptions>,
    tool_router: Arc<ToolRouter<Self>>,
    /// What the server's options offer (a request's headers narrow it: [`Surface::of`]).
    selection: Arc<Selection>,
}

impl TwigMcpServer {
    /// A handler for another client session: the same context, cursor key, file watcher
    /// and tools, its own legacy subscriptions. Cheap: the serving kit calls it once over
    /// stdio and once per session (or stateless request) over HTTP.
    pub fn session(&self) -> Self {
        Self {
            legacy: Arc::new(SessionSubscriptions::new()),
            ..self.clone()
        }
    }
}

#[tool_router]
impl TwigMcpServer {
    /// A server offering the tools `selection` chooses; a feature in `disabled` (`--disable`)
    /// offers neither its toolset nor its data.
    pub fn new(ctx: ServerContext, disabled: HashSet<Feature>, selection: Selection) -> Self {
        let ctx = Arc::new(ctx);
        ctx.shed_caches_when_idle();
        let mut selection = selection;
        if disabled.contains(&Feature::Github) {
            selection = selection.without_toolset("github", TOOLS);
        }
        if disabled.contains(&Feature::Jira) {
            selection = selection.without_toolset("jira", TOOLS);
        }
        let tool_router = dressed(selection.apply(Self::tool_router(), TOOLS));
        Self {
            subscriptions: Arc::new(Subscriptions::new(ctx.clone())),
            ctx,
            disabled: Arc::new(disabled),
            legacy: Arc::new(SessionSubscriptions::new()),
            // Input schemas in the single-type form every client's dialect accepts.
            tool_router: Arc::new(mcp_common::protocol::portable_router(tool_router)),
            selection: Arc::new(selection),
        }
    }

    /// What the request of `context` is offered: the server's tools, narrowed by its headers.
    fn surface(&self, context: &RequestContext<RoleServer>) -> Result<Surface<'_>, McpError> {
        Surface::of(&self.selection, context, TOOLS)
    }

    /// Whether the request of `context` is offered the prompts and resources
    /// ([`CONTENT_TOOLSET`]).
    fn offers_content(&self, context: &RequestContext<RoleServer>) -> Result<bool, McpError> {
        Ok(self
            .surface(context)?
            .offers_toolset(CONTENT_TOOLSET, TOOLS))
    }

    fn enabled(&self, feature: Feature) -> bool {
        !self.disabled.contains(&feature)
    }

    /// Which remote parts answers may include.
    fn include(&self) -> Include {
        Include {
            github: self.enabled(Feature::Github),
            jira: self.enabled(Feature::Jira),
        }
    }

    // ---- local state tools -------------------------------------------------------------

    #[tool(
        title = "Show current branch",
        description = "Get the current git branch and its linked Jira issue, GitHub PR, parent branch and creation date",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<BranchMetadataResponse>()
    )]
    async fn get_current_branch(&self) -> Reply<BranchMetadataResponse> {
        local::get_current_branch(&self.ctx).into()
    }

    #[tool(
        title = "Show branch metadata",
        description = "Get metadata for a specific twig-tracked branch (Jira issue, PR number, parent branch, creation date)",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<BranchMetadataResponse>()
    )]
    async fn get_branch_metadata(
        &self,
        params: Parameters<local::BranchParams>,
    ) -> Reply<BranchMetadataResponse> {
        params
            .into_inner()
            .and_then(|p| local::get_branch_metadata(&self.ctx, p))
            .into()
    }

    #[tool(
        title = "Show branch tree",
        description = "Get the branch dependency tree of the repository, as text (box-drawing) and as nested data: a branch with several parents appears under each (marked as a repeat); orphaned branches (no parent git has, not a root) are drawn under the default root when one is set (`twig branch root add B --default`), as `twig tree` draws them, marked `[orphan]` (no dependency on the root is declared), and are listed apart otherwise; `health: true` adds ahead/behind, merged, empty and stale badges to the text",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<BranchTreeResponse>()
    )]
    async fn get_branch_tree(
        &self,
        params: Parameters<local::TreeParams>,
    ) -> Reply<BranchTreeResponse> {
        match params.into_inner() {
            Ok(p) => health::get_branch_tree(&self.ctx, p).await.into(),
            Err(err) => Reply(Err(err)),
        }
    }

    #[tool(
        title = "List branch stack",
        description = "Get the ancestor chain of a branch, from the branch (first) up to its root (last), with each branch's metadata",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = output_schema::<BranchStackResponse>()
    )]
    async fn get_branch_stack(
        &self,
        params: Parameters<local::StackParams>,
    ) -> Reply<BranchStackResponse> {
        params
            .into_inner()
            .and_then(|p| local::get_branch_stack(&self.ctx, p))
            .into()
    }

    #[tool(
        title = "List tracked branches",
        description = "List the twig-tracked branches of the repository with their metadata, in name order, a page at a time",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<ListBranchesResponse>()
    )]
    async fn list_branches(
        &self,
        params: Parameters<local::ListBranchesParams>,
    ) -> PagedReply<ListBranchesResponse> {
        params
            .into_inner()
            .and_then(|p| local::list_branches(&self.ctx, p))
            .into()
    }

    #[tool(
        title = "List repositories",
        description = "List all repositories registered with twig, a page at a time (works outside a repository)",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<ListRepositoriesResponse>()
    )]
    async fn list_repositories(
        &self,
        params: Parameters<local::ListRepositoriesParams>,
    ) -> PagedReply<ListRepositoriesResponse> {
        params
            .into_inner()
            .and_then(|p| local::list_repositories(&self.ctx, p))
            .into()
    }

    #[tool(
        title = "List worktrees",
        description = "List the repository's worktrees: the branch git has checked out in each, and whether twig's state records it otherwise; a page at a time",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false),
        output_schema = paged_output_schema::<ListWorktreesResponse>()
    )]
    async fn get_worktrees(
        &self,
        params: Parameters<local::WorktreesParams>,
    ) -> PagedReply<ListWorktreesResponse> {
        params
            .into_inner()
            .and_then(|p| local::get_worktrees(&self.ctx, p))
            .into()
    }

    #[tool(
        title = "Check stack health",
        description = "Check the health of the branch stacks: per branch, ahead/behind against each parent (from git's objects), whether it needs a rebase, is merged (by git: commits it had of its own, by its reflog, are in its parent; or its PR is merged), is empty (nothing of its own and not merged: never a prune candidate), is stale or has no git branch; for the whole scope, the rebase order (parents first), the branches `twig cascade` would also plan that it leaves out and why (`skipped`: merged, missing, no parent in git), and what could be pruned. Read-only; a page of branches at a time",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = true),
        output_schema = paged_output_schema::<StackHealthResponse>()
    )]
    async fn get_stack_health(
        &self,
        params: Parameters<health::HealthParams>,
    ) -> PagedReply<StackHealthResponse> {
        match params.into_inner() {
            Ok(p) => health::get_stack_health(&self.ctx, p, self.include())
                .await
                .into(),
            Err(err) => PagedReply(Err(err)),
        }
    }

    // ---- GitHub tools --------------------------------------------------------------------

    #[tool(
        title = "Show pull request",
        description = "Get a GitHub pull request (defaults to the current branch's linked PR)",
        annotations(read_only_hint = true, open_world_hint = true),
        output_schema = output_schema::<PullRequestResponse>()
    )]
    async fn get_pull_request(
        &self,
        params: Parameters<github::PrParams>,
    ) -> Reply<PullRequestResponse> {
        match params.into_inner() {
            Ok(p) => github::get_pull_request(&self.ctx, p).await.into(),
            Err(err) => Reply(Err(err)),
        }
    }

    #[tool(
        title = "Show PR status",
        description = "Get a GitHub pull request with its reviews and the CI check runs of its head commit (defaults to the current branch's linked PR)",
        annotations(read_only_hint = true, open_world_hint = true),
        output_schema = output_schema::<PrStatusResponse>()
    )]
    async fn get_pr_status(&self, params: Parameters<github::PrParams>) -> Reply<PrStatusResponse> {
        match params.into_inner() {
            Ok(p) => github::get_pr_status(&self.ctx, p).await.into(),
            Err(err) => Reply(Err(err)),
        }
    }

    #[tool(
        title = "List pull requests",
        description = "List the GitHub pull requests of the repository (open by default), newest first, a page at a time",
        annotations(read_only_hint = true, open_world_hint = true),
        output_schema = paged_output_schema::<ListPullRequestsResponse>()
    )]
    async fn list_pull_requests(
        &self,
        params: Parameters<github::ListPrParams>,
    ) -> PagedReply<ListPullRequestsResponse> {
        match params.into_inner() {
            Ok(p) => github::list_pull_requests(&self.ctx, p).await.into(),
            Err(err) => PagedReply(Err(err)),
        }
    }

    // ---- Jira tools ----------------------------------------------------------------------

    #[tool(
        title = "Show Jira issue",
        description = "Get a Jira issue with its description as plain text (defaults to the current branch's linked issue)",
        annotations(read_only_hint = true, open_world_hint = true),
        output_schema = output_schema::<JiraIssueResponse>()
    )]
    async fn get_jira_issue(
        &self,
        params: Parameters<jira::IssueParams>,
    ) -> Reply<JiraIssueResponse> {
        match params.into_inner() {
            Ok(p) => jira::get_jira_issue(&self.ctx, p).await.into(),
            Err(err) => Reply(Err(err)),
        }
    }

    #[tool(
        title = "List Jira issues",
        description = "List the Jira issues of a project, optionally filtered by status and assignee (\"me\" for yourself); most recently updated first, a page at a time",
        annotations(read_only_hint = true, open_world_hint = true),
        output_schema = paged_output_schema::<ListJiraIssuesResponse>()
    )]
    async fn list_jira_issues(
        &self,
        params: Parameters<jira::ListIssuesParams>,
    ) -> PagedReply<ListJiraIssuesResponse> {
        match params.into_inner() {
            Ok(p) => jira::list_jira_issues(&self.ctx, p).await.into(),
            Err(err) => PagedReply(Err(err)),
        }
    }
}

/// `router`'s tools with their titles and their toolset's icon.
fn dressed(router: ToolRouter<TwigMcpServer>) -> ToolRouter<TwigMcpServer> {
    mcp_common::surface::dress_router(router, TOOLS, ICON_COLORS)
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for TwigMcpServer {
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
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        if !self.enabled(Feature::Prompts) {
            capabilities.prompts = None;
        }
        if !self.enabled(Feature::Resources) {
            capabilities.resources = None;
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                env!("CARGO_PKG_NAME"),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        if !self.enabled(Feature::Prompts) || !self.offers_content(&context)? {
            return Ok(ListPromptsResult::default());
        }
        Ok(ListPromptsResult::with_all_items(prompts::list()))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if !self.enabled(Feature::Prompts) {
            return Err(McpError::method_not_found::<GetPromptRequestMethod>());
        }
        if !self.offers_content(&context)? {
            return Err(McpError::invalid_params(
                format!(
                    "Unknown prompt '{}': the prompts belong to the toolset {CONTENT_TOOLSET}, which this request is not offered.",
                    mcp_common::clip(&request.name, 100)
                ),
                None,
            ));
        }
        prompts::get(&self.ctx, &request, self.include())
            .await
            .map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        if !self.enabled(Feature::Resources) || !self.offers_content(&context)? {
            return Ok(ListResourcesResult::default());
        }
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        if !self.enabled(Feature::Resources) || !self.offers_content(&context)? {
            return Ok(ListResourceTemplatesResult::default());
        }
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if !self.enabled(Feature::Resources) {
            return Err(McpError::method_not_found::<ReadResourceRequestMethod>());
        }
        if !self.offers_content(&context)? {
            return Err(Surface::hidden_resource(&request.uri, CONTENT_TOOLSET));
        }
        resources::read(&self.ctx, &request.uri, self.include())
            .await
            .map(Into::into)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.enabled(Feature::Resources) {
            return Err(McpError::method_not_found::<SubscribeRequestMethod>());
        }
        resources::check_subscribable(&request.uri)?;
        // As reading: without the toolset of the resources, they do not exist.
        if !self.offers_content(&context)? {
            return Err(Surface::hidden_resource(&request.uri, CONTENT_TOOLSET));
        }
        self.subscriptions
            .subscribe_legacy(&self.legacy, request.uri.to_string(), context.peer.clone())
            .map_err(|err| McpError::internal_error(err, None))
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions
            .unsubscribe_legacy(&self.legacy, &request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        if !self.enabled(Feature::Resources) {
            return None;
        }
        // Nothing when the server offers no tool of the resources' toolset (a listen carries
        // no headers to narrow by).
        let offered = Surface::whole(&self.selection).offers_toolset(CONTENT_TOOLSET, TOOLS);
        let accepted = subscribe::accepted_filter(requested, |uri| {
            offered && resources::check_subscribable(uri).is_ok()
        });
        // The SDK acknowledges the subscription before `listen` runs: start watching now, so
        // that a change right after the acknowledgment is not missed (file events are
        // debounced before they are announced, which covers the start of `listen`).
        if subscribe::has_resources(&accepted)
            && let Err(err) = self.subscriptions.ensure_watcher()
        {
            tracing::warn!(%err, "cannot watch for resource changes");
        }
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        self.subscriptions
            .listen(context)
            .await
            .map_err(|err| McpError::internal_error(err, None))
    }
}
