//! The reference prompts: without arguments, with arguments, with an embedded resource, with
//! an image (and, stateless, [`INPUT_REQUIRED`], which [`crate::mrtr`] answers).

use rmcp::ErrorData;
use rmcp::model::{GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult};
use serde_json::{Value, json};

use crate::wire::{TEST_IMAGE_BASE64, result_of};

/// The prompt that asks for input through `InputRequiredResult` (stateless only).
pub const INPUT_REQUIRED: &str = "test_input_required_result_prompt";

/// The prompts of either wire.
pub fn list(stateless: bool) -> Result<ListPromptsResult, ErrorData> {
    let mut prompts = vec![
        json!({
            "name": "test_simple_prompt",
            "title": "Simple Test Prompt",
            "description": "A simple prompt without arguments",
        }),
        json!({
            "name": "test_prompt_with_arguments",
            "title": "Prompt With Arguments",
            "description": "A prompt with required arguments",
            "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true},
            ],
        }),
        json!({
            "name": "test_prompt_with_embedded_resource",
            "title": "Prompt With Embedded Resource",
            "description": "A prompt that includes an embedded resource",
            "arguments": [
                {"name": "resourceUri", "description": "URI of the resource to embed", "required": true},
            ],
        }),
        json!({
            "name": "test_prompt_with_image",
            "title": "Prompt With Image",
            "description": "A prompt that includes image content",
        }),
    ];
    if stateless {
        prompts.push(json!({
            "name": INPUT_REQUIRED,
            "description": "MRTR: prompt that requires elicitation input",
        }));
    }
    result_of(json!({ "prompts": prompts }))
}

/// A user message of one text.
fn user_text(text: &str) -> Value {
    json!({"role": "user", "content": {"type": "text", "text": text}})
}

/// `prompts/get`.
pub fn get(request: &GetPromptRequestParams) -> Result<GetPromptResponse, ErrorData> {
    let arguments = request.arguments.clone().unwrap_or_default();
    let argument = |name: &str| -> Result<String, ErrorData> {
        arguments
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    format!("the prompt `{}` needs the argument `{name}`", request.name),
                    None,
                )
            })
    };
    let messages = match request.name.as_str() {
        "test_simple_prompt" => vec![user_text("This is a simple prompt for testing.")],
        "test_prompt_with_arguments" => {
            let (arg1, arg2) = (argument("arg1")?, argument("arg2")?);
            vec![user_text(&format!(
                "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"
            ))]
        }
        "test_prompt_with_embedded_resource" => {
            let uri = argument("resourceUri")?;
            vec![
                json!({
                    "role": "user",
                    "content": {
                        "type": "resource",
                        "resource": {
                            "uri": uri,
                            "mimeType": "text/plain",
                            "text": "Embedded resource content for testing.",
                        },
                    },
                }),
                user_text("Please process the embedded resource above."),
            ]
        }
        "test_prompt_with_image" => vec![
            json!({
                "role": "user",
                "content": {"type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png"},
            }),
            user_text("Please analyze the image above."),
        ],
        other => {
            return Err(ErrorData::invalid_params(
                format!("unknown prompt `{}`", mcp_common::text::excerpt(other, 100)),
                None,
            ));
        }
    };
    result_of::<GetPromptResult>(json!({ "messages": messages })).map(Into::into)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn arguments_are_required_and_substituted() {
        let mut request = GetPromptRequestParams::new("test_prompt_with_arguments");
        assert_eq!(get(&request).unwrap_err().code.0, -32602);
        request.arguments = serde_json::from_value(json!({"arg1": "a", "arg2": "b"})).unwrap();
        let GetPromptResponse::Complete(result) = get(&request).unwrap() else {
            panic!("prompts complete");
        };
        let wire = serde_json::to_value(result).unwrap();
        assert_eq!(
            wire["messages"][0]["content"]["text"],
            "Prompt with arguments: arg1='a', arg2='b'"
        );
        assert_eq!(
            get(&GetPromptRequestParams::new("nope"))
                .unwrap_err()
                .code
                .0,
            -32602
        );
    }
}
