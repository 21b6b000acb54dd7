#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| context_mcp_fuzz::jility_query(data));
