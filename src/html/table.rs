//! The report's JSON as tables, whatever its shape: scalar fields in a summary, each list of
//! objects (or map of objects) as a table with one row per entry. Every number carries its JSON
//! pointer, so nothing of the answer is left out or shown differently from `--json`.

use super::node::{pointer, Node};
use super::text::{esc, label, num_span};
use std::fmt::Write as _;

/// Lists longer than this fold into a `<details>` element (closed), so the page opens short.
const FOLD_ROWS: usize = 40;

/// The answer's sections: a summary table of its scalar fields (and objects of scalars, as
/// dotted names), then one table per list or nested object, in the JSON's order.
pub fn sections(root: &Node, title: &str) -> String {
    let mut out = String::new();
    section(&mut out, root, "", title);
    out
}

fn section(out: &mut String, node: &Node, at: &str, title: &str) {
    let mut summary = Vec::new();
    let mut nested = Vec::new();
    for (k, v) in node.fields() {
        match v {
            Node::Obj(fields) if fields.iter().all(|(_, x)| x.is_scalar()) && !fields.is_empty() => {
                for (sub, x) in fields {
                    summary.push((format!("{k}.{sub}"), pointer(&pointer(at, k), sub), x, sub.as_str()));
                }
            }
            Node::Arr(items) if items.iter().all(Node::is_scalar) => summary.push((k.clone(), pointer(at, k), v, k.as_str())),
            _ if v.is_scalar() => summary.push((k.clone(), pointer(at, k), v, k.as_str())),
            _ => nested.push((k, v)),
        }
    }
    if !summary.is_empty() {
        let _ = write!(out, r#"<h3>{}</h3><table class="kv"><tbody>"#, esc(title));
        for (name, ptr, value, key) in summary {
            let _ = write!(out, "<tr><th>{}</th><td>{}</td></tr>", esc(&label(&name)), cell(value, &ptr, key));
        }
        out.push_str("</tbody></table>");
    }
    for (k, v) in nested {
        let ptr = pointer(at, k);
        let heading = if title.is_empty() || at.is_empty() { label(k) } else { format!("{title} · {}", label(k)) };
        match v {
            Node::Arr(items) => list_table(out, items, &ptr, &heading),
            Node::Obj(fields) if fields.iter().all(|(_, x)| matches!(x, Node::Obj(_))) => keyed_table(out, fields, &ptr, &heading),
            _ => section(out, v, &ptr, &heading),
        }
    }
}

/// A column: a field, or a field of a field that is an object of scalars (`metrics.p50`).
type Column = (String, Option<String>);

fn columns<'a>(rows: impl Iterator<Item = &'a Node>) -> Vec<Column> {
    let mut cols: Vec<Column> = Vec::new();
    let mut add = |c: Column| {
        if !cols.contains(&c) {
            cols.push(c);
        }
    };
    for row in rows {
        for (k, v) in row.fields() {
            match v {
                Node::Obj(fields) if !fields.is_empty() && fields.iter().all(|(_, x)| x.is_scalar()) => fields.iter().for_each(|(sub, _)| add((k.clone(), Some(sub.clone())))),
                _ => add((k.clone(), None)),
            }
        }
    }
    cols
}

fn header(cols: &[Column], first: Option<&str>) -> String {
    let mut h = String::from("<thead><tr>");
    if let Some(f) = first {
        let _ = write!(h, "<th>{}</th>", esc(f));
    }
    for (k, sub) in cols {
        let name = match sub {
            Some(s) => format!("{} {}", label(k), label(s)),
            None => label(k),
        };
        let _ = write!(h, "<th>{}</th>", esc(&name));
    }
    h.push_str("</tr></thead>");
    h
}

fn row_cells(row: &Node, ptr: &str, cols: &[Column]) -> String {
    let mut r = String::new();
    for (k, sub) in cols {
        let (value, p, key) = match sub {
            Some(s) => (row.get(k).and_then(|o| o.get(s)), pointer(&pointer(ptr, k), s), s.as_str()),
            None => (row.get(k), pointer(ptr, k), k.as_str()),
        };
        let _ = write!(r, "<td>{}</td>", value.map(|v| cell(v, &p, key)).unwrap_or_default());
    }
    r
}

fn open_table(out: &mut String, heading: &str, rows: usize) {
    let _ = write!(out, "<h3>{}</h3>", esc(heading));
    if rows > FOLD_ROWS {
        let _ = write!(out, "<details><summary>{rows} rows</summary>");
    }
    out.push_str(r#"<div class="scroll"><table class="data">"#);
}

fn close_table(out: &mut String, rows: usize) {
    out.push_str("</tbody></table></div>");
    if rows > FOLD_ROWS {
        out.push_str("</details>");
    }
}

/// A list: of objects, one row each; of anything else, one row per item.
fn list_table(out: &mut String, items: &[Node], ptr: &str, heading: &str) {
    if !items.iter().all(|i| matches!(i, Node::Obj(_))) {
        open_table(out, heading, items.len());
        out.push_str("<tbody>");
        for (i, item) in items.iter().enumerate() {
            let _ = write!(out, "<tr><td>{}</td></tr>", cell(item, &pointer(ptr, &i.to_string()), ""));
        }
        close_table(out, items.len());
        return;
    }
    let cols = columns(items.iter());
    open_table(out, heading, items.len());
    out.push_str(&header(&cols, None));
    out.push_str("<tbody>");
    for (i, row) in items.iter().enumerate() {
        let _ = write!(out, "<tr>{}</tr>", row_cells(row, &pointer(ptr, &i.to_string()), &cols));
    }
    close_table(out, items.len());
}

/// A map of objects (`{"h100": {...}, "a100": {...}}`): one row per key.
fn keyed_table(out: &mut String, fields: &[(String, Node)], ptr: &str, heading: &str) {
    let cols = columns(fields.iter().map(|(_, v)| v));
    open_table(out, heading, fields.len());
    out.push_str(&header(&cols, Some("")));
    out.push_str("<tbody>");
    for (k, row) in fields {
        let _ = write!(out, "<tr><th>{}</th>{}</tr>", esc(k), row_cells(row, &pointer(ptr, k), &cols));
    }
    close_table(out, fields.len());
}

/// One value inside a cell; `key` is its field name (a `provenance` shows as a badge, a
/// two-number `…interval…` as a range).
pub fn cell(v: &Node, ptr: &str, key: &str) -> String {
    match v {
        Node::Null => "–".into(),
        Node::Bool(b) => b.to_string(),
        Node::Num(n) => num_span(n, ptr),
        Node::Str(s) if key.contains("provenance") => format!(r#"<span class="prov">{}</span>"#, esc(s)),
        Node::Str(s) => esc(s),
        Node::Arr(items) if items.is_empty() => "none".into(),
        Node::Arr(items) => {
            let parts: Vec<String> = items.iter().enumerate().map(|(i, x)| cell(x, &pointer(ptr, &i.to_string()), key)).collect();
            let range = key.contains("interval") && items.len() == 2 && items.iter().all(|x| x.num().is_some());
            if range {
                parts.join(" – ")
            } else if items.iter().all(Node::is_scalar) {
                parts.join(", ")
            } else {
                parts.iter().map(|p| format!("<div>{p}</div>")).collect()
            }
        }
        Node::Obj(fields) => {
            let parts: Vec<String> = fields.iter().map(|(k, x)| format!("{}: {}", esc(&label(k)), cell(x, &pointer(ptr, k), k))).collect();
            parts.join("; ")
        }
    }
}

/// The inputs that produced the report, one row per field (absent ones left out).
pub fn inputs(node: &Node) -> String {
    let mut out = String::from(r#"<table class="kv"><tbody>"#);
    for (k, v) in node.fields() {
        if matches!(v, Node::Null) {
            continue;
        }
        let shown = match v {
            Node::Str(s) => esc(s),
            Node::Num(n) => n.to_string(),
            Node::Obj(_) | Node::Arr(_) => format!("<code>{}</code>", esc(&v.to_json())),
            Node::Bool(b) => b.to_string(),
            Node::Null => String::new(),
        };
        let _ = write!(out, "<tr><th>{}</th><td>{shown}</td></tr>", esc(&label(k)));
    }
    out.push_str("</tbody></table>");
    out
}
