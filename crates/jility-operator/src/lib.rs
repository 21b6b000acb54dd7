//! `jility-operator`: what the operator of `jility serve` sets and sees, apart from the API
//! itself (`jility-api` mounts it):
//!
//! - [`tls`]: TLS termination (`--tls-cert`, `--tls-key`), the acceptor and the listener.
//! - [`probes`]: `/healthz` and `/readyz` for load balancers and Kubernetes.
//! - [`metrics`]: `/metrics` in Prometheus' text format, and what the server counts.
//! - [`traces`]: OpenTelemetry spans over OTLP.
//!
//! No tenant's data: no label, probe answer or span carries a token, an email, a
//! workspace's name or a path's values.

pub mod metrics;
pub mod probes;
pub mod tls;
pub mod traces;
