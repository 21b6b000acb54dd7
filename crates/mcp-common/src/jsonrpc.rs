//! A kit error as rmcp's JSON-RPC error, for the classes a strict contract reports at the
//! protocol level (the error type itself lives in the light core, which knows no rmcp).

use crate::error::ToolError;

/// `to_json_rpc` on [`ToolError`].
pub trait ToJsonRpc {
    /// This error as a JSON-RPC error. The message and hint travel; the envelope rides in
    /// `data`.
    fn to_json_rpc(&self) -> rmcp::ErrorData;
}

impl ToJsonRpc for ToolError {
    fn to_json_rpc(&self) -> rmcp::ErrorData {
        let data = serde_json::to_value(self).ok();
        rmcp::ErrorData::new(
            rmcp::model::ErrorCode(self.code.class().json_rpc_code()),
            self.message.clone(),
            data,
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn json_rpc_form_keeps_the_envelope_in_data() {
        let err = ToolError::invalid_params("bad filter").with_hint("fix it");
        let rpc = err.to_json_rpc();
        assert_eq!(rpc.code.0, -32602);
        assert_eq!(rpc.message, "bad filter");
        assert_eq!(rpc.data.unwrap()["hint"], "fix it");
    }
}
