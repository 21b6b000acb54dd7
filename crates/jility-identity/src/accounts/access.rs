//! Whose access to the web board changed, told to every server process: a session ended, a
//! person left a workspace or their role changed. A change of membership publishes it in its
//! own transaction ([`notify_access_changed`]); the web board (`jility-cloud`) listens, and
//! ends the live streams of the pages the change concerns.

use mcp_common_core::ToolError;

/// The operation of the events that tell live streams a person's access changed.
pub const ACCESS_CHANGED: &str = "access_changed";

/// Whose access changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A session ended.
    Session(i64),
    /// A person left a workspace, or their sessions ended.
    User(i64),
}

impl Access {
    /// The event's `actor`, naming the target (no secret).
    pub fn actor(self) -> String {
        match self {
            Access::Session(id) => format!("session:{id}"),
            Access::User(id) => format!("user:{id}"),
        }
    }

    /// The event that tells the live streams of the target to check again.
    pub fn change(self) -> jility_pg::events::Change {
        jility_pg::events::Change {
            workspace_id: None,
            operation: ACCESS_CHANGED.to_string(),
            ..jility_pg::events::Change::revocation(0, 0, &self.actor())
        }
    }
}

/// Publish that `target`'s access changed on `client` (a transaction: delivered when it
/// commits), so that the change of a membership or role — by a person on the settings page
/// or by the operator's CLI — reaches every server process's live streams with it.
pub fn notify_access_changed(
    client: &mut impl postgres::GenericClient,
    target: Access,
) -> Result<(), ToolError> {
    let payload = serde_json::to_string(&target.change())
        .map_err(|e| ToolError::internal(format!("cannot encode an event: {e}")))?;
    client
        .execute(
            "SELECT pg_notify($1, $2)",
            &[&jility_pg::events::CHANNEL, &payload],
        )
        .map_err(|e| ToolError::from(jility_pg::store::db(e)))?;
    Ok(())
}
