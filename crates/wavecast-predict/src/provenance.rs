//! Where a predicted time came from: the rung of the price ladder that answered
//! ([`crate::ladder`]). Every [`crate::OpTime`] carries one, so reports can say, per op class and
//! in `--json`, how much of a step was measured, carried over from a measured GPU, or physics.

use serde::{Serialize, Serializer};
use std::collections::BTreeSet;
use std::sync::Mutex;

/// The rungs, from most to least trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Rung {
    /// Interpolated in this GPU's own measurements (reproduces a measured point exactly).
    Measured,
    /// Another GPU's measurement of the same shape, times the two GPUs' roofline ratio.
    Transfer,
    /// No measurement of the family and format on any GPU: a model from datasheet figures.
    #[default]
    Physics,
}

impl Rung {
    pub fn as_str(self) -> &'static str {
        match self {
            Rung::Measured => "measured",
            Rung::Transfer => "transfer",
            Rung::Physics => "physics",
        }
    }
}

/// A rung and, for a transfer, the measured GPU it came from (the one with the largest weight);
/// `shipped` when the measurements were the surfaces wavecast ships (`weights/ladder.json`)
/// rather than a measured-data folder's full tables; `engine` when the measurements were
/// another engine's than the one asked (none of its tables had the family).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Provenance {
    pub rung: Rung,
    pub from: Option<&'static str>,
    pub shipped: bool,
    pub engine: Option<&'static str>,
}

impl Provenance {
    pub const MEASURED: Provenance = Provenance { rung: Rung::Measured, from: None, shipped: false, engine: None };
    pub const PHYSICS: Provenance = Provenance { rung: Rung::Physics, from: None, shipped: false, engine: None };

    pub fn transfer(from: &str) -> Provenance {
        Provenance { rung: Rung::Transfer, from: Some(intern(from)), ..Provenance::PHYSICS }
    }

    /// The same rung, read from shipped surfaces.
    pub fn shipped(self, shipped: bool) -> Provenance {
        Provenance { shipped, ..self }
    }

    /// The same rung, read from `engine`'s tables in place of the asked engine's (`None`: the
    /// asked engine's own).
    pub fn from_engine(self, engine: Option<&str>) -> Provenance {
        Provenance { engine: engine.map(intern), ..self }
    }
}

impl std::fmt::Display for Provenance {
    /// `measured`, `transfer from h100-sxm` or `physics`, with ` (shipped)` after a rung read
    /// from the shipped surfaces, ` (vllm tables)` after one read from another engine's
    /// tables than the one asked, and ` (shipped vllm tables)` after both.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.from {
            Some(gpu) => write!(f, "{} from {gpu}", self.rung.as_str())?,
            None => f.write_str(self.rung.as_str())?,
        }
        match (self.shipped, self.engine) {
            (true, Some(engine)) => write!(f, " (shipped {engine} tables)"),
            (true, None) => f.write_str(" (shipped)"),
            (false, Some(engine)) => write!(f, " ({engine} tables)"),
            (false, None) => Ok(()),
        }
    }
}

impl Serialize for Provenance {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// GPU ids and engine names live as long as the process so that a provenance stays `Copy` like the time it
/// labels; the set is bounded by the catalog.
fn intern(id: &str) -> &'static str {
    static IDS: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut ids = IDS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(known) = ids.get(id) {
        return known;
    }
    let leaked: &'static str = Box::leak(id.to_string().into_boxed_str());
    ids.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provenance_reads_as_the_rung_and_its_source() {
        assert_eq!(Provenance::MEASURED.to_string(), "measured");
        assert_eq!(Provenance::transfer("b200-sxm").to_string(), "transfer from b200-sxm");
        assert_eq!(Provenance::MEASURED.shipped(true).to_string(), "measured (shipped)");
        assert_eq!(Provenance::transfer("h100-sxm").shipped(true).to_string(), "transfer from h100-sxm (shipped)");
        assert_eq!(Provenance::MEASURED.from_engine(Some("vllm")).to_string(), "measured (vllm tables)");
        assert_eq!(Provenance::MEASURED.shipped(true).from_engine(Some("vllm")).to_string(), "measured (shipped vllm tables)");
        assert_eq!(Provenance::transfer("h100-sxm").shipped(true).from_engine(Some("vllm")).to_string(), "transfer from h100-sxm (shipped vllm tables)");
        assert_eq!(serde_json::to_string(&Provenance::PHYSICS).unwrap(), "\"physics\"");
        assert!(std::ptr::eq(Provenance::transfer("x").from.unwrap(), Provenance::transfer("x").from.unwrap()));
    }
}
