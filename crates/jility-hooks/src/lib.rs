//! jility's webhooks (cloud mode): a workspace's subscriptions (`subscriptions`), where
//! they may send (`target`, over the `fence` that also guards the OAuth client metadata
//! fetch), the event types (`kinds`), Standard Webhooks signatures (`signing`), the
//! fan-out of the outbox a trigger fills in each change's transaction (`outbox`), the
//! deliveries (`deliver`), the loop of each server process (`dispatcher`) and the upkeep
//! of its tables (`housekeeping`).
//!
//! It knows the store's database, the audit log and the domain's reads; never the API, the
//! pages or MCP: `jility-api` serves its REST routes.

pub mod deliver;
pub mod dispatcher;
pub mod fence;
pub mod housekeeping;
pub mod kinds;
pub mod measure;
pub mod openapi;
pub mod outbox;
pub mod signing;
pub mod subscriptions;
pub mod target;

pub use subscriptions::{Change, Delivery, NewWebhook, Subscriptions, Webhook};
