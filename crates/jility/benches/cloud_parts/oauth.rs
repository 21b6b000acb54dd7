//! Part 5 of the cloud benchmark (`JILITY_BENCH_ONLY=oauth`): OAuth on the 100,000-ticket
//! workspace's server, one request at a time, beside the REST API's own
//! `GET /api/v1/tickets/{KEY-N}` measured in the same run: the authorization (consent)
//! page of a signed-in person, and the token endpoint's code exchange (each code made by an
//! approval first, not timed). A client registers once, as an MCP client does.

use super::*;

/// Requests of each kind measured (after [`WARMUP`]).
const ROUNDS: usize = 200;
const REDIRECT: &str = "http://127.0.0.1:47999/callback";
const VERIFIER: &str = "bench-verifier-bench-verifier-bench-verifier-0123456789";

fn challenge() -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(VERIFIER))
}

fn hidden_fields(page: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = page;
    let opening = r#"<input type="hidden" name=""#;
    while let Some(at) = rest.find(opening) {
        rest = &rest[at + opening.len()..];
        let name = rest.split('"').next().unwrap_or_default().to_string();
        let marker = "value=\"";
        let start = rest.find(marker).map_or(0, |i| i + marker.len());
        let value = rest[start..].split('"').next().unwrap_or_default();
        out.push((name, value.replace("&amp;", "&")));
    }
    out
}

/// The OAuth part, printed as a table as it comes.
pub async fn oauth_only(server: &Server, cookie: &str, token: &str) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let root = server.root().to_string();
    let numbers = distinct_numbers(0x0A07_4B3C, WARMUP + ROUNDS);
    let api = sequential(
        &http_client(),
        &server.url,
        token,
        ROUNDS,
        |i| format!("/tickets/{KEY}-{}", numbers[i]),
        |i, v| assert_eq!(v["ticket"]["number"], format!("{KEY}-{}", numbers[i])),
    )
    .await;
    let registered: serde_json::Value = http
        .post(format!("{root}/oauth/register"))
        .json(&serde_json::json!({"redirect_uris": [REDIRECT], "client_name": "Bench client"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client_id = registered["client_id"].as_str().unwrap().to_string();
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", &client_id)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("code_challenge", &challenge())
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", "bench")
        .append_pair("scope", "tickets:read tickets:write")
        .append_pair("workspace", WORKSPACE)
        .finish();
    let page_url = format!("{root}/oauth/authorize?{query}");
    let mut page_samples = Vec::new();
    let mut form = Vec::new();
    for i in 0..WARMUP + ROUNDS {
        let t = Instant::now();
        let response = http
            .get(&page_url)
            .header("Cookie", cookie)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        let elapsed = t.elapsed();
        assert_eq!(status, 200, "{}", &body[..body.len().min(500)]);
        assert!(
            body.contains("data-page=\"authorize\""),
            "not the consent page"
        );
        if i >= WARMUP {
            page_samples.push(elapsed);
        }
        form = hidden_fields(&body);
    }
    form.push(("decision".into(), "approve".into()));
    form.push(("grant".into(), "tickets:read".into()));
    let form_body = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&form)
        .finish();
    let mut token_samples = Vec::new();
    for i in 0..WARMUP + ROUNDS {
        let approved = http
            .post(format!("{root}/oauth/authorize"))
            .header("Cookie", cookie)
            .header("Origin", &root)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(approved.status().as_u16(), 303);
        let location = approved.headers()["location"].to_str().unwrap().to_string();
        let code = url::Url::parse(&location)
            .unwrap()
            .query_pairs()
            .find(|(k, _)| k == "code")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_else(|| panic!("no code in {location}"));
        let exchange = form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", &code)
            .append_pair("client_id", &client_id)
            .append_pair("redirect_uri", REDIRECT)
            .append_pair("code_verifier", VERIFIER)
            .finish();
        let t = Instant::now();
        let response = http
            .post(format!("{root}/oauth/token"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(exchange)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        let elapsed = t.elapsed();
        assert_eq!(status, 200, "{body}");
        if i >= WARMUP {
            token_samples.push(elapsed);
        }
    }
    let base = percentile(&api.samples, 0.50);
    let row = |name: &str, samples: &[Duration]| {
        let p50 = percentile(samples, 0.50);
        format!(
            "| {name} | {} | {} | {:.1}× |",
            ms(p50),
            ms(percentile(samples, 0.99)),
            p50.as_secs_f64() / base.as_secs_f64(),
        )
    };
    let out = [
        "| request (one at a time) | p50 | p99 | × API GET p50 |".to_string(),
        "|---|---:|---:|---:|".to_string(),
        format!(
            "| API `GET /api/v1/tickets/{{KEY-N}}` (baseline) | {} | {} | 1.0× |",
            ms(base),
            ms(percentile(&api.samples, 0.99))
        ),
        row("authorization page (signed in, consent)", &page_samples),
        row("token endpoint: code exchange (PKCE)", &token_samples),
    ];
    println!("{}", out.join("\n"));
}
