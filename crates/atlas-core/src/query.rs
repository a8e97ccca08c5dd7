//! The query-string codec of the app's links: percent-encoding of one component and the `key=value`
//! pairs of a query string or fragment (`a=1&b=x%20y`), in the `application/x-www-form-urlencoded`
//! reading that browsers use for `URLSearchParams` (`+` is a space).
//!
//! Pure and lenient: a malformed escape is kept as text and invalid UTF-8 is replaced, so a bad link
//! decodes to something that is then ignored, never to an error.

/// Percent-decodes one query component: `+` is a space (as in HTML forms), `%XX` (two hex digits) is
/// the byte `XX`; an invalid or cut-off escape stays as it is (`50%` → `50%`, `%zz` → `%zz`) and
/// invalid UTF-8 in the decoded bytes is replaced by U+FFFD.
pub fn decode_component(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                        continue;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encodes one query component: ASCII letters, digits and `-._~:/,*@!` stay, every other byte
/// (including `&`, `=`, `+`, `#`, `%`, spaces and the bytes of non-ASCII characters) becomes `%XX`
/// (upper-case hex). [`decode_component`] reads it back unchanged.
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:/,*@!".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The `(key, value)` pairs of `a=1&b=x%20y`, decoded ([`decode_component`]), in order; empty parts
/// are skipped and a part without `=` is a key with an empty value. The string is read as it is: a
/// leading `?` or `#` is part of the first key (see [`parse_query`]).
pub fn query_pairs(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (decode_component(k), decode_component(v)),
            None => (decode_component(p), String::new()),
        })
        .collect()
}

/// The `(key, value)` pairs of a query string with or without its leading `?` ([`query_pairs`]).
pub fn parse_query(query: &str) -> Vec<(String, String)> {
    query_pairs(query.trim_start_matches('?'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn components_round_trip_and_bad_escapes_stay_as_text() {
        for s in ["plain", "a b+c", "100%", "é/ü:", "x=y&z", ""] {
            assert_eq!(decode_component(&encode_component(s)), s);
        }
        assert_eq!(decode_component("a+b%20c"), "a b c");
        assert_eq!(decode_component("50%"), "50%");
        assert_eq!(decode_component("%zz%4"), "%zz%4");
    }

    #[test]
    fn a_query_is_split_into_decoded_pairs_in_order_with_or_without_its_question_mark() {
        // Hand-decoded: `%20` and `+` are spaces, `%26` is `&`, `%3D` is `=`, `%C3%BC` is ü.
        let expected = vec![
            ("a".to_string(), "x y".to_string()),
            ("b c".to_string(), "&=".to_string()),
            ("flag".to_string(), String::new()),
            ("a".to_string(), "ü".to_string()),
        ];
        let q = "a=x%20y&b+c=%26%3D&&flag&a=%C3%BC";
        assert_eq!(parse_query(q), expected);
        assert_eq!(parse_query(&format!("?{q}")), expected);
        assert_eq!(query_pairs(q), expected);
        assert_eq!(
            query_pairs("#case=1")[0].0,
            "#case",
            "query_pairs strips nothing"
        );
        assert!(parse_query("").is_empty() && parse_query("?").is_empty());
    }
}
