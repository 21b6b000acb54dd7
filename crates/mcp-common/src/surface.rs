//! One tool surface for every server: each tool belongs to a toolset and reads or writes;
//! every server takes the same options to choose what it offers — `--toolsets a,b`,
//! `--tools name,name` (an allow-list) and `--read-only`, which wins over both — and
//! `tools/list` and calls follow (a tool not offered is unknown, as if it did not exist).
//!
//! Over HTTP a request may narrow what its server offers, never widen it, with the headers
//! [`TOOLSETS_HEADER`], [`TOOLS_HEADER`] and [`READ_ONLY_HEADER`] (as GitHub's MCP server
//! takes them): [`Surface::of`] is what one request sees. And [`listing`] answers
//! `tools/list` with the caching hints of 2026-07-28 (`ttlMs`, `cacheScope`).

use std::collections::BTreeSet;

use rmcp::handler::server::router::tool::ToolRouter;

/// A tool as the surface knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub name: &'static str,
    /// The toolset it belongs to (a server names its own).
    pub toolset: &'static str,
    /// Whether it changes anything (`--read-only` leaves it out).
    pub writes: bool,
}

/// The options every server takes (its own older flags stay as aliases).
#[derive(clap::Args, Debug, Clone, Default, PartialEq, Eq)]
pub struct SurfaceArgs {
    /// Offer only the tools of these toolsets (comma-separated; an unknown one is refused
    /// with the ones there are). With `--tools` too, the tools of either.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "TOOLSETS",
        env = "MCP_TOOLSETS"
    )]
    pub toolsets: Vec<String>,
    /// Offer only these tools (comma-separated names). With `--toolsets` too, the tools of
    /// either.
    #[arg(long, value_delimiter = ',', value_name = "TOOLS", env = "MCP_TOOLS")]
    pub tools: Vec<String>,
    /// Offer no tool that writes (wins over `--toolsets` and `--tools`).
    #[arg(
        long,
        env = "MCP_READ_ONLY",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub read_only: bool,
}

/// Which of a server's tools it offers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    toolsets: Option<BTreeSet<String>>,
    tools: Option<BTreeSet<String>>,
    read_only: bool,
}

impl Selection {
    /// Every tool.
    pub fn all() -> Self {
        Self::default()
    }

    /// The selection `args` ask for among `entries`: an unknown toolset or tool is refused
    /// with the ones there are (a typo must not silently offer nothing).
    pub fn new(args: &SurfaceArgs, entries: &[Entry]) -> Result<Self, String> {
        let clean = |names: &[String]| -> BTreeSet<String> {
            names
                .iter()
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect()
        };
        let toolsets = clean(&args.toolsets);
        let tools = clean(&args.tools);
        let known_sets = toolsets_of(entries);
        if let Some(unknown) = toolsets.iter().find(|t| !known_sets.contains(&t.as_str())) {
            return Err(format!(
                "unknown toolset `{}`: the toolsets are {}",
                crate::text::excerpt(unknown, 100),
                known_sets.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        if let Some(unknown) = tools
            .iter()
            .find(|t| !entries.iter().any(|e| e.name == t.as_str()))
        {
            return Err(format!(
                "unknown tool `{}`: the tools are {}",
                crate::text::excerpt(unknown, 100),
                entries
                    .iter()
                    .map(|e| e.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(Self {
            toolsets: (!toolsets.is_empty()).then_some(toolsets),
            tools: (!tools.is_empty()).then_some(tools),
            read_only: args.read_only,
        })
    }

    /// This selection without the tools of `toolset` (an older flag's way to say so).
    pub fn without_toolset(mut self, toolset: &str, entries: &[Entry]) -> Self {
        let sets = self
            .toolsets
            .take()
            .unwrap_or_else(|| toolsets_of(entries).into_iter().map(String::from).collect());
        let kept: BTreeSet<String> = sets.into_iter().filter(|s| s != toolset).collect();
        self.toolsets = Some(kept);
        self
    }

    /// Whether `--read-only` (or an alias of it) was asked for.
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// Whether the tool `entry` is offered.
    pub fn allows(&self, entry: &Entry) -> bool {
        if self.read_only && entry.writes {
            return false;
        }
        match (&self.toolsets, &self.tools) {
            (None, None) => true,
            (sets, tools) => {
                sets.as_ref().is_some_and(|s| s.contains(entry.toolset))
                    || tools.as_ref().is_some_and(|t| t.contains(entry.name))
            }
        }
    }

    /// Whether the tool named `name` is offered (a name `entries` does not know is not).
    pub fn offers(&self, name: &str, entries: &[Entry]) -> bool {
        entries
            .iter()
            .find(|e| e.name == name)
            .is_some_and(|e| self.allows(e))
    }

    /// `router` without the routes this selection leaves out: they are neither listed nor
    /// callable.
    pub fn apply<S: Send + Sync + 'static>(
        &self,
        mut router: ToolRouter<S>,
        entries: &[Entry],
    ) -> ToolRouter<S> {
        let names: Vec<String> = router.map.keys().map(|k| k.to_string()).collect();
        for name in names {
            if !self.offers(&name, entries) {
                router.remove_route(&name);
            }
        }
        router
    }
}

/// The header naming the toolsets a request wants (comma-separated).
pub const TOOLSETS_HEADER: &str = "x-mcp-toolsets";
/// The header naming the tools a request wants (comma-separated).
pub const TOOLS_HEADER: &str = "x-mcp-tools";
/// The header asking for no tool that writes (`true`, `1`, `yes`).
pub const READ_ONLY_HEADER: &str = "x-mcp-readonly";

/// How long a client may keep a `tools/list` answer (one hour): the list changes only
/// when the binary does (a new version restarts the server) or the caller's own options —
/// its headers, its token's scopes — do, and those a client knows itself.
pub const LISTING_TTL_MS: u64 = 3_600_000;

/// What one request sees: the server's selection, narrowed by the request's headers.
#[derive(Debug, Clone)]
pub struct Surface<'a> {
    server: &'a Selection,
    request: Option<Selection>,
}

impl<'a> Surface<'a> {
    /// The tools `server` offers, as the request of `context` narrows them (over HTTP, with
    /// the three headers; over stdio nothing narrows). A header naming a toolset or tool
    /// that `entries` does not know is `-32602`, naming the ones there are.
    pub fn of(
        server: &'a Selection,
        context: &rmcp::service::RequestContext<rmcp::RoleServer>,
        entries: &[Entry],
    ) -> Result<Self, rmcp::ErrorData> {
        let refuse = |message: String| {
            rmcp::ErrorData::invalid_params(
                message,
                Some(serde_json::json!({
                    "retryable": false,
                    "hint": "Name toolsets and tools the server offers, or leave the headers out.",
                })),
            )
        };
        let request = match request_args(context).map_err(&refuse)? {
            None => None,
            Some(args) => {
                // An unknown name is refused with what this server offers (not its whole
                // catalogue, which may hold tools its options leave out).
                let offered: Vec<&Entry> = entries.iter().filter(|e| server.allows(e)).collect();
                if let Some(unknown) = args
                    .toolsets
                    .iter()
                    .find(|t| !entries.iter().any(|e| e.toolset == t.as_str()))
                {
                    return Err(refuse(format!(
                        "unknown toolset `{}` in the request's {TOOLSETS_HEADER} header: the toolsets offered are {}",
                        crate::text::excerpt(unknown, 100),
                        toolsets_of(&offered.iter().map(|e| **e).collect::<Vec<_>>()).join(", ")
                    )));
                }
                if let Some(unknown) = args
                    .tools
                    .iter()
                    .find(|t| !entries.iter().any(|e| e.name == t.as_str()))
                {
                    return Err(refuse(format!(
                        "unknown tool `{}` in the request's {TOOLS_HEADER} header: the tools offered are {}",
                        crate::text::excerpt(unknown, 100),
                        offered
                            .iter()
                            .map(|e| e.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                Some(Selection::new(&args, entries).map_err(refuse)?)
            }
        };
        Ok(Self { server, request })
    }

    /// The server's own selection, with nothing narrowed.
    pub fn whole(server: &'a Selection) -> Self {
        Self {
            server,
            request: None,
        }
    }

    /// Whether the request narrowed the selection (its answers are then its own).
    pub fn narrowed(&self) -> bool {
        self.request.is_some()
    }

    /// Whether the tool `entry` is offered to this request.
    pub fn allows(&self, entry: &Entry) -> bool {
        self.server.allows(entry) && self.request.as_ref().is_none_or(|r| r.allows(entry))
    }

    /// Whether the tool named `name` is offered to this request.
    pub fn offers(&self, name: &str, entries: &[Entry]) -> bool {
        entries
            .iter()
            .find(|e| e.name == name)
            .is_some_and(|e| self.allows(e))
    }

    /// Whether any tool of `toolset` is offered to this request (prompts and resources
    /// follow their toolset's tools).
    pub fn offers_toolset(&self, toolset: &str, entries: &[Entry]) -> bool {
        entries
            .iter()
            .any(|e| e.toolset == toolset && self.allows(e))
    }

    /// `tools/list`'s answer for this request: the `tools` it is offered (in their order),
    /// with the caching hints ([`listing`]; private when its headers narrowed them).
    pub fn list(
        &self,
        tools: Vec<rmcp::model::Tool>,
        entries: &[Entry],
        context: &rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> rmcp::model::ListToolsResult {
        let tools = tools
            .into_iter()
            .filter(|tool| self.offers(&tool.name, entries))
            .collect();
        listing(tools, context, self.narrowed())
    }

    /// A call through `router` of a tool this request is offered
    /// ([`crate::protocol::call_routed`]); a call of any other is an unknown tool, naming
    /// those it is offered.
    pub async fn call<S: Send + Sync + 'static>(
        &self,
        router: &ToolRouter<S>,
        service: &S,
        entries: &[Entry],
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        if !self.offers(&request.name, entries) {
            let tools = router.list_all();
            return Err(crate::protocol::unknown_tool(
                &request.name,
                tools
                    .iter()
                    .map(|tool| tool.name.as_ref())
                    .filter(|name| self.offers(name, entries)),
            ));
        }
        crate::protocol::call_routed(router, service, request, context).await
    }

    /// A resource `uri` of `toolset`, which this request is not offered: not found, as if it
    /// did not exist (`-32002` with `data.uri`).
    pub fn hidden_resource(uri: &str, toolset: &str) -> rmcp::ErrorData {
        crate::protocol::resource_not_found(
            uri,
            format!(
                "Unknown resource '{}': it belongs to the toolset {toolset}, which this request is not offered",
                crate::clip(uri, 200)
            ),
        )
    }

    /// Whether the request asked for no writes (or the server is read-only).
    pub fn read_only(&self) -> bool {
        self.server.read_only || self.request.as_ref().is_some_and(|r| r.read_only)
    }
}

/// The request's narrowing, from its HTTP headers: `None` when it sends none of them; an
/// error for a value that is not text, or an `X-MCP-Readonly` that says neither yes nor no
/// (a header meant to narrow must never be read as "no narrowing").
fn request_args(
    context: &rmcp::service::RequestContext<rmcp::RoleServer>,
) -> Result<Option<SurfaceArgs>, String> {
    #[cfg(feature = "http")]
    {
        let Some(parts) = context.extensions.get::<axum::http::request::Parts>() else {
            return Ok(None);
        };
        let header = |name: &str| -> Result<Option<Vec<String>>, String> {
            let mut values = Vec::new();
            for value in parts.headers.get_all(name) {
                let text = value
                    .to_str()
                    .map_err(|_| format!("the request's {name} header is not text"))?;
                values.extend(
                    text.split(',')
                        .map(|v| v.trim().to_string())
                        .filter(|v| !v.is_empty()),
                );
            }
            Ok((parts.headers.contains_key(name)).then_some(values))
        };
        let toolsets = header(TOOLSETS_HEADER)?;
        let tools = header(TOOLS_HEADER)?;
        let read_only = header(READ_ONLY_HEADER)?;
        if toolsets.is_none() && tools.is_none() && read_only.is_none() {
            return Ok(None);
        }
        if read_only.as_ref().is_some_and(Vec::is_empty) {
            return Err(format!(
                "the request's {READ_ONLY_HEADER} header is empty: give true or false"
            ));
        }
        let mut asked_read_only = false;
        for value in read_only.iter().flatten() {
            match value.to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => asked_read_only = true,
                "false" | "0" | "no" | "off" => {}
                _ => {
                    return Err(format!(
                        "the request's {READ_ONLY_HEADER} header says `{}`: give true or false",
                        crate::text::excerpt(value, 40)
                    ));
                }
            }
        }
        Ok(Some(SurfaceArgs {
            toolsets: toolsets.unwrap_or_default(),
            tools: tools.unwrap_or_default(),
            read_only: asked_read_only,
        }))
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = context;
        Ok(None)
    }
}

/// `tools/list`'s answer of `tools`, with the caching hints of 2026-07-28 when the request
/// speaks it: [`LISTING_TTL_MS`], and a private scope when the list is the caller's own
/// (`per_caller`: it depends on its token, or its headers narrowed it).
pub fn listing(
    tools: Vec<rmcp::model::Tool>,
    context: &rmcp::service::RequestContext<rmcp::RoleServer>,
    per_caller: bool,
) -> rmcp::model::ListToolsResult {
    use rmcp::model::{CacheScope, ListToolsResult, ProtocolVersion};
    let mut result = ListToolsResult::with_all_items(tools);
    if context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
    {
        result.ttl_ms = Some(LISTING_TTL_MS);
        result.cache_scope = Some(if per_caller {
            CacheScope::Private
        } else {
            CacheScope::Public
        });
    }
    result
}

/// A toolset's icon: a swatch of `color` (six hex digits, e.g. `2a7f62`; others are
/// black), a one-pixel PNG as a data URI (118 characters, a valid URI: `Icon.src` is
/// `format: uri`) that a client scales to any size. PNG because every client that shows
/// icons must read it (MCP requires PNG and JPEG of them; GIF, at 70 characters, it does
/// not); one colour per toolset tells a person where a tool belongs and costs a listing
/// less than any drawn glyph would (an SVG's namespace alone is 26 characters).
pub fn icon(color: &str) -> rmcp::model::Icon {
    use base64::Engine as _;
    let rgb = u32::from_str_radix(color, 16)
        .ok()
        .filter(|_| color.len() == 6)
        .unwrap_or(0);
    let [_, r, g, b] = rgb.to_be_bytes();
    fn chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        png.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = png.len();
        png.extend_from_slice(kind);
        png.extend_from_slice(data);
        let crc = crc32fast::hash(&png[start..]);
        png.extend_from_slice(&crc.to_be_bytes());
    }
    let mut png: Vec<u8> = b"\x89PNG\r\n\x1a\n".to_vec();
    // 1×1, 8 bits a channel, RGB.
    chunk(&mut png, b"IHDR", &[0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
    // The one row (filter 0, the pixel) in a zlib stream of one stored block.
    let row = [0, r, g, b];
    let (mut low, mut high) = (1u32, 0u32);
    for byte in row {
        low = (low + u32::from(byte)) % 65521;
        high = (high + low) % 65521;
    }
    let mut zlib = vec![0x78, 0x01, 0x01, 4, 0, 0xfb, 0xff];
    zlib.extend_from_slice(&row);
    zlib.extend_from_slice(&((high << 16) | low).to_be_bytes());
    chunk(&mut png, b"IDAT", &zlib);
    chunk(&mut png, b"IEND", &[]);
    rmcp::model::Icon::new(format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    ))
}

/// `tool` with its `title` (what a person reads in a client's list) and its toolset's
/// `icon`, and its annotations without the hints that say what the specification's
/// defaults already say (`readOnlyHint: false`, `idempotentHint: false`,
/// `destructiveHint: true`; and for a read-only tool, the write hints, which mean nothing
/// there).
pub fn dress(
    mut tool: rmcp::model::Tool,
    title: &str,
    icon: &rmcp::model::Icon,
) -> rmcp::model::Tool {
    tool.title = Some(title.to_string());
    tool.icons = Some(vec![icon.clone()]);
    if let Some(hints) = tool.annotations.as_mut() {
        if hints.read_only_hint == Some(true) {
            hints.destructive_hint = None;
            hints.idempotent_hint = None;
        } else {
            hints.read_only_hint = None;
            if hints.destructive_hint == Some(true) {
                hints.destructive_hint = None;
            }
            if hints.idempotent_hint == Some(false) {
                hints.idempotent_hint = None;
            }
        }
    }
    tool
}

/// `router`'s tools each [`dress`]ed: its own title (else its name) and the icon of its
/// toolset's colour in `colors` (grey for a toolset without one).
pub fn dress_router<S>(
    mut router: ToolRouter<S>,
    entries: &[Entry],
    colors: &[(&str, &str)],
) -> ToolRouter<S> {
    for route in router.map.values_mut() {
        let toolset = entries
            .iter()
            .find(|e| e.name == route.attr.name)
            .map(|e| e.toolset);
        let color = colors
            .iter()
            .find(|(set, _)| Some(*set) == toolset)
            .map_or("808080", |(_, color)| color);
        let title = route
            .attr
            .title
            .clone()
            .unwrap_or_else(|| route.attr.name.to_string());
        route.attr = dress(route.attr.clone(), &title, &icon(color));
    }
    router
}

/// The toolsets of `entries`, in order of first appearance.
pub fn toolsets_of(entries: &[Entry]) -> Vec<&'static str> {
    let mut sets: Vec<&'static str> = Vec::new();
    for entry in entries {
        if !sets.contains(&entry.toolset) {
            sets.push(entry.toolset);
        }
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRIES: &[Entry] = &[
        Entry {
            name: "list",
            toolset: "alpha",
            writes: false,
        },
        Entry {
            name: "create",
            toolset: "alpha",
            writes: true,
        },
        Entry {
            name: "sprints",
            toolset: "beta",
            writes: false,
        },
        Entry {
            name: "plan",
            toolset: "beta",
            writes: true,
        },
    ];

    fn offered(args: SurfaceArgs) -> Vec<&'static str> {
        let selection = Selection::new(&args, ENTRIES).unwrap();
        ENTRIES
            .iter()
            .filter(|e| selection.allows(e))
            .map(|e| e.name)
            .collect()
    }

    fn args(toolsets: &[&str], tools: &[&str], read_only: bool) -> SurfaceArgs {
        SurfaceArgs {
            toolsets: toolsets.iter().map(|s| s.to_string()).collect(),
            tools: tools.iter().map(|s| s.to_string()).collect(),
            read_only,
        }
    }

    #[test]
    fn toolsets_tools_and_read_only_choose_together() {
        assert_eq!(
            offered(args(&[], &[], false)),
            ["list", "create", "sprints", "plan"]
        );
        assert_eq!(offered(args(&["beta"], &[], false)), ["sprints", "plan"]);
        assert_eq!(
            offered(args(&["beta"], &["list"], false)),
            ["list", "sprints", "plan"]
        );
        assert_eq!(
            offered(args(&[], &["create", "plan"], false)),
            ["create", "plan"]
        );
        // Read-only wins over everything.
        assert_eq!(offered(args(&[], &[], true)), ["list", "sprints"]);
        assert_eq!(offered(args(&["alpha"], &["plan"], true)), ["list"]);
    }

    #[test]
    fn unknown_names_are_refused_with_the_known_ones() {
        let err = Selection::new(&args(&["alfa"], &[], false), ENTRIES).unwrap_err();
        assert!(
            err.contains("`alfa`") && err.contains("alpha, beta"),
            "{err}"
        );
        let err = Selection::new(&args(&[], &["nope"], false), ENTRIES).unwrap_err();
        assert!(
            err.contains("`nope`") && err.contains("list, create, sprints, plan"),
            "{err}"
        );
    }

    #[test]
    fn a_dressed_tool_has_a_title_an_icon_and_no_default_hints() {
        use rmcp::model::{Tool, ToolAnnotations};
        let schema = std::sync::Arc::new(serde_json::Map::new());
        let read = Tool::new_with_raw("r", None, schema.clone()).with_annotations(
            ToolAnnotations::from_raw(None, Some(true), Some(false), Some(true), Some(false)),
        );
        let read = dress(read, "Read it", &icon("2a7f62"));
        let wire = serde_json::to_value(&read).unwrap();
        assert_eq!(wire["title"], "Read it");
        assert_eq!(
            wire["annotations"],
            serde_json::json!({"readOnlyHint": true, "openWorldHint": false})
        );
        let src = wire["icons"][0]["src"].as_str().unwrap();
        assert!(
            src.starts_with("data:image/png;base64,iVBORw0KGgo"),
            "{src}"
        );
        assert!(
            !src.contains([' ', '<', '>', '"', '#']),
            "a valid URI: {src}"
        );
        assert_eq!(src.len(), 118, "{src}");
        use base64::Engine as _;
        let png = base64::engine::general_purpose::STANDARD
            .decode(src.trim_start_matches("data:image/png;base64,"))
            .unwrap();
        // The pixel is the last three bytes of the one row, before the Adler-32 and the
        // IDAT's CRC and the IEND chunk.
        let pixel = png.len() - 12 - 4 - 4 - 3;
        assert_eq!(&png[pixel..pixel + 3], &[0x2a, 0x7f, 0x62]);
        // Each chunk's CRC is right (a reader refuses the image otherwise).
        let mut at = 8;
        while at < png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
            assert_eq!(crc32fast::hash(&png[at + 4..at + 8 + len]), crc);
            at += 12 + len;
        }
        assert_eq!(at, png.len());
        let write = Tool::new_with_raw("w", None, schema).with_annotations(
            ToolAnnotations::from_raw(None, Some(false), Some(true), Some(false), Some(false)),
        );
        let wire = serde_json::to_value(dress(write, "Write it", &icon("x"))).unwrap();
        assert_eq!(
            wire["annotations"],
            serde_json::json!({"openWorldHint": false})
        );
    }

    #[test]
    fn an_older_flag_can_take_a_toolset_away() {
        let selection = Selection::all().without_toolset("beta", ENTRIES);
        let names: Vec<_> = ENTRIES
            .iter()
            .filter(|e| selection.allows(e))
            .map(|e| e.name)
            .collect();
        assert_eq!(names, ["list", "create"]);
    }
}
