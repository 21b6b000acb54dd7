//! Where the bridge's credentials live, how they are written, and how long it waits for
//! the API: shared by the API client ([`crate::client`]) and the sign-in
//! ([`crate::signin`]).

use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_common_core::ToolError;

use jility_core::errors;

/// Where the API is, e.g. `http://127.0.0.1:3900` (`/api/v1` is added).
pub const URL_VAR: &str = "JILITY_API_URL";

/// How long connecting may take before the API counts as unreachable.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a whole request may take.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The file `jility auth login` writes: `$XDG_CONFIG_HOME/jility/token`, else
/// `$HOME/.config/jility/token`.
pub fn token_file() -> Result<PathBuf, ToolError> {
    let var = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let config = var("XDG_CONFIG_HOME")
        .or_else(|| var("HOME").map(|home| home.join(".config")))
        .ok_or_else(|| {
            ToolError::new(
                errors::INVALID_INPUT,
                "Cannot tell where the user's configuration directory is",
            )
            .with_hint("Set HOME (or XDG_CONFIG_HOME) to an absolute path.")
        })?;
    Ok(config.join("jility").join("token"))
}

/// Write `bytes` to `path` for this user alone: its directory made with mode 0700, the file
/// written with mode 0600 to a temporary name, synced, then renamed over the old one
/// (atomic: a reader sees the old file or the new one, whole).
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    let dir = path
        .parent()
        .ok_or_else(|| ToolError::internal("The file has no directory"))?;
    let io = |what: &str, at: &Path, e: std::io::Error| {
        ToolError::new(
            errors::INVALID_INPUT,
            format!("Cannot {what} {}: {e}", at.display()),
        )
        .with_hint("Check the permissions of your configuration directory.")
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| io("create", dir, e))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| io("restrict", dir, e))?;
    let mut suffix = [0u8; 8];
    getrandom::fill(&mut suffix)
        .map_err(|e| ToolError::internal(format!("The system's random generator failed: {e}")))?;
    let temp = dir.join(format!(
        ".write.{}.{}",
        std::process::id(),
        u64::from_le_bytes(suffix)
    ));
    let written = (|| -> std::io::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)?;
        Ok(())
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(io("write", path, e));
    }
    Ok(())
}

/// [`errors::NETWORK_ERROR`] for the API at `root` that could not be reached.
pub(crate) fn network_error(root: &str) -> ToolError {
    ToolError::new(
        errors::NETWORK_ERROR,
        format!("Cannot reach the jility API at {root}"),
    )
    .with_hint(format!(
        "Check that `jility serve` runs there and that {URL_VAR} is right; then retry."
    ))
}
