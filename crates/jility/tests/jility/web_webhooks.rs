//! The webhook settings page of `jility serve` (filled by the helper).
