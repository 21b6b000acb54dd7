//! A viewer (a role that may look, not change) is refused the create page and every create
//! form, before any operation runs: through the app's router, with a site whose person is a
//! viewer and a backend that counts the operations it is asked to run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::stream::{self, BoxStream};
use jility_core::backend::{Backend, Caller};
use jility_core::ops::Operation;
use jility_web::{LiveEvent, Site, Viewer, WebError};
use mcp_common_core::{ToolError, codes};
use tower::ServiceExt as _;

/// Counts the operations it is asked to run that could change a ticket (the header's
/// inbox count, which every page asks for, is not one), and runs none.
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl Backend for Counting {
    async fn exec<O: Operation>(
        &self,
        _caller: &Caller,
        _params: Result<O::Params, ToolError>,
    ) -> Result<O::Output, ToolError> {
        if O::NAME != "jility_list_notifications" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        Err(ToolError::new(codes::INTERNAL, "not in this test"))
    }
}

/// One workspace, `team`, whose person is a viewer.
#[derive(Clone, Default)]
struct ViewerSite {
    backend: Counting,
}

impl Site for ViewerSite {
    type Backend = Counting;

    fn backend(&self) -> &Counting {
        &self.backend
    }

    async fn viewer(&self, _headers: &HeaderMap, workspace: &str) -> Result<Viewer, WebError> {
        if workspace != "team" {
            return Err(WebError::NotFound);
        }
        Ok(Viewer {
            name: "vera".into(),
            display_name: None,
            email: None,
            caller: Caller {
                actor: "vera".into(),
                principal: None,
                trace_parent: None,
            },
            can_write: false,
            manages: false,
            csrf: "the-token".into(),
            workspace: "team".into(),
            workspaces: Vec::new(),
            unread: 0,
        })
    }

    async fn changes(&self, _viewer: &Viewer) -> Result<BoxStream<'static, LiveEvent>, WebError> {
        Ok(Box::pin(stream::empty()))
    }

    async fn home(&self, _headers: &HeaderMap) -> Response {
        StatusCode::NOT_FOUND.into_response()
    }
}

async fn send(site: &ViewerSite, request: Request<Body>) -> (StatusCode, String) {
    let response = jility_web::router(site.clone())
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn a_viewer_is_refused_the_create_page_and_every_create_form() {
    let site = ViewerSite::default();
    let page = Request::get("/w/team/new").body(Body::empty()).unwrap();
    let (status, body) = send(&site, page).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body.contains("not create them"), "{body}");
    assert!(body.contains("Ask an admin"), "{body}");
    for (path, form) in [
        ("/w/team/tickets", "title=Sneaky&_csrf=the-token"),
        ("/w/team/tickets/batch", "lines=One%0ATwo&_csrf=the-token"),
        (
            "/w/team/tickets/from-template",
            "template=api-endpoint&var_method=GET&_csrf=the-token",
        ),
    ] {
        for json in [false, true] {
            let mut request = Request::post(path)
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::HOST, "board.example")
                .header(header::ORIGIN, "https://board.example");
            if json {
                request = request.header(header::ACCEPT, "application/json");
            }
            let (status, body) = send(&site, request.body(Body::from(form)).unwrap()).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{path}: {body}");
            if json {
                assert!(body.contains("\"permission_denied\""), "{path}: {body}");
            } else {
                assert!(body.contains("look, not change"), "{path}: {body}");
            }
        }
    }
    assert_eq!(site.backend.0.load(Ordering::SeqCst), 0, "no operation ran");
}
