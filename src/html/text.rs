//! Escaping and number formatting shared by the tables and the charts.

use serde_json::Number;

/// `text` safe inside HTML or SVG text and double-quoted attributes.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number as shown: integers whole, other numbers to four significant figures (scientific
/// notation when very large or small). The exact JSON text goes beside it in `data-exact` and
/// the hover title, so rounding for reading never changes what the report says.
pub fn short(n: &Number) -> String {
    if n.is_u64() || n.is_i64() {
        return n.to_string();
    }
    short_f64(n.as_f64().unwrap_or(0.0))
}

/// Four significant figures of `x` (see [`short`]).
pub fn short_f64(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let magnitude = x.abs().log10().floor();
    if !(-3.0..6.0).contains(&magnitude) {
        return format!("{x:.3e}");
    }
    let decimals = (3.0 - magnitude).max(0.0) as usize;
    format!("{x:.decimals$}")
}

/// A number shown in a table or a key figure, with what it is in the report: its JSON pointer
/// and exact text (the tests compare both with `--json`).
pub fn num_span(n: &Number, pointer: &str) -> String {
    let exact = n.to_string();
    format!(r#"<span class="n" data-json="{}" data-exact="{exact}" title="{exact}">{}</span>"#, esc(pointer), short(n))
}

/// A field name as a heading: `tokens_per_s_per_gpu` → `tokens per s per gpu`.
pub fn label(key: &str) -> String {
    key.replace('_', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_four_figures_and_keeps_integers() {
        assert_eq!(short_f64(12.34567), "12.35");
        assert_eq!(short_f64(0.0123456), "0.01235");
        assert_eq!(short_f64(123456.7), "123457");
        assert_eq!(short_f64(2.5e15), "2.500e15");
        assert_eq!(short(&Number::from(1234567u64)), "1234567");
        assert_eq!(esc("<a href=\"x\">&"), "&lt;a href=&quot;x&quot;&gt;&amp;");
    }
}
