//! Sort keys: `field[:asc|desc]`, applied in order, with the id as the last tiebreak so
//! that every order is total and stable (cursors rely on it).

use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{Field, FieldType, Fields, Value, Vocabulary};
use crate::quote::excerpt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortKey {
    pub field: Field,
    pub descending: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid sort key `{given}`: {reason}")]
pub struct SortError {
    pub given: String,
    pub reason: String,
}

/// An ordered list of sort keys ending with `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortSpec {
    keys: Vec<SortKey>,
}

/// The default order: most recently updated first.
pub const DEFAULT_SORT: &str = "updated:desc";

/// One sort value of one entity, owned so that a cursor can carry it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", content = "v", rename_all = "lowercase")]
pub enum SortValue {
    Null,
    Bool(bool),
    Number(u64),
    Date(DateTime<Utc>),
    Text(String),
}

/// The borrowed form compared while sorting, so that sorting allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Key<'a> {
    Null,
    Bool(bool),
    Number(u64),
    Date(DateTime<Utc>),
    Text(&'a str),
}

fn rank(key: &Key<'_>) -> u8 {
    match key {
        Key::Null => 0,
        Key::Bool(_) => 1,
        Key::Number(_) => 2,
        Key::Date(_) => 3,
        Key::Text(_) => 4,
    }
}

fn compare_keys(a: &Key<'_>, b: &Key<'_>) -> Ordering {
    match (a, b) {
        (Key::Bool(x), Key::Bool(y)) => x.cmp(y),
        (Key::Number(x), Key::Number(y)) => x.cmp(y),
        (Key::Date(x), Key::Date(y)) => x.cmp(y),
        // Case-insensitive first, so `alpha` sorts beside `Alpha`; then exact, for totality.
        (Key::Text(x), Key::Text(y)) => {
            let folded = x
                .chars()
                .flat_map(char::to_lowercase)
                .cmp(y.chars().flat_map(char::to_lowercase));
            folded.then_with(|| x.cmp(y))
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

fn key_of<'a>(entity: &'a dyn Fields, field: Field) -> Key<'a> {
    match entity.value(field) {
        Value::Text(text) => Key::Text(text),
        // Issues sort by their milestone's title (then id); none sorts first.
        Value::Milestone { title: Some(t), .. } => Key::Text(t),
        Value::Milestone { id: Some(id), .. } => Key::Text(id),
        Value::Milestone { .. } => Key::Null,
        Value::Date(date) => Key::Date(date),
        Value::Number(Some(n)) => Key::Number(n),
        Value::Number(None) => Key::Null,
        Value::Bool(b) => Key::Bool(b),
        Value::Labels(_) => Key::Null,
    }
}

impl SortValue {
    fn as_key(&self) -> Key<'_> {
        match self {
            SortValue::Null => Key::Null,
            SortValue::Bool(b) => Key::Bool(*b),
            SortValue::Number(n) => Key::Number(*n),
            SortValue::Date(d) => Key::Date(*d),
            SortValue::Text(t) => Key::Text(t),
        }
    }

    fn from_key(key: Key<'_>) -> Self {
        match key {
            Key::Null => SortValue::Null,
            Key::Bool(b) => SortValue::Bool(b),
            Key::Number(n) => SortValue::Number(n),
            Key::Date(d) => SortValue::Date(d),
            Key::Text(t) => SortValue::Text(t.to_string()),
        }
    }
}

impl Default for SortSpec {
    fn default() -> Self {
        Self {
            keys: vec![
                SortKey {
                    field: Field::Updated,
                    descending: true,
                },
                SortKey {
                    field: Field::Id,
                    descending: false,
                },
            ],
        }
    }
}

impl SortSpec {
    /// Parse `field[:asc|desc]` items over the fields of issues and milestones; none gives
    /// the default order (`updated:desc`).
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Self, SortError> {
        Self::parse_in(items, Vocabulary::Entities)
    }

    /// [`SortSpec::parse`] over the fields of `vocabulary`.
    pub fn parse_in<S: AsRef<str>>(items: &[S], vocabulary: Vocabulary) -> Result<Self, SortError> {
        if items.is_empty() {
            return Ok(Self::default());
        }
        let mut keys: Vec<SortKey> = Vec::new();
        for item in items {
            let given = item.as_ref();
            // Messages quote at most an excerpt of what was sent.
            let error = |reason: String| SortError {
                given: excerpt(given),
                reason,
            };
            let (name, order) = match given.trim().split_once(':') {
                Some((name, order)) => (name.trim(), Some(order.trim())),
                None => (given.trim(), None),
            };
            let field = vocabulary.parse(name).ok_or_else(|| {
                error(format!(
                    "unknown field `{}`; sortable fields: {}",
                    excerpt(name),
                    sortable_names(vocabulary)
                ))
            })?;
            if !sortable(field) {
                return Err(error(format!(
                    "`{name}` cannot be sorted; sortable fields: {}",
                    sortable_names(vocabulary)
                )));
            }
            let descending = match order.map(str::to_ascii_lowercase).as_deref() {
                None | Some("asc") => false,
                Some("desc") => true,
                Some(other) => {
                    return Err(error(format!(
                        "order `{}` is neither asc nor desc",
                        excerpt(other)
                    )));
                }
            };
            if keys.iter().any(|k| k.field == field) {
                return Err(error(format!("`{name}` is named twice")));
            }
            keys.push(SortKey { field, descending });
        }
        if !keys.iter().any(|k| k.field == Field::Id) {
            keys.push(SortKey {
                field: Field::Id,
                descending: false,
            });
        }
        Ok(Self { keys })
    }

    pub fn keys(&self) -> &[SortKey] {
        &self.keys
    }

    /// The spec written out in full (`updated:desc,id:asc`): equal specs write the same.
    pub fn canonical(&self) -> String {
        self.keys
            .iter()
            .map(|k| {
                format!(
                    "{}:{}",
                    k.field.name(),
                    if k.descending { "desc" } else { "asc" }
                )
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn compare(&self, a: &dyn Fields, b: &dyn Fields) -> Ordering {
        for key in &self.keys {
            let ord = compare_keys(&key_of(a, key.field), &key_of(b, key.field));
            let ord = if key.descending { ord.reverse() } else { ord };
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }

    /// The sort values of `entity`, in key order: what a cursor carries.
    pub fn values_of(&self, entity: &dyn Fields) -> Vec<SortValue> {
        self.keys
            .iter()
            .map(|k| SortValue::from_key(key_of(entity, k.field)))
            .collect()
    }

    /// Where `entity` lies relative to a position given by [`Self::values_of`]:
    /// `Greater` means after it in this order. `None` when `values` do not fit this spec.
    pub fn compare_to(&self, entity: &dyn Fields, values: &[SortValue]) -> Option<Ordering> {
        if values.len() != self.keys.len() {
            return None;
        }
        for (key, value) in self.keys.iter().zip(values) {
            let ord = compare_keys(&key_of(entity, key.field), &value.as_key());
            let ord = if key.descending { ord.reverse() } else { ord };
            if ord != Ordering::Equal {
                return Some(ord);
            }
        }
        Some(Ordering::Equal)
    }
}

fn sortable(field: Field) -> bool {
    !matches!(field.field_type(), FieldType::Labels) && field != Field::Description
}

fn sortable_names(vocabulary: Vocabulary) -> String {
    vocabulary
        .fields()
        .iter()
        .copied()
        .filter(|f| sortable(*f))
        .map(Field::name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct E {
        id: &'static str,
        title: &'static str,
        count: Option<u64>,
    }

    impl Fields for E {
        fn value(&self, field: Field) -> Value<'_> {
            match field {
                Field::Id => Value::Text(self.id),
                Field::Title => Value::Text(self.title),
                Field::OpenIssues => Value::Number(self.count),
                _ => Value::Bool(false),
            }
        }
    }

    #[test]
    fn parses_keys_and_adds_the_id_tiebreak() {
        let spec = SortSpec::parse(&["title:desc", "open_issues"]).unwrap();
        assert_eq!(spec.canonical(), "title:desc,open_issues:asc,id:asc");
        assert_eq!(
            SortSpec::parse::<&str>(&[]).unwrap().canonical(),
            "updated:desc,id:asc"
        );
        assert_eq!(
            SortSpec::parse(&["id:desc"]).unwrap().canonical(),
            "id:desc"
        );
        for bad in ["nope", "labels", "title:up", "description"] {
            assert!(SortSpec::parse(&[bad]).is_err(), "{bad}");
        }
        assert!(SortSpec::parse(&["title", "title:desc"]).is_err());
    }

    #[test]
    fn orders_case_insensitively_with_nulls_first_and_resumes_after_values() {
        let items = [
            E {
                id: "3",
                title: "beta",
                count: Some(2),
            },
            E {
                id: "1",
                title: "Alpha",
                count: None,
            },
            E {
                id: "2",
                title: "alpha",
                count: Some(1),
            },
        ];
        let spec = SortSpec::parse(&["title"]).unwrap();
        let mut refs: Vec<&E> = items.iter().collect();
        refs.sort_by(|a, b| spec.compare(*a, *b));
        assert_eq!(
            refs.iter().map(|e| e.id).collect::<Vec<_>>(),
            ["1", "2", "3"]
        );

        let spec = SortSpec::parse(&["open_issues:desc"]).unwrap();
        refs.sort_by(|a, b| spec.compare(*a, *b));
        assert_eq!(
            refs.iter().map(|e| e.id).collect::<Vec<_>>(),
            ["3", "2", "1"]
        );
        let at = spec.values_of(refs[1]);
        assert_eq!(spec.compare_to(refs[2], &at), Some(Ordering::Greater));
        assert_eq!(spec.compare_to(refs[0], &at), Some(Ordering::Less));
        assert_eq!(spec.compare_to(refs[1], &at), Some(Ordering::Equal));
        assert_eq!(spec.compare_to(refs[1], &at[..1]), None);
        // Values survive a JSON round trip (they travel inside cursors).
        let json = serde_json::to_string(&at).unwrap();
        let back: Vec<SortValue> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, at);
    }
}
