//! η² (seed `000_…` C.3, Table 12) of the default bundle's condition × template grid against the
//! independent numpy reference `tests/reference/variance_reference.py` (reads the raw DecodingTrust file
//! and computes the sums of squares from the long table of rows), recorded in
//! `tests/reference/expected_variance.json`. Tolerance [`atlas_core::tolerance::LONG_SUM`] (1e-10:
//! sums over 475,643 rows in a different order).

use atlas_core::tolerance::LONG_SUM;
use atlas_core::variance::{variance_components, VarianceError};
use atlas_core::Audit;
use serde_json::Value;

fn bundle() -> Audit {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../static/bundles/decodingtrust-stereotype/bundle.json"
    ))
    .unwrap();
    Audit::from_json(&text).unwrap()
}

#[test]
fn eta_squared_of_condition_template_and_their_interaction_equal_the_numpy_reference() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/reference/expected_variance.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let v = variance_components(
        &bundle(),
        &["condition", "template"],
        &["model", "statement"],
    )
    .unwrap();
    assert_eq!(v.rows, expected["all_rows"]["rows"].as_u64().unwrap());
    assert_eq!(
        v.rows_complete,
        expected["complete_grid"]["rows"].as_u64().unwrap()
    );
    assert_eq!(
        v.units_complete as u64,
        expected["units_complete"].as_u64().unwrap()
    );
    assert_eq!(
        v.units_seen as u64,
        expected["units_seen"].as_u64().unwrap()
    );
    let names = ["condition", "template", "condition x template"];
    assert_eq!(v.components.len(), 3);
    for (c, name) in v.components.iter().zip(names) {
        let all = expected["all_rows"][name].as_f64().unwrap();
        let complete = expected["complete_grid"][name].as_f64().unwrap();
        let got = c.eta_squared.unwrap();
        let got_complete = c.eta_squared_complete.unwrap();
        assert!((got - all).abs() <= LONG_SUM, "{name}: {got} vs {all}");
        assert!(
            (got_complete - complete).abs() <= LONG_SUM,
            "{name} complete: {got_complete} vs {complete}"
        );
    }
}

#[test]
fn unknown_and_repeated_facets_are_errors_naming_the_facet() {
    let audit = bundle();
    assert_eq!(
        variance_components(&audit, &["task"], &[]),
        Err(VarianceError::UnknownFacet("task".into()))
    );
    assert_eq!(
        variance_components(&audit, &["condition"], &["condition"]),
        Err(VarianceError::RepeatedFacet("condition".into()))
    );
    assert_eq!(
        variance_components(&audit, &[], &[]),
        Err(VarianceError::NoFactor)
    );
}
