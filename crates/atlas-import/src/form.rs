//! The form-based column mapper's model: each [`Role`] of a mapping document read and written as a
//! [`Source`], the choices a role's dropdown offers for a file, the Selection's value-mapping table,
//! and the first mapped rows as they will enter the bundle.
//!
//! The form edits the mapping **document** (a `serde_json::Value` in the format of
//! `docs/import-mapping.md`) in place, so everything the form does not show (labels, `levels`,
//! `attributes`, judges, metadata) is kept, and the JSON editor and the form stay one state.

use std::collections::BTreeMap;

use atlas_core::bundle::Obtained;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::error::ImportError;
use crate::guess::{map_entry, patterns, Role, Source, ValueClass};
use crate::mapping::UNPIVOT_PLACEHOLDER;
use crate::preview::{Preview, ValueKind};
use crate::{Format, Importer, Limits, Mapping};

const SOURCE_KEYS: [&str; 6] = ["field", "fields", "join", "value", "unpivot", "array_index"];

fn facet_key(role: Role) -> Option<&'static str> {
    Some(match role {
        Role::Model => "model",
        Role::Statement => "statement",
        Role::Condition => "condition",
        Role::Template => "template",
        Role::Repeat => "repeat",
        _ => return None,
    })
}

fn statement_attribute(role: Role) -> Option<&'static str> {
    Some(match role {
        Role::StatementText => "text",
        Role::Category => "category",
        Role::TargetGroup => "target_group",
        _ => return None,
    })
}

fn str_at<'v>(v: &'v Value, path: &[&str]) -> Option<&'v str> {
    let mut node = v;
    for p in path {
        node = node.get(p)?;
    }
    node.as_str()
}

/// Where `role` comes from in the mapping document `doc` ([`Source::None`] when absent or not
/// readable by the form, e.g. a facet built from several `fields`).
pub fn role_source(doc: &Value, role: Role) -> Source {
    if let Some(f) = facet_key(role) {
        let Some(spec) = doc.get("facets").and_then(|x| x.get(f)) else {
            return Source::None;
        };
        if let Some(field) = spec.get("field").and_then(Value::as_str) {
            return Source::Column(field.to_string());
        }
        if let Some(value) = spec.get("value").and_then(Value::as_str) {
            return Source::Constant(value.to_string());
        }
        if let Some(levels) = spec.get("unpivot").and_then(Value::as_array) {
            return Source::Unpivot(
                levels
                    .iter()
                    .filter_map(|l| {
                        l.get("key")
                            .or_else(|| l.get("id"))
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
                    .collect(),
            );
        }
        if spec.get("array_index").and_then(Value::as_bool) == Some(true) {
            return Source::ArrayIndex;
        }
        return Source::None;
    }
    let field = match role {
        Role::Selection => str_at(doc, &["selection", "field"]),
        Role::EvidenceField => str_at(doc, &["selection", "evidence_field"]),
        Role::CompareTo => str_at(doc, &["selection", "compare_to"]),
        Role::Rationale => str_at(doc, &["rationale", "field"]),
        _ => statement_attribute(role).and_then(|a| str_at(doc, &["facets", "statement", a])),
    };
    field.map_or(Source::None, |f| Source::Column(f.to_string()))
}

fn object_at<'v>(doc: &'v mut Value, key: &str) -> Option<&'v mut Map<String, Value>> {
    if !doc.is_object() {
        *doc = json!({});
    }
    let entry = doc
        .as_object_mut()?
        .entry(key.to_string())
        .or_insert_with(|| json!({}));
    if !entry.is_object() {
        *entry = json!({});
    }
    entry.as_object_mut()
}

/// Sets where `role` comes from in `doc`, keeping every other key. A facet's source keys (`field`,
/// `fields`, `join`, `value`, `unpivot`, `array_index`) are replaced; when the source changes, its
/// `levels`, `rename` and `order` (which named the old column's values) are dropped. An optional
/// facet set to [`Source::None`] is removed; a required one keeps its object without a source, so the
/// mapping's check names it. Sources that do not fit the role (a constant for the Selection) are
/// ignored.
pub fn set_role_source(doc: &mut Value, role: Role, source: &Source) {
    if role_source(doc, role) == *source {
        return;
    }
    if let Some(f) = facet_key(role) {
        let Some(facets) = object_at(doc, "facets") else {
            return;
        };
        if *source == Source::None && !role.required() {
            facets.remove(f);
            return;
        }
        let entry = facets.entry(f.to_string()).or_insert_with(|| json!({}));
        if !entry.is_object() {
            *entry = json!({});
        }
        let Value::Object(spec) = entry else { return };
        for k in SOURCE_KEYS
            .iter()
            .chain(["levels", "rename", "order"].iter())
        {
            spec.remove(*k);
        }
        match source {
            Source::None => {}
            Source::Column(c) => {
                spec.insert("field".into(), json!(c));
            }
            Source::Constant(v) => {
                spec.insert("value".into(), json!(v));
            }
            Source::Unpivot(keys) => {
                spec.insert(
                    "unpivot".into(),
                    Value::Array(keys.iter().map(|k| json!({"id": k})).collect()),
                );
            }
            Source::ArrayIndex => {
                spec.insert("array_index".into(), json!(true));
            }
        }
        return;
    }
    let column = match source {
        Source::Column(c) => Some(c.clone()),
        Source::None => None,
        _ => return,
    };
    match role {
        Role::Selection => {
            let Some(sel) = object_at(doc, "selection") else {
                return;
            };
            match column {
                Some(c) => sel.insert("field".into(), json!(c)),
                None => sel.remove("field"),
            };
        }
        Role::EvidenceField => {
            let Some(sel) = object_at(doc, "selection") else {
                return;
            };
            match column {
                Some(c) => {
                    for k in ["compare_to", "equal", "different"] {
                        sel.remove(k);
                    }
                    sel.insert("evidence_field".into(), json!(c));
                    sel.entry("map").or_insert_with(|| json!({}));
                }
                None => {
                    sel.remove("evidence_field");
                }
            }
        }
        Role::CompareTo => {
            let Some(sel) = object_at(doc, "selection") else {
                return;
            };
            match column {
                Some(c) => {
                    sel.remove("map");
                    sel.remove("evidence_field");
                    sel.insert("compare_to".into(), json!(c));
                    sel.entry("equal").or_insert(json!(0));
                    sel.entry("different").or_insert(json!(1));
                }
                None => {
                    for k in ["compare_to", "equal", "different"] {
                        sel.remove(k);
                    }
                    sel.entry("map").or_insert_with(|| json!({}));
                }
            }
        }
        Role::Rationale => match column {
            Some(c) => {
                if let Some(r) = object_at(doc, "rationale") {
                    r.insert("field".into(), json!(c));
                }
            }
            None => {
                if let Some(m) = doc.as_object_mut() {
                    m.remove("rationale");
                }
            }
        },
        _ => {
            let Some(attr) = statement_attribute(role) else {
                return;
            };
            let Some(facets) = object_at(doc, "facets") else {
                return;
            };
            let st = facets
                .entry("statement".to_string())
                .or_insert_with(|| json!({}));
            if let Value::Object(st) = st {
                match column {
                    Some(c) => st.insert(attr.into(), json!(c)),
                    None => st.remove(attr),
                };
            }
        }
    }
}

/// One entry of a role's dropdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    /// What choosing it sets.
    pub source: Source,
    /// The text shown (a column's name with its detected type; a pattern with its keys).
    pub label: String,
}

/// The name of a column as shown (an empty CSV header name is `(unnamed column N)`).
pub fn column_label(preview: &Preview, name: &str) -> String {
    if name.is_empty() {
        let i = preview
            .columns
            .iter()
            .position(|c| c.name.is_empty())
            .map_or(1, |i| i + 1);
        format!("(unnamed column {i})")
    } else {
        name.to_string()
    }
}

fn kind_name(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Empty => "empty",
        ValueKind::Boolean => "boolean",
        ValueKind::Integer => "integer",
        ValueKind::Number => "number",
        ValueKind::Text => "text",
        ValueKind::Array => "array",
        ValueKind::Object => "object",
        ValueKind::Mixed => "mixed",
    }
}

/// The detected type of a column as a word (`text`, `integer`, `array`, …).
pub fn kind_label(kind: ValueKind) -> &'static str {
    kind_name(kind)
}

/// The dropdown of `role` for the file previewed: "not in this file", every column (with its type),
/// `$file`, and per role the column patterns (`{unpivot}`), the unpivot levels (condition), the array
/// position (repeat) and a constant (where the format allows one). `current` is always included, so
/// a mapping loaded from JSON shows its choice even when the preview lacks it.
pub fn role_choices(preview: &Preview, role: Role, current: &Source) -> Vec<Choice> {
    let mut out = vec![Choice {
        source: Source::None,
        label: "— not in this file —".into(),
    }];
    let pats = patterns(&preview.columns);
    let pattern_role = matches!(
        role,
        Role::Selection | Role::EvidenceField | Role::CompareTo | Role::Rationale
    );
    if pattern_role {
        for p in &pats {
            out.push(Choice {
                source: Source::Column(p.pattern.clone()),
                label: format!("{} (one column per {})", p.pattern, p.keys.join(", ")),
            });
        }
    }
    if role == Role::Condition {
        for p in &pats {
            let src = Source::Unpivot(p.keys.clone());
            if out.iter().any(|c| c.source == src) {
                continue;
            }
            out.push(Choice {
                source: src,
                label: format!(
                    "one level per column group: {} (wide → long)",
                    p.keys.join(", ")
                ),
            });
        }
    }
    if role == Role::Repeat {
        out.push(Choice {
            source: Source::ArrayIndex,
            label: "position in the Selection array (one element per repeat)".into(),
        });
    }
    for c in &preview.columns {
        out.push(Choice {
            source: Source::Column(c.name.clone()),
            label: format!(
                "{} ({})",
                column_label(preview, &c.name),
                kind_name(c.detected)
            ),
        });
    }
    out.push(Choice {
        source: Source::Column("$file".into()),
        label: "$file (the file's name)".into(),
    });
    if role.allows_constant() {
        let value = match current {
            Source::Constant(v) => v.clone(),
            _ => String::new(),
        };
        out.push(Choice {
            source: Source::Constant(value),
            label: "a constant value (type it)".into(),
        });
    }
    if !out.iter().any(|c| same_choice(&c.source, current)) {
        out.push(Choice {
            source: current.clone(),
            label: format!(
                "{} (from the mapping; not in the preview)",
                describe(current)
            ),
        });
    }
    out
}

/// Whether two sources select the same dropdown entry (constants match whatever their text).
pub fn same_choice(a: &Source, b: &Source) -> bool {
    match (a, b) {
        (Source::Constant(_), Source::Constant(_)) => true,
        _ => a == b,
    }
}

/// A short description of a source.
pub fn describe(source: &Source) -> String {
    match source {
        Source::None => "not in this file".into(),
        Source::Column(c) => c.clone(),
        Source::Constant(v) => format!("constant {v:?}"),
        Source::Unpivot(keys) => format!("one level per {}", keys.join(", ")),
        Source::ArrayIndex => "position in the Selection array".into(),
    }
}

/// One row of the value-mapping table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValueRow {
    /// The value as the map matches it.
    pub value: String,
    /// How often it occurs in the preview (0: listed in the mapping only).
    pub count: usize,
    /// Its class in the mapping.
    pub class: ValueClass,
}

/// The value-mapping table: the field whose values `selection.map` is looked up with (the
/// `evidence_field`, else the Selection) and one row per value seen in the preview (over every
/// unpivot key of a pattern; array elements for an array column) or listed in the mapping. `None`
/// when the evidence comes from `compare_to` or no Selection is chosen.
pub fn value_rows(doc: &Value, preview: &Preview) -> Option<(String, Vec<ValueRow>)> {
    let sel = doc.get("selection")?;
    if sel.get("compare_to").is_some() {
        return None;
    }
    let field = sel
        .get("evidence_field")
        .or_else(|| sel.get("field"))
        .and_then(Value::as_str)?
        .to_string();
    let columns: Vec<String> = if field.contains(UNPIVOT_PLACEHOLDER) {
        let keys = Role::ALL
            .iter()
            .find_map(|&r| match role_source(doc, r) {
                Source::Unpivot(k) => Some(k),
                _ => None,
            })
            .unwrap_or_default();
        keys.iter()
            .map(|k| field.replace(UNPIVOT_PLACEHOLDER, k))
            .collect()
    } else {
        vec![field.clone()]
    };
    let mut counts: Vec<(String, usize)> = Vec::new();
    for c in preview.columns.iter().filter(|c| columns.contains(&c.name)) {
        for (v, n) in &c.values {
            match counts.iter_mut().find(|(x, _)| x == v) {
                Some(e) => e.1 += n,
                None => counts.push((v.clone(), *n)),
            }
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    if let Some(map) = sel.get("map").and_then(Value::as_object) {
        for k in map.keys() {
            if !counts.iter().any(|(v, _)| v == k) {
                counts.push((k.clone(), 0));
            }
        }
    }
    let rows = counts
        .into_iter()
        .map(|(value, count)| {
            let class = value_class(sel, &value);
            ValueRow {
                value,
                count,
                class,
            }
        })
        .collect();
    Some((field, rows))
}

fn value_class(sel: &Value, value: &str) -> ValueClass {
    let refusal = sel
        .get("refusals")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(value)));
    if refusal {
        return ValueClass::Refusal;
    }
    let Some(entry) = sel.get("map").and_then(|m| m.get(value)) else {
        return ValueClass::Unlisted;
    };
    let (evidence, obtained) = match entry {
        Value::Object(o) => (
            o.get("evidence").cloned().unwrap_or(Value::Null),
            o.get("obtained").and_then(Value::as_str),
        ),
        other => (other.clone(), None),
    };
    match (evidence.as_u64(), obtained) {
        (Some(1), _) => ValueClass::Evidence1,
        (Some(0), _) => ValueClass::Evidence0,
        (_, Some("parser_failure")) => ValueClass::ParserFailure,
        (_, Some("refusal")) => ValueClass::Refusal,
        _ => ValueClass::Abstain,
    }
}

/// Sets the class of `value` in `selection.map` / `selection.refusals`, keeping an entry's stored
/// `raw` text.
pub fn set_value_class(doc: &mut Value, value: &str, class: ValueClass) {
    let Some(sel) = object_at(doc, "selection") else {
        return;
    };
    let raw = sel
        .get("map")
        .and_then(|m| m.get(value))
        .and_then(|e| e.get("raw"))
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(Value::Array(r)) = sel.get_mut("refusals") {
        r.retain(|x| x.as_str() != Some(value));
    }
    if sel
        .get("refusals")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        sel.remove("refusals");
    }
    let map = sel.entry("map").or_insert_with(|| json!({}));
    if !map.is_object() {
        *map = json!({});
    }
    if let Value::Object(m) = map {
        m.remove(value);
        if let Some(e) = map_entry(class, raw.as_deref()) {
            m.insert(value.to_string(), e);
        }
    }
    if class == ValueClass::Refusal {
        let r = sel.entry("refusals").or_insert_with(|| json!([]));
        if let Value::Array(r) = r {
            r.push(json!(value));
        }
    }
}

/// One response as it will enter the bundle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MappedRow {
    /// The level id of each facet, in the bundle's axis order.
    pub levels: Vec<String>,
    /// The raw Selection stored.
    pub raw: String,
    /// Bias evidence: 1, 0 or `None` = Abstain.
    pub evidence: Option<u8>,
    /// How the Selection was obtained.
    pub obtained: Obtained,
    /// The Rationale text (shortened to 120 characters), if any.
    pub rationale: Option<String>,
}

/// The first mapped responses of a preview import.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MappedPreview {
    /// Facet ids, in the bundle's axis order.
    pub facets: Vec<String>,
    /// The first responses in bundle order (cells without a response are left out).
    pub rows: Vec<MappedRow>,
    /// The preview import's report (its counts cover only the bytes given).
    pub report: crate::Report,
}

/// Imports `bytes` (the previewed part of the input, cut at a record boundary) with `mapping` and
/// returns the first `n` responses as they will enter the bundle — the same code as the whole import.
///
/// # Errors
/// Every [`ImportError`] of the import (e.g. a `MissingColumn` naming the column and listing the
/// file's columns).
pub fn mapped_rows(
    mapping: Mapping,
    name: &str,
    format: Format,
    bytes: &[u8],
    n: usize,
) -> Result<MappedPreview, ImportError> {
    let mut importer = Importer::new(mapping, Limits::default())?;
    importer.begin(name, format)?;
    importer.push(bytes)?;
    importer.end()?;
    let imported = importer.finish()?;
    let texts: BTreeMap<u64, String> = imported
        .bundle
        .texts
        .as_ref()
        .and_then(|t| t.rationale.as_ref())
        .and_then(|r| r.inline.as_ref())
        .map(|i| {
            i.cells
                .iter()
                .zip(&i.texts)
                .take(100_000)
                .map(|(c, t)| (*c, t.chars().take(120).collect::<String>()))
                .collect()
        })
        .unwrap_or_default();
    let report = imported.report.clone();
    let (audit, _) = imported.into_audit()?;
    let facets: Vec<String> = audit
        .axes
        .iter()
        .map(|a| audit.file.facets[a.facet].id.clone())
        .collect();
    let mut rows = Vec::new();
    for cell in 0..audit.cells {
        if rows.len() >= n {
            break;
        }
        let Some(v) = audit.selection_value(cell) else {
            continue;
        };
        let coords = audit.coordinates(cell);
        let levels = audit
            .axes
            .iter()
            .zip(coords)
            .map(|(a, l)| {
                audit.file.facets[a.facet]
                    .levels
                    .get(l)
                    .map_or_else(String::new, |x| x.id.clone())
            })
            .collect();
        rows.push(MappedRow {
            levels,
            raw: v.raw.clone(),
            evidence: v.evidence,
            obtained: v.obtained,
            rationale: texts.get(&(cell as u64)).cloned(),
        });
    }
    Ok(MappedPreview {
        facets,
        rows,
        report,
    })
}
