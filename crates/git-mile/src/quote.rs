//! Excerpts of what a client sent, for the messages that quote it: a huge argument is never
//! echoed back whole. The cut and its mark (`… (N bytes)`) are the kit's
//! ([`mcp_common::excerpt`]); the lengths are git-mile's.

/// The longest excerpt of a text a client sent, in characters.
const EXCERPT: usize = 200;

/// The longest message [`quoting_excerpts`] lets through, in characters.
const MAX_MESSAGE: usize = 600;

/// At most [`EXCERPT`] characters of `text` a client sent, for a message that quotes it: a
/// huge argument is never echoed back whole.
pub fn excerpt(text: &str) -> String {
    mcp_common::excerpt(text, EXCERPT)
}

/// `message` (a decoder's, which quotes what it could not decode) with every long text of
/// `sent` it quotes cut to an [`excerpt`]: as written, and as `{:?}` writes it (serde's
/// "invalid type: string \"…\""). Whatever it still holds past [`MAX_MESSAGE`] characters
/// is cut too, so that no message carries a huge argument whole.
pub fn quoting_excerpts<'a>(message: &str, sent: impl IntoIterator<Item = &'a str>) -> String {
    let mut message = message.to_string();
    for text in sent {
        let Some((end, _)) = text.char_indices().nth(EXCERPT) else {
            continue;
        };
        let head = &text[..end];
        let debug = format!("{text:?}");
        if message.contains(&debug) {
            message = message.replace(&debug, &format!("{head:?}… ({} bytes)", text.len()));
        }
        if message.contains(text) {
            message = message.replace(text, &excerpt(text));
        }
    }
    mcp_common::excerpt(&message, MAX_MESSAGE)
}

/// `text` cut to at most `max` characters: when longer, its first `max - 1` and `…`.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some(_) => {
            let end = text
                .char_indices()
                .nth(max.saturating_sub(1))
                .map_or(text.len(), |(at, _)| at);
            format!("{}…", &text[..end])
        }
    }
}

/// How many candidates a message names at most.
pub const MAX_CANDIDATES: usize = 10;

/// The first [`MAX_CANDIDATES`] of `items`, comma-separated, and how many more there are.
pub fn some_of(items: &[String]) -> String {
    let shown = items
        .iter()
        .take(MAX_CANDIDATES)
        .cloned()
        .collect::<Vec<_>>();
    let more = items.len().saturating_sub(MAX_CANDIDATES);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_are_short() {
        assert_eq!(excerpt("abc"), "abc");
        let long = "é".repeat(1000);
        let cut = excerpt(&long);
        assert!(cut.starts_with(&"é".repeat(200)), "{cut}");
        assert!(cut.ends_with("… (2000 bytes)"), "{cut}");
    }

    #[test]
    fn cuts_and_candidates() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "ab…");
        assert_eq!(cut(&"é".repeat(1_000_000), 500).chars().count(), 500);
        let ids: Vec<String> = (0..3000).map(|i| format!("019a-{i}")).collect();
        let text = some_of(&ids);
        assert!(text.ends_with("019a-9 and 2990 more"), "{text}");
        assert_eq!(some_of(&ids[..2]), "019a-0, 019a-1");
    }

    #[test]
    fn quoted_texts_are_cut() {
        let long = "x\"y".repeat(1000);
        let message = format!("unknown field `{long}`, expected `entity`; string {long:?}");
        let cut = quoting_excerpts(&message, [long.as_str(), "short"]);
        assert!(cut.len() < 600, "{cut}");
        assert!(cut.starts_with("unknown field `x\"y"), "{cut}");
        assert!(cut.contains("(3000 bytes)`, expected `entity`"), "{cut}");
        assert!(cut.contains("string \"x\\\"y"), "{cut}");
        // Whatever else is long is cut all the same.
        let other = "z".repeat(5000);
        assert!(quoting_excerpts(&other, []).len() < 700);
        assert_eq!(quoting_excerpts("short", [long.as_str()]), "short");
    }
}
