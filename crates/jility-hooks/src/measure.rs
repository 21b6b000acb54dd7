//! What webhooks tell the operator, through the `metrics` facade (recorded once a server
//! installs an exporter, `jility-operator`'s): attempts by outcome and their durations,
//! subscriptions disabled, and the backlog — deliveries waiting and changes not yet fanned
//! out, in the whole database, read every few seconds by each process's loop.

use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};

pub const ATTEMPTS: &str = "jility_webhook_attempts_total";
pub const ATTEMPT_SECONDS: &str = "jility_webhook_attempt_duration_seconds";
pub const DISABLED: &str = "jility_webhook_subscriptions_disabled_total";
pub const BACKLOG: &str = "jility_webhook_backlog";

/// Describe the series (once the exporter is installed).
pub fn describe() {
    describe_counter!(
        ATTEMPTS,
        "Delivery attempts by outcome: delivered, retry (tried again later) or failed (not tried again)."
    );
    describe_histogram!(
        ATTEMPT_SECONDS,
        Unit::Seconds,
        "How long one delivery attempt took, connection included."
    );
    describe_counter!(
        DISABLED,
        "Subscriptions disabled after 24 hours of failed deliveries."
    );
    describe_gauge!(
        BACKLOG,
        "Webhook work waiting in the database: pending deliveries, and changes of the outbox not yet fanned out."
    );
}

/// One attempt done.
pub fn attempt(outcome: &'static str, millis: i32) {
    metrics::counter!(ATTEMPTS, "outcome" => outcome).increment(1);
    metrics::histogram!(ATTEMPT_SECONDS).record(f64::from(millis) / 1000.0);
}

/// A subscription disabled.
pub fn disabled() {
    metrics::counter!(DISABLED).increment(1);
}

/// The backlog read now.
pub fn backlog(pending: i64, outbox: i64) {
    metrics::gauge!(BACKLOG, "kind" => "pending").set(pending as f64);
    metrics::gauge!(BACKLOG, "kind" => "outbox").set(outbox as f64);
}
