//! Terminal tables: plain, aligned, fitting an 80-column terminal.


use comfy_table::{CellAlignment, ContentArrangement, Table};

/// A table whose first column is left-aligned and the rest right-aligned (numbers).
pub fn new(headers: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset("     ──            ").set_content_arrangement(ContentArrangement::Dynamic).set_header(headers.to_vec());
    for i in 1..headers.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// Milliseconds with sensible precision.
pub fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

pub fn pct(v: f64) -> String {
    format!("{v:.1}%")
}

/// A count with SI suffix (FLOPs, bytes, parameters).
pub fn si(v: f64) -> String {
    let (d, s) = if v >= 1e15 {
        (1e15, "P")
    } else if v >= 1e12 {
        (1e12, "T")
    } else if v >= 1e9 {
        (1e9, "G")
    } else if v >= 1e6 {
        (1e6, "M")
    } else if v >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    format!("{:.2}{s}", v / d)
}
