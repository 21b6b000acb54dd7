//! OpenTelemetry traces over OTLP, when the operator asks for them with
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`): a span per HTTP
//! request (named by its route's template) and per MCP tool call, continuing the trace of a
//! W3C `traceparent` sent as an HTTP header or in the MCP request's `_meta`. The exporter is
//! configured by OpenTelemetry's own variables (`OTEL_EXPORTER_OTLP_PROTOCOL`: `http/protobuf`
//! or `http/json`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_SCHEDULE_DELAY`, …). Spans carry
//! the method, route template, status and tool name: never a path's values, a token or text.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::propagation::TextMapPropagator as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::Layer as _;

/// Whether spans are exported (then requests and tool calls open theirs).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Flushes the spans not sent yet when dropped (at the end of `jility serve`).
pub struct Traces(SdkTracerProvider);

impl Drop for Traces {
    fn drop(&mut self) {
        if let Err(err) = self.0.shutdown() {
            tracing::debug!(error = %err, "flushing the last spans failed");
        }
    }
}

/// Whether the environment asks for traces.
pub fn requested() -> bool {
    [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]
    .iter()
    .any(|name| std::env::var(name).is_ok_and(|v| !v.trim().is_empty()))
        && !std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// The layer exporting jility's spans, and its guard; `Err` says why it cannot be made (a
/// protocol this build does not speak, an endpoint that does not parse).
pub fn layer() -> Result<(mcp_common::serve::ExtraLayer, Traces), String> {
    // The exporter's HTTP client speaks TLS to an https endpoint with the process's provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
        .map_err(|err| format!("cannot export traces over OTLP: {err}"))?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name("jility")
        .with_attribute(opentelemetry::KeyValue::new(
            "service.version",
            env!("CARGO_PKG_VERSION"),
        ))
        .build();
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("jility");
    // Only the spans opened here (requests, tool calls): not every library's.
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(tracing_subscriber::filter::filter_fn(|meta| {
            meta.is_span() && meta.target() == module_path!()
        }));
    ENABLED.store(true, Ordering::Relaxed);
    Ok((Box::new(layer), Traces(provider)))
}

/// The trace context a W3C `traceparent` (and `tracestate`) carries.
fn context(traceparent: Option<&str>, tracestate: Option<&str>) -> Option<opentelemetry::Context> {
    let traceparent = traceparent?;
    let mut carrier = HashMap::new();
    carrier.insert("traceparent".to_string(), traceparent.to_string());
    if let Some(state) = tracestate {
        carrier.insert("tracestate".to_string(), state.to_string());
    }
    Some(TraceContextPropagator::new().extract(&carrier))
}

/// The span of an HTTP request to `route` (its template), continuing the trace of its
/// `traceparent` header; `None` when traces are off.
pub fn request(method: &str, route: &str, headers: &axum::http::HeaderMap) -> Option<Span> {
    if !ENABLED.load(Ordering::Relaxed) {
        return None;
    }
    let span = tracing::info_span!(
        "request",
        otel.name = %format!("{method} {route}"),
        otel.kind = "server",
        http.request.method = %method,
        http.route = %route,
        http.response.status_code = tracing::field::Empty,
    );
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(parent) = context(header("traceparent"), header("tracestate")) {
        let _ = span.set_parent(parent);
    }
    Some(span)
}

/// Record the status a request was answered with on its span.
pub fn answered(span: &Span, status: u16) {
    span.record("http.response.status_code", i64::from(status));
}

/// The span of an MCP tool call, continuing the trace of the `traceparent` in the request's
/// `_meta`; `None` when traces are off.
pub fn tool_call(tool: &'static str, traceparent: Option<&str>) -> Option<Span> {
    if !ENABLED.load(Ordering::Relaxed) {
        return None;
    }
    let span = tracing::info_span!(
        "tool call",
        otel.name = %format!("tools/call {tool}"),
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.tool.name = tool,
        error.type = tracing::field::Empty,
    );
    if let Some(parent) = context(traceparent, None) {
        let _ = span.set_parent(parent);
    }
    Some(span)
}
