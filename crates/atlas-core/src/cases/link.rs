//! The case a shared link names: `?bundle=URL&id=BUNDLE&case=CELL` in the query, or `#case=CELL` in
//! the fragment (the form the app keeps in the address bar for the open case).

use crate::query::query_pairs;

/// A case named by a link: the cell and, if the link says, the id of the bundle it was made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkCase {
    /// The cell index (`case=CELL`) into the bundle's response matrix.
    pub cell: usize,
    /// The bundle id (`id=ID`) the link was made for; `None` when the link names none.
    pub bundle_id: Option<String>,
}

/// `case` (and `id`) of a page's query string and fragment (each with or without its `?` / `#`); the
/// fragment wins when both name a case (its `id`, else the query's). The last `case` / `id` of each
/// part counts; an empty `id` is none. `None` when neither names a whole number (after trimming
/// spaces; `-1` and `x` name none).
pub fn link_case(query: &str, fragment: &str) -> Option<LinkCase> {
    let read = |s: &str, strip: char| {
        let pairs = query_pairs(s.trim_start_matches(strip));
        let case = pairs
            .iter()
            .rev()
            .find(|(k, _)| k == "case")
            .and_then(|(_, v)| v.trim().parse::<usize>().ok());
        let id = pairs
            .iter()
            .rev()
            .find(|(k, _)| k == "id")
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty());
        (case, id)
    };
    let (hash_case, hash_id) = read(fragment, '#');
    let (query_case, query_id) = read(query, '?');
    match (hash_case, query_case) {
        (Some(cell), _) => Some(LinkCase {
            cell,
            bundle_id: hash_id.or(query_id),
        }),
        (None, Some(cell)) => Some(LinkCase {
            cell,
            bundle_id: query_id,
        }),
        (None, None) => None,
    }
}
