//! Passwords: checked for length, hashed with Argon2id (the `argon2` crate's default
//! parameters, a 16-byte salt from the OS CSPRNG, stored as a PHC string) and verified in
//! constant time. Both hashing and verifying take tens of milliseconds of CPU on purpose:
//! callers run them on blocking threads.

use std::sync::OnceLock;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use mcp_common_core::ToolError;

use jility_core::errors;

/// Shortest password accepted, in characters.
pub const MIN_PASSWORD_CHARS: usize = 10;
/// Longest password accepted, in bytes (hashing a megabyte would be a cheap way to burn a
/// server's CPU).
pub const MAX_PASSWORD_BYTES: usize = 1024;

/// `password` if it may be a password, else why not (never quoting it).
pub(super) fn check_password(password: &str) -> Result<(), ToolError> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!("A password needs at least {MIN_PASSWORD_CHARS} characters"),
        )
        .with_hint("Choose a longer password: a few unrelated words make a strong one."));
    }
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(ToolError::new(
            errors::INVALID_INPUT,
            format!("A password may have at most {MAX_PASSWORD_BYTES} bytes"),
        )
        .with_hint("Choose a shorter password."));
    }
    Ok(())
}

/// The PHC string of `password` (checked first) with a fresh salt.
pub(super) fn hash_password(password: &str) -> Result<String, ToolError> {
    check_password(password)?;
    hash_unchecked(password)
}

fn hash_unchecked(password: &str) -> Result<String, ToolError> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt)
        .map_err(|e| ToolError::internal(format!("The system's random generator failed: {e}")))?;
    let salt = SaltString::encode_b64(&salt)
        .map_err(|e| ToolError::internal(format!("Cannot encode a salt: {e}")))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|e| ToolError::internal(format!("Cannot hash a password: {e}")))
}

/// Whether `password` matches the PHC string `stored`; a damaged string matches nothing.
pub(super) fn verify_password(password: &str, stored: &str) -> bool {
    if password.len() > MAX_PASSWORD_BYTES {
        // Not hashed, but as slowly as a verification, so that the answer takes as long.
        let _ = verify_password("", dummy_hash());
        return false;
    }
    match PasswordHash::new(stored) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(err) => {
            tracing::error!(error = %err, "a stored password hash is damaged");
            false
        }
    }
}

/// A hash of a random password with the same parameters, to verify against when there is
/// no user (or no password), so that an unknown email costs a sign-in as much time as a
/// wrong password.
pub(super) fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| {
        let random = super::handle::PlainSecret::mint()
            .map(|s| s.into_string())
            .unwrap_or_else(|_| "an unguessable fallback".to_string());
        // Hashing with valid parameters does not fail; should it, this hash (of a password
        // nobody knows, same parameters) stands in.
        hash_unchecked(&random).unwrap_or_else(|_| {
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$GpZ3sK/oH9p7VIiV56G/64Zo/8GaUw434IimaPqxwCo".to_string()
        })
    })
}
