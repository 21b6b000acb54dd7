//! `jility admin`'s people commands, on a PostgreSQL database as its operator: users,
//! members, invite links and password-reset links (no mail server: the links are printed
//! for the operator to hand on). Secrets appear in the printed links only.

use std::io::{BufRead, Write};

use clap::Args;
use mcp_common::ToolError;
use serde::Serialize;

use jility_cloud::accounts::{Accounts, Actor, PlainSecret, ResetFor, Role, User};
use jility_cloud::store::{PgDatabase, Workspace};
use jility_core::errors;

/// Where the cloud database is.
#[derive(Debug, Args)]
pub struct DatabaseArg {
    /// The PostgreSQL database (postgres://user@host:port/db); migrated if need be.
    #[arg(long, env = "DATABASE_URL", value_name = "URL", hide_env_values = true)]
    pub database_url: Option<String>,
}

/// Where people open the web board, to print whole links.
#[derive(Debug, Args)]
pub struct PublicUrlArg {
    /// The address people open the web board at (e.g. https://jility.example.com), to
    /// print whole links; without it (or JILITY_PUBLIC_URL) only the link's path is printed.
    #[arg(long = "url", env = "JILITY_PUBLIC_URL", value_name = "BASE")]
    pub url: Option<String>,
}

#[derive(Debug, Args)]
pub struct CreateUserArgs {
    /// The person's email: how they sign in (unique, in any case).
    #[arg(long)]
    pub email: String,
    /// The name others see, e.g. "Ada Lovelace" (1 to 100 characters).
    #[arg(long)]
    pub name: String,
    /// Read their password (at least 10 characters) from the first line of stdin;
    /// without it a one-time set-password link is printed for them instead.
    #[arg(long)]
    pub password_stdin: bool,
    #[command(flatten)]
    pub database: DatabaseArg,
    #[command(flatten)]
    pub public: PublicUrlArg,
}

#[derive(Debug, Args)]
pub struct AddMemberArgs {
    /// The workspace's name.
    #[arg(long)]
    pub workspace: String,
    /// The email of an existing user (`jility admin create-user` makes one).
    #[arg(long)]
    pub email: String,
    /// owner (everything), admin (members, invites, tokens; not owners), member (reads,
    /// writes, comments on tickets) or viewer (reads). A member already there gets this role.
    #[arg(long)]
    pub role: String,
    #[command(flatten)]
    pub database: DatabaseArg,
}

#[derive(Debug, Args)]
pub struct ResetPasswordArgs {
    /// The email of the user whose password the link sets.
    #[arg(long)]
    pub email: String,
    #[command(flatten)]
    pub database: DatabaseArg,
    #[command(flatten)]
    pub public: PublicUrlArg,
}

#[derive(Debug, Args)]
pub struct InviteArgs {
    /// The workspace's name.
    #[arg(long)]
    pub workspace: String,
    /// The role the invited person gets: owner, admin, member or viewer.
    #[arg(long)]
    pub role: String,
    #[command(flatten)]
    pub database: DatabaseArg,
    #[command(flatten)]
    pub public: PublicUrlArg,
}

/// The database of `--database-url` / `DATABASE_URL`, connected and migrated.
pub fn connect(database: &DatabaseArg) -> Result<PgDatabase, ToolError> {
    let url = database_url(database)?;
    PgDatabase::connect(url).map_err(|err| jility_cloud::reach::at_start(url, err))
}

/// The URL of `--database-url` / `DATABASE_URL`.
pub fn database_url(database: &DatabaseArg) -> Result<&str, ToolError> {
    database
        .database_url
        .as_deref()
        .filter(|url| !url.trim().is_empty())
        .ok_or_else(|| {
            ToolError::new(errors::INVALID_INPUT, "No database URL given")
                .with_hint("Pass --database-url postgres://user@host:5432/db or set DATABASE_URL.")
        })
}

/// A link to hand on: whole with a base address, else its path and what to do with it.
#[derive(Debug, Serialize)]
pub struct Link {
    /// The whole link, or only its path when no base address was given.
    pub link: String,
    /// Whether `link` is a path that needs the server's address in front.
    pub path_only: bool,
}

impl Link {
    fn new(public: &PublicUrlArg, kind: &str, secret: &PlainSecret) -> Self {
        let path = format!("/{kind}/{}", secret.expose());
        match public
            .url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty())
        {
            Some(base) => Link {
                link: format!("{}{path}", base.trim_end_matches('/')),
                path_only: false,
            },
            None => Link {
                link: path,
                path_only: true,
            },
        }
    }

    /// The link indented, with a note when it is a path only.
    fn text(&self) -> String {
        let mut out = format!("    {}\n", self.link);
        if self.path_only {
            out.push_str("\nThis is the link's path: put the web board's address in front (e.g. https://jility.example.com/…), or pass --url (or set JILITY_PUBLIC_URL) to print whole links.\n");
        }
        out
    }
}

fn print(out: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{}", out.trim_end());
}

fn to_json(value: &impl Serialize) -> Result<String, ToolError> {
    serde_json::to_string(value).map_err(|e| ToolError::internal(format!("Cannot print JSON: {e}")))
}

fn workspace_named(db: &PgDatabase, name: &str) -> Result<Workspace, ToolError> {
    db.workspace_by_name(name)?.ok_or_else(|| {
        ToolError::not_found(format!(
            "There is no workspace named '{}'",
            mcp_common::text::clip(name.trim(), 60)
        ))
        .with_hint("Check the name (`jility admin create-workspace NAME` makes one).")
    })
}

fn user_with_email(accounts: &Accounts, email: &str) -> Result<User, ToolError> {
    accounts.user_by_email(email)?.ok_or_else(|| {
        ToolError::not_found(format!(
            "There is no user with the email {}",
            mcp_common::text::clip(email.trim(), 60)
        ))
        .with_hint("Create them first: `jility admin create-user --email … --name …`.")
    })
}

fn set_password_link(
    accounts: &Accounts,
    user: &User,
    public: &PublicUrlArg,
) -> Result<Link, ToolError> {
    let secret = accounts.create_reset(ResetFor::User(user.id), Actor::Operator)?;
    Ok(Link::new(public, "reset", &secret))
}

/// The owner `create-workspace --owner` attached.
#[derive(Debug, Serialize)]
pub struct Owner {
    pub user: User,
    /// Whether the account was made now (it then has no password: see `set_password`).
    pub created: bool,
    pub set_password: Option<Link>,
}

/// Make `email` (a user made now, named `name` or after the email, when there is none)
/// the owner of `workspace_id`; a user made now gets a set-password link.
pub fn attach_owner(
    db: &PgDatabase,
    workspace_id: i64,
    email: &str,
    name: Option<&str>,
    public: &PublicUrlArg,
) -> Result<Owner, ToolError> {
    let accounts = Accounts::new(db);
    let (user, created) = match accounts.user_by_email(email)? {
        Some(user) => (user, false),
        None => {
            let email = jility_cloud::accounts::check_email(email)?;
            let name = name
                .map(str::to_string)
                .unwrap_or_else(|| email.split('@').next().unwrap_or(&email).to_string());
            (accounts.create_user(&email, &name, None)?, true)
        }
    };
    accounts.add_member(workspace_id, user.id, Role::Owner, Actor::Operator)?;
    let set_password = if user.has_password {
        None
    } else {
        Some(set_password_link(&accounts, &user, public)?)
    };
    Ok(Owner {
        user,
        created,
        set_password,
    })
}

/// The lines `create-workspace` prints about its owner.
pub fn owner_text(owner: &Owner) -> String {
    let mut out = format!(
        "Its owner: {} <{}>{}.\n",
        owner.user.name,
        owner.user.email,
        if owner.created {
            " (a new account)"
        } else {
            ""
        }
    );
    if let Some(link) = &owner.set_password {
        out.push_str(&format!(
            "\nTheir one-time link to set a password (valid {} h):\n\n{}",
            jility_cloud::accounts::RESET_HOURS,
            link.text()
        ));
    }
    out
}

/// Check `--owner` before anything is made.
pub fn check_owner(email: Option<&str>, name: Option<&str>) -> Result<(), ToolError> {
    if let Some(email) = email {
        jility_cloud::accounts::check_email(email)?;
    }
    if let Some(name) = name {
        jility_cloud::accounts::check_user_name(name)?;
    }
    Ok(())
}

fn read_password() -> Result<String, ToolError> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| ToolError::internal(format!("Cannot read stdin: {e}")))?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// `jility admin create-user`.
pub fn create_user(json: bool, args: CreateUserArgs) -> Result<(), ToolError> {
    let password = if args.password_stdin {
        let password = read_password()?;
        if password.is_empty() {
            return Err(ToolError::new(errors::INVALID_INPUT, "No password on stdin")
                .with_hint("Pipe the password's line in (`… --password-stdin < file`), or leave out --password-stdin to print a set-password link."));
        }
        Some(password)
    } else {
        None
    };
    let db = connect(&args.database)?;
    let accounts = Accounts::new(&db);
    let user = accounts.create_user(&args.email, &args.name, password.as_deref())?;
    let link = match password {
        Some(_) => None,
        None => Some(set_password_link(&accounts, &user, &args.public)?),
    };
    if json {
        print(&to_json(
            &serde_json::json!({"user": user, "set_password": link}),
        )?);
        return Ok(());
    }
    let mut out = format!(
        "✅ Created user {} <{}> (id {})\n",
        user.name, user.email, user.id
    );
    match &link {
        Some(link) => out.push_str(&format!(
            "\nTheir one-time link to set a password (valid {} h; they cannot sign in before):\n\n{}\nHand it to them privately. Add them to a workspace with `jility admin add-member`.",
            jility_cloud::accounts::RESET_HOURS,
            link.text()
        )),
        None => out.push_str(
            "\nThey can sign in with the password given. Add them to a workspace with `jility admin add-member`.",
        ),
    }
    print(&out);
    Ok(())
}

/// `jility admin add-member`.
pub fn add_member(json: bool, args: AddMemberArgs) -> Result<(), ToolError> {
    let role: Role = args.role.parse()?;
    let db = connect(&args.database)?;
    let workspace = workspace_named(&db, &args.workspace)?;
    let accounts = Accounts::new(&db);
    let user = user_with_email(&accounts, &args.email)?;
    let before = accounts.membership(user.id, workspace.id)?;
    let member = match before {
        None => accounts.add_member(workspace.id, user.id, role, Actor::Operator)?,
        Some(_) => accounts.set_role(workspace.id, user.id, role, Actor::Operator)?,
    };
    if json {
        print(&to_json(&serde_json::json!({
            "workspace": workspace.name,
            "member": member,
            "previous_role": before,
        }))?);
        return Ok(());
    }
    print(&match before {
        None => format!(
            "✅ {} <{}> is now {} of {}",
            member.user.name,
            member.user.email,
            article(member.role),
            workspace.name
        ),
        Some(previous) => format!(
            "✅ {} <{}> is now {} of {} (was {})",
            member.user.name,
            member.user.email,
            article(member.role),
            workspace.name,
            previous
        ),
    });
    Ok(())
}

fn article(role: Role) -> String {
    match role {
        Role::Owner | Role::Admin => format!("an {role}"),
        Role::Member | Role::Viewer => format!("a {role}"),
    }
}

/// `jility admin reset-password`.
pub fn reset_password(json: bool, args: ResetPasswordArgs) -> Result<(), ToolError> {
    let db = connect(&args.database)?;
    let accounts = Accounts::new(&db);
    let secret = accounts.create_reset(ResetFor::Email(&args.email), Actor::Operator)?;
    let link = Link::new(&args.public, "reset", &secret);
    if json {
        print(&to_json(&serde_json::json!({
            "email": args.email.trim().to_lowercase(),
            "reset": link,
            "valid_hours": jility_cloud::accounts::RESET_HOURS,
        }))?);
        return Ok(());
    }
    print(&format!(
        "✅ A password-reset link for {} (one use, valid {} h; older links no longer work):\n\n{}\nHand it to them privately. Setting the password ends their sessions.",
        args.email.trim().to_lowercase(),
        jility_cloud::accounts::RESET_HOURS,
        link.text()
    ));
    Ok(())
}

/// `jility admin invite`.
pub fn invite(json: bool, args: InviteArgs) -> Result<(), ToolError> {
    let role: Role = args.role.parse()?;
    let db = connect(&args.database)?;
    let workspace = workspace_named(&db, &args.workspace)?;
    let accounts = Accounts::new(&db);
    let (secret, invite) = accounts.create_invite(workspace.id, role, Actor::Operator)?;
    let link = Link::new(&args.public, "invite", &secret);
    if json {
        print(&to_json(&serde_json::json!({
            "workspace": workspace.name,
            "invite": invite,
            "link": link,
        }))?);
        return Ok(());
    }
    print(&format!(
        "✅ An invite to {} as {} (one use, until {}):\n\n{}\nHand it to the person you invite: they sign up (or sign in) there and join the workspace.",
        workspace.name,
        article(role),
        invite.expires_at,
        link.text()
    ));
    Ok(())
}
