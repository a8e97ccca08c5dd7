//! The CSV/TSV reader against the `csv` crate on generated well-formed files: random fields drawn
//! from an alphabet of delimiters, quotes, CR, LF, spaces and non-ASCII text, written by `csv::Writer`
//! (quoting where needed, or always) with LF or CRLF terminators, read back by both; the fields must
//! be identical.

use atlas_import::{read_records, Format, Limits, RecordData, RecordEvent};
use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PIECES: &[&str] = &[
    "a", "b", "7", " ", ",", "\t", "\"", "\"\"", "\n", "\r\n", "\r", "é", "😀", "x y", "-1", "null",
];

fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

fn field(rng: &mut ChaCha8Rng) -> String {
    let n = 1 + below(rng, 5); // non-empty: a record of one empty field would be a blank line
    (0..n).map(|_| PIECES[below(rng, PIECES.len())]).collect()
}

#[test]
fn generated_well_formed_csv_and_tsv_read_the_same_fields_as_the_csv_crate() {
    let mut rng = ChaCha8Rng::seed_from_u64(4180);
    for case in 0..2000u32 {
        let delimiter = if case.is_multiple_of(2) { b',' } else { b'\t' };
        let columns = 1 + below(&mut rng, 4);
        let rows = 1 + below(&mut rng, 6);
        let table: Vec<Vec<String>> = (0..=rows)
            .map(|_| (0..columns).map(|_| field(&mut rng)).collect())
            .collect();
        let style = if below(&mut rng, 2) == 0 {
            csv::QuoteStyle::Necessary
        } else {
            csv::QuoteStyle::Always
        };
        let terminator = if below(&mut rng, 2) == 0 {
            csv::Terminator::Any(b'\n')
        } else {
            csv::Terminator::CRLF
        };
        let mut writer = csv::WriterBuilder::new()
            .delimiter(delimiter)
            .quote_style(style)
            .terminator(terminator)
            .from_writer(Vec::new());
        for row in &table {
            writer.write_record(row).expect("writes");
        }
        let bytes = writer.into_inner().expect("flushes");

        let theirs: Vec<Vec<String>> = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .from_reader(&bytes[..])
            .records()
            .map(|r| r.expect("csv reads").iter().map(str::to_string).collect())
            .collect();
        assert_eq!(theirs, table, "case {case}: the csv crate round trip");

        let mut ours: Vec<Vec<String>> = Vec::new();
        let format = if delimiter == b',' {
            Format::Csv
        } else {
            Format::Tsv
        };
        let limits = Limits {
            chunk_bytes: 1 + below(&mut rng, 40),
            ..Limits::default()
        };
        read_records(&bytes[..], "gen", format, None, &limits, |ev| match ev {
            RecordEvent::Header(h) => ours.push(h.to_vec()),
            RecordEvent::Record {
                data: RecordData::Csv(f),
                ..
            } => ours.push(f),
            other => panic!("case {case}: unexpected {other:?}"),
        })
        .unwrap_or_else(|e| panic!("case {case}: {e}\n{:?}", String::from_utf8_lossy(&bytes)));
        // Duplicate header names are renamed by our reader; compare data rows exactly and the header
        // by position where names are unique.
        assert_eq!(ours.len(), theirs.len(), "case {case}");
        assert_eq!(
            ours[1..],
            theirs[1..],
            "case {case}: {:?}",
            String::from_utf8_lossy(&bytes)
        );
        let header = &theirs[0];
        for (i, name) in header.iter().enumerate() {
            if header.iter().filter(|h| *h == name).count() == 1 {
                assert_eq!(&ours[0][i], name, "case {case}");
            }
        }
    }
}
