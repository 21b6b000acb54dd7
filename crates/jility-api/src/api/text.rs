//! Text that reaches the database: the one boundary where every string a request carries is
//! checked before any handler (so before any statement) sees it — a middleware on the whole
//! router ([`refuse_nul`]).
//!
//! PostgreSQL's `text` refuses exactly one code point in UTF-8 databases: U+0000 (`invalid
//! byte sequence for encoding "UTF8": 0x00`, SQLSTATE 22021). Every other Unicode scalar value
//! is stored as sent, and Rust strings hold only scalar values (no lone surrogate gets
//! through a decoder), so NUL is the only one refused here. What is inspected is what the
//! server decodes into strings:
//! - the path, percent-decoded by the routes (`%00`; hyper refuses a raw 0x00 in a request
//!   line, and `%00` is the only percent-encoding that decodes to it);
//! - the query, percent- and `+`-decoded by the handlers (`%00` as well);
//! - the body, as the route reads it whatever its `Content-Type` says: JSON under `/api`,
//!   `/mcp` and `/oauth/register` (a raw 0x00, or a `\u0000` escape: found by one pass over
//!   the bytes that follows escapes, so `\\u0000` — a backslash, then `u0000` — is text, not
//!   NUL; exact for every document the handlers' parser accepts, and a document it refuses
//!   is refused anyway); forms everywhere else (`%00` or a raw 0x00). No endpoint takes
//!   multipart. Only on a hit is the body decoded, to say which field holds the NUL.
//! - Headers: hyper refuses a raw 0x00 in a header, and no header the server reads is
//!   decoded further (cookies, `Idempotency-Key` — printable ASCII only —, `Authorization`,
//!   `Host`, `Origin` are compared or hashed as they arrive), so none is inspected.
//!
//! Cost: a request without a body costs a scan of its URI for `%` (about 30 ns for a
//! ticket's GET); a body is read (up to [`super::MAX_BODY_BYTES`], the most any handler
//! reads, `/mcp` included; one that says it is longer is not read here at all) and scanned
//! once, eight bytes at a time ([`find`]), then handed on as the same bytes — JSON is not
//! parsed twice. A body that turns out longer than the limit, or fails to arrive, is handed
//! on as it came (what was read, then the rest or the failure): the handlers refuse it as
//! before. The check runs before authentication, so an unauthenticated client can make the
//! server read a body up to the limit, as the sign-in and OAuth forms always could.
//!
//! A request holding NUL is answered `400` in its path's own shape, naming the part (path,
//! query parameter, form field, JSON pointer; names clipped) and never quoting the value:
//! the envelope `invalid_input` under `/api`; a JSON-RPC error at `/mcp` (the message's id,
//! `-32602` for its params, as the MCP edge answers a message it refuses; a notification
//! gets `202` and nothing); RFC 6749 `invalid_request` on OAuth's JSON endpoints; a
//! person's error page (or the page script's JSON) everywhere else.
//!
//! A URI longer than hyper takes (64 KB) never reaches a router: [`overlong_uri`] is what
//! the connection answers for it ([`mcp_common::connections::serve_app_with`]).

use axum::body::{Body, Bytes, HttpBody as _};
use axum::extract::Request;
use axum::handler::Handler as _;
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt as _;
use mcp_common::ToolError;
use serde_json::Value;

use super::ApiError;
use crate::oauth_errors::OAuthResponse as _;
use crate::public::{REGISTER_PATH, REVOKE_PATH, TOKEN_PATH};
use jility_core::errors;
use jility_identity::oauth::OAuthError;

/// How a path's refusals are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Area {
    /// `/api`, `/api/…`: the envelope.
    Api,
    /// `/mcp`, `/mcp/…`: JSON-RPC.
    Mcp,
    /// OAuth's JSON endpoints and documents: RFC 6749.
    OAuth,
    /// Everything else: a person's page.
    People,
}

fn area_of(path: &str) -> Area {
    let under = |prefix: &str| {
        path.strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    if under("/api") {
        Area::Api
    } else if under(mcp_common::http::MCP_PATH) {
        Area::Mcp
    } else if [TOKEN_PATH, REGISTER_PATH, REVOKE_PATH].contains(&path)
        || path.starts_with("/.well-known/")
    {
        Area::OAuth
    } else {
        Area::People
    }
}

/// How the route of a path reads its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Form,
}

fn format_of(path: &str, area: Area) -> Format {
    match area {
        Area::Api | Area::Mcp => Format::Json,
        _ if path == REGISTER_PATH => Format::Json,
        _ => Format::Form,
    }
}

/// Where a NUL was found.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    Path,
    Query(String),
    Field(String),
    /// A JSON pointer to the string (or the object whose member name) holding it; `key`:
    /// in a member's name.
    Json {
        pointer: String,
        key: bool,
    },
    /// The body, where no field can be named (a raw NUL, a document that does not parse).
    Body,
}

impl Found {
    fn describe(&self) -> String {
        match self {
            Found::Path => "The request's path holds".to_string(),
            Found::Query(name) => format!("The query parameter `{name}` holds"),
            Found::Field(name) => format!("The form field `{name}` holds"),
            Found::Json {
                pointer,
                key: false,
            } => {
                format!("The body's value at `{pointer}` holds")
            }
            Found::Json { pointer, key: true } => {
                format!("A member name in the body's object at `{pointer}` holds")
            }
            Found::Body => "The request body holds".to_string(),
        }
    }

    fn message(&self) -> String {
        format!(
            "{} a NUL character (U+0000), which no text here can hold",
            self.describe()
        )
    }

    fn in_params(&self) -> bool {
        matches!(self, Found::Json { pointer, .. } if pointer == "/params" || pointer.starts_with("/params/"))
    }
}

const HINT: &str = "Remove the NUL character (`\\u0000` in JSON, `%00` in a URL or a form) and send the request again; nothing was changed.";

/// How many characters of a name (a field's, a member's) a refusal quotes.
const NAME_CHARS: usize = 40;

/// `name` as a refusal quotes it: clipped, a NUL shown as `\0`, a backtick or `/` and `~`
/// (in a JSON pointer) escaped.
fn quoted(name: &str) -> String {
    let clipped = mcp_common::text::clip(name, NAME_CHARS);
    clipped.replace('\0', "\\0").replace('`', "'")
}

/// Refuse a request that holds a NUL where the server decodes text (a middleware on every
/// path); hand on every other one, its body as it was read.
pub async fn refuse_nul(request: Request, next: Next) -> Response {
    let uri = request.uri();
    let path = uri.path();
    let area = area_of(path);
    let found = if percent_nul(path.as_bytes()) {
        Some(Found::Path)
    } else if let Some(query) = uri.query()
        && percent_nul(query.as_bytes())
    {
        Some(Found::Query(form_nul(query.as_bytes()).unwrap_or_default()))
    } else {
        None
    };
    if let Some(found) = found {
        return refused(area, &found, None, request).await;
    }
    if request.body().is_end_stream() || declared_too_long(request.headers()) {
        return next.run(request).await;
    }
    let format = format_of(path, area);
    let (parts, body) = request.into_parts();
    let bytes = match read_within(body, super::MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        // Too long, or failed: the handler answers it, as it would have.
        Err(body) => return next.run(Request::from_parts(parts, body)).await,
    };
    let found = match format {
        Format::Json if json_nul(&bytes) => Some(json_location(&bytes)),
        Format::Form if percent_nul(&bytes) => {
            Some(form_nul(&bytes).map_or(Found::Body, Found::Field))
        }
        _ => None,
    };
    let request = Request::from_parts(parts, Body::from(bytes.clone()));
    match found {
        Some(found) => refused(area, &found, Some(&bytes), request).await,
        None => next.run(request).await,
    }
}

/// Whether the request says its body is longer than the limit (not read here: the handler
/// refuses it without reading it all).
fn declared_too_long(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|length| length > super::MAX_BODY_BYTES as u64)
}

/// `body` whole, when it is at most `limit` bytes long and arrives; else a body that yields
/// what was read and then the rest (or the failure), for the handler to refuse as before.
async fn read_within(body: Body, limit: usize) -> Result<Bytes, Body> {
    let mut stream = body.into_data_stream();
    let mut read: Vec<Bytes> = Vec::new();
    let mut length = 0usize;
    while let Some(chunk) = stream.next().await {
        let failed = match chunk {
            Ok(data) => {
                length = length.saturating_add(data.len());
                read.push(data);
                if length <= limit {
                    continue;
                }
                None
            }
            Err(err) => Some(err),
        };
        let before = futures::stream::iter(read.into_iter().map(Ok::<_, axum::Error>));
        let after = futures::stream::iter(failed.map(Err));
        return Err(Body::from_stream(before.chain(after).chain(stream)));
    }
    Ok(match read.len() {
        0 => Bytes::new(),
        1 => read.pop().unwrap_or_default(),
        _ => Bytes::from(read.concat()),
    })
}

/// The first byte of `bytes` that is 0x00 or `other`: eight bytes at a time (a word holds
/// one when it, or it XOR `other` in every byte, has a zero byte), so that a body costs a
/// fraction of its parse (4 MB: about 0.6 ms; a 1 KB ticket: about 0.3 µs).
fn find(bytes: &[u8], other: u8) -> Option<usize> {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_in = |v: u64| v.wrapping_sub(LOW) & !v & HIGH != 0;
    let spread = LOW * u64::from(other);
    let exact = |part: &[u8]| part.iter().position(|&b| b == 0 || b == other);
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let v = u64::from_le_bytes(word);
        if (zero_in(v) || zero_in(v ^ spread))
            && let Some(i) = exact(chunk)
        {
            return Some(at + i);
        }
        at += 8;
    }
    exact(chunks.remainder()).map(|i| at + i)
}

/// Whether percent-decoding `bytes` (a path, a query, a form) gives a NUL: `%00`, or a raw
/// 0x00 (which a form decoder keeps as it is).
fn percent_nul(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some(at) = find(rest, b'%') {
        if rest[at] == 0 || rest.get(at + 1..at + 3) == Some(b"00") {
            return true;
        }
        rest = &rest[at + 1..];
    }
    false
}

/// The name of the first pair of a form (or a query) holding a NUL, quoted.
fn form_nul(bytes: &[u8]) -> Option<String> {
    form_urlencoded::parse(bytes)
        .find(|(name, value)| name.contains('\0') || value.contains('\0'))
        .map(|(name, _)| quoted(&name))
}

/// Whether a JSON document holds a NUL in a string: a raw 0x00 anywhere (never valid JSON),
/// or a `\u0000` escape. Escapes are followed from the start: every backslash in a valid
/// document begins an escape inside a string, so the character after it is skipped (`\\`
/// is one backslash of text; the `u0000` after it is text too).
fn json_nul(bytes: &[u8]) -> bool {
    let mut at = 0;
    while let Some(offset) = find(&bytes[at..], b'\\') {
        at += offset;
        if bytes[at] == 0 {
            return true;
        }
        match bytes.get(at + 1) {
            Some(b'u') if bytes.get(at + 2..at + 6) == Some(b"0000") => return true,
            Some(_) => at += 2,
            None => return false,
        }
    }
    false
}

/// Where in a JSON document (one [`json_nul`] found a NUL in) the NUL is.
fn json_location(bytes: &[u8]) -> Found {
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return Found::Body;
    };
    let mut pointer = String::new();
    match nul_in(&value, &mut pointer) {
        Some(key) => Found::Json { pointer, key },
        None => Found::Body,
    }
}

/// The first string of `value` holding a NUL: `pointer` is left at it (or at the object
/// whose member name holds it: then `Some(true)`).
fn nul_in(value: &Value, pointer: &mut String) -> Option<bool> {
    match value {
        Value::String(text) => text.contains('\0').then_some(false),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let len = pointer.len();
            pointer.push_str(&format!("/{i}"));
            let found = nul_in(item, pointer);
            if found.is_none() {
                pointer.truncate(len);
            }
            found
        }),
        Value::Object(members) => {
            if members.keys().any(|k| k.contains('\0')) {
                return Some(true);
            }
            members.iter().find_map(|(name, member)| {
                let len = pointer.len();
                let step = quoted(name).replace('~', "~0").replace('/', "~1");
                pointer.push('/');
                pointer.push_str(&step);
                let found = nul_in(member, pointer);
                if found.is_none() {
                    pointer.truncate(len);
                }
                found
            })
        }
        _ => None,
    }
}

/// The refusal of `found` in `area`'s shape; `body`: the JSON-RPC message at `/mcp`.
async fn refused(area: Area, found: &Found, body: Option<&Bytes>, request: Request) -> Response {
    let message = found.message();
    tracing::debug!(path = %errors::clip(request.uri().path()), %message, "refused: NUL in the request");
    match area {
        Area::Api => {
            ApiError(ToolError::new(errors::INVALID_INPUT, message).with_hint(HINT)).into_response()
        }
        Area::OAuth => OAuthError::invalid_request(format!("{message}. {HINT}")).into_response(),
        Area::Mcp => mcp_refusal(found, &message, body),
        Area::People => {
            let err = ToolError::new(errors::INVALID_INPUT, message).with_hint(HINT);
            let page = move |headers: HeaderMap| async move {
                jility_web::WebError::Tool(err).answer(&headers)
            };
            page.layer(axum::middleware::from_fn(jility_web::security::headers))
                .call(request, ())
                .await
        }
    }
}

/// A JSON-RPC error answering the message at `/mcp` (its id when it has one), as the MCP
/// edge answers a message it refuses: `400`, or `202` and nothing for a notification.
fn mcp_refusal(found: &Found, message: &str, body: Option<&Bytes>) -> Response {
    let message_of = body.and_then(|bytes| serde_json::from_slice::<Value>(bytes).ok());
    let object = message_of.as_ref().and_then(Value::as_object);
    let id = object
        .and_then(|o| o.get("id"))
        .filter(|id| id.is_string() || id.as_i64().is_some());
    if id.is_none() && object.is_some_and(|o| o.contains_key("method") && !o.contains_key("id")) {
        return StatusCode::ACCEPTED.into_response();
    }
    let (code, what) = if found.in_params() {
        (-32602, "invalid params")
    } else {
        (-32600, "invalid request")
    };
    let frame = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": format!("{what}: {message}. {HINT}")},
    });
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        frame.to_string(),
    )
        .into_response()
}

/// What the connection answers for a request whose URI is longer than hyper reads (it
/// answers `414` before any router), given the start of its request line: under `/api`,
/// the envelope (`invalid_input`); at `/mcp`, a JSON-RPC error; at OAuth's JSON endpoints,
/// RFC 6749's `invalid_request`; elsewhere a person's page.
pub fn overlong_uri(start: &[u8]) -> Option<(&'static str, String)> {
    let target = start.splitn(3, |&b| b == b' ').nth(1)?;
    // The absolute form (`http://host/path`) names the path after the authority.
    let target = match target.windows(3).position(|w| w == b"://") {
        Some(at) => {
            let rest = &target[at + 3..];
            &rest[rest.iter().position(|&b| b == b'/')?..]
        }
        None => target,
    };
    let path = std::str::from_utf8(target).ok().or_else(|| {
        // The start was cut inside a character: what is before it.
        let valid = std::str::from_utf8(target).err()?.valid_up_to();
        std::str::from_utf8(&target[..valid]).ok()
    })?;
    let path = path.split('?').next().unwrap_or_default();
    let message = format!(
        "The request's URI is longer than the server reads ({} bytes)",
        u16::MAX - 1
    );
    match area_of(path) {
        Area::Api => {
            let err = ToolError::new(errors::INVALID_INPUT, message)
                .with_hint("Shorten the query: long text goes in a JSON body, not in the URI.");
            Some((
                "application/json",
                serde_json::json!({ "error": err }).to_string(),
            ))
        }
        Area::Mcp => Some((
            "application/json",
            serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32600, "message": format!("invalid request: {message}")},
            })
            .to_string(),
        )),
        Area::OAuth => Some((
            "application/json",
            serde_json::json!({"error": "invalid_request", "error_description": message})
                .to_string(),
        )),
        Area::People => Some((
            "text/html; charset=utf-8",
            jility_web::layout::bare(
                "Address too long",
                maud::html! {
                    main id="main" class="narrow" data-page="error" {
                        h1 { "This address is too long" }
                        (jility_web::layout::notice(
                            "error",
                            &message,
                            Some("Go back and follow a link of the site instead: its addresses are short."),
                        ))
                    }
                },
            )
            .into_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_nul_follows_escapes() {
        assert!(json_nul(br#"{"a":"x\u0000y"}"#));
        assert!(json_nul(b"{\"a\":\"x\0\"}"));
        assert!(json_nul(br#"{"x\u0000":1}"#));
        assert!(json_nul(br#"{"a":"\\\u0000"}"#));
        assert!(!json_nul(br#"{"a":"\\u0000"}"#));
        assert!(!json_nul(br#"{"a":"\\\\u0000"}"#));
        assert!(!json_nul(br#"{"a":"\u0001"}"#));
        assert!(!json_nul(br#"{"a":"\"u0000"}"#));
        assert!(!json_nul(br#"{"a":"%00"}"#));
        assert!(!json_nul(br#"{"a":"\u0100"}"#));
        assert!(!json_nul(br#"{"a":"x\"#));
    }

    #[test]
    fn find_is_exact_at_every_offset() {
        for len in 0..40 {
            for hit in 0..len {
                for byte in [0u8, b'\\'] {
                    let mut bytes = vec![b'a'; len];
                    bytes[hit] = byte;
                    assert_eq!(find(&bytes, b'\\'), Some(hit), "{len} {hit} {byte}");
                }
            }
            // Bytes next to the ones sought (0x01, 0x5B, 0x5D, 0x80, 0xFF) are no match.
            let near: Vec<u8> = [1u8, 0x5b, 0x5d, 0x80, 0xff]
                .iter()
                .copied()
                .cycle()
                .take(len)
                .collect();
            assert_eq!(find(&near, b'\\'), None, "{len}");
        }
    }

    #[test]
    fn percent_nul_is_exact() {
        assert!(percent_nul(b"/api/v1/tickets/%00"));
        assert!(percent_nul(b"a=b&c=%00"));
        assert!(percent_nul(b"a=\0"));
        assert!(!percent_nul(b"a=%2500&b=%0"));
        assert!(!percent_nul(b"a=%0"));
        assert!(!percent_nul(b"a=%01%10"));
    }

    #[test]
    fn found_where_it_is() {
        assert_eq!(
            json_location(br#"{"a":[1,{"b/c":"x\u0000"}]}"#),
            Found::Json {
                pointer: "/a/1/b~1c".into(),
                key: false
            }
        );
        assert_eq!(
            json_location(br#"{"a":{"\u0000":1}}"#),
            Found::Json {
                pointer: "/a".into(),
                key: true
            }
        );
        assert_eq!(json_location(b"{\"a\":\"\0\"}"), Found::Body);
        assert_eq!(form_nul(b"x=1&em%00ail=2"), Some("em\\0ail".into()));
        assert_eq!(form_nul(b"x=1&email=a%00"), Some("email".into()));
    }

    #[test]
    fn areas_and_formats() {
        assert_eq!(area_of("/api"), Area::Api);
        assert_eq!(area_of("/api/v1/tickets"), Area::Api);
        assert_eq!(area_of("/apix"), Area::People);
        assert_eq!(area_of("/mcp"), Area::Mcp);
        assert_eq!(area_of("/oauth/token"), Area::OAuth);
        assert_eq!(area_of("/oauth/authorize"), Area::People);
        assert_eq!(format_of("/oauth/register", Area::OAuth), Format::Json);
        assert_eq!(format_of("/oauth/token", Area::OAuth), Format::Form);
        assert_eq!(format_of("/login", Area::People), Format::Form);
    }

    #[test]
    fn overlong_uris_by_path() {
        let api = overlong_uri(b"GET /api/v1/tickets?q=aaaa").map(|(_, body)| body);
        assert!(api.is_some_and(|b| b.contains("invalid_input")));
        let absolute = overlong_uri(b"GET http://h:1/mcp?x").map(|(_, body)| body);
        assert!(absolute.is_some_and(|b| b.contains("-32600")));
        let page = overlong_uri(b"GET /w/x/board?q=");
        assert!(
            page.as_ref().is_some_and(
                |(kind, body)| kind.starts_with("text/html") && body.contains("too long")
            ),
            "{page:?}"
        );
        let oauth = overlong_uri(b"GET /oauth/token?x").map(|(_, body)| body);
        assert!(
            oauth
                .as_deref()
                .is_some_and(|b| b.contains("\"invalid_request\"")),
            "{oauth:?}"
        );
        assert!(overlong_uri(b"garbage").is_none());
    }
}
