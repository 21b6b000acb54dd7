//! Excerpts of text for messages: what someone sent (or a parser's message that quotes it) is
//! never echoed whole. One cut, two marks: [`clip`] ends a cut text with `…`, [`excerpt`]
//! also says how long the whole was.

/// The byte index where `text` is cut to `max_chars` characters, if it is longer.
fn cut(text: &str, max_chars: usize) -> Option<usize> {
    text.char_indices().nth(max_chars).map(|(at, _)| at)
}

/// `text` cut to `max_chars` characters, marked with `…` when cut.
pub fn clip(text: &str, max_chars: usize) -> String {
    match cut(text, max_chars) {
        None => text.to_string(),
        Some(at) => format!("{}…", &text[..at]),
    }
}

/// `text` cut to `max_chars` characters, marked with `… (N bytes)` (the whole's length) when
/// cut.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    match cut(text, max_chars) {
        None => text.to_string(),
        Some(at) => format!("{}… ({} bytes)", &text[..at], text.len()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn short_text_is_kept_and_long_text_is_cut_on_characters() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "abc…");
        assert_eq!(clip("ééééé", 2), "éé…");
        assert_eq!(excerpt("abc", 3), "abc");
        assert_eq!(excerpt("ééé", 1), "é… (6 bytes)");
    }
}
