//! OAuth clients: dynamic client registration (RFC 7591), answered at `POST /oauth/register`
//! by `jility-cloud`, and the clients whose `client_id` is a metadata document's URL, kept
//! here once fetched (by `jility-cloud`).
//!
//! Only public clients are registered (`token_endpoint_auth_method: none`; a client secret
//! on a user's machine protects nothing — PKCE does): grant types `authorization_code` and
//! `refresh_token`, response type `code`. A redirect URI is either on loopback — `http`
//! to `127.0.0.1`, `[::1]` or `localhost`, where any port matches at authorization (RFC
//! 8252 §7.3: a native app's port is picked at run time) — or `https` to any host; no
//! fragment, at most 10. Registrations are limited to [`super::REGISTRATIONS_PER_ADDRESS`]
//! per client address an hour, and a client unused for [`super::CLIENT_IDLE_DAYS`] is
//! forgotten (with its grants) at the next registration. Every refusal is RFC 7591 JSON
//! (`invalid_redirect_uri`, `invalid_client_metadata`; `slow_down` past the limit), those
//! made before the registration is read too: a body over the endpoint's limit (`413`), one
//! that cannot be read, or is sent as another type than JSON (`400`).
//!
//! Loopback is told by name (`127.0.0.1`, `[::1]`, `localhost`), so an IPv4 loopback
//! address written inside IPv6 (`[::ffff:127.0.0.1]`, `[::127.0.0.1]`, NAT64, 6to4) is not
//! loopback here: plain `http` to it is refused like to any other host. No redirect URI is
//! ever fetched by this server.

use std::net::IpAddr;

use chrono::TimeDelta;
use serde::{Deserialize, Serialize};
use url::Url;

use super::OAuthError;
use crate::accounts::{PlainSecret, now, store, time_text};
use mcp_common_core::ToolError;

/// A registered client as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Client {
    /// Its row.
    #[serde(skip)]
    pub id: i64,
    pub client_id: String,
    pub client_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_uri: Option<String>,
    pub redirect_uris: Vec<String>,
}

impl Client {
    /// Whether `given` is one of the client's redirect URIs: the same string, or — for a
    /// loopback URI — the same but for the port (RFC 8252 §7.3).
    pub fn redirects_to(&self, given: &str) -> bool {
        self.redirect_uris.iter().any(|registered| {
            registered == given
                || (is_loopback_redirect(registered) && same_but_port(registered, given))
        })
    }

    /// The host a redirect goes to, for the consent page.
    pub fn redirect_host(uri: &str) -> String {
        Url::parse(uri)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// What a client asks to be registered as (RFC 7591 §2; other members are ignored).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Registration {
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    pub client_name: Option<String>,
    pub client_uri: Option<String>,
    pub token_endpoint_auth_method: Option<String>,
    pub grant_types: Option<Vec<String>>,
    pub response_types: Option<Vec<String>>,
    pub scope: Option<String>,
}

fn is_loopback_host(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "[::1]" | "localhost")
}

fn is_loopback_redirect(uri: &str) -> bool {
    Url::parse(uri)
        .is_ok_and(|u| u.scheme() == "http" && u.host_str().is_some_and(is_loopback_host))
}

/// `a` and `b` the same URL but for the port.
fn same_but_port(a: &str, b: &str) -> bool {
    match (Url::parse(a), Url::parse(b)) {
        (Ok(mut a), Ok(mut b)) => {
            let (_, _) = (a.set_port(None), b.set_port(None));
            a == b
        }
        _ => false,
    }
}

/// A redirect URI a client may register, or why not.
pub fn check_redirect_uri(uri: &str) -> Result<String, OAuthError> {
    let refuse = |why: &str| {
        OAuthError::invalid_redirect_uri(format!(
            "The redirect URI `{}` {why}",
            mcp_common_core::text::clip(uri, 200)
        ))
    };
    if uri.len() > 2000 {
        return Err(refuse("is too long"));
    }
    let url = Url::parse(uri).map_err(|_| refuse("is not an absolute URL"))?;
    if url.fragment().is_some() {
        return Err(refuse("has a fragment"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("has credentials in it"));
    }
    match url.scheme() {
        "https" if url.host_str().is_some() => Ok(uri.to_string()),
        "http" if url.host_str().is_some_and(is_loopback_host) => Ok(uri.to_string()),
        "http" => Err(refuse(
            "is plain http to a host that is not this machine's loopback (use https)",
        )),
        _ => Err(refuse(
            "is neither https nor http to loopback (custom schemes are not taken)",
        )),
    }
}

impl Registration {
    /// The checked registration: its name and redirect URIs.
    fn check(&self) -> Result<(String, Option<String>, Vec<String>), OAuthError> {
        if self.redirect_uris.is_empty() || self.redirect_uris.len() > 10 {
            return Err(OAuthError::invalid_redirect_uri(
                "A client registers 1 to 10 redirect URIs",
            ));
        }
        let uris = self
            .redirect_uris
            .iter()
            .map(|u| check_redirect_uri(u))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(method) = &self.token_endpoint_auth_method
            && method != "none"
        {
            return Err(OAuthError::invalid_client_metadata(format!(
                "Only public clients are registered here (token_endpoint_auth_method `none`), not `{}`",
                mcp_common_core::text::clip(method, 40)
            )));
        }
        if let Some(types) = &self.grant_types
            && let Some(other) = types
                .iter()
                .find(|t| !matches!(t.as_str(), "authorization_code" | "refresh_token"))
        {
            return Err(OAuthError::invalid_client_metadata(format!(
                "The grant type `{}` is not offered (authorization_code and refresh_token are)",
                mcp_common_core::text::clip(other, 40)
            )));
        }
        if let Some(types) = &self.response_types
            && types.iter().any(|t| t != "code")
        {
            return Err(OAuthError::invalid_client_metadata(
                "Only the response type `code` is offered",
            ));
        }
        let name = self
            .client_name
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| n.chars().filter(|c| !c.is_control()).take(100).collect())
            .unwrap_or_else(|| "An unnamed MCP client".to_string());
        let uri = match self.client_uri.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(u) => match Url::parse(u) {
                Ok(url) if url.scheme() == "https" && u.len() <= 500 => Some(u.to_string()),
                _ => {
                    return Err(OAuthError::invalid_client_metadata(
                        "client_uri must be an https URL",
                    ));
                }
            },
        };
        Ok((name, uri, uris))
    }
}

impl super::OAuth {
    /// Register a client asked for from `from` (blocking): within the address's limit, else
    /// `slow_down` with the seconds to wait. Forgets clients unused for long on the way.
    pub fn register(
        &self,
        registration: &Registration,
        from: IpAddr,
    ) -> Result<Client, OAuthError> {
        let (name, client_uri, uris) = registration.check()?;
        let id = PlainSecret::mint()?;
        let client_id = format!("jilc_{}", &id.expose()[..24]);
        let at = now();
        let at_text = time_text(at);
        let key = format!("addr:{}", address_key(from));
        let cutoff = time_text(at - TimeDelta::seconds(super::REGISTRATION_WINDOW_SECS));
        let idle = time_text(at - TimeDelta::days(super::CLIENT_IDLE_DAYS));
        self.db
            .with_client(|client| -> Result<Result<Client, OAuthError>, ToolError> {
                let mut tx = client.transaction().map_err(store)?;
                tx.execute(
                    "DELETE FROM oauth_registrations WHERE at <= $1",
                    &[&cutoff],
                )
                .map_err(store)?;
                tx.execute(
                    "DELETE FROM oauth_clients WHERE last_used_at <= $1",
                    &[&idle],
                )
                .map_err(store)?;
                // One registration of an address at a time: its count cannot be raced.
                tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&key])
                    .map_err(store)?;
                let times: Vec<String> = tx
                    .query(
                        "SELECT at FROM oauth_registrations WHERE key = $1 ORDER BY at",
                        &[&key],
                    )
                    .map_err(store)?
                    .iter()
                    .map(|r| r.try_get(0))
                    .collect::<Result<_, _>>()
                    .map_err(store)?;
                if times.len() >= super::REGISTRATIONS_PER_ADDRESS {
                    let oldest = times
                        .first()
                        .and_then(|t| jility_core::token::parse_time(t))
                        .unwrap_or(at);
                    let frees = oldest + TimeDelta::seconds(super::REGISTRATION_WINDOW_SECS);
                    let wait = u64::try_from((frees - at).num_seconds().max(1)).unwrap_or(60);
                    return Ok(Err(OAuthError::slow_down(
                        format!(
                            "Too many clients registered from this address; try again in {wait} s"
                        ),
                        wait,
                    )));
                }
                tx.execute(
                    "INSERT INTO oauth_registrations (key, at) VALUES ($1, $2)",
                    &[&key, &at_text],
                )
                .map_err(store)?;
                let row = tx
                    .query_one(
                        "INSERT INTO oauth_clients \
                         (client_id, kind, name, client_uri, redirect_uris, created_at, last_used_at) \
                         VALUES ($1, 'registered', $2, $3, $4, $5, $5) RETURNING id",
                        &[&client_id, &name, &client_uri, &uris, &at_text],
                    )
                    .map_err(store)?;
                tx.commit().map_err(store)?;
                tracing::info!(client_id = %client_id, "registered an OAuth client");
                Ok(Ok(Client {
                    id: row.try_get(0).map_err(store)?,
                    client_id: client_id.clone(),
                    client_name: name.clone(),
                    client_uri: client_uri.clone(),
                    redirect_uris: uris.clone(),
                }))
            })
            .map_err(OAuthError::from)?
    }

    /// The client `client_id`, if it is registered (blocking).
    pub fn client(&self, client_id: &str) -> Result<Option<Client>, ToolError> {
        if client_id.is_empty() || client_id.len() > 2048 {
            return Ok(None);
        }
        self.db.with_client(|client| {
            client
                .query_opt(
                    "SELECT id, client_id, name, client_uri, redirect_uris FROM oauth_clients \
                     WHERE client_id = $1",
                    &[&client_id],
                )
                .map_err(store)?
                .map(|row| client_row(&row))
                .transpose()
        })
    }
}

impl super::OAuth {
    /// The client of the metadata document at `client_id`, if it was fetched after
    /// `fresh_after` (blocking).
    pub fn kept_document(
        &self,
        client_id: &str,
        fresh_after: &str,
    ) -> Result<Option<Client>, OAuthError> {
        let found = self
            .db
            .with_client(|client| -> Result<_, mcp_common_core::ToolError> {
                client
                    .query_opt(
                        "SELECT id, client_id, name, client_uri, redirect_uris FROM oauth_clients \
                     WHERE client_id = $1 AND kind = 'metadata_document' AND fetched_at > $2",
                        &[&client_id, &fresh_after],
                    )
                    .map_err(store)
            })?;
        found
            .map(|row| client_row(&row))
            .transpose()
            .map_err(OAuthError::from)
    }

    /// Keep the client a metadata document at `client_id` describes, fetched now (blocking).
    pub fn keep_document(
        &self,
        client_id: &str,
        name: &str,
        client_uri: Option<&str>,
        uris: &[String],
    ) -> Result<Client, mcp_common_core::ToolError> {
        let at = time_text(now());
        self.db.with_client(|client| {
            let row = client
                .query_one(
                    "INSERT INTO oauth_clients (client_id, kind, name, client_uri, redirect_uris, \
                     created_at, fetched_at, last_used_at) \
                     VALUES ($1, 'metadata_document', $2, $3, $4, $5, $5, $5) \
                     ON CONFLICT (client_id) DO UPDATE SET name = $2, client_uri = $3, \
                       redirect_uris = $4, fetched_at = $5 \
                     WHERE oauth_clients.kind = 'metadata_document' \
                     RETURNING id",
                    &[&client_id, &name, &client_uri, &uris, &at],
                )
                .map_err(store)?;
            Ok(Client {
                id: row.try_get(0).map_err(store)?,
                client_id: client_id.to_string(),
                client_name: name.to_string(),
                client_uri: client_uri.map(str::to_string),
                redirect_uris: uris.to_vec(),
            })
        })
    }
}

/// A client read as `id, client_id, name, client_uri, redirect_uris`.
pub fn client_row(row: &postgres::Row) -> Result<Client, ToolError> {
    Ok(Client {
        id: row.try_get(0).map_err(store)?,
        client_id: row.try_get(1).map_err(store)?,
        client_name: row.try_get(2).map_err(store)?,
        client_uri: row.try_get(3).map_err(store)?,
        redirect_uris: row.try_get(4).map_err(store)?,
    })
}

/// An address as the registration and token limits count it (an IPv6 address by its /64).
pub fn address_key(addr: IpAddr) -> String {
    match addr {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_uris_are_loopback_or_https() {
        for ok in [
            "http://127.0.0.1:33418/callback",
            "http://localhost/cb",
            "http://[::1]:9/cb",
            "https://app.example.com/oauth/callback",
        ] {
            assert!(check_redirect_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://evil.example/cb",
            "javascript:alert(1)",
            "myapp://cb",
            "https://app.example.com/cb#frag",
            "https://user:pw@app.example.com/cb",
            "/relative",
            // Loopback is told by name only: IPv4 inside IPv6 is plain http elsewhere.
            "http://[::ffff:127.0.0.1]/cb",
            "http://[::127.0.0.1]/cb",
            "http://[64:ff9b::7f00:1]/cb",
            "http://[2002:7f00:1::]/cb",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_loopback_redirect_matches_on_any_port_and_nothing_else_does() {
        let client = Client {
            id: 1,
            client_id: "c".into(),
            client_name: "n".into(),
            client_uri: None,
            redirect_uris: vec![
                "http://127.0.0.1:1000/callback".into(),
                "https://app.example.com/cb".into(),
            ],
        };
        assert!(client.redirects_to("http://127.0.0.1:1000/callback"));
        assert!(client.redirects_to("http://127.0.0.1:54321/callback"));
        assert!(!client.redirects_to("http://127.0.0.1:54321/other"));
        assert!(!client.redirects_to("http://localhost:1000/callback"));
        assert!(client.redirects_to("https://app.example.com/cb"));
        assert!(!client.redirects_to("https://app.example.com:444/cb"));
        assert!(!client.redirects_to("https://app.example.com/cb?x=1"));
    }
}
