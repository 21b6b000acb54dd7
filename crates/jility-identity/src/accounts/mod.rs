//! People in cloud mode: user accounts, their roles in workspaces, web sessions, invite
//! links and password-reset links — the backend of the web board and of `jility admin`'s
//! people commands. No HTTP here: the pages call [`Accounts`] (blocking, on blocking
//! threads, like [`crate::auth::Tokens`]).
//!
//! - [`users`]: accounts by email (lower-cased, unique), with a display name.
//! - [`passwords`]: Argon2id (PHC strings, OS-random salts), 10 characters to 1 KiB.
//! - [`sessions`]: sign-in (one error for an unknown email and a wrong password, after
//!   the same work) and the session of a cookie's secret, 30 days, with its CSRF token.
//! - [`limits`]: failed sign-ins per email and per client address, counted before any
//!   password is checked.
//! - [`roles`] and [`members`]: owner, admin, member, viewer; what each may do and the
//!   API scopes it acts with; the rules of changing them (a workspace keeps an owner).
//! - [`invites`], [`resets`]: single-use links (7 days, 24 hours).
//! - [`access`]: whose access changed (a session, a person), told to every server
//!   process so that the web board ends the live streams it concerns.
//!
//! Secrets (sessions, invites, resets) are 43 random letters and digits from the OS
//! CSPRNG ([`PlainSecret`], whose `Debug` shows nothing), kept only as BLAKE3 hashes and
//! compared in constant time; none is ever logged or put in an error.

pub mod access;
mod handle;
pub mod invites;
pub mod limits;
pub mod members;
pub mod passwords;
pub mod resets;
pub mod roles;
pub mod sessions;
pub mod users;

pub use access::{ACCESS_CHANGED, Access, notify_access_changed};
pub use handle::{Accounts, Actor, PlainSecret, SECRET_LEN};
pub use handle::{now, time_text};
pub(crate) use handle::{same_hash, secret_hash, store, well_formed};
pub use invites::{AcceptAs, INVITE_DAYS, Invite, InviteInfo};
pub use limits::{ACCOUNT_FAILURES, ADDRESS_FAILURES, WINDOW_SECS};
pub use members::{Member, Membership};
pub use passwords::{MAX_PASSWORD_BYTES, MIN_PASSWORD_CHARS};
pub use resets::{RESET_HOURS, ResetFor};
pub use roles::Role;
pub use sessions::{NewSession, SESSION_DAYS, Session, session_of_token_id};
pub use users::{User, check_email, check_user_name};
