//! Signatures as the Standard Webhooks specification writes them: a secret `whsec_` +
//! base64 of its key bytes; `webhook-signature` is `v1,` + base64 of HMAC-SHA256 over
//! `{webhook-id}.{webhook-timestamp}.{body}`, several separated by spaces (while a rotated
//! secret is still honoured, one for each).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use mcp_common_core::ToolError;
use sha2::Sha256;

/// The prefix of a secret.
pub const SECRET_PREFIX: &str = "whsec_";

/// Bytes of a new secret's key (the specification asks for 24 to 64).
const KEY_BYTES: usize = 32;

/// A new secret, from the OS's randomness.
pub fn new_secret() -> Result<String, ToolError> {
    let mut key = [0u8; KEY_BYTES];
    getrandom::fill(&mut key).map_err(|e| {
        ToolError::internal(format!("Cannot draw a webhook secret from the OS: {e}"))
    })?;
    Ok(format!("{SECRET_PREFIX}{}", STANDARD.encode(key)))
}

/// A new message id (`msg_` + 32 hex digits), the same on every attempt of a delivery.
pub fn new_message_id() -> Result<String, ToolError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| ToolError::internal(format!("Cannot draw a message id from the OS: {e}")))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("msg_{hex}"))
}

/// The key bytes of `secret` (`whsec_` + base64); `None` when it is not one.
fn key_of(secret: &str) -> Option<Vec<u8>> {
    STANDARD
        .decode(secret.strip_prefix(SECRET_PREFIX)?)
        .ok()
        .filter(|key| !key.is_empty())
}

/// `v1,<base64>`: the signature of one message with one secret.
pub fn sign(secret: &str, message_id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let key = key_of(secret)?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(message_id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    Some(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// The `webhook-signature` header: a signature for each secret, space-separated.
pub fn signature_header(secrets: &[&str], message_id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .filter_map(|secret| sign(secret, message_id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification's reference libraries.
    #[test]
    fn signs_as_the_specification_s_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let signature = sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(
            signature.as_deref(),
            Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        );
    }

    #[test]
    fn new_secrets_are_distinct_and_usable() {
        let a = new_secret().unwrap();
        let b = new_secret().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(SECRET_PREFIX));
        assert!(sign(&a, "msg_1", 1, b"{}").is_some());
        assert!(sign("nope", "msg_1", 1, b"{}").is_none());
        let header = signature_header(&[&a, &b], "msg_1", 1, b"{}");
        assert_eq!(header.split(' ').count(), 2);
    }
}
