//! Completing the entries of a user's GPU file before they are read as [`Gpu`]s: an entry may
//! start from a built-in GPU (`base = "h100-sxm"` plus the fields that differ), takes the
//! occupancy limits of its architecture when it gives none, and the architecture's links when
//! it gives no interconnect (with a warning: a GPU without links would price every collective
//! at nothing). What is still missing is reported all at once.

use crate::Gpu;
use toml::value::Table;
use toml::Value;

/// An entry of the user's file, completed: the table to read as a [`Gpu`] and what was assumed.
pub(crate) struct Completed {
    pub table: Table,
    pub warnings: Vec<String>,
}

/// The built-in GPU as a TOML table (what a user's entry would have to say to be it).
fn as_table(gpu: &Gpu) -> Table {
    match Value::try_from(gpu) {
        Ok(Value::Table(t)) => t,
        _ => unreachable!("a Gpu serializes to a TOML table"),
    }
}

/// `over` laid on `under`: tables merge key by key, anything else in `over` replaces.
fn merge(under: &mut Table, over: Table) {
    for (key, value) in over {
        match (under.get_mut(&key), value) {
            (Some(Value::Table(u)), Value::Table(o)) => merge(u, o),
            (_, value) => {
                under.insert(key, value);
            }
        }
    }
}

fn text<'a>(t: &'a Table, key: &str) -> Option<&'a str> {
    t.get(key).and_then(Value::as_str)
}

fn id_of(t: &Table) -> String {
    text(t, "id").unwrap_or("?").to_string()
}

/// The built-in GPUs an entry's architecture facts can come from, most alike first: same
/// compute capability, then same architecture (and, among those, the same form factor).
fn relatives<'a>(entry: &Table, builtin: &'a [Gpu]) -> Vec<&'a Gpu> {
    let (arch, cc, form) = (text(entry, "architecture"), text(entry, "compute_capability"), text(entry, "form_factor"));
    let mut found: Vec<(u8, &Gpu)> = builtin
        .iter()
        .filter_map(|g| {
            let same_arch = arch.is_some_and(|a| a.eq_ignore_ascii_case(&g.architecture));
            let same_cc = cc == Some(g.compute_capability.as_str());
            let same_form = form == Some(g.form_factor.as_str());
            (same_arch || same_cc).then_some((u8::from(!same_cc) * 2 + u8::from(!same_form), g))
        })
        .collect();
    found.sort_by_key(|(rank, _)| *rank);
    found.into_iter().map(|(_, g)| g).collect()
}

/// Starts an entry with `base = "…"` from that built-in GPU. The copy keeps the base's figures
/// but not its names, measurements or sources (it is another GPU unless its id is the base's).
fn start_from_base(entry: Table, find: &dyn Fn(&str) -> Option<Gpu>) -> Result<Table, String> {
    let Some(base_name) = entry.get("base") else { return Ok(entry) };
    let Some(base_name) = base_name.as_str() else { return Err(format!("GPU '{}': base must be a GPU name, e.g. base = \"h100-sxm\"", id_of(&entry))) };
    let base = find(base_name).ok_or_else(|| format!("GPU '{}': base '{base_name}' is not a built-in GPU (see `wavecast gpus`)", id_of(&entry)))?;
    let mut table = as_table(&base);
    let same_gpu = text(&entry, "id") == Some(base.id.as_str());
    if !same_gpu {
        for key in ["id", "aliases", "measured", "package"] {
            table.remove(key);
        }
        let id = id_of(&entry);
        table.insert("name".into(), Value::String(id));
        table.insert("source".into(), Value::String(format!("{} with the figures of this file", base.id)));
    }
    let mut entry = entry;
    entry.remove("base");
    merge(&mut table, entry);
    Ok(table)
}

/// Occupancy limits the entry does not give, from its closest built-in relative.
fn fill_occupancy(table: &mut Table, builtin: &[Gpu]) {
    let Some(relative) = relatives(table, builtin).into_iter().next() else { return };
    let Some(Value::Table(occupancy)) = as_table(relative).remove("occupancy") else { return };
    let mut filled = occupancy;
    if let Some(Value::Table(given)) = table.remove("occupancy") {
        merge(&mut filled, given);
    }
    table.insert("occupancy".into(), Value::Table(filled));
}

fn link_gbs(table: &Table, key: &str) -> f64 {
    match table.get("interconnect").and_then(|i| i.get(key)) {
        Some(Value::Float(v)) => *v,
        Some(Value::Integer(v)) => *v as f64,
        _ => 0.0,
    }
}

/// An entry that names no GPU-to-GPU link (no NVLink, no PCIe) gets its architecture's, with a
/// warning: zero bandwidth would price every tensor-parallel collective at nothing.
fn fill_links(table: &mut Table, builtin: &[Gpu]) -> Option<String> {
    if link_gbs(table, "nvlink_gbs") > 0.0 || link_gbs(table, "pcie_gbs") > 0.0 {
        return None;
    }
    let id = id_of(table);
    let relative = relatives(table, builtin).into_iter().find(|g| g.interconnect.nvlink_gbs > 0.0 || g.interconnect.pcie_gbs > 0.0);
    let (from, nvlink, pcie, generation) = match relative {
        Some(g) => (format!("{}'s, the closest built-in {} GPU", g.id, g.architecture), g.interconnect.nvlink_gbs, g.interconnect.pcie_gbs, g.interconnect.pcie_gen),
        None => ("PCIe 4.0 x16's (its architecture is not in the catalog)".to_string(), 0.0, 64.0, 4),
    };
    let mut links = Table::new();
    links.insert("nvlink_gbs".into(), Value::Float(nvlink));
    links.insert("pcie_gbs".into(), Value::Float(pcie));
    links.insert("pcie_gen".into(), Value::Integer(i64::from(generation)));
    let mut given = match table.remove("interconnect") {
        Some(Value::Table(t)) => t,
        _ => Table::new(),
    };
    given.remove("nvlink_gbs");
    given.remove("pcie_gbs");
    merge(&mut links, given);
    table.insert("interconnect".into(), Value::Table(links));
    Some(format!(
        "GPU '{id}' gives no GPU-to-GPU link: using {from} (NVLink {nvlink} GB/s, PCIe {pcie} GB/s); set [gpu.interconnect] nvlink_gbs and pcie_gbs to change it"
    ))
}

/// Dotted paths of the fields a [`Gpu`] cannot be read without, found by leaving each field of
/// a built-in entry out in turn (so the list follows the struct, not a copy of it).
fn required_fields(reference: &Table) -> Vec<String> {
    fn leaves(t: &Table, prefix: &str, out: &mut Vec<String>) {
        for (k, v) in t {
            let path = format!("{prefix}{k}");
            match v {
                Value::Table(inner) => leaves(inner, &format!("{path}."), out),
                _ => out.push(path),
            }
        }
    }
    let mut all = Vec::new();
    leaves(reference, "", &mut all);
    all.into_iter()
        .filter(|path| {
            let mut t = reference.clone();
            remove_path(&mut t, path);
            Value::Table(t).try_into::<Gpu>().is_err()
        })
        .collect()
}

fn remove_path(t: &mut Table, path: &str) {
    match path.split_once('.') {
        Some((head, rest)) => {
            if let Some(Value::Table(inner)) = t.get_mut(head) {
                remove_path(inner, rest);
            }
        }
        None => {
            t.remove(path);
        }
    }
}

fn has_path(t: &Table, path: &str) -> bool {
    match path.split_once('.') {
        Some((head, rest)) => matches!(t.get(head), Some(Value::Table(inner)) if has_path(inner, rest)),
        None => t.contains_key(path),
    }
}

/// The required fields `table` lacks. A field inside an optional table (`price.source`) counts
/// only when the entry gives that table.
fn missing_fields(table: &Table, required: &[String]) -> Vec<String> {
    required
        .iter()
        .filter(|path| !has_path(table, path))
        .filter(|path| {
            let parent = path.rsplit_once('.').map(|(p, _)| p);
            parent.is_none_or(|p| has_path(table, p) || !optional_table(p))
        })
        .cloned()
        .collect()
}

/// Tables an entry may leave out as a whole.
fn optional_table(path: &str) -> bool {
    matches!(path, "price" | "package" | "interconnect")
}

/// Completes one entry of the user's file (see the module's documentation).
pub(crate) fn complete(entry: Table, builtin: &[Gpu], find: &dyn Fn(&str) -> Option<Gpu>) -> Result<Completed, String> {
    let from_base = entry.contains_key("base");
    let mut table = start_from_base(entry, find)?;
    let mut warnings = Vec::new();
    if !from_base {
        fill_occupancy(&mut table, builtin);
    }
    warnings.extend(fill_links(&mut table, builtin));
    let reference = as_table(builtin.first().expect("the built-in catalog has GPUs"));
    let missing = missing_fields(&table, &required_fields(&reference));
    if !missing.is_empty() {
        let implausible = implausible_besides(&table, &missing, &reference);
        return Err(format!(
            "GPU '{}' is missing {}{} (or start from a built-in GPU: base = \"h100-sxm\" and only the fields that differ)",
            id_of(&table),
            missing.join(", "),
            if implausible.is_empty() { String::new() } else { format!("; and {}", implausible.join("; ")) }
        ));
    }
    Ok(Completed { table, warnings })
}

/// What is wrong with the fields an incomplete entry does give: the missing ones are borrowed
/// from `reference` so the rest can be checked, and every problem is reported in one go.
fn implausible_besides(table: &Table, missing: &[String], reference: &Table) -> Vec<String> {
    let mut filled = table.clone();
    for path in missing {
        copy_path(reference, &mut filled, path);
    }
    match Value::Table(filled).try_into::<Gpu>() {
        Ok(gpu) => gpu.problems().into_iter().filter(|p| !missing.iter().any(|m| p.starts_with(&format!("{m} ")))).collect(),
        Err(_) => Vec::new(),
    }
}

/// Copies the value at dotted `path` from `from` into `to`, creating tables on the way.
fn copy_path(from: &Table, to: &mut Table, path: &str) {
    match path.split_once('.') {
        Some((head, rest)) => {
            let (Some(Value::Table(inner_from)), entry) = (from.get(head), to.entry(head.to_string()).or_insert_with(|| Value::Table(Table::new()))) else { return };
            if let Value::Table(inner_to) = entry {
                copy_path(inner_from, inner_to, rest);
            }
        }
        None => {
            if let Some(v) = from.get(path) {
                to.insert(path.to_string(), v.clone());
            }
        }
    }
}
