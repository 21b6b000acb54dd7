//! The metadata an MCP client discovers after a `401`: the protected resource's (RFC 9728)
//! and the authorization server's (RFC 8414; also at the OpenID Connect path clients try).
//! Both are public, cacheable for a while, and name this server as the request reached it
//! (or `JILITY_PUBLIC_URL`).

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::grants::SCOPES;

fn cached(body: serde_json::Value) -> Response {
    let mut response = Json(body).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// `GET /.well-known/oauth-protected-resource[/mcp]`.
pub async fn protected_resource(State(state): State<super::State>, headers: HeaderMap) -> Response {
    let tls = state.site.tls();
    cached(serde_json::json!({
        "resource": crate::public::resource(&headers, tls),
        "authorization_servers": [crate::public::base(&headers, tls)],
        "scopes_supported": SCOPES,
        "bearer_methods_supported": ["header"],
        "resource_name": "jility",
        "resource_documentation": format!("{}/api/v1/openapi.json", crate::public::base(&headers, tls)),
    }))
}

/// `GET /.well-known/oauth-authorization-server` (and `/.well-known/openid-configuration`).
pub async fn authorization_server(
    State(state): State<super::State>,
    headers: HeaderMap,
) -> Response {
    let base = crate::public::base(&headers, state.site.tls());
    cached(serde_json::json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}{}", super::AUTHORIZE_PATH),
        "token_endpoint": format!("{base}{}", super::TOKEN_PATH),
        "registration_endpoint": format!("{base}{}", super::REGISTER_PATH),
        "revocation_endpoint": format!("{base}{}", super::REVOKE_PATH),
        "scopes_supported": SCOPES,
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
    }))
}
