//! Quote lines without a target line above them (`//# …` with no `//= …`): a slip when
//! they quote a specification, an ordinary comment otherwise.
//!
//! The rule: such a run is reported as a malformed annotation when its text, whitespace
//! normalized, has at least [`MIN_WORDS`] words and is found in a section of one of the
//! project's specifications (exactly or within one edit, as a citation's quote is found).
//! The report names that section, so the fix is one line. Anything else that merely starts
//! with the quote prefix — a commented-out Rust attribute such as `//#[traced_test]`, a
//! `//#region` marker — is not an annotation and is not reported (Duvet ignores all of
//! them, slips included).

use crate::{matching::find_quote, model::Model, spec::requirements};

/// Fewer words than this are too common to tell a quote from a coincidence ("MUST NOT").
pub const MIN_WORDS: usize = 3;

impl Model {
    /// Where the text of orphaned quote lines occurs: the target that would cite it
    /// (`<specification>#<section>`), or `None` when it is not a specification's text.
    pub fn orphan_target(&self, quote: &str) -> Option<String> {
        let text = requirements::normalize(quote);
        if text.split(' ').count() < MIN_WORDS {
            return None;
        }
        let place = |exact: bool| {
            self.specs.iter().find_map(|spec| {
                spec.sections.iter().find_map(|section| {
                    let found = if exact {
                        section.normalized().contains(&text)
                    } else {
                        find_quote(section.normalized(), &text).is_some()
                    };
                    found.then(|| format!("{}#{}", spec.url, section.id))
                })
            })
        };
        place(true).or_else(|| place(false))
    }
}

#[cfg(test)]
mod tests {
    use crate::annotation::{AnnotationType, CommentStyle, source};
    use crate::model::{Inputs, Model, ParsedSpec, SpecInput};
    use crate::spec::Format;
    use std::{path::PathBuf, sync::Arc};

    fn model_with(source_text: &str) -> Model {
        let spec = "# Proto\n\n## Logs\n\nThe server MUST log each request. The server SHOULD rotate logs daily.\n";
        let (annotations, malformed) = source::extract(
            source_text,
            std::path::Path::new("src/lib.rs"),
            &CommentStyle::default(),
            AnnotationType::Implementation,
        );
        Model::build(Inputs {
            specs: vec![SpecInput {
                source: "specs/proto.md".into(),
                file: PathBuf::from("specs/proto.md"),
                parsed: Ok(Arc::new(ParsedSpec::parse(spec, Format::Markdown))),
                declared: true,
            }],
            annotations,
            malformed,
            extract_requirements: true,
        })
    }

    #[test]
    fn a_commented_out_attribute_is_not_an_annotation() {
        let model = model_with("//#[traced_test]\n#[test]\nfn t() {}\n//# region: helpers\n");
        assert!(model.invalid.is_empty(), "{:?}", model.invalid);
    }

    #[test]
    fn quote_lines_from_a_specification_without_a_target_are_a_slip() {
        let model =
            model_with("fn f() {\n    //# The server SHOULD rotate\n    //# logs daily.\n}\n");
        assert_eq!(model.invalid.len(), 1, "{:?}", model.invalid);
        let slip = &model.invalid[0];
        assert_eq!(slip.line_number, 2);
        assert!(slip.error.contains("without a meta line"), "{}", slip.error);
        assert!(slip.error.contains("specs/proto.md#logs"), "{}", slip.error);
    }

    #[test]
    fn a_slip_with_one_typo_is_still_found_but_two_words_are_not_enough() {
        let model =
            model_with("//# The server SHOLD rotate logs daily.\n\nfn f() {}\n//# MUST log\n");
        assert_eq!(model.invalid.len(), 1, "{:?}", model.invalid);
        assert_eq!(model.invalid[0].line_number, 1);
    }
}
