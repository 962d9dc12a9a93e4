//! What every tabular reader shares: the load report (rows kept, rows skipped with their
//! reason) and CSV column lookup by name.

use crate::measurement::Measurement;
use crate::DataError;
use std::collections::HashMap;
use wavecast_gpu::{Catalog, Vendor};

#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub file: String,
    pub line: u64,
    pub reason: String,
}

/// Rows a reader produced and the ones it skipped (a file's bad rows never stop the others).
#[derive(Debug)]
pub struct LoadReport<T = Measurement> {
    pub rows: Vec<T>,
    pub skipped: Vec<Skipped>,
    /// Judgements the reader made, once each (which catalog entry an ambiguous GPU name was
    /// read as, from the figures its rows carry).
    pub notes: Vec<String>,
}

impl<T> Default for LoadReport<T> {
    fn default() -> Self {
        LoadReport { rows: Vec::new(), skipped: Vec::new(), notes: Vec::new() }
    }
}

impl<T> LoadReport<T> {
    pub fn extend(&mut self, other: LoadReport<T>) {
        self.rows.extend(other.rows);
        self.skipped.extend(other.skipped);
        for n in other.notes {
            if !self.notes.contains(&n) {
                self.notes.push(n);
            }
        }
    }

    /// Keeps a row, or records why row `line` of `file` was skipped.
    pub(crate) fn push(&mut self, file: &str, line: u64, row: Result<T, String>) {
        match row {
            Ok(t) => self.rows.push(t),
            Err(reason) => self.skipped.push(Skipped { file: file.into(), line, reason }),
        }
    }

    /// One line: how many rows were read and skipped, and why (most common reasons first).
    pub fn summary(&self) -> String {
        let notes: String = self.notes.iter().map(|n| format!("; {n}")).collect();
        if self.skipped.is_empty() {
            return format!("{} rows loaded, none skipped{notes}", self.rows.len());
        }
        let mut reasons: HashMap<&str, usize> = HashMap::new();
        for s in &self.skipped {
            *reasons.entry(s.reason.split(':').next().unwrap_or("")).or_default() += 1;
        }
        let mut r: Vec<_> = reasons.into_iter().collect();
        r.sort_by_key(|a| std::cmp::Reverse(a.1));
        let top: Vec<String> = r.iter().take(3).map(|(k, n)| format!("{n}× {k}")).collect();
        format!("{} rows loaded, {} skipped ({}){notes}", self.rows.len(), self.skipped.len(), top.join("; "))
    }
}

/// A CSV header: column name → index, and how many columns it has.
pub(crate) struct Columns(HashMap<String, usize>, usize);

impl Columns {
    pub(crate) fn new(headers: &csv::StringRecord) -> Columns {
        Columns(headers.iter().enumerate().map(|(i, h)| (h.trim().to_string(), i)).collect(), headers.len())
    }

    /// How many columns the header names.
    pub(crate) fn width(&self) -> usize {
        self.1
    }

    /// A file without one of `names` is unreadable as a whole: one error naming the column.
    pub(crate) fn require(&self, names: &[&str], file: &str) -> Result<(), DataError> {
        match names.iter().find(|n| !self.0.contains_key(**n)) {
            Some(missing) => Err(DataError::Format { path: file.into(), reason: format!("missing column '{missing}'") }),
            None => Ok(()),
        }
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    pub(crate) fn get<'r>(&self, rec: &'r csv::StringRecord, name: &str) -> Option<&'r str> {
        self.0.get(name).and_then(|&i| rec.get(i)).map(str::trim).filter(|s| !s.is_empty())
    }
    pub(crate) fn num<T: std::str::FromStr>(&self, rec: &csv::StringRecord, name: &str) -> Result<T, String> {
        let raw = self.get(rec, name).ok_or_else(|| format!("missing value: column '{name}' is empty"))?;
        raw.parse().map_err(|_| format!("not a number: column '{name}' = '{raw}'"))
    }
    pub(crate) fn dim(&self, rec: &csv::StringRecord, name: &str) -> Result<u64, String> {
        let v: u64 = self.num(rec, name)?;
        wavecast_ir::dim(&format!("column '{name}'"), v).map_err(|e| match e {
            wavecast_ir::DimError::Zero { .. } => format!("zero dimension: column '{name}'"),
            e => e.to_string(),
        })
    }
    pub(crate) fn opt_f64(&self, rec: &csv::StringRecord, name: &str) -> Option<f64> {
        self.get(rec, name).and_then(|s| s.parse().ok())
    }
}

/// One CSV record and its line in the file, or why the csv crate could not read it.
pub(crate) type NumberedRecord = (u64, Result<csv::StringRecord, String>);

/// A CSV's columns (checked for `required` ones) and its records numbered by file line (the
/// header is line 1).
pub(crate) fn records<'t>(text: &'t str, file: &str, required: &[&str]) -> Result<(Columns, impl Iterator<Item = NumberedRecord> + 't), DataError> {
    let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
    let headers = rdr.headers().map_err(|e| DataError::Format { path: file.into(), reason: e.to_string() })?;
    let cols = Columns::new(headers);
    cols.require(required, file)?;
    let numbered = rdr.into_records().enumerate().map(|(i, rec)| (i as u64 + 2, rec.map_err(|e| format!("unreadable row: {e}"))));
    Ok((cols, numbered))
}

/// Device names resolved to catalog ids, each name looked up once (a file repeats its GPU's
/// name on every row).
pub(crate) struct DeviceIds<'c> {
    catalog: &'c Catalog,
    seen: HashMap<String, Result<(String, Vendor), String>>,
}

impl<'c> DeviceIds<'c> {
    pub(crate) fn new(catalog: &'c Catalog) -> DeviceIds<'c> {
        DeviceIds { catalog, seen: HashMap::new() }
    }

    /// The catalog id of the GPU `name` names, or why there is none.
    pub(crate) fn id(&mut self, name: &str) -> Result<String, String> {
        self.gpu(name).map(|(id, _)| id)
    }

    /// The catalog id of the GPU `name` names with `sm_count` SMs and `bandwidth_gbs` of memory
    /// bandwidth (see `Catalog::resolve`), and the note saying so when the figures decided.
    pub(crate) fn by_figures(&mut self, name: &str, sm_count: Option<u32>, bandwidth_gbs: Option<f64>) -> Result<(String, Option<String>), String> {
        self.catalog.resolve(name, sm_count, bandwidth_gbs).map(|(g, note)| (g.id.clone(), note)).map_err(|e| format!("unknown device: {e}"))
    }

    /// The catalog id and vendor of the GPU `name` names, or why there is none.
    pub(crate) fn gpu(&mut self, name: &str) -> Result<(String, Vendor), String> {
        let catalog = self.catalog;
        self.seen.entry(name.to_string()).or_insert_with(|| catalog.get(name).map(|g| (g.id.clone(), g.vendor)).map_err(|e| format!("unknown device: {e}"))).clone()
    }
}
