//! What both readers of specification text share: the formats, and where a slice of a document
//! lies in it (the extraction's sections keep slices; the model's are made from them).

use serde::{Deserialize, Serialize};

/// The text formats Duvet reads specifications in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Ietf,
    Markdown,
}

impl Format {
    /// The format of a specification without an explicit `format`: Markdown for `.md` and
    /// `.markdown` paths, IETF plain text otherwise (as Duvet's `auto`).
    pub fn detect(path_or_url: &str) -> Self {
        let lower = path_or_url.to_ascii_lowercase();
        if lower.ends_with(".md") || lower.ends_with(".markdown") {
            Self::Markdown
        } else {
            Self::Ietf
        }
    }

    /// duvet 0.4.3's automatic format, which reads the text too: Markdown for `.md` and
    /// `.markdown` files and for texts starting with a heading (`#`) or a `[//]:` comment,
    /// IETF plain text otherwise.
    pub fn auto(path_or_url: &str, text: &str) -> Self {
        let lead = text.trim();
        if lead.starts_with('#') || lead.starts_with("[//]:") {
            Self::Markdown
        } else {
            Self::detect(path_or_url)
        }
    }
}

/// The byte offset of `part`, a slice of `doc`, in `doc` (the readers keep slices of the
/// document; a part from elsewhere counts as its end).
pub(crate) fn offset_in(doc: &str, part: &str) -> usize {
    let (start, at) = (doc.as_ptr() as usize, part.as_ptr() as usize);
    if at < start || at > start + doc.len() {
        return doc.len();
    }
    at - start
}
