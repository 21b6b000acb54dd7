#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| context_mcp_fuzz::duvet_config(data));
