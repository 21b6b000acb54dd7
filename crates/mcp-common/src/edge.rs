//! The checks of the protocol edge, shared by the stdio transport ([`crate::stdio`]) and the
//! HTTP endpoint ([`crate::http`]): a message as the client sent it becomes a client message
//! rmcp can decode, or a [`Refusal`] to answer in its place.

use rmcp::RoleServer;
use rmcp::service::RxJsonRpcMessage;
use serde_json::{Value, json};

/// The longest message read (a stdio line; the HTTP transport's body limit is the same by
/// default): a longer one is refused.
pub const MAX_LINE: usize = crate::MAX_MESSAGE_BYTES;

/// How much of an offending value an error quotes.
const EXCERPT: usize = 200;

/// Method names longer than this name no method (MCP's are a few dozen characters).
const MAX_METHOD: usize = 256;

/// JSON-RPC's codes for what never reaches a handler.
pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;

/// At most [`EXCERPT`] characters of `text`, and its length when it was cut.
pub fn excerpt(text: &str) -> String {
    crate::text::excerpt(text, EXCERPT)
}

/// Why a line is answered here rather than passed on: the id to answer (`None`: `null`),
/// the JSON-RPC code and the message.
#[derive(Debug, PartialEq)]
#[doc(hidden)]
pub struct Refusal {
    pub id: Option<Value>,
    pub code: i64,
    pub message: String,
    /// A notification (a method without an id): JSON-RPC answers none, not even an error.
    pub quiet: bool,
}

impl Refusal {
    pub(crate) fn new(id: Option<Value>, code: i64, message: impl Into<String>) -> Self {
        Self {
            id,
            code,
            message: message.into(),
            quiet: false,
        }
    }
}

impl Refusal {
    /// The JSON-RPC error answering it (`"id": null` when the id could not be read).
    pub(crate) fn frame(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": {"code": self.code, "message": self.message},
        })
    }
}

/// A line as a client message, or why it is answered at the edge.
#[doc(hidden)]
pub fn decode(line: &[u8]) -> Result<RxJsonRpcMessage<RoleServer>, Refusal> {
    let value: Value = serde_json::from_slice(line).map_err(|err| {
        Refusal::new(
            recover_id(line),
            PARSE_ERROR,
            format!("parse error: the message is not JSON that can be read ({err})"),
        )
    })?;
    let quiet = value
        .as_object()
        .is_some_and(|o| o.contains_key("method") && !o.contains_key("id"));
    check(value).map_err(|refusal| Refusal { quiet, ..refusal })
}

/// A JSON message as a client message, or why not. Takes the message: it is decoded in place,
/// not copied, on every call's path.
fn check(value: Value) -> Result<RxJsonRpcMessage<RoleServer>, Refusal> {
    let Value::Object(object) = &value else {
        let what = if value.is_array() {
            "a batch (an array); send one message per line"
        } else {
            "not a JSON object"
        };
        return Err(Refusal::new(
            None,
            INVALID_REQUEST,
            format!("invalid request: the message is {what}"),
        ));
    };
    // The id, when it is one JSON-RPC allows (a string or an integer).
    let id = match object.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(id @ Value::Number(n)) if n.is_i64() => Some(id.clone()),
        Some(other) => {
            return Err(Refusal::new(
                None,
                INVALID_REQUEST,
                format!(
                    "invalid request: the id must be a string or an integer, not `{}`",
                    excerpt(&other.to_string())
                ),
            ));
        }
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Refusal::new(
            id,
            INVALID_REQUEST,
            "invalid request: \"jsonrpc\" must be \"2.0\"",
        ));
    }
    match object.get("method") {
        Some(Value::String(method)) if method.len() > MAX_METHOD => {
            return Err(Refusal::new(
                id,
                METHOD_NOT_FOUND,
                format!("unknown method `{}`", excerpt(method)),
            ));
        }
        Some(Value::String(_)) | None => {}
        Some(other) => {
            return Err(Refusal::new(
                id,
                INVALID_REQUEST,
                format!(
                    "invalid request: the method must be a string, not `{}`",
                    excerpt(&other.to_string())
                ),
            ));
        }
    }
    if let Some(params) = object.get("params")
        && !params.is_object()
    {
        return Err(Refusal::new(
            id,
            INVALID_REQUEST,
            "invalid request: params must be an object",
        ));
    }
    // A `tools/call` whose params rmcp cannot read as one would reach the server as an unknown
    // custom request (-32601, "tools/call"): say what is wrong with it instead.
    if object.get("method").and_then(Value::as_str) == Some("tools/call") {
        let params = object.get("params");
        let name = params.and_then(|p| p.get("name"));
        if !matches!(name, Some(Value::String(_))) {
            return Err(Refusal::new(
                id,
                INVALID_REQUEST,
                "invalid request: tools/call needs params.name, the name (a string) of the tool to call with its arguments",
            ));
        }
        if let Some(arguments) = params.and_then(|p| p.get("arguments"))
            && !arguments.is_object()
            && !arguments.is_null()
        {
            return Err(Refusal::new(
                id,
                INVALID_REQUEST,
                format!(
                    "invalid request: tools/call's params.arguments must be an object, not `{}`",
                    excerpt(&arguments.to_string())
                ),
            ));
        }
    }
    // The answers of a multi round-trip request (2026-07-28): the echoed state is a string,
    // the answers an object; anything else would reach the server as an unknown request.
    if matches!(
        object.get("method").and_then(Value::as_str),
        Some("tools/call" | "prompts/get" | "resources/read")
    ) {
        let params = object.get("params");
        for (field, is_right, what) in [
            (
                "requestState",
                Value::is_string as fn(&Value) -> bool,
                "a string",
            ),
            ("inputResponses", Value::is_object, "an object"),
        ] {
            if let Some(given) = params.and_then(|p| p.get(field))
                && !given.is_null()
                && !is_right(given)
            {
                return Err(Refusal::new(
                    id,
                    INVALID_REQUEST,
                    format!(
                        "invalid request: params.{field} must be {what} (as the server's input_required result gave it), not `{}`",
                        excerpt(&given.to_string())
                    ),
                ));
            }
        }
    }
    let method = object
        .get("method")
        .and_then(Value::as_str)
        .map(excerpt)
        .unwrap_or_default();
    serde_json::from_value(value).map_err(|err| {
        Refusal::new(
            id,
            INVALID_REQUEST,
            format!(
                "invalid request: the message `{method}` cannot be decoded ({})",
                excerpt(&err.to_string())
            ),
        )
    })
}

/// The id of a message that is not valid JSON, when it can still be read: a top-level
/// `"id"` member whose value is a string or an integer. Written by hand because no JSON
/// crate reads past the first error, and the id matters most exactly then (a client waits
/// for an answer with it). The scan skips other members' values whatever their depth
/// (without recursion) and gives up at the first thing it does not understand.
#[doc(hidden)]
pub fn recover_id(line: &[u8]) -> Option<Value> {
    let mut scan = Scan { text: line, at: 0 };
    scan.space();
    scan.expect(b'{')?;
    loop {
        scan.space();
        let key = scan.string()?;
        scan.space();
        scan.expect(b':')?;
        scan.space();
        if key == b"id" {
            return scan.scalar_id();
        }
        scan.skip_value()?;
        scan.space();
        match scan.next()? {
            b',' => continue,
            _ => return None,
        }
    }
}

/// How much of the start of an over-long message [`recover_id_prefix`] scans for its id.
pub const ID_SCAN: usize = 64 * 1024;

/// The id of a message longer than the limit ([`MAX_LINE`]), read from its first [`ID_SCAN`]
/// bytes only, so that the refusal can carry it (a client waits for an answer with its id)
/// without the whole message being held. No JSON crate parses a truncated prefix (each
/// reports the early end as an error and returns nothing), hence [`recover_id`]'s hand-made
/// scanner: it follows strings with their escapes and nesting depth without recursion, and
/// gives up (`None`, the answer then has `"id": null`) where the prefix ends before a
/// top-level `"id"` member is read whole. A leading byte order mark is skipped.
pub fn recover_id_prefix(message: &[u8]) -> Option<Value> {
    let prefix = message.get(..ID_SCAN).unwrap_or(message);
    let prefix = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
    recover_id(prefix)
}

struct Scan<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    /// A string's raw bytes (escapes left as they are).
    fn string(&mut self) -> Option<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.at;
        loop {
            match self.next()? {
                b'\\' => {
                    self.next()?;
                }
                b'"' => return Some(&self.text[start..self.at - 1]),
                _ => {}
            }
        }
    }

    /// An id: a string without escapes, or an integer.
    fn scalar_id(&mut self) -> Option<Value> {
        match self.peek()? {
            b'"' => {
                let raw = self.string()?;
                if raw.contains(&b'\\') {
                    return None;
                }
                let text = std::str::from_utf8(raw).ok()?;
                Some(Value::String(text.to_string()))
            }
            b'-' | b'0'..=b'9' => {
                let start = self.at;
                self.at += 1;
                while matches!(self.peek(), Some(b'0'..=b'9')) {
                    self.at += 1;
                }
                // The integer must end here: in a prefix cut short, `12` may be the start
                // of `123`, and a fraction or exponent makes no integer.
                if !matches!(
                    self.peek(),
                    Some(b' ' | b'\t' | b'\r' | b'\n' | b',' | b'}')
                ) {
                    return None;
                }
                let digits = std::str::from_utf8(&self.text[start..self.at]).ok()?;
                digits.parse::<i64>().ok().map(Value::from)
            }
            _ => None,
        }
    }

    /// Any value, nested to any depth.
    fn skip_value(&mut self) -> Option<()> {
        let mut depth = 0usize;
        loop {
            match self.peek()? {
                b'"' => {
                    self.string()?;
                }
                b'{' | b'[' => {
                    self.at += 1;
                    depth += 1;
                }
                b'}' | b']' => {
                    if depth == 0 {
                        return Some(());
                    }
                    self.at += 1;
                    depth -= 1;
                }
                b',' if depth == 0 => return Some(()),
                _ => self.at += 1,
            }
            if depth == 0 && matches!(self.peek(), Some(b',' | b'}')) {
                return Some(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn a_tool_call_rmcp_cannot_read_is_refused_with_why() {
        for (line, says) in [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":"x"}}"#,
                "params.arguments must be an object, not `\"x\"`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
                "must be an object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
                "needs params.name",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}"#,
                "needs params.name",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
                "needs params.name",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","requestState":12}}"#,
                "params.requestState must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":[1,2]}}"#,
                "params.inputResponses must be an object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","inputResponses":"yes"}}"#,
                "params.inputResponses must be an object",
            ),
        ] {
            let refusal = decode(line.as_bytes()).unwrap_err();
            assert_eq!(refusal.id, Some(json!(1)), "{line}");
            assert_eq!(refusal.code, INVALID_REQUEST, "{line}");
            assert!(
                refusal.message.contains(says),
                "{line}: {}",
                refusal.message
            );
        }
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":null}}"#,
        ] {
            assert!(decode(line.as_bytes()).is_ok(), "{line}");
        }
    }

    #[test]
    fn ids_are_recovered_from_lines_that_do_not_parse() {
        for (line, id) in [
            (r#"{"id": 5, "x": NaN}"#, Some(json!(5))),
            (
                r#"{"a": {"b": [1, "}", {"c": "\"]"}]}, "id": "s-1", oops"#,
                Some(json!("s-1")),
            ),
            (
                r#"{"params": [[[[[[[["x"]]]]]]]], "id": -3 ,"#,
                Some(json!(-3)),
            ),
            (r#"{"id": 1.5}"#, None),
            (r#"{"id": "a\"b"}"#, None),
            (r#"[{"id": 1}]"#, None),
            (r#"{"x": "\ud800", "id": 4}"#, Some(json!(4))),
            ("", None),
        ] {
            assert_eq!(recover_id(line.as_bytes()), id, "{line}");
        }
    }

    #[test]
    fn the_id_of_an_over_long_message_is_read_from_its_start_alone() {
        let long = "m".repeat(MAX_LINE + 10);
        let cases = [
            (
                format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{long}"}}"#),
                Some(json!(7)),
            ),
            (
                format!(r#"{{"id" : "a-1" , "method":"{long}"}}"#),
                Some(json!("a-1")),
            ),
            (
                format!("\u{feff}{{\"id\":3,\"m\":\"{long}\"}}"),
                Some(json!(3)),
            ),
            (
                format!(r#"{{"jsonrpc":"2.0","method":"{long}","id":7}}"#),
                None,
            ),
            (format!(r#"{{"params":{{"id":5,"x":"{long}"}}}}"#), None),
            (format!(r#"{{"p":"\"id\":5","x":"{long}"}}"#), None),
        ];
        for (message, id) in cases {
            assert_eq!(
                recover_id_prefix(message.as_bytes()),
                id,
                "{}",
                excerpt(&message)
            );
        }
        // An id cut by the end of the scanned prefix is not read as a shorter one.
        let mut cut = format!(r#"{{"x":"{}","id":"#, "a".repeat(ID_SCAN - 17));
        cut.push_str("123456789}");
        assert_eq!(recover_id_prefix(cut.as_bytes()), None);
    }

    #[test]
    fn the_prefix_scan_never_panics_on_arbitrary_bytes() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let alphabet = br#"{}[]",:\ id0123456789-.eE"#;
        for len in 0..2000 {
            let bytes: Vec<u8> = (0..len % 97)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            let _ = recover_id_prefix(&bytes);
        }
    }
}
