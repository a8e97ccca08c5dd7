//! Turns mapped records into a bundle: facet levels, one compact observation per response, and at the
//! end the dense matrix, the Selection dictionary, judge columns and inline Rationale texts.
//!
//! Rules (documented for users in `docs/import-mapping.md`):
//!
//! - a record whose facet value is missing, empty, an array or an object, or not among the facet's
//!   listed `levels`, is skipped as a whole (reported);
//! - facet values are read before any level is created, so a skipped record never adds a level;
//! - the Selection: missing / `null` / empty → raw `""`, Abstain, `parser_failure`; a value listed in
//!   `refusals` → Abstain, `refusal`; outside `only` → Abstain, `regex` (counted as unmapped); then `map`
//!   (or `compare_to`); a value the map does not list → Abstain, `regex` (counted as unmapped) or an
//!   error under `"unmapped": "error"`;
//! - an array Selection gives one response per element, at repeat level `1`, `2`, … (the facet marked
//!   `array_index`); the Rationale and judge fields are then read element by element (they may be
//!   shorter); a scalar Selection with an `array_index` facet is repeat `1`;
//! - two responses on the same cell: the first (in input order) is kept, the later one is reported as
//!   a duplicate;
//! - a level attribute that differs between records of the same level keeps its first value; the
//!   number of differing records is reported.

use std::collections::{BTreeMap, HashMap};

use atlas_core::bundle::{
    encode_selection_codes, facet_ids, BundleFile, Facet, JudgeColumn, Level, LikelihoodColumn,
    Metadata, Obtained, Production, Responses, SelectionColumn, SelectionValue, TextCells,
    TextField, Texts, FORMAT_NAME, FORMAT_VERSION, NO_RESPONSE_CODE,
};
use serde_json::Value;

use crate::error::ImportError;
use crate::mapping::{
    label_code, spec_attribute_refs, LevelOrder, MapEntry, Mapping, Unmapped, UNPIVOT_PLACEHOLDER,
};
use crate::record::{Ctx, FieldRef, RecordData, Val};
use crate::report::{AttributeConflict, Duplicate, Report, Skip, ValueCount, MAX_EXAMPLES};
use crate::source::Consumer;
use crate::Limits;

/// Skip reason kinds of the mapping stage.
pub(crate) mod reasons {
    pub const MISSING_FACET: &str = "missing or empty facet value";
    pub const BAD_FACET: &str = "facet value is an array or an object";
    pub const UNLISTED_LEVEL: &str = "value not among the facet's listed levels";
    pub const SELECTION_ARRAY: &str =
        "Selection is an array but no facet is `array_index` (arrays of repeats need one)";
    pub const SELECTION_OBJECT: &str = "Selection is an object or a nested array";
    pub const TEXT_SHAPE: &str =
        "Rationale or judge value does not match the Selection (array vs scalar, or an object)";
    pub const BAD_LIKELIHOOD: &str = "likelihood readout malformed (readout dropped)";
}

#[derive(Debug)]
enum Kind {
    /// Level id from one or more fields (joined).
    Fields(Vec<String>),
    Const,
    Unpivot,
    ArrayIndex,
}

#[derive(Debug)]
struct FacetState {
    id: String,
    label: Option<String>,
    kind: Kind,
    join: String,
    rename: BTreeMap<String, String>,
    /// Only these level ids are allowed (listed in the mapping).
    listed: bool,
    order: LevelOrder,
    ids: Vec<String>,
    index: HashMap<String, u32>,
    attrs: Vec<BTreeMap<String, Value>>,
    /// Attribute name → mapping field reference.
    attr_refs: Vec<(String, String)>,
    /// Per attribute: (records that differed, first level).
    conflicts: BTreeMap<String, (u64, String)>,
}

impl FacetState {
    fn intern(&mut self, id: &str) -> u32 {
        if let Some(&i) = self.index.get(id) {
            return i;
        }
        let i = self.ids.len() as u32;
        self.ids.push(id.to_string());
        self.index.insert(id.to_string(), i);
        self.attrs.push(BTreeMap::new());
        i
    }
}

/// Field references of the mapping compiled for the current input.
#[derive(Debug, Default)]
struct Refs {
    facet_fields: Vec<Vec<FieldRef>>,
    facet_attrs: Vec<Vec<FieldRef>>,
    /// Per unpivot level (one entry without unpivot).
    selection: Vec<FieldRef>,
    evidence: Vec<Option<FieldRef>>,
    compare: Vec<Option<FieldRef>>,
    rationale: Vec<Option<FieldRef>>,
    /// `[judge][unpivot level]`.
    judges: Vec<Vec<FieldRef>>,
    /// Log-probability sums, token counts, stereotyped index.
    likelihood: Option<(FieldRef, Option<FieldRef>, FieldRef)>,
}

/// One likelihood readout: stereotyped index, per-candidate sums and token counts.
type Readout = (u8, Vec<Option<f64>>, Option<Vec<Option<u32>>>);

/// The mapping field names after `{unpivot}` substitution, per unpivot level.
#[derive(Debug)]
struct Names {
    selection: Vec<String>,
    evidence: Vec<Option<String>>,
    compare: Vec<Option<String>>,
    rationale: Vec<Option<String>>,
    judges: Vec<Vec<String>>,
}

/// The bundle builder; one per import, fed by every input in turn.
#[derive(Debug)]
pub(crate) struct Builder {
    mapping: Mapping,
    limits: Limits,
    facets: Vec<FacetState>,
    unpivot_facet: Option<usize>,
    array_facet: Option<usize>,
    names: Names,
    refs: Refs,
    inputs: Vec<String>,
    /// The current input's file stem (`$file`).
    stem: String,
    // Selection dictionary.
    values: Vec<SelectionValue>,
    value_index: HashMap<(String, Option<u8>, Obtained), u8>,
    map: HashMap<String, (Option<u8>, Obtained, Option<String>)>,
    only: Option<std::collections::HashSet<String>>,
    refusals: std::collections::HashSet<String>,
    judge_maps: Vec<HashMap<String, u8>>,
    // Observations, one per response read.
    obs_levels: Vec<u32>,
    obs_code: Vec<u8>,
    obs_text: Vec<u32>,
    obs_judges: Vec<u8>,
    /// Input index (high 16 bits) and record number (low 48 bits).
    obs_origin: Vec<u64>,
    /// Per observation: index into `readouts`, or `NO_TEXT`.
    obs_readout: Vec<u32>,
    readouts: Vec<Readout>,
    texts: Vec<String>,
    pub report: Report,
    record_had_response: bool,
}

const NO_TEXT: u32 = u32::MAX;

fn substitute(field: &str, key: &str) -> String {
    field.replace(UNPIVOT_PLACEHOLDER, key)
}

impl Builder {
    pub fn new(mapping: Mapping, limits: Limits) -> Result<Self, ImportError> {
        mapping.check()?;
        let mut facets = Vec::new();
        let mut unpivot_facet = None;
        let mut array_facet = None;
        let mut unpivot_keys: Vec<String> = vec![String::new()];
        for (f, (id, spec)) in mapping.facet_specs().into_iter().enumerate() {
            let kind = if let Some(field) = &spec.field {
                Kind::Fields(vec![field.clone()])
            } else if let Some(fields) = &spec.fields {
                Kind::Fields(fields.clone())
            } else if spec.value.is_some() {
                Kind::Const
            } else if spec.unpivot.is_some() {
                unpivot_facet = Some(f);
                Kind::Unpivot
            } else {
                array_facet = Some(f);
                Kind::ArrayIndex
            };
            let order = spec.order.unwrap_or(if matches!(kind, Kind::ArrayIndex) {
                LevelOrder::Natural
            } else {
                LevelOrder::FirstSeen
            });
            let mut state = FacetState {
                id: id.clone(),
                label: spec.label.clone(),
                kind,
                join: spec.join.clone().unwrap_or_else(|| "/".to_string()),
                rename: spec.rename.clone(),
                listed: spec.levels.is_some(),
                order,
                ids: Vec::new(),
                index: HashMap::new(),
                attrs: Vec::new(),
                attr_refs: spec_attribute_refs(spec)
                    .into_iter()
                    .map(|(a, r)| (a.to_string(), r.clone()))
                    .collect(),
                conflicts: BTreeMap::new(),
            };
            if let Some(v) = &spec.value {
                state.intern(v);
            }
            if let Some(levels) = &spec.levels {
                for l in levels {
                    state.intern(l);
                }
            }
            if let Some(levels) = &spec.unpivot {
                unpivot_keys.clear();
                for l in levels {
                    let i = state.intern(&l.id) as usize;
                    state.attrs[i] = l.attributes.clone().into_iter().collect();
                    unpivot_keys.push(l.key.clone().unwrap_or_else(|| l.id.clone()));
                }
            }
            facets.push(state);
        }
        let sel = &mapping.selection;
        let names = Names {
            selection: unpivot_keys
                .iter()
                .map(|k| substitute(&sel.field, k))
                .collect(),
            evidence: unpivot_keys
                .iter()
                .map(|k| sel.evidence_field.as_deref().map(|f| substitute(f, k)))
                .collect(),
            compare: unpivot_keys
                .iter()
                .map(|k| sel.compare_to.as_deref().map(|f| substitute(f, k)))
                .collect(),
            rationale: unpivot_keys
                .iter()
                .map(|k| mapping.rationale.as_ref().map(|r| substitute(&r.field, k)))
                .collect(),
            judges: mapping
                .judges
                .iter()
                .map(|j| {
                    unpivot_keys
                        .iter()
                        .map(|k| substitute(&j.field, k))
                        .collect()
                })
                .collect(),
        };
        let map = sel
            .map
            .iter()
            .flatten()
            .map(|(k, e)| {
                let v = match e {
                    MapEntry::Evidence(ev) => (*ev, Obtained::Regex, None),
                    MapEntry::Full(f) => (
                        f.evidence,
                        f.obtained.unwrap_or(Obtained::Regex),
                        f.raw.clone(),
                    ),
                };
                (k.clone(), v)
            })
            .collect();
        let judge_maps = mapping
            .judges
            .iter()
            .map(|j| {
                j.map
                    .iter()
                    .filter_map(|(k, l)| label_code(l).map(|c| (k.clone(), c)))
                    .collect()
            })
            .collect();
        Ok(Builder {
            only: sel.only.as_ref().map(|o| o.iter().cloned().collect()),
            refusals: sel.refusals.iter().cloned().collect(),
            map,
            judge_maps,
            facets,
            unpivot_facet,
            array_facet,
            names,
            refs: Refs::default(),
            inputs: Vec::new(),
            stem: String::new(),
            values: Vec::new(),
            value_index: HashMap::new(),
            obs_levels: Vec::new(),
            obs_code: Vec::new(),
            obs_text: Vec::new(),
            obs_judges: Vec::new(),
            obs_origin: Vec::new(),
            obs_readout: Vec::new(),
            readouts: Vec::new(),
            texts: Vec::new(),
            report: Report::default(),
            record_had_response: false,
            mapping,
            limits,
        })
    }

    /// The input format the mapping names, if any.
    pub fn format(&self) -> Option<crate::Format> {
        self.mapping.input.format
    }

    /// Starts a new input: JSON references are compiled now, CSV ones when the header arrives.
    pub fn begin_input(&mut self, name: &str, json: bool) {
        self.inputs.push(name.to_string());
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        self.stem = match base.rfind('.') {
            Some(dot) if dot > 0 => base[..dot].to_string(),
            _ => base.to_string(),
        };
        if json {
            self.refs = self.compile(&|_, n| Ok(FieldRef::json(n)));
        }
    }

    fn compile(&self, resolve: &dyn Fn(&str, &str) -> Result<FieldRef, ImportError>) -> Refs {
        // `compile_checked` with an infallible resolver.
        self.compile_checked(resolve).unwrap_or_default()
    }

    fn compile_checked(
        &self,
        resolve: &dyn Fn(&str, &str) -> Result<FieldRef, ImportError>,
    ) -> Result<Refs, ImportError> {
        let mut refs = Refs::default();
        for f in &self.facets {
            let fields = match &f.kind {
                Kind::Fields(names) => names
                    .iter()
                    .map(|n| resolve(&format!("facets.{}", f.id), n))
                    .collect::<Result<Vec<_>, _>>()?,
                _ => Vec::new(),
            };
            refs.facet_fields.push(fields);
            refs.facet_attrs.push(
                f.attr_refs
                    .iter()
                    .map(|(a, n)| resolve(&format!("facets.{}.{a}", f.id), n))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        let n = &self.names;
        for u in 0..n.selection.len() {
            refs.selection
                .push(resolve("selection.field", &n.selection[u])?);
            refs.evidence.push(
                n.evidence[u]
                    .as_deref()
                    .map(|f| resolve("selection.evidence_field", f))
                    .transpose()?,
            );
            refs.compare.push(
                n.compare[u]
                    .as_deref()
                    .map(|f| resolve("selection.compare_to", f))
                    .transpose()?,
            );
            refs.rationale.push(
                n.rationale[u]
                    .as_deref()
                    .map(|f| resolve("rationale.field", f))
                    .transpose()?,
            );
        }
        if let Some(l) = &self.mapping.likelihood {
            refs.likelihood = Some((
                resolve("likelihood.logprob", &l.logprob)?,
                l.tokens
                    .as_deref()
                    .map(|t| resolve("likelihood.tokens", t))
                    .transpose()?,
                resolve("likelihood.stereotyped", &l.stereotyped)?,
            ));
        }
        for (j, per_u) in n.judges.iter().enumerate() {
            refs.judges.push(
                per_u
                    .iter()
                    .map(|f| resolve(&format!("judges[{j}].field"), f))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        Ok(refs)
    }

    fn input_index(&self) -> u64 {
        (self.inputs.len().saturating_sub(1) as u64) & 0xFFFF
    }

    fn note_skip(
        &mut self,
        input: &str,
        record: u64,
        line: u64,
        field: &str,
        kind: &'static str,
        detail: &str,
    ) -> Result<(), ImportError> {
        let reason = if detail.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}: {detail}")
        };
        if self.mapping.strict {
            return Err(ImportError::Record {
                input: input.to_string(),
                record,
                line,
                field: field.to_string(),
                message: format!("{reason} (the mapping is strict)"),
            });
        }
        *self
            .report
            .skipped_by_reason
            .entry(kind.to_string())
            .or_insert(0) += 1;
        if self.report.skipped.len() < MAX_EXAMPLES {
            self.report.skipped.push(Skip {
                input: input.to_string(),
                record,
                line,
                field: field.to_string(),
                reason,
            });
        }
        Ok(())
    }

    fn skip_value(
        &mut self,
        ctx: &Ctx<'_>,
        field: &str,
        kind: &'static str,
        detail: &str,
    ) -> Result<(), ImportError> {
        self.report.values_skipped += 1;
        let input = self.inputs.last().cloned().unwrap_or_default();
        self.note_skip(&input, ctx.record, ctx.line, field, kind, detail)
    }

    /// The level id of every field-sourced facet of a record, or why the record is skipped:
    /// (field, reason kind, detail).
    fn facet_values(
        &self,
        ctx: &Ctx<'_>,
    ) -> Result<Vec<Option<String>>, (String, &'static str, String)> {
        let mut values = Vec::with_capacity(self.facets.len());
        for (facet, refs) in self.facets.iter().zip(&self.refs.facet_fields) {
            let Kind::Fields(names) = &facet.kind else {
                values.push(None);
                continue;
            };
            let mut parts: Vec<String> = Vec::with_capacity(names.len());
            for (name, r) in names.iter().zip(refs) {
                match ctx.get(r) {
                    Val::Text(t) => parts.push(t.into_owned()),
                    v @ (Val::Missing | Val::Null) => {
                        let detail = format!("facet {} ({})", facet.id, v.kind());
                        return Err((name.clone(), reasons::MISSING_FACET, detail));
                    }
                    v @ (Val::Array(_) | Val::Object) => {
                        let detail = format!("facet {} ({})", facet.id, v.kind());
                        return Err((name.clone(), reasons::BAD_FACET, detail));
                    }
                }
            }
            let joined = parts.join(&facet.join);
            let id = facet.rename.get(&joined).cloned().unwrap_or(joined);
            if facet.listed && !facet.index.contains_key(&id) {
                let detail = format!("facet {}: {id:?}", facet.id);
                let name = names.first().cloned().unwrap_or_default();
                return Err((name, reasons::UNLISTED_LEVEL, detail));
            }
            values.push(Some(id));
        }
        Ok(values)
    }

    fn process(&mut self, ctx: &Ctx<'_>) -> Result<(), ImportError> {
        let nf = self.facets.len();
        // 1. Facet values, before any level is created.
        let values = match self.facet_values(ctx) {
            Ok(values) => values,
            Err((field, kind, detail)) => {
                self.report.records_skipped += 1;
                let input = self.inputs.last().cloned().unwrap_or_default();
                return self.note_skip(&input, ctx.record, ctx.line, &field, kind, &detail);
            }
        };
        // 2. Levels and their attributes.
        let mut base = vec![0u32; nf];
        for (f, value) in values.iter().enumerate() {
            if let Some(id) = value {
                let level = self.facets[f].intern(id);
                base[f] = level;
                self.set_attributes(f, level as usize, ctx);
            }
        }
        // 3. Responses, per unpivot level.
        self.record_had_response = false;
        let units = self.names.selection.len();
        for u in 0..units {
            if let Some(uf) = self.unpivot_facet {
                base[uf] = u as u32;
            }
            self.responses(ctx, u, &mut base)?;
        }
        if self.record_had_response {
            self.report.records_imported += 1;
        }
        Ok(())
    }

    fn set_attributes(&mut self, f: usize, level: usize, ctx: &Ctx<'_>) {
        let facet = &mut self.facets[f];
        for (k, r) in self.refs.facet_attrs[f].iter().enumerate() {
            let Some((name, _)) = facet.attr_refs.get(k) else {
                continue;
            };
            let value = match ctx.get(r) {
                Val::Missing | Val::Null => continue,
                // The format's boolean condition attributes stay booleans when the input has them so.
                Val::Text(_)
                    if matches!(name.as_str(), "has_selection" | "in_reference")
                        && matches!(ctx.node(r), Some(Value::Bool(_))) =>
                {
                    match ctx.node(r) {
                        Some(v) => v.clone(),
                        None => continue,
                    }
                }
                Val::Text(t) => Value::String(t.into_owned()),
                Val::Array(_) | Val::Object => match ctx.node(r) {
                    Some(v) => v.clone(),
                    None => continue,
                },
            };
            let Some(attrs) = facet.attrs.get_mut(level) else {
                continue;
            };
            match attrs.get(name) {
                None => {
                    attrs.insert(name.clone(), value);
                }
                Some(old) if *old == value => {}
                Some(_) => {
                    let first = facet.ids.get(level).cloned().unwrap_or_default();
                    facet.conflicts.entry(name.clone()).or_insert((0, first)).0 += 1;
                }
            }
        }
    }

    fn responses(&mut self, ctx: &Ctx<'_>, u: usize, base: &mut [u32]) -> Result<(), ImportError> {
        let sel_name = self.names.selection[u].clone();
        let sel = ctx.get(&self.refs.selection[u]);
        let rationale = self.refs.rationale[u].as_ref().map(|r| ctx.get(r));
        let judges: Vec<Val<'_>> = self.refs.judges.iter().map(|j| ctx.get(&j[u])).collect();
        match sel {
            Val::Array(items) => {
                let Some(af) = self.array_facet else {
                    return self.skip_value(ctx, &sel_name, reasons::SELECTION_ARRAY, "");
                };
                if items.is_empty() {
                    self.report.empty_arrays += 1;
                    return Ok(());
                }
                for (i, item) in items.iter().enumerate() {
                    base[af] = self.facets[af].intern(&(i + 1).to_string());
                    let text = match &rationale {
                        Some(Val::Array(texts)) => texts.get(i).map(Val::of),
                        Some(Val::Missing | Val::Null) | None => None,
                        Some(_) => {
                            self.skip_value(ctx, &sel_name, reasons::TEXT_SHAPE, "Rationale")?;
                            None
                        }
                    };
                    let mut labels = Vec::with_capacity(judges.len());
                    for j in &judges {
                        labels.push(match j {
                            Val::Array(ls) => ls.get(i).map(Val::of),
                            Val::Missing | Val::Null => None,
                            _ => {
                                self.skip_value(ctx, &sel_name, reasons::TEXT_SHAPE, "judge")?;
                                None
                            }
                        });
                    }
                    self.response(ctx, u, base, Val::of(item), text, labels)?;
                }
                Ok(())
            }
            scalar => {
                if let Some(af) = self.array_facet {
                    base[af] = self.facets[af].intern("1");
                }
                let text = match rationale {
                    Some(v @ Val::Text(_)) => Some(v),
                    Some(Val::Missing | Val::Null) | None => None,
                    Some(_) => {
                        self.skip_value(ctx, &sel_name, reasons::TEXT_SHAPE, "Rationale")?;
                        None
                    }
                };
                let mut labels = Vec::with_capacity(judges.len());
                for j in judges {
                    labels.push(match j {
                        v @ Val::Text(_) => Some(v),
                        Val::Missing | Val::Null => None,
                        _ => {
                            self.skip_value(ctx, &sel_name, reasons::TEXT_SHAPE, "judge")?;
                            None
                        }
                    });
                }
                self.response(ctx, u, base, scalar, text, labels)
            }
        }
    }

    fn response(
        &mut self,
        ctx: &Ctx<'_>,
        u: usize,
        base: &[u32],
        raw: Val<'_>,
        text: Option<Val<'_>>,
        labels: Vec<Option<Val<'_>>>,
    ) -> Result<(), ImportError> {
        let sel_name = self.names.selection[u].clone();
        let readout = self.readout(ctx)?;
        let raw_text: Option<String> = match raw {
            Val::Text(t) => Some(t.into_owned()),
            // A likelihood readout without a Selection: a cell with no Selection (`-`).
            Val::Missing if readout.is_some() => None,
            Val::Missing | Val::Null => Some(String::new()),
            Val::Array(_) | Val::Object => {
                return self.skip_value(ctx, &sel_name, reasons::SELECTION_OBJECT, "");
            }
        };
        let code = match raw_text {
            None => NO_RESPONSE_CODE,
            Some(t) => self.selection_code(ctx, u, (!t.is_empty()).then_some(t))?,
        };
        self.obs_readout.push(match readout {
            Some(r) => {
                self.readouts.push(r);
                (self.readouts.len() - 1) as u32
            }
            None => NO_TEXT,
        });
        self.observe(ctx, u, base, code, text, labels);
        Ok(())
    }

    /// The likelihood readout of a record, if the mapping has one and the record holds it; a
    /// malformed readout is skipped and reported (the response is kept).
    fn readout(&mut self, ctx: &Ctx<'_>) -> Result<Option<Readout>, ImportError> {
        let (Some(spec), Some((lp, tk, st))) = (&self.mapping.likelihood, &self.refs.likelihood)
        else {
            return Ok(None);
        };
        let k = spec.candidates;
        let missing = |r: &FieldRef| matches!(ctx.get(r), Val::Missing | Val::Null);
        if missing(lp) {
            return Ok(None);
        }
        let parse = || -> Result<Readout, (String, String)> {
            let numbers = |r: &FieldRef, name: &str| -> Result<Vec<Value>, (String, String)> {
                match ctx.node(r) {
                    Some(Value::Array(a)) if a.len() == k => Ok(a.clone()),
                    Some(Value::Array(a)) => Err((
                        name.to_string(),
                        format!("{} entries; the mapping says {k} candidates", a.len()),
                    )),
                    _ => Err((name.to_string(), format!("not an array of {k} entries"))),
                }
            };
            let sums = numbers(lp, &spec.logprob)?
                .iter()
                .enumerate()
                .map(|(c, v)| match v {
                    Value::Null => Ok(None),
                    Value::Number(n) => match n.as_f64() {
                        Some(x) if x.is_finite() && x <= 0.0 => Ok(Some(x)),
                        _ => Err((
                            spec.logprob.clone(),
                            format!("candidate {c}: {n} is not a finite log-probability ≤ 0"),
                        )),
                    },
                    _ => Err((spec.logprob.clone(), format!("candidate {c}: not a number"))),
                })
                .collect::<Result<Vec<_>, _>>()?;
            let tokens = match (tk, &spec.tokens) {
                (Some(r), Some(name)) if !missing(r) => Some(
                    numbers(r, name)?
                        .iter()
                        .enumerate()
                        .map(|(c, v)| match v {
                            Value::Null => Ok(None),
                            Value::Number(n) => match n.as_u64() {
                                Some(t) if (1..=u64::from(u32::MAX)).contains(&t) => {
                                    Ok(Some(t as u32))
                                }
                                _ => Err((
                                    name.clone(),
                                    format!("candidate {c}: {n} is not a token count ≥ 1"),
                                )),
                            },
                            _ => Err((name.clone(), format!("candidate {c}: not a number"))),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
                _ => None,
            };
            let stereotyped = match ctx.get(st) {
                Val::Text(t) => t.parse::<usize>().ok().filter(|&i| i < k),
                _ => None,
            }
            .ok_or_else(|| {
                (
                    spec.stereotyped.clone(),
                    format!("not a candidate index 0–{}", k - 1),
                )
            })?;
            Ok((stereotyped as u8, sums, tokens))
        };
        match parse() {
            Ok(r) => Ok(Some(r)),
            Err((name, detail)) => {
                self.skip_value(ctx, &name, reasons::BAD_LIKELIHOOD, &detail)?;
                Ok(None)
            }
        }
    }

    /// The dictionary code of one Selection (read or missing).
    fn selection_code(
        &mut self,
        ctx: &Ctx<'_>,
        u: usize,
        raw_text: Option<String>,
    ) -> Result<u8, ImportError> {
        let (raw, evidence, obtained) = self.selection(ctx, u, raw_text)?;
        let key = (raw, evidence, obtained);
        Ok(match self.value_index.get(&key) {
            Some(&c) => c,
            None => {
                if self.values.len() >= atlas_core::bundle::CODE_ALPHABET.len() {
                    return Err(ImportError::TooManyValues {
                        input: self.inputs.last().cloned().unwrap_or_default(),
                        record: ctx.record,
                        line: ctx.line,
                        raw: key.0,
                    });
                }
                let c = self.values.len() as u8;
                self.values.push(SelectionValue {
                    raw: key.0.clone(),
                    evidence: key.1,
                    obtained: key.2,
                });
                self.value_index.insert(key, c);
                c
            }
        })
    }

    /// Records one observation (a response, or a likelihood readout without a Selection).
    fn observe(
        &mut self,
        ctx: &Ctx<'_>,
        u: usize,
        base: &[u32],
        code: u8,
        text: Option<Val<'_>>,
        labels: Vec<Option<Val<'_>>>,
    ) {
        self.obs_levels.extend_from_slice(base);
        self.obs_code.push(code);
        let text_index = match text {
            Some(Val::Text(t)) => {
                self.texts.push(t.into_owned());
                (self.texts.len() - 1) as u32
            }
            _ => NO_TEXT,
        };
        self.obs_text.push(text_index);
        for (j, label) in labels.into_iter().enumerate() {
            let code = match label {
                Some(Val::Text(t)) => match self.judge_maps[j].get(t.as_ref()) {
                    Some(&c) => c,
                    None => {
                        let field = self.names.judges[j][u].clone();
                        self.report.add_unmapped(&field, &t);
                        b'.'
                    }
                },
                _ => b'.',
            };
            self.obs_judges.push(code);
        }
        self.obs_origin
            .push((self.input_index() << 48) | (ctx.record & 0xFFFF_FFFF_FFFF));
        self.report.responses_read += 1;
        self.record_had_response = true;
    }

    /// The (raw, evidence, obtained) triple of one response.
    fn selection(
        &mut self,
        ctx: &Ctx<'_>,
        u: usize,
        raw: Option<String>,
    ) -> Result<(String, Option<u8>, Obtained), ImportError> {
        let Some(raw) = raw else {
            return Ok((String::new(), None, Obtained::ParserFailure));
        };
        if self.refusals.contains(&raw) {
            return Ok((raw, None, Obtained::Refusal));
        }
        let sel_name = self.names.selection[u].clone();
        if let Some(only) = &self.only {
            if !only.contains(&raw) {
                self.report.add_unmapped(&sel_name, &raw);
                return Ok((self.unmapped_raw(raw), None, Obtained::Regex));
            }
        }
        if let Some(compare) = &self.refs.compare[u] {
            let other = ctx.get(compare);
            let spec = &self.mapping.selection;
            return Ok(match other {
                Val::Text(t) => {
                    let e = if t.as_ref() == raw {
                        spec.equal
                    } else {
                        spec.different
                    };
                    (raw, e.flatten(), Obtained::Regex)
                }
                _ => {
                    let field = self.names.compare[u].clone().unwrap_or_default();
                    self.report
                        .add_unmapped(&field, "(missing comparison value)");
                    (raw, None, Obtained::Regex)
                }
            });
        }
        let (lookup, field) = match &self.refs.evidence[u] {
            Some(r) => {
                let name = self.names.evidence[u].clone().unwrap_or_default();
                match ctx.get(r) {
                    Val::Text(t) => (Some(t.into_owned()), name),
                    _ => (None, name),
                }
            }
            None => (Some(raw.clone()), sel_name),
        };
        if let Some(key) = &lookup {
            if let Some((evidence, obtained, rename)) = self.map.get(key) {
                let stored = rename.clone().unwrap_or(raw);
                return Ok((stored, *evidence, *obtained));
            }
        }
        let shown = lookup.unwrap_or_else(|| "(missing)".to_string());
        if self.mapping.selection.unmapped == Unmapped::Error {
            return Err(ImportError::Record {
                input: self.inputs.last().cloned().unwrap_or_default(),
                record: ctx.record,
                line: ctx.line,
                field,
                message: format!(
                    "value {shown:?} is not in `selection.map` (the mapping says \"unmapped\": \"error\")"
                ),
            });
        }
        self.report.add_unmapped(&field, &shown);
        Ok((self.unmapped_raw(raw), None, Obtained::Regex))
    }

    fn unmapped_raw(&self, raw: String) -> String {
        if self.mapping.selection.collapse_unmapped {
            "(unmapped)".to_string()
        } else {
            raw
        }
    }

    /// Builds the bundle and completes the report.
    pub fn finish(mut self) -> Result<(BundleFile, Report), ImportError> {
        let nf = self.facets.len();
        let n_obs = self.obs_code.len();
        if n_obs == 0 {
            let detail = match self.report.skipped.first() {
                Some(s) => format!(
                    "{} record(s) skipped; the first: {} record {} (line {}), `{}`: {}",
                    self.report.records_skipped, s.input, s.record, s.line, s.field, s.reason
                ),
                None => "no record held a response".to_string(),
            };
            return Err(ImportError::NothingImported {
                records: self.report.records,
                detail,
            });
        }
        // Level order.
        let mut perms: Vec<Vec<u32>> = Vec::with_capacity(nf);
        for facet in &mut self.facets {
            let n = facet.ids.len();
            let mut order: Vec<usize> = (0..n).collect();
            if facet.order == LevelOrder::Natural && !facet.listed {
                order.sort_by(|&a, &b| natural_cmp(&facet.ids[a], &facet.ids[b]));
            }
            let mut perm = vec![0u32; n];
            for (new, &old) in order.iter().enumerate() {
                perm[old] = new as u32;
            }
            let ids: Vec<String> = order.iter().map(|&i| facet.ids[i].clone()).collect();
            let attrs: Vec<BTreeMap<String, Value>> = order
                .iter()
                .map(|&i| std::mem::take(&mut facet.attrs[i]))
                .collect();
            facet.ids = ids;
            facet.attrs = attrs;
            perms.push(perm);
        }
        let sizes: Vec<usize> = self.facets.iter().map(|f| f.ids.len()).collect();
        let cells_wide: u128 = sizes.iter().map(|&s| s as u128).product();
        let describe_sizes = || {
            self.facets
                .iter()
                .map(|f| format!("{} {}", f.id, f.ids.len()))
                .collect::<Vec<_>>()
                .join(" x ")
        };
        if cells_wide > self.limits.max_cells as u128 {
            return Err(ImportError::TooManyCells {
                cells: cells_wide,
                sizes: describe_sizes(),
                limit: self.limits.max_cells,
            });
        }
        let cells = cells_wide as usize;
        let mut strides = vec![1usize; nf];
        for f in (0..nf.saturating_sub(1)).rev() {
            strides[f] = strides[f + 1] * sizes[f + 1];
        }
        let nj = self.mapping.judges.len();
        let mut codes = vec![NO_RESPONSE_CODE; cells];
        let mut judge_cols: Vec<Vec<u8>> = vec![vec![b'-'; cells]; nj];
        let mut text_cells: Vec<(u64, u32)> = Vec::new();
        let mut duplicates: Vec<(usize, usize)> = Vec::new();
        let mut occupied = vec![false; cells];
        let k = self.mapping.likelihood.as_ref().map_or(0, |l| l.candidates);
        let with_tokens = self
            .mapping
            .likelihood
            .as_ref()
            .is_some_and(|l| l.tokens.is_some());
        let mut lk_marks = if k > 0 { vec![b'-'; cells] } else { Vec::new() };
        let mut lk_sums: Vec<Option<f64>> = vec![None; cells * k];
        let mut lk_tokens: Vec<Option<u32>> = if with_tokens {
            vec![None; cells * k]
        } else {
            Vec::new()
        };
        for i in 0..n_obs {
            let mut cell = 0usize;
            for f in 0..nf {
                let level = self.obs_levels[i * nf + f] as usize;
                cell += perms[f][level] as usize * strides[f];
            }
            if occupied[cell] {
                duplicates.push((i, cell));
                continue;
            }
            occupied[cell] = true;
            codes[cell] = self.obs_code[i];
            if let Some((st, sums, tokens)) = self
                .obs_readout
                .get(i)
                .and_then(|&r| self.readouts.get(r as usize))
            {
                if let Some(m) = lk_marks.get_mut(cell) {
                    *m = b'0' + *st;
                }
                for c in 0..k {
                    lk_sums[cell * k + c] = sums.get(c).copied().flatten();
                    if with_tokens {
                        lk_tokens[cell * k + c] =
                            tokens.as_ref().and_then(|t| t.get(c).copied().flatten());
                    }
                }
            }
            for (j, col) in judge_cols.iter_mut().enumerate() {
                col[cell] = self.obs_judges[i * nj + j];
            }
            if self.obs_text[i] != NO_TEXT {
                text_cells.push((cell as u64, self.obs_text[i]));
            }
        }
        let likelihood_only = lk_marks
            .iter()
            .zip(&codes)
            .filter(|(&m, &c)| m != b'-' && c == NO_RESPONSE_CODE)
            .count() as u64;
        if !duplicates.is_empty() {
            self.report_duplicates(&duplicates, &perms, &strides, &sizes)?;
        }
        // Keep only the dictionary entries that some cell uses, in first-use order.
        let mut used = vec![false; self.values.len()];
        for &c in &codes {
            if c != NO_RESPONSE_CODE {
                if let Some(u) = used.get_mut(c as usize) {
                    *u = true;
                }
            }
        }
        let mut remap = vec![NO_RESPONSE_CODE; self.values.len()];
        let mut values = Vec::new();
        for (k, v) in self.values.iter().enumerate() {
            if used[k] {
                remap[k] = values.len() as u8;
                values.push(v.clone());
            }
        }
        let mut counts = vec![0u64; values.len()];
        for c in &mut codes {
            if *c != NO_RESPONSE_CODE {
                *c = remap[*c as usize];
                counts[*c as usize] += 1;
            }
        }
        let codes_text = encode_selection_codes(&codes)?;
        drop(codes);
        // Texts, by cell.
        text_cells.sort_unstable();
        let mut cell_list = Vec::with_capacity(text_cells.len());
        let mut text_list = Vec::with_capacity(text_cells.len());
        for (cell, t) in text_cells {
            cell_list.push(cell);
            text_list.push(std::mem::take(&mut self.texts[t as usize]));
        }
        self.texts = Vec::new();
        // Report.
        let r = &mut self.report;
        r.levels = self
            .facets
            .iter()
            .map(|f| (f.id.clone(), f.ids.len()))
            .collect();
        r.cells = cells as u64;
        r.responses = counts.iter().sum();
        r.no_response = r.cells - r.responses;
        r.values = values
            .iter()
            .zip(&counts)
            .map(|(v, &n)| ValueCount {
                raw: v.raw.clone(),
                evidence: v.evidence,
                obtained: v.obtained,
                cells: n,
            })
            .collect();
        for v in &r.values {
            match v.evidence {
                Some(1) => r.evidence_1 += v.cells,
                Some(_) => r.evidence_0 += v.cells,
                None => r.abstain += v.cells,
            }
        }
        r.texts = cell_list.len() as u64;
        r.likelihood_readouts = lk_marks.iter().filter(|&&m| m != b'-').count() as u64;
        r.likelihood_only = likelihood_only;
        for facet in &self.facets {
            for (attr, (n, first)) in &facet.conflicts {
                r.attribute_conflicts.push(AttributeConflict {
                    facet: facet.id.clone(),
                    attribute: attr.clone(),
                    records: *n,
                    first_level: first.clone(),
                });
            }
        }
        // Facets.
        let mut facets = Vec::with_capacity(nf);
        for facet in &mut self.facets {
            let id = facet.id.clone();
            let levels = facet
                .ids
                .iter()
                .zip(std::mem::take(&mut facet.attrs))
                .map(|(level_id, mut attributes)| {
                    typed_attributes(&id, level_id, &mut attributes);
                    Level {
                        id: level_id.clone(),
                        attributes,
                    }
                })
                .collect();
            facets.push(Facet {
                id,
                label: facet.label.clone(),
                levels,
            });
        }
        let judges = self
            .mapping
            .judges
            .iter()
            .zip(judge_cols)
            .map(|(spec, col)| JudgeColumn {
                id: spec.id.clone(),
                model: spec.model.clone(),
                rubric: spec.rubric.clone(),
                labels: col.into_iter().map(char::from).collect(),
            })
            .collect();
        let texts = self.mapping.rationale.as_ref().map(|spec| Texts {
            rationale: Some(TextField {
                description: spec.description.clone(),
                shards: Vec::new(),
                inline: Some(TextCells {
                    cells: cell_list,
                    texts: text_list,
                }),
            }),
        });
        let m = &self.mapping.metadata;
        let own_notes = format!(
            "Imported by atlas-import {} from {}: {} records read, {} imported, {} skipped, {} values skipped, \
             {} duplicate responses dropped (the first kept); {} of {} cells hold a response. Selection from `{}`.",
            env!("CARGO_PKG_VERSION"),
            self.inputs.join(", "),
            self.report.records,
            self.report.records_imported,
            self.report.records_skipped,
            self.report.values_skipped,
            self.report.duplicates,
            self.report.responses,
            self.report.cells,
            self.mapping.selection.field,
        );
        let notes = match &m.notes {
            Some(n) => format!("{n} {own_notes}"),
            None => own_notes,
        };
        let bundle = BundleFile {
            schema: None,
            format: FORMAT_NAME.to_string(),
            version: FORMAT_VERSION,
            metadata: Metadata {
                id: m.id.clone(),
                title: m.title.clone(),
                description: m.description.clone(),
                source: m.source.clone(),
                license: m.license.clone(),
                content_warning: m.content_warning.clone(),
                produced_by: Production {
                    tool: format!("atlas-import {}", env!("CARGO_PKG_VERSION")),
                    command: None,
                    notes: Some(notes),
                },
            },
            facets,
            responses: Responses {
                axes: self.facets.iter().map(|f| f.id.clone()).collect(),
                selection: SelectionColumn {
                    direction: self.mapping.selection.direction.clone(),
                    values,
                    codes: codes_text,
                },
                judges,
                human: Vec::new(),
                likelihood: self.mapping.likelihood.as_ref().map(|l| LikelihoodColumn {
                    description: l.description.clone(),
                    candidates: k,
                    stereotyped: lk_marks.into_iter().map(char::from).collect(),
                    logprob_sum: lk_sums,
                    token_count: with_tokens.then_some(lk_tokens),
                }),
            },
            texts,
            clinical: None,
        };
        Ok((bundle, self.report))
    }

    fn report_duplicates(
        &mut self,
        duplicates: &[(usize, usize)],
        perms: &[Vec<u32>],
        strides: &[usize],
        sizes: &[usize],
    ) -> Result<(), ImportError> {
        let nf = self.facets.len();
        let wanted: std::collections::HashSet<usize> = duplicates.iter().map(|d| d.1).collect();
        let mut first: HashMap<usize, usize> = HashMap::new();
        for i in 0..self.obs_code.len() {
            let mut cell = 0usize;
            for f in 0..nf {
                cell += perms[f][self.obs_levels[i * nf + f] as usize] as usize * strides[f];
            }
            if wanted.contains(&cell) {
                first.entry(cell).or_insert(i);
            }
        }
        self.report.duplicates = duplicates.len() as u64;
        for &(i, cell) in duplicates {
            let origin = |k: usize| {
                let o = self.obs_origin[k];
                let input = self
                    .inputs
                    .get((o >> 48) as usize)
                    .cloned()
                    .unwrap_or_default();
                (input, o & 0xFFFF_FFFF_FFFF)
            };
            let (input, record) = origin(i);
            let (first_input, first_record) = origin(first.get(&cell).copied().unwrap_or(i));
            let levels: Vec<String> = self
                .facets
                .iter()
                .enumerate()
                .map(|(f, facet)| {
                    let level = (cell / strides[f]) % sizes[f].max(1);
                    format!(
                        "{}={}",
                        facet.id,
                        facet.ids.get(level).map_or("?", String::as_str)
                    )
                })
                .collect();
            let dup = Duplicate {
                input,
                record,
                first_input,
                first_record,
                cell: levels.join(", "),
            };
            if self.mapping.strict {
                return Err(ImportError::Duplicate {
                    input: dup.input,
                    record: dup.record,
                    first_input: dup.first_input,
                    first_record: dup.first_record,
                    cell: dup.cell,
                });
            }
            if self.report.duplicate_examples.len() < MAX_EXAMPLES {
                self.report.duplicate_examples.push(dup);
            }
        }
        Ok(())
    }
}

/// Level attributes the format types: strings for text attributes, `has_selection` on conditions,
/// statement `text` defaulting to the id.
fn typed_attributes(facet: &str, level_id: &str, attributes: &mut BTreeMap<String, Value>) {
    for key in [
        "text",
        "category",
        "target_group",
        "sweep",
        "level",
        "label",
    ] {
        if let Some(v) = attributes.get_mut(key) {
            match v {
                Value::Number(n) => *v = Value::String(n.to_string()),
                Value::Bool(b) => *v = Value::String(b.to_string()),
                _ => {}
            }
        }
    }
    if facet == facet_ids::STATEMENT && !attributes.contains_key("text") {
        attributes.insert("text".into(), Value::String(level_id.to_string()));
    }
    if facet == facet_ids::CONDITION && !attributes.contains_key("has_selection") {
        attributes.insert("has_selection".into(), Value::Bool(true));
    }
}

/// Numbers (integers, by value) before other ids (by bytes).
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.parse::<i128>(), b.parse::<i128>()) {
        (Ok(x), Ok(y)) => x.cmp(&y).then(a.cmp(b)),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => a.cmp(b),
    }
}

impl Consumer for Builder {
    fn header(&mut self, input: &str, header: &[String]) -> Result<(), ImportError> {
        let index: HashMap<&str, usize> = header
            .iter()
            .enumerate()
            .map(|(i, h)| (h.as_str(), i))
            .collect();
        let available = header
            .iter()
            .map(|h| format!("{h:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let resolve = |field: &str, name: &str| -> Result<FieldRef, ImportError> {
            if let Some(p) = FieldRef::pseudo(name) {
                return Ok(p);
            }
            index
                .get(name)
                .map(|&i| FieldRef::Column(i))
                .ok_or_else(|| ImportError::MissingColumn {
                    input: input.to_string(),
                    field: field.to_string(),
                    column: name.to_string(),
                    available: available.clone(),
                })
        };
        self.refs = self.compile_checked(&resolve)?;
        Ok(())
    }

    fn record(
        &mut self,
        _input: &str,
        record: u64,
        line: u64,
        data: RecordData,
    ) -> Result<(), ImportError> {
        self.report.records += 1;
        let stem = std::mem::take(&mut self.stem);
        let result = {
            let ctx = Ctx {
                data: &data,
                file: &stem,
                record,
                line,
            };
            self.process(&ctx)
        };
        self.stem = stem;
        result
    }

    fn skip(
        &mut self,
        input: &str,
        record: u64,
        line: u64,
        field: &str,
        kind: &'static str,
        detail: String,
    ) -> Result<(), ImportError> {
        self.report.records += 1;
        self.report.records_skipped += 1;
        self.note_skip(input, record, line, field, kind, &detail)
    }
}
