//! The stdio transport of every server, and the protocol edge in front of rmcp.
//!
//! rmcp reads a line, decodes it as a client message, and drops what does not decode; its
//! handshake ends the process when anything but a request arrives before `initialize`. A
//! client that sends a line with a lone UTF-16 surrogate, `NaN`, arguments nested too deep,
//! or params of the wrong type would wait forever for an answer; one that sends
//! `notifications/initialized` first would see the server exit. So every line is read and
//! checked here first ([`Edge`]), and rmcp only ever receives messages that decode:
//!
//! - a line that is not JSON gets `-32700` with the id, when the id can still be read from
//!   it ([`recover_id`]), else `"id": null`; a line longer than [`MAX_LINE`] gets `-32600`
//!   with the id read from its first 64 KiB ([`recover_id_prefix`]), else `"id": null`; a message that is not a JSON-RPC 2.0 object, or whose id is neither
//!   a string nor an integer, gets `-32600` (with its id when there is a usable one);
//! - a request whose params do not decode gets `-32600` with its id;
//! - notifications and responses before `initialize` are dropped; a second `initialize` is
//!   refused (`-32600`) and the session goes on unchanged;
//! - errors quote at most an excerpt of an offending value ([`excerpt`]).
//!
//! The end of input is held back until every tool call read before it has been answered
//! (rmcp alone gives them 5 s, then cancels them, so a client that pipelined slow writes
//! and closed stdin lost their answers), for at most [`DRAIN_LIMIT`]. For servers whose
//! contract defines `shutdown` ([`crate::serve::ServeOptions`]), input also ends at it:
//! nothing after it is read, the requests before it are answered, then it is answered
//! `null`, and the transport closes.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rmcp::RoleServer;
use rmcp::model::{
    ClientNotification, ClientRequest, CustomResult, JsonRpcMessage, NumberOrString, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::{Decoder, FramedRead};

use crate::edge::{INVALID_REQUEST, MAX_LINE, Refusal, decode, recover_id_prefix};

pub const SHUTDOWN: &str = "shutdown";

/// How long the end of input waits for the tool calls still running.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(120);

/// Standard input and output (as pipes where they are pipes) behind the edge;
/// `shutdown_request`: the input also ends at `shutdown`.
pub fn stdio(
    shutdown_request: bool,
) -> Edge<rmcp::transport::io::StdioReader, rmcp::transport::io::StdioWriter> {
    let (read, write) = rmcp::transport::io::stdio_pipes();
    Edge::new(read, write, shutdown_request)
}

/// One line of input, or the news that one was longer than [`MAX_LINE`] (its rest is
/// skipped).
#[derive(Debug)]
enum Line {
    Text(bytes::BytesMut),
    /// The id read from the start of the line, when it could be ([`recover_id_prefix`]).
    TooLong(Option<Value>),
}

/// Newline-delimited lines of at most [`MAX_LINE`] bytes. tokio-util's codecs end the stream
/// at a line that is too long; this one reports it and reads on from the next line.
#[derive(Debug, Default)]
struct Lines {
    /// Skipping the rest of a line that was too long.
    discarding: bool,
    /// How much of the buffer holds no newline.
    scanned: usize,
}

impl Decoder for Lines {
    type Item = Line;
    type Error = std::io::Error;

    fn decode(&mut self, buf: &mut bytes::BytesMut) -> Result<Option<Line>, std::io::Error> {
        loop {
            let newline = buf[self.scanned..]
                .iter()
                .position(|b| *b == b'\n')
                .map(|at| at + self.scanned);
            match (self.discarding, newline) {
                (false, Some(at)) if at > MAX_LINE => {
                    let id = recover_id_prefix(&buf[..at]);
                    let _ = buf.split_to(at + 1);
                    self.scanned = 0;
                    return Ok(Some(Line::TooLong(id)));
                }
                (false, Some(at)) => {
                    let mut line = buf.split_to(at + 1);
                    line.truncate(at);
                    self.scanned = 0;
                    return Ok(Some(Line::Text(line)));
                }
                (false, None) if buf.len() > MAX_LINE => {
                    let id = recover_id_prefix(buf);
                    buf.clear();
                    self.scanned = 0;
                    self.discarding = true;
                    return Ok(Some(Line::TooLong(id)));
                }
                (false, None) => {
                    self.scanned = buf.len();
                    return Ok(None);
                }
                (true, Some(at)) => {
                    let _ = buf.split_to(at + 1);
                    self.scanned = 0;
                    self.discarding = false;
                }
                (true, None) => {
                    buf.clear();
                    self.scanned = 0;
                    return Ok(None);
                }
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut bytes::BytesMut) -> Result<Option<Line>, std::io::Error> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        if buf.is_empty() || self.discarding {
            buf.clear();
            return Ok(None);
        }
        self.scanned = 0;
        Ok(Some(Line::Text(buf.split())))
    }
}

/// Where the session is, as far as the edge needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Nothing but requests is passed on: rmcp's handshake ends on anything else.
    BeforeInitialize,
    /// rmcp's service loop runs.
    Running,
}

/// The stdio transport: newline-delimited JSON-RPC, checked before rmcp sees it.
pub struct Edge<R, W> {
    lines: FramedRead<R, Lines>,
    writer: Arc<tokio::sync::Mutex<W>>,
    shutdown_request: bool,
    phase: Phase,
    /// Requests other than `ping` passed on before `initialize` (rmcp's stateless
    /// lifecycle starts with the first it answers with a result).
    early: HashSet<RequestId>,
    /// When the input ended (end of stdin, or `shutdown`): nothing more is read.
    ended: Option<tokio::time::Instant>,
    /// The `shutdown` request to answer when the transport closes.
    shutdown: Option<RequestId>,
    /// Tool calls handed to the service and not answered yet.
    in_flight: HashSet<RequestId>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin + Send + 'static> Edge<R, W> {
    pub fn new(read: R, write: W, shutdown_request: bool) -> Self {
        Self {
            lines: FramedRead::new(read, Lines::default()),
            writer: Arc::new(tokio::sync::Mutex::new(write)),
            shutdown_request,
            phase: Phase::BeforeInitialize,
            early: HashSet::new(),
            ended: None,
            shutdown: None,
            in_flight: HashSet::new(),
        }
    }

    /// Write one frame now (the edge's own answers).
    async fn write(&mut self, frame: &Value) {
        let mut line = frame.to_string().into_bytes();
        line.push(b'\n');
        let mut writer = self.writer.lock().await;
        if let Err(err) = async {
            writer.write_all(&line).await?;
            writer.flush().await
        }
        .await
        {
            tracing::warn!(%err, "could not write to stdout");
        }
    }

    async fn refuse(&mut self, refusal: Refusal) {
        tracing::debug!(code = refusal.code, message = %refusal.message, "refused at the edge");
        self.write(&refusal.frame()).await;
    }

    /// The end of the input, once the tool calls before it are answered. rmcp polls this
    /// anew after each message it handles, so it is re-checked after every answer sent.
    async fn end(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let ended = *self.ended.get_or_insert_with(tokio::time::Instant::now);
        if !self.in_flight.is_empty() {
            tokio::time::sleep_until(ended + DRAIN_LIMIT).await;
            tracing::warn!(
                unanswered = self.in_flight.len(),
                "input ended; stopped waiting for the tool calls still running"
            );
        }
        None
    }

    /// What to do with a message that decoded: pass it on (`Some`), or not (it was
    /// answered or dropped here).
    async fn admit(
        &mut self,
        message: RxJsonRpcMessage<RoleServer>,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        match &message {
            JsonRpcMessage::Request(request) => {
                let id = request.id.clone();
                match &request.request {
                    ClientRequest::InitializeRequest(_) => {
                        if self.phase == Phase::Running {
                            self.refuse(Refusal::new(
                                Some(id_value(&id)),
                                INVALID_REQUEST,
                                "the session is initialized already: a second initialize is refused, and the session goes on as it was",
                            ))
                            .await;
                            return None;
                        }
                        self.phase = Phase::Running;
                    }
                    ClientRequest::CallToolRequest(_) => {
                        self.in_flight.insert(id.clone());
                    }
                    ClientRequest::CustomRequest(custom)
                        if self.shutdown_request && custom.method == SHUTDOWN =>
                    {
                        tracing::info!("shutdown requested");
                        match self.phase {
                            Phase::Running => self.shutdown = Some(id),
                            // Before `initialize` nothing is in flight and nothing closes
                            // the transport: answer now.
                            Phase::BeforeInitialize => self.write_null(id).await,
                        }
                        self.ended = Some(tokio::time::Instant::now());
                        return None;
                    }
                    ClientRequest::PingRequest(_) => {}
                    _ => {
                        if self.phase == Phase::BeforeInitialize {
                            self.early.insert(id.clone());
                        }
                    }
                }
                Some(message)
            }
            // Before `initialize`, rmcp's handshake ends the process on anything but a
            // request: drop them.
            _ if self.phase == Phase::BeforeInitialize => {
                tracing::debug!("dropped a notification or response before initialize");
                None
            }
            // A call the client cancelled is not answered.
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.in_flight.remove(id);
                }
                Some(message)
            }
            _ => Some(message),
        }
    }

    async fn write_null(&mut self, id: RequestId) {
        self.write(&json!({"jsonrpc": "2.0", "id": id_value(&id), "result": null}))
            .await;
    }
}

fn id_value(id: &RequestId) -> Value {
    match id {
        NumberOrString::Number(n) => json!(n),
        NumberOrString::String(s) => json!(s.as_ref()),
    }
}

fn null_answer(id: RequestId) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::response(
        ServerResult::CustomResult(CustomResult(serde_json::Value::Null)),
        id,
    )
}

impl<R, W> Transport<RoleServer> for Edge<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Response(response) => {
                self.in_flight.remove(&response.id);
                // rmcp answered a request before `initialize` with a result: its stateless
                // lifecycle has started.
                if self.early.remove(&response.id) {
                    self.phase = Phase::Running;
                }
            }
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &error.id {
                    self.in_flight.remove(id);
                    self.early.remove(id);
                }
            }
            _ => {}
        }
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        let writer = self.writer.clone();
        async move {
            let line = line.map_err(std::io::Error::other)?;
            let mut writer = writer.lock().await;
            writer.write_all(&line).await?;
            writer.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.ended.is_some() {
                return self.end().await;
            }
            let line = match self.lines.next().await {
                None => return self.end().await,
                Some(Ok(Line::Text(line))) => line,
                Some(Ok(Line::TooLong(id))) => {
                    self.refuse(Refusal::new(
                        id,
                        INVALID_REQUEST,
                        format!(
                            "invalid request: a message longer than {} MiB",
                            MAX_LINE / 1024 / 1024
                        ),
                    ))
                    .await;
                    continue;
                }
                Some(Err(err)) => {
                    tracing::warn!(%err, "reading stdin failed");
                    return self.end().await;
                }
            };
            let mut line: &[u8] = &line;
            line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
            line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match decode(line) {
                Ok(message) => {
                    if let Some(message) = self.admit(message).await {
                        return Some(message);
                    }
                }
                Err(refusal) if refusal.quiet => {
                    tracing::debug!(message = %refusal.message, "dropped a notification that does not decode");
                }
                Err(refusal) => self.refuse(refusal).await,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(id) = self.shutdown.take() {
            let _ = self.send(null_answer(id)).await;
        }
        let mut writer = self.writer.lock().await;
        writer.flush().await?;
        writer.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use rmcp::model::CallToolResult;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    fn call(id: u64) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"slow","arguments":{{}}}}}}"#
        )
    }

    fn answer(id: u64) -> TxJsonRpcMessage<RoleServer> {
        ServerJsonRpcMessage::response(
            ServerResult::CallToolResult(CallToolResult::success(Vec::new())),
            RequestId::Number(id as i64),
        )
    }

    type Server = Edge<DuplexStream, DuplexStream>;

    /// An edge over in-memory pipes, the client's writing end and its reader of answers.
    fn pipe(shutdown_request: bool) -> (Server, DuplexStream, BufReader<DuplexStream>) {
        let (client_out, server_in) = tokio::io::duplex(1 << 24);
        let (server_out, client_in) = tokio::io::duplex(1 << 24);
        (
            Edge::new(server_in, server_out, shutdown_request),
            client_out,
            BufReader::new(client_in),
        )
    }

    async fn still_open(transport: &mut Server) -> bool {
        tokio::time::timeout(Duration::from_millis(200), transport.receive())
            .await
            .is_err()
    }

    /// The messages passed on until the edge waits for more input.
    async fn passed(transport: &mut Server) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(Some(message)) =
            tokio::time::timeout(Duration::from_millis(200), transport.receive()).await
        {
            out.push(serde_json::to_value(&message).unwrap()["method"].to_string());
        }
        out
    }

    /// The next frame the edge wrote to the client.
    async fn frame(answers: &mut BufReader<DuplexStream>) -> Value {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_secs(5), answers.read_line(&mut line))
            .await
            .expect("an answer")
            .unwrap();
        serde_json::from_str(&line).unwrap()
    }

    async fn nothing_more(answers: &mut BufReader<DuplexStream>) -> bool {
        let mut line = String::new();
        tokio::time::timeout(Duration::from_millis(200), answers.read_line(&mut line))
            .await
            .is_err()
    }

    #[tokio::test]
    async fn the_end_of_input_waits_for_the_calls_in_flight() {
        let (mut transport, mut client, _answers) = pipe(false);
        let lines = format!("{INITIALIZE}\n{}\n{}\n", call(2), call(3));
        client.write_all(lines.as_bytes()).await.unwrap();
        drop(client); // end of input
        for _ in 0..3 {
            assert!(transport.receive().await.is_some());
        }
        assert!(still_open(&mut transport).await, "two calls unanswered");
        let _ = transport.send(answer(2)).await;
        assert!(still_open(&mut transport).await, "one call unanswered");
        let _ = transport.send(answer(3)).await;
        assert!(
            transport.receive().await.is_none(),
            "all answered: the input ends"
        );
    }

    #[tokio::test]
    async fn shutdown_waits_too_and_a_cancelled_call_is_not_waited_for() {
        let (mut transport, mut client, mut answers) = pipe(true);
        let cancel =
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#;
        let lines = format!(
            "{INITIALIZE}\n{}\n{}\n{cancel}\n{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"shutdown\"}}\n{}\n",
            call(2),
            call(3),
            call(4)
        );
        client.write_all(lines.as_bytes()).await.unwrap();
        for _ in 0..4 {
            assert!(transport.receive().await.is_some());
        }
        // `shutdown`: call 2 is still running, call 3 was cancelled, call 4 is never read.
        assert!(still_open(&mut transport).await);
        let _ = transport.send(answer(2)).await;
        assert!(transport.receive().await.is_none());
        assert!(
            transport.receive().await.is_none(),
            "nothing after shutdown"
        );
        transport.close().await.unwrap();
        assert_eq!(frame(&mut answers).await["id"], 2);
        assert_eq!(
            frame(&mut answers).await,
            json!({"jsonrpc": "2.0", "id": 9, "result": null})
        );
    }

    #[tokio::test]
    async fn hostile_lines_get_one_answer_each_with_their_id_when_it_can_be_read() {
        let (mut transport, mut client, mut answers) = pipe(false);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"a":{}{}}},"id":10}}"#,
            "[".repeat(300),
            "]".repeat(300)
        );
        let mut bad_utf8 = br#"{"jsonrpc":"2.0","id":11,"method":"ping","params":{"x":"a"#.to_vec();
        bad_utf8.extend_from_slice(b"\xff\xfe\"}}");
        let long_method = format!(
            r#"{{"jsonrpc":"2.0","id":14,"method":"{}"}}"#,
            "m".repeat(1_000_000)
        );
        let huge = format!(
            r#"{{"jsonrpc":"2.0","id":15,"method":"{}"}}"#,
            "m".repeat(MAX_LINE + 10)
        );
        // A line, and the id and code of its answer (none: no answer).
        type Case = (Vec<u8>, Option<(Value, i64)>);
        let cases: Vec<Case> = vec![
            // Before initialize: a notification and a stray response are dropped.
            (
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec(),
                None,
            ),
            (br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(), None),
            (b"not json".to_vec(), Some((Value::Null, -32700))),
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":"\ud800"}}"#.to_vec(),
                Some((json!(7), -32700)),
            ),
            (
                br#"{"jsonrpc":"2.0","id":"n","method":"ping","params":{"x":NaN}}"#.to_vec(),
                Some((json!("n"), -32700)),
            ),
            (
                br#"{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":1e999}}"#.to_vec(),
                Some((json!(9), -32700)),
            ),
            (deep.into_bytes(), Some((json!(10), -32700))),
            (bad_utf8, Some((json!(11), -32700))),
            (
                br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":"x"}"#.to_vec(),
                Some((json!(12), -32600)),
            ),
            (
                br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_vec(),
                Some((Value::Null, -32600)),
            ),
            (
                br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
                Some((Value::Null, -32600)),
            ),
            (
                br#"{"jsonrpc":"1.0","id":13,"method":"ping"}"#.to_vec(),
                Some((json!(13), -32600)),
            ),
            (long_method.into_bytes(), Some((json!(14), -32601))),
            (huge.into_bytes(), Some((json!(15), -32600))),
            // A notification that does not decode gets no answer.
            (
                br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}"#.to_vec(),
                None,
            ),
        ];
        for (line, expected) in cases {
            let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).to_string();
            client.write_all(&line).await.unwrap();
            client.write_all(b"\n").await.unwrap();
            assert!(passed(&mut transport).await.is_empty(), "{shown}");
            match expected {
                None => assert!(nothing_more(&mut answers).await, "{shown}"),
                Some((id, code)) => {
                    let answer = frame(&mut answers).await;
                    assert_eq!(answer["id"], id, "{shown}: {answer}");
                    assert_eq!(answer["error"]["code"], code, "{shown}: {answer}");
                    assert!(answer.to_string().len() < 1_000, "{shown}: excerpted");
                    assert!(nothing_more(&mut answers).await, "one answer: {shown}");
                }
            }
        }
        // The session goes on: initialize passes, a second one is refused, ping passes.
        client
            .write_all(format!("{INITIALIZE}\n").as_bytes())
            .await
            .unwrap();
        assert_eq!(passed(&mut transport).await, ["\"initialize\""]);
        let second = INITIALIZE.replace("\"id\":1", "\"id\":2");
        client
            .write_all(
                format!("{second}\n{{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}}\n")
                    .as_bytes(),
            )
            .await
            .unwrap();
        assert_eq!(passed(&mut transport).await, ["\"ping\""]);
        let refused = frame(&mut answers).await;
        assert_eq!(refused["id"], 2);
        assert_eq!(refused["error"]["code"], -32600);
    }
}
