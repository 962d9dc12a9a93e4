//! Terminal tables and prose: plain, aligned, sized to the terminal they are printed on.

use comfy_table::{CellAlignment, ContentArrangement, Table};
use wavecast::eval::ops::FamilyError;

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

/// Widest line of prose the commands print (tables size themselves): in a terminal, its width
/// when narrower; piped, this width exactly, so saved output does not depend on a window.
pub const PROSE_WIDTH: usize = 100;

/// The narrowest terminal prose is folded for; below it, lines fold at this width.
const NARROWEST: usize = 40;

/// Columns prose folds at: [`PROSE_WIDTH`], or a narrower terminal's width.
fn prose_width() -> usize {
    use std::io::IsTerminal;
    let terminal = std::io::stdout().is_terminal().then(|| Table::new().width()).flatten();
    terminal.map_or(PROSE_WIDTH, |w| (w as usize).clamp(NARROWEST, PROSE_WIDTH))
}

/// Prints one line of prose, folded at spaces to [`prose_width`] columns with the lines after
/// the first indented by two, so a long header, note or reason stays readable in a terminal.
pub fn say(text: &str) {
    println!("{}", fold(text, prose_width()));
}

/// `text` folded as [`say`] prints it; a word longer than the width stays whole.
pub fn fold(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut column = 0;
        for word in line.split(' ') {
            let len = word.chars().count();
            if column > 0 && column + 1 + len > width {
                out.push_str("\n  ");
                column = 2;
            } else if column > 0 {
                out.push(' ');
                column += 1;
            }
            out.push_str(word);
            column += len;
        }
    }
    out
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

/// Dollars with cents, and three significant digits below a dollar: a cost per step or per
/// million tokens can be a small fraction of a cent, which fixed decimals would round to zero.
pub fn usd(v: f64) -> String {
    significant(v, 2)
}

/// `v` with `decimals` decimals, or three significant digits where that shows more of a
/// number below one (a fraction of a day never prints as 0.0).
pub fn significant(v: f64, decimals: usize) -> String {
    if !(v.is_finite() && v > 0.0) || v >= 1.0 {
        return format!("{v:.decimals$}");
    }
    let decimals = (2 - v.log10().floor() as i32).max(decimals as i32) as usize;
    format!("{v:.decimals$}")
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

/// Per-op error by family, one row per (set, family): `eval ops` and `train` print it.
/// Errors by source, family and format (`eval ops` on modern-GPU data).
pub fn print_kernel_errors(sets: &std::collections::BTreeMap<String, Vec<wavecast::eval::kernels::KernelFamilyError>>) {
    let mut t = new(&["set", "family", "dtype", "n", "mean APE", "median", "max", "bias"]);
    for (name, errs) in sets {
        for e in errs {
            t.add_row(vec![name.clone(), e.family.clone(), e.dtype.clone(), e.stats.n.to_string(), pct(e.stats.mean_ape), pct(e.stats.median_ape), pct(e.stats.max_ape), format!("{:+.1}%", e.median_bias)]);
        }
    }
    println!("{t}");
}

/// Where prices came from, largest share first: `measured 92% · physics 8%`.
pub fn provenance(shares: &std::collections::BTreeMap<String, f64>) -> String {
    let mut v: Vec<(&String, &f64)> = shares.iter().filter(|(_, s)| **s > 0.0).collect();
    v.sort_by(|a, b| b.1.total_cmp(a.1).then_with(|| a.0.cmp(b.0)));
    match v.as_slice() {
        [] => "-".into(),
        [(only, _)] => only.to_string(),
        _ => v.iter().map(|(k, s)| format!("{k} {:.0}%", 100.0 * **s)).collect::<Vec<_>>().join(" · "),
    }
}

/// The ladder per family beside the naive baselines, then the measured rung on held-out shapes.
pub fn print_ladder_families(out: &wavecast::eval::ladder::LadderEval) {
    if out.families.is_empty() {
        // No family priced: a table of means would read 0.0 %, which looks like a perfect score.
        println!("nothing on {} was priced: no family has both a sibling's table and fitted physics (reasons below)", out.test_gpu);
    } else {
        print_ladder_table(out);
    }
    print_measured_rung(out);
}

fn print_ladder_table(out: &wavecast::eval::ladder::LadderEval) {
    let mut t = new(&["source", "family", "dtype", "n", "ladder", "median", "shipped", "copy sibling", "roofline ratio", "physics", "in interval", "shipped in", "sibling"]);
    for f in &out.families {
        t.add_row(vec![f.source.clone(), f.family.clone(), f.dtype.clone(), f.rows.to_string(), pct(f.ladder.mean_ape), pct(f.ladder.median_ape), pct(f.shipped_mape), pct(f.copy_sibling_mape), pct(f.roofline_ratio_mape), pct(f.physics_mape), pct(f.coverage), pct(f.shipped_coverage), f.main_sibling.clone()]);
    }
    t.add_row(vec!["mean of families".into(), String::new(), String::new(), String::new(), pct(out.mean_ladder), String::new(), pct(out.mean_shipped), pct(out.mean_copy_sibling), pct(out.mean_roofline_ratio), pct(out.mean_physics), String::new(), String::new(), String::new()]);
    println!("{t}");
}

fn print_measured_rung(out: &wavecast::eval::ladder::LadderEval) {
    if out.measured.is_empty() {
        return;
    }
    println!("measured rung: a tenth of {}'s own shapes held out of its tables", out.test_gpu);
    let mut m = new(&["source", "family", "dtype", "n", "mean APE", "median", "in interval", "another engine's timing"]);
    for f in &out.measured {
        let other = f.other_engine_mape.map(|x| format!("{} ({} shapes)", pct(x), f.other_engine_shapes)).unwrap_or_default();
        m.add_row(vec![f.source.clone(), f.family.clone(), f.dtype.clone(), f.stats.n.to_string(), pct(f.stats.mean_ape), pct(f.stats.median_ape), pct(f.coverage), other]);
    }
    println!("{m}");
    println!("another engine's timing: the same shape as another engine's collection timed it on this GPU, taken as the answer (its own kernel where the engines differ; for BF16 GEMMs, torch's linear in every engine, the spread of two collections timing one call)");
}

/// `fit --predictor ladder`: each GPU's held-out tenth priced from its surface fitted on the rest.
#[cfg(feature = "train")]
pub fn print_surface_errors(rows: &[wavecast_train::ladder::HeldOut]) {
    let mut t = new(&["gpu", "family", "dtype", "n", "mean APE", "median", "in interval"]);
    for r in rows {
        t.add_row(vec![r.gpu.clone(), r.family.clone(), r.dtype.clone(), r.stats.n.to_string(), pct(r.stats.mean_ape), pct(r.stats.median_ape), pct(r.coverage)]);
    }
    println!("{t}");
}

pub fn print_family_errors(sets: &[(String, Vec<FamilyError>)]) {
    let baselines = sets.iter().flat_map(|s| &s.1).any(|e| e.baselines.is_some());
    let mut header = vec!["set", "family", "n", "mean APE", "median", "max", "bias"];
    if baselines {
        header.extend(["copy nearest", "roofline ratio", "from"]);
    }
    let mut t = new(&header);
    for (name, errs) in sets {
        for e in errs {
            let mut row = vec![
                name.clone(),
                e.family.as_str().to_string(),
                e.stats.n.to_string(),
                pct(e.stats.mean_ape),
                pct(e.stats.median_ape),
                pct(e.stats.max_ape),
                format!("{:+.1}%", e.median_bias),
            ];
            if baselines {
                row.extend(match &e.baselines {
                    Some(b) if b.rows == e.stats.n => vec![pct(b.copy_nearest_mape), pct(b.roofline_ratio_mape), b.from.clone()],
                    Some(b) => vec![pct(b.copy_nearest_mape), pct(b.roofline_ratio_mape), format!("{} ({} rows: {} there)", b.from, b.rows, pct(b.mean_ape))],
                    None => vec!["-".into(), "-".into(), "-".into()],
                });
            }
            t.add_row(row);
        }
    }
    println!("{t}");
}

/// A kernel name cut to `max` characters for a table cell: its function name (no `void`,
/// namespaces, template arguments or parameters; Tensile names are whole), then an ellipsis.
pub fn short_name(name: &str, max: usize) -> String {
    let function = wavecast_predict::kernels::kernel_function(name);
    let head = if function.is_empty() { name } else { function.as_str() };
    if head.chars().count() <= max {
        head.to_string()
    } else {
        format!("{}…", head.chars().take(max.saturating_sub(1)).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    /// A fraction of a cent keeps three significant digits instead of rounding to $0.0000.
    #[test]
    fn dollars_keep_their_significant_digits() {
        assert_eq!(super::usd(2.5), "2.50");
        assert_eq!(super::usd(0.25), "0.250");
        assert_eq!(super::usd(0.00004167), "0.0000417");
        assert_eq!(super::usd(0.0), "0.00");
    }

    /// Prose folds at spaces within the width, indents what follows, and keeps a long word whole.
    #[test]
    fn prose_folds_at_spaces_within_the_width() {
        assert_eq!(super::fold("short line", 20), "short line");
        assert_eq!(super::fold("aaaa bbbb cccc dddd", 9), "aaaa bbbb\n  cccc\n  dddd");
        assert_eq!(super::fold("x averyveryverylongword y", 8), "x\n  averyveryverylongword\n  y");
        assert_eq!(super::fold("one\ntwo three", 5), "one\ntwo\n  three");
        let folded = super::fold(&"word ".repeat(60), super::PROSE_WIDTH);
        assert!(folded.lines().all(|l| l.chars().count() <= super::PROSE_WIDTH), "{folded}");
    }
}
