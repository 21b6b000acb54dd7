//! Lean `outputSchema`s: what a client needs to check an answer, and no more.
//!
//! A schema generated from a Rust type describes every nested shape with its prose; in a
//! listing that is sent on every connection it was 68–84% of the bytes, the same shapes
//! repeated in tool after tool. A lean schema keeps the answer's own fields with their
//! types (nested objects and arrays typed, not described), the fields it always has, and
//! enumerations; it is self-contained (no `$ref`, no `$defs`), so both official SDKs
//! validate every `structuredContent` against it as before. What each field means is in
//! the tool's description and the README.

use serde_json::{Map, Value, json};

/// The lean schema of an answer whose full schema (with its `$defs`) is `full`: the root's
/// fields typed, its `required` and enumerations kept, alternatives kept as alternatives.
pub fn lean_data(full: &Value) -> Value {
    let defs = full
        .get("$defs")
        .or_else(|| full.get("definitions"))
        .cloned()
        .unwrap_or(Value::Null);
    let mut out = shape(full, &defs, 0);
    if let Value::Object(map) = &mut out
        && !map.contains_key("type")
        && !map.contains_key("anyOf")
        && !map.contains_key("oneOf")
    {
        map.insert("type".into(), json!("object"));
    }
    out
}

/// The envelope's lean schema around the lean `data`: `status` and `data` (and `page`
/// when `paged`, an object: its shape is the same for every list). The error member of
/// `status: "error"` is not described: its shape is the same for every tool of every
/// server (the README's), naming it in every tool only costs a listing bytes, and error
/// results validate all the same (the schema allows members it does not name).
pub fn lean_envelope(data: Value, paged: bool) -> Value {
    let mut properties = Map::new();
    properties.insert("status".into(), json!({"enum": ["ok", "error"]}));
    properties.insert("data".into(), data);
    if paged {
        properties.insert("page".into(), json!({"type": "object"}));
    }
    json!({"type": "object", "properties": properties, "required": ["status"]})
}

/// Deepest a `$ref` chain is followed (a type that contains itself ends as `{}`).
const MAX_REFS: usize = 16;

/// `node` as an answer, or an item of a list answer: its fields typed.
fn shape(node: &Value, defs: &Value, refs: usize) -> Value {
    let node = resolve(node, defs, refs);
    let Value::Object(map) = &node else {
        return node;
    };
    if let Some(alternatives) = alternatives(map) {
        let lean: Vec<Value> = alternatives
            .iter()
            .map(|alt| shape(alt, defs, refs + 1))
            .collect();
        return merged(&lean).unwrap_or_else(|| json!({ "anyOf": lean }));
    }
    let mut out = Map::new();
    for key in ["type", "enum", "const"] {
        if let Some(value) = map.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        let fields: Map<String, Value> = properties
            .iter()
            .map(|(name, field)| (name.clone(), type_only(field, defs, refs)))
            .collect();
        out.insert("properties".into(), Value::Object(fields));
        if let Some(required) = map.get("required") {
            out.insert("required".into(), required.clone());
        }
    }
    // A list's items are what the answer is made of: their fields typed too.
    if let Some(items) = map.get("items").filter(|i| i.is_object()) {
        out.insert("items".into(), shape(items, defs, refs + 1));
    }
    Value::Object(out)
}

/// Alternatives that are all objects as one object that each of them satisfies: every
/// field of any of them (a field several have, with the union of their types), the fields
/// all of them require. `None` when one is not an object.
fn merged(alternatives: &[Value]) -> Option<Value> {
    let mut fields = Map::new();
    let mut required: Option<Vec<Value>> = None;
    for alternative in alternatives {
        if alternative.get("type") != Some(&json!("object")) {
            return None;
        }
        let own = alternative.get("properties").and_then(Value::as_object)?;
        for (name, field) in own {
            match fields.get(name) {
                None => {
                    fields.insert(name.clone(), field.clone());
                }
                Some(seen) if seen == field => {}
                Some(seen) => {
                    let either = type_only(&json!({ "anyOf": [seen, field] }), &Value::Null, 0);
                    fields.insert(name.clone(), either);
                }
            }
        }
        let needs: Vec<Value> = alternative
            .get("required")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        required = Some(match required {
            None => needs,
            Some(so_far) => so_far.into_iter().filter(|f| needs.contains(f)).collect(),
        });
    }
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), Value::Object(fields));
    if let Some(required) = required.filter(|r| !r.is_empty()) {
        out.insert("required".into(), Value::Array(required));
    }
    Some(Value::Object(out))
}

/// A field's type (and its enumeration or constant), nothing nested.
fn type_only(node: &Value, defs: &Value, refs: usize) -> Value {
    let node = resolve(node, defs, refs);
    let Value::Object(map) = &node else {
        return json!({});
    };
    if let Some(alternatives) = alternatives(map) {
        // The union of the alternatives' types, when each has one; otherwise anything.
        let mut types: Vec<Value> = Vec::new();
        for alt in alternatives {
            let Some(ty) = type_only(alt, defs, refs + 1).get("type").cloned() else {
                return json!({});
            };
            let listed = match ty {
                Value::Array(many) => many,
                one => vec![one],
            };
            for ty in listed {
                if !types.contains(&ty) {
                    types.push(ty);
                }
            }
        }
        return match types.len() {
            0 => json!({}),
            1 => json!({ "type": types[0] }),
            _ => json!({ "type": types }),
        };
    }
    let mut out = Map::new();
    for key in ["type", "enum", "const"] {
        if let Some(value) = map.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    // An enumeration of strings says its type by its values.
    if out.contains_key("enum") && out.get("type") == Some(&json!("string")) {
        out.remove("type");
    }
    Value::Object(out)
}

/// `anyOf` or `oneOf` of a schema (both checked the same way by an answer that matches
/// exactly one alternative).
fn alternatives(map: &Map<String, Value>) -> Option<&Vec<Value>> {
    map.get("anyOf")
        .or_else(|| map.get("oneOf"))
        .and_then(Value::as_array)
}

/// `node` with its `$ref` (to `#/$defs/…` or `#/definitions/…`) followed; an `allOf` of one
/// schema is that schema.
fn resolve(node: &Value, defs: &Value, refs: usize) -> Value {
    let mut node = node.clone();
    for _ in refs..MAX_REFS {
        let next = match &node {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                    let name = reference.rsplit('/').next().unwrap_or_default();
                    defs.get(name).cloned()
                } else if let Some(Value::Array(all)) = map.get("allOf")
                    && all.len() == 1
                {
                    all.first().cloned()
                } else {
                    None
                }
            }
            _ => None,
        };
        match next {
            Some(next) => node = next,
            None => return node,
        }
    }
    json!({})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_keep_their_types_and_nested_shapes_are_typed_only() {
        let full = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "description": "An item.",
            "type": "object",
            "properties": {
                "title": {"type": "string", "description": "Its title."},
                "points": {"type": ["integer", "null"], "minimum": 0},
                "status": {"type": "string", "enum": ["todo", "done"]},
                "parent": {"anyOf": [{"$ref": "#/$defs/Ref"}, {"type": "null"}]},
                "labels": {"type": "array", "items": {"type": "string"}},
                "kind": {"$ref": "#/$defs/Kind"}
            },
            "required": ["title", "status"],
            "$defs": {
                "Ref": {"type": "object", "properties": {"id": {"type": "string"}}},
                "Kind": {"type": "string", "enum": ["task", "epic"]}
            }
        });
        assert_eq!(
            lean_data(&full),
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "points": {"type": ["integer", "null"]},
                    "status": {"enum": ["todo", "done"]},
                    "parent": {"type": ["object", "null"]},
                    "labels": {"type": "array"},
                    "kind": {"enum": ["task", "epic"]}
                },
                "required": ["title", "status"]
            })
        );
    }

    #[test]
    fn alternatives_and_lists_stay_checkable() {
        let full = json!({
            "anyOf": [
                {"$ref": "#/$defs/A"},
                {"type": "object", "properties": {"error": {"type": "object"}}, "required": ["error"]}
            ],
            "$defs": {"A": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}
        });
        // Objects all: one object that each satisfies.
        assert_eq!(
            lean_data(&full),
            json!({"type": "object", "properties": {
                "id": {"type": "string"}, "error": {"type": "object"}
            }})
        );
        let mixed = json!({"anyOf": [
            {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            {"type": "object", "properties": {"n": {"type": "string"}, "m": {"type": "string"}}, "required": ["n", "m"]},
            {"type": "null"}
        ]});
        assert_eq!(lean_data(&mixed)["anyOf"][0]["required"], json!(["n"]));
        let objects = json!({"anyOf": [
            {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            {"type": "object", "properties": {"n": {"type": "string"}, "m": {"type": "string"}}, "required": ["n", "m"]}
        ]});
        assert_eq!(
            lean_data(&objects),
            json!({"type": "object", "properties": {
                "n": {"type": ["integer", "string"]}, "m": {"type": "string"}
            }, "required": ["n"]})
        );
        let list = json!({"type": "array", "items": {"$ref": "#/$defs/A"}, "$defs": {"A": {
            "type": "object", "properties": {"id": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}
        }}});
        assert_eq!(
            lean_data(&list),
            json!({"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "tags": {"type": "array"}
            }}})
        );
    }

    #[test]
    fn a_type_that_contains_itself_ends() {
        let full = json!({"$ref": "#/$defs/A", "$defs": {"A": {"$ref": "#/$defs/A"}}});
        assert_eq!(lean_data(&full), json!({"type": "object"}));
    }
}
