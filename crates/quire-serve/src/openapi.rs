//! The OpenAPI 3.1 document served at `/api/openapi.json`.
//!
//! Routes, parameters, responses and result schemas are written in `openapi.json`. Every JSON
//! request body is generated here from the type its handler deserializes (with `schemars`: the
//! fields, which are required, unknown fields refused, the doc comments as descriptions, the
//! limits from `quire_app::limits`), so a body is described once, on its type: a field added to
//! a body is in the document, and a limit changed in the core is the limit the document states.

use std::collections::HashMap;
use std::sync::LazyLock;

use quire_app::args::ProposeNoteChangeArgs;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Value, json};

use crate::article::ArticleAskBody;
use crate::deep_audit::DeepBody;
use crate::findings::SnoozeBody;
use crate::generate::{AskBody, DraftBody, ReflectBody};
use crate::moc::{CanvasBody, MocBody};
use crate::tools::{
    BatchBody, CompleteBody, DataviewBody, FlashcardsBody, SplitBody, TransformBody,
};

/// The hand-written part: everything but the generated request bodies.
const WRITTEN: &str = include_str!("openapi.json");

/// The whole document, built once.
static DOCUMENT: LazyLock<String> = LazyLock::new(|| build(WRITTEN).to_string());

/// The served document.
pub(crate) fn document() -> &'static str {
    &DOCUMENT
}

/// Each `POST` route whose JSON body is one of our types, with that type's schema.
fn bodies() -> Vec<(&'static str, Value)> {
    vec![
        ("/api/ask", schema::<AskBody>()),
        ("/api/article/ask", schema::<ArticleAskBody>()),
        ("/api/draft", schema::<DraftBody>()),
        ("/api/reflect", schema::<ReflectBody>()),
        ("/api/audit/deep", schema::<DeepBody>()),
        ("/api/audit/canvas", schema::<CanvasBody>()),
        ("/api/moc", schema::<MocBody>()),
        ("/api/findings/{id}/snooze", schema::<SnoozeBody>()),
        ("/api/flashcards", schema::<FlashcardsBody>()),
        ("/api/split", schema::<SplitBody>()),
        ("/api/transform", schema::<TransformBody>()),
        ("/api/complete", schema::<CompleteBody>()),
        ("/api/dataview", schema::<DataviewBody>()),
        ("/api/batch", schema::<BatchBody>()),
        ("/api/proposals", schema::<ProposeNoteChangeArgs>()),
    ]
}

/// `T`'s JSON Schema (2020-12, the dialect of OpenAPI 3.1), every subschema inline.
fn schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(object) = value.as_object_mut() {
        // The type's Rust name and its doc comment describe the handler, not the API.
        object.remove("title");
        object.remove("description");
    }
    unwrap_descriptions(&mut value);
    value
}

/// Doc comments wrap at 100 columns; a description reads as one paragraph (blank lines kept).
fn unwrap_descriptions(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for (key, inner) in object.iter_mut() {
                match inner {
                    Value::String(text) if key == "description" => {
                        *text = text
                            .split("\n\n")
                            .map(|paragraph| paragraph.split('\n').collect::<Vec<_>>().join(" "))
                            .collect::<Vec<_>>()
                            .join("\n\n");
                    }
                    _ => unwrap_descriptions(inner),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

/// The query parameters the document gives a GET route (path parameters left out), the route
/// written as the document writes it (`/api/notes/{path}`); `None` for a route it does not
/// describe.
pub(crate) fn query_parameters(route: &str) -> Option<&'static [String]> {
    static ROUTES: LazyLock<HashMap<String, Vec<String>>> = LazyLock::new(|| {
        let document: Value = serde_json::from_str(document()).unwrap_or_default();
        let mut routes = HashMap::new();
        for (route, operations) in document["paths"].as_object().into_iter().flatten() {
            let get = &operations["get"];
            if !get.is_object() {
                continue;
            }
            let names = get["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query")
                .filter_map(|p| p["name"].as_str().map(String::from))
                .collect();
            routes.insert(route.clone(), names);
        }
        routes
    });
    ROUTES.get(route).map(Vec::as_slice)
}

/// `written` with each generated request body in place. A route missing from `written` gets
/// a bare entry, so no body type goes undocumented.
fn build(written: &str) -> Value {
    let mut document: Value = match serde_json::from_str(written) {
        Ok(document) => document,
        // Not reached: a unit test parses the file. Serve what there is rather than nothing.
        Err(e) => return json!({ "openapi": "3.1.0", "error": e.to_string() }),
    };
    for (route, schema) in bodies() {
        let operation = &mut document["paths"][route]["post"];
        let required = operation["requestBody"]["required"]
            .as_bool()
            .unwrap_or(true);
        operation["requestBody"] = json!({
            "required": required,
            "content": { "application/json": { "schema": schema } },
        });
    }
    document
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn document() -> Value {
        serde_json::from_str(super::document()).unwrap()
    }

    fn body(route: &str) -> Value {
        document()["paths"][route]["post"]["requestBody"]["content"]["application/json"]["schema"]
            .clone()
    }

    #[test]
    fn a_get_route_takes_the_query_parameters_the_document_lists() {
        let search = query_parameters("/api/search").unwrap();
        for name in ["q", "k", "mode", "where", "explain"] {
            assert!(search.iter().any(|n| n == name), "{name}");
        }
        let note = query_parameters("/api/notes/{path}").unwrap();
        assert!(note.iter().any(|n| n == "lines"));
        assert!(!note.iter().any(|n| n == "path"), "a path parameter");
        assert_eq!(query_parameters("/api/status"), Some(&[][..]));
        assert_eq!(query_parameters("/assets/{name}"), None);
    }

    #[test]
    fn the_written_part_holds_no_request_body_schema_that_a_type_generates() {
        let written: Value = serde_json::from_str(WRITTEN).unwrap();
        for (route, _) in bodies() {
            let operation = &written["paths"][route]["post"];
            assert!(operation.is_object(), "{route} is not in openapi.json");
            assert!(
                operation["requestBody"]["content"]["application/json"]["schema"].is_null(),
                "{route}: its body is generated from its type; remove the written schema"
            );
        }
    }

    #[test]
    fn every_json_body_in_the_document_has_a_schema() {
        let document = document();
        for (route, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let content = &operation["requestBody"]["content"]["application/json"];
                if !content.is_null() {
                    assert!(
                        content["schema"].is_object(),
                        "{method} {route} has a JSON body without a schema"
                    );
                }
            }
        }
    }

    #[test]
    fn a_body_states_the_core_limits_its_fields_and_refuses_other_fields() {
        let ask = body("/api/ask");
        assert_eq!(ask["additionalProperties"], false);
        assert_eq!(ask["required"], json!(["question"]));
        assert_eq!(
            ask["properties"]["question"]["maxLength"],
            quire_app::limits::MAX_QUESTION_CHARS
        );
        assert_eq!(
            ask["properties"]["notes"]["maximum"],
            quire_app::limits::MAX_CONTEXT_NOTES
        );
        assert_eq!(
            ask["properties"]["where"]["maxItems"],
            quire_app::ops::MAX_CONDITIONS
        );
        assert_eq!(ask["properties"]["since"]["format"], "date");
        assert!(
            ask["properties"]["retriever"]["enum"]
                .as_array()
                .unwrap()
                .contains(&json!("tree"))
        );
        let described = ask["properties"]["note"]["description"].as_str().unwrap();
        assert!(described.contains("note_not_found"), "{described}");
        assert!(!described.contains('\n'), "one paragraph: {described:?}");
        let names: Vec<&String> = ask["properties"].as_object().unwrap().keys().collect();
        for name in [
            "question",
            "mode",
            "notes",
            "conversation",
            "retriever",
            "folder",
            "tag",
            "where",
            "since",
            "until",
            "note",
            "expand",
        ] {
            assert!(
                names.iter().any(|n| *n == name),
                "{name} missing: {names:?}"
            );
        }
        // A body the type refuses is one the document refuses: an unknown field.
        let refused = serde_json::from_value::<AskBody>(json!({"question": "q", "k": 3}));
        assert!(refused.is_err());
        let reflect = body("/api/reflect");
        assert_eq!(
            reflect["properties"]["budget"]["maximum"],
            quire_app::limits::MAX_REFLECT_BUDGET
        );
        let snooze = body("/api/findings/{id}/snooze");
        assert_eq!(snooze["required"], json!(["days"]));
        assert_eq!(
            snooze["properties"]["days"]["maximum"],
            quire_app::findings::MAX_SNOOZE_DAYS
        );
        let transform = body("/api/transform");
        assert_eq!(transform["properties"]["instruction"]["maxLength"], 2_000);
        // Each writing tool describes its own fields, not another tool's.
        assert!(body("/api/flashcards")["properties"]["instruction"].is_null());
        let proposals = body("/api/proposals");
        assert_eq!(
            proposals["properties"]["text"]["maxLength"],
            quire_app::limits::MAX_PROPOSED_TEXT_CHARS
        );
    }
}
