//! The reference resources (a text, a binary, a watched one), the template
//! `test://template/{id}/data`, and completions of prompt and template arguments.

use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceResult,
};
use serde_json::json;

use crate::wire::{TEST_IMAGE_BASE64, result_of};

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
const WATCHED: &str = "test://watched-resource";
const TEMPLATE_PREFIX: &str = "test://template/";
const TEMPLATE_SUFFIX: &str = "/data";

/// The resources.
pub fn list() -> Result<ListResourcesResult, ErrorData> {
    result_of(json!({"resources": [
        {
            "uri": STATIC_TEXT,
            "name": "static-text",
            "title": "Static Text Resource",
            "description": "A static text resource for testing",
            "mimeType": "text/plain",
        },
        {
            "uri": STATIC_BINARY,
            "name": "static-binary",
            "title": "Static Binary Resource",
            "description": "A static binary resource (image) for testing",
            "mimeType": "image/png",
        },
        {
            "uri": WATCHED,
            "name": "watched-resource",
            "title": "Watched Resource",
            "description": "A resource clients may subscribe to",
            "mimeType": "text/plain",
        },
    ]}))
}

/// The resource templates.
pub fn templates() -> Result<ListResourceTemplatesResult, ErrorData> {
    result_of(json!({"resourceTemplates": [{
        "uriTemplate": "test://template/{id}/data",
        "name": "template",
        "title": "Resource Template",
        "description": "A resource template with parameter substitution",
        "mimeType": "application/json",
    }]}))
}

/// The `id` of a URI of the template, if it is one.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri
        .strip_prefix(TEMPLATE_PREFIX)?
        .strip_suffix(TEMPLATE_SUFFIX)?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// `resources/read`: `-32002` with `data.uri` for a URI that names no resource (rmcp sends
/// `-32602` to 2026-07-28 clients, SEP-2164).
pub fn read(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let contents = match uri {
        STATIC_TEXT => json!({
            "uri": uri,
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }),
        STATIC_BINARY => json!({"uri": uri, "mimeType": "image/png", "blob": TEST_IMAGE_BASE64}),
        WATCHED => {
            json!({"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"})
        }
        _ => match template_id(uri) {
            Some(id) => json!({
                "uri": uri,
                "mimeType": "application/json",
                "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                    .to_string(),
            }),
            None => {
                return Err(mcp_common::protocol::resource_not_found(
                    uri,
                    format!("no resource at `{}`", mcp_common::text::excerpt(uri, 200)),
                ));
            }
        },
    };
    result_of(json!({ "contents": [contents] }))
}

/// Whether `uri` may be subscribed to (a resource that exists), else the error to answer.
pub fn check_subscribable(uri: &str) -> Result<(), ErrorData> {
    read(uri).map(drop)
}

/// `completion/complete`: the values of a prompt's or the template's argument that start
/// with what was typed (none for other arguments).
pub fn complete(request: &CompleteRequestParams) -> Result<CompleteResult, ErrorData> {
    let candidates: &[&str] = match request.argument.name.as_str() {
        "arg1" | "arg2" => &["alpha", "beta", "gamma"],
        "id" => &["1", "2", "42"],
        "resourceUri" => &[STATIC_TEXT, STATIC_BINARY, WATCHED],
        _ => &[],
    };
    let typed = request.argument.value.as_str();
    let values: Vec<&str> = candidates
        .iter()
        .copied()
        .filter(|value| value.starts_with(typed))
        .collect();
    result_of(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn template_uris_are_read_and_others_are_not_found() {
        let read_back = serde_json::to_value(read("test://template/7/data").unwrap()).unwrap();
        let text = read_back["contents"][0]["text"].as_str().unwrap();
        let data: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(data["id"], "7");
        for uri in [
            "test://template//data",
            "test://template/a/b/data",
            "test://nope",
        ] {
            let err = read(uri).unwrap_err();
            assert_eq!(
                err.code.0,
                mcp_common::protocol::RESOURCE_NOT_FOUND,
                "{uri}"
            );
            assert_eq!(err.data.unwrap()["uri"], uri);
        }
    }
}
