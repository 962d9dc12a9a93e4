//! The one table of predictors, [`PREDICTORS`]: every name `--predictor` accepts, what it is,
//! whether it is learned (and then its embedded weights and how they are loaded), and which
//! fallbacks price the ops outside its own model. [`crate::by_name`], [`crate::DEFAULT_PREDICTOR`],
//! the CLI's help and `wavecast fit` (an exhaustive `match` on [`LearnedKind`] in
//! `wavecast-train`) all read this table; no other list of names exists.
//!
//! Trained parameters are JSON. The copies shipped with wavecast live in this crate's
//! `weights/<name>.json` and are embedded in the binary; each file holds a model trained on
//! every measured GPU and one per left-out GPU (for leave-one-GPU-out evaluation).

use crate::adapters::WithConv;
use crate::li::Li;
use crate::neusight::NeuSight;
use crate::pm2lat::Pm2Lat;
use crate::wavecast::Wavecast;
use crate::{PredictError, Predictor, Roofline};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One predictor wavecast ships.
pub struct Entry {
    /// What `--predictor` takes.
    pub name: &'static str,
    /// One line for help texts.
    pub description: &'static str,
    pub kind: Kind,
    /// Builds the predictor from its parameters (a trained model's `params`; `null` for an
    /// analytic predictor). Fallbacks are not applied here: see [`Entry::fallbacks`].
    pub load: fn(&serde_json::Value) -> Result<Box<dyn Predictor>, serde_json::Error>,
    /// What prices the ops outside the predictor's own model, composed by [`Fallbacks::compose`].
    pub fallbacks: Fallbacks,
    /// The predictor used when none is named (exactly one row).
    pub default: bool,
    /// The predictor LLM serving uses when none is named (exactly one row): BF16, FP8 and FP4
    /// kernels, which the FP32-trained default knows nothing of.
    pub serve_default: bool,
}

/// Whether a predictor has parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Physics only, nothing to fit.
    Analytic,
    /// Fitted by `wavecast-train` on measurements; `weights` is the shipped `weights/<name>.json`.
    Learned { kind: LearnedKind, weights: &'static str },
    /// The sustained roofline's numbers fitted on every GPU of the modern-GPU kernel
    /// measurements (`wavecast fit --predictor sustained`, `weights/sustained.json`). No
    /// left-out models ship: asked to leave out a GPU it was fitted on, it refuses (`eval ops`
    /// on those data refits it without the GPU instead).
    Sustained,
    /// The price ladder ([`crate::ladder`]): the GPU's own measured tables, else a measured
    /// sibling's times scaled by the two GPUs' roofline ratio, else the sustained roofline. Its
    /// tables come from a measured-data folder (`--ops-data`), else from the surfaces wavecast
    /// ships (`weights/ladder.json`).
    Ladder,
}

/// The learned predictors. `wavecast-train` trains each through an exhaustive `match` on this
/// enum, so a new variant does not compile until it has a trainer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LearnedKind {
    Li,
    Wavecast,
    NeuSight,
    Pm2Lat,
}

/// Ops a predictor's own model does not cover, priced by an explicit composition step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallbacks {
    /// The predictor prices every op itself (or reports it unpriced).
    None,
    /// [`WithConv`]: convolutions by the shipped convolution model (its left-out model when
    /// evaluating a held-out GPU), recurrent layers through the kernels cuDNN launches, pooling,
    /// channel norms, concatenation and upsampling as element-wise kernels; every other op by
    /// the predictor itself.
    Vision,
}

/// Every predictor wavecast ships. Adding one: a module implementing [`Predictor`] (and
/// [`Learned`] when it has parameters) and a row here.
pub const PREDICTORS: &[Entry] = &[
    Entry {
        name: "roofline",
        description: "max(FLOPs / peak, bytes / bandwidth); no learning",
        kind: Kind::Analytic,
        load: roofline,
        fallbacks: Fallbacks::None,
        default: false,
        serve_default: false,
    },
    Entry {
        name: "ladder",
        description: "price ladder: the GPU's own measured tables (--ops-data), else a measured sibling's times scaled by the two GPUs' roofline ratio, else the sustained roofline (serving's per-op model)",
        kind: Kind::Ladder,
        load: ladder,
        fallbacks: Fallbacks::None,
        default: false,
        serve_default: true,
    },
    Entry {
        name: "sustained",
        description: "sustained roofline fitted on BF16/FP8/FP4 kernels of current GPUs (the ladder's physics rung)",
        kind: Kind::Sustained,
        load: sustained,
        fallbacks: Fallbacks::None,
        default: false,
        serve_default: false,
    },
    Entry {
        name: "li",
        description: "Li et al. (MICRO'23): linear in FLOPs and bytes per GPU and kernel family",
        kind: Kind::Learned { kind: LearnedKind::Li, weights: include_str!("../weights/li.json") },
        load: load_learned::<Li>,
        fallbacks: Fallbacks::Vision,
        default: false,
        serve_default: false,
    },
    Entry {
        name: "wavecast",
        description: "physics bound times a learned per-family correction, calibrated per GPU",
        kind: Kind::Learned { kind: LearnedKind::Wavecast, weights: include_str!("../weights/wavecast.json") },
        load: load_learned::<Wavecast>,
        fallbacks: Fallbacks::Vision,
        default: true,
        serve_default: false,
    },
    Entry {
        name: "neusight",
        description: "NeuSight (ASPLOS'25): tiles, waves and a learned utilization per family",
        kind: Kind::Learned { kind: LearnedKind::NeuSight, weights: include_str!("../weights/neusight.json") },
        load: load_learned::<NeuSight>,
        fallbacks: Fallbacks::Vision,
        default: false,
        serve_default: false,
    },
    Entry {
        name: "pm2lat",
        description: "PM2Lat: per-kernel-configuration fits of the kernel the library launches",
        kind: Kind::Learned { kind: LearnedKind::Pm2Lat, weights: include_str!("../weights/pm2lat.json") },
        load: load_learned::<Pm2Lat>,
        fallbacks: Fallbacks::Vision,
        default: false,
        serve_default: false,
    },
];

/// The name of the row marked `default`.
pub const DEFAULT_PREDICTOR: &str = default_name(false);

/// The name of the row marked `serve_default`: what `predict --mode serve` and `compare` use
/// when no predictor is named.
pub const DEFAULT_SERVE_PREDICTOR: &str = default_name(true);

const fn default_name(serve: bool) -> &'static str {
    let mut i = 0;
    while i < PREDICTORS.len() {
        if (serve && PREDICTORS[i].serve_default) || (!serve && PREDICTORS[i].default) {
            return PREDICTORS[i].name;
        }
        i += 1;
    }
    panic!("no predictor is marked default")
}

/// A learned predictor: its parameters are its serde form, saved in a [`ModelFile`].
pub trait Learned: Predictor + Serialize + DeserializeOwned + Sized + 'static {
    const KIND: LearnedKind;

    /// The parameters as stored in a model file.
    fn save(&self) -> Result<serde_json::Value, String> {
        serde_json::to_value(self).map_err(|e| e.to_string())
    }

    /// The predictor from stored parameters.
    fn load(params: &serde_json::Value) -> Result<Self, serde_json::Error> {
        Self::deserialize(params)
    }
}

fn roofline(_: &serde_json::Value) -> Result<Box<dyn Predictor>, serde_json::Error> {
    Ok(Box::new(Roofline))
}

fn sustained(_: &serde_json::Value) -> Result<Box<dyn Predictor>, serde_json::Error> {
    Ok(Box::new(crate::sustained::SustainedOps::shipped()))
}

fn ladder(_: &serde_json::Value) -> Result<Box<dyn Predictor>, serde_json::Error> {
    Ok(Box::new(crate::ladder::LadderOps::shipped(None)))
}

fn load_learned<P: Learned>(params: &serde_json::Value) -> Result<Box<dyn Predictor>, serde_json::Error> {
    Ok(Box::new(P::load(params)?))
}

impl LearnedKind {
    /// Its row of [`PREDICTORS`].
    pub fn entry(self) -> &'static Entry {
        PREDICTORS
            .iter()
            .find(|e| matches!(e.kind, Kind::Learned { kind, .. } if kind == self))
            .expect("every learned kind has a row in PREDICTORS")
    }

    pub fn name(self) -> &'static str {
        self.entry().name
    }
}

impl Fallbacks {
    /// `own` with this composition applied (`holdout`: the GPU left out of the fallback models'
    /// training, when evaluating one).
    pub fn compose(self, own: Box<dyn Predictor>, holdout: Option<&str>) -> Box<dyn Predictor> {
        match self {
            Fallbacks::None => own,
            Fallbacks::Vision => Box::new(WithConv::shipped(own, holdout)),
        }
    }
}

/// The predictor names, in table order.
pub fn names() -> impl Iterator<Item = &'static str> {
    PREDICTORS.iter().map(|e| e.name)
}

/// The row of `name`.
pub fn entry(name: &str) -> Option<&'static Entry> {
    PREDICTORS.iter().find(|e| e.name == name)
}

/// The learned predictors, in table order.
pub fn learned() -> impl Iterator<Item = (LearnedKind, &'static Entry)> {
    PREDICTORS.iter().filter_map(|e| match e.kind {
        Kind::Learned { kind, .. } => Some((kind, e)),
        Kind::Analytic | Kind::Sustained | Kind::Ladder => None,
    })
}

/// Help text of `--predictor`: every name (space-separated, as `bench/accuracy.sh` reads it).
pub fn help() -> String {
    format!("Which per-op predictor to use (available: {})", names().collect::<Vec<_>>().join(" "))
}

/// [`help`] for a flag whose default depends on the mode (`predict --predictor`).
pub fn help_by_mode() -> String {
    format!("{} [default: {DEFAULT_PREDICTOR}; {DEFAULT_SERVE_PREDICTOR} in serve mode]", help())
}

impl Entry {
    /// The predictor with its shipped parameters, the model trained without `holdout`'s
    /// measurements when one is shipped; fallbacks not applied.
    pub fn build(&self, holdout: Option<&str>) -> Result<Box<dyn Predictor>, PredictError> {
        self.build_with(holdout, None)
    }

    /// [`Entry::build`] with the measured-data folder the ladder reads its tables from (other
    /// predictors ignore it).
    pub fn build_with(&self, holdout: Option<&str>, ops_data: Option<&std::path::Path>) -> Result<Box<dyn Predictor>, PredictError> {
        match self.kind {
            Kind::Ladder => {
                if let Some(reason) = crate::sustained::fitted_on(holdout) {
                    return Err(PredictError::Load { name: self.name.to_string(), reason });
                }
                match crate::ladder::LadderOps::load(ops_data, holdout) {
                Ok(ops) => Ok(Box::new(ops)),
                Err(reason) => Err(PredictError::Load { name: self.name.to_string(), reason }),
                }
            }
            Kind::Analytic => (self.load)(&serde_json::Value::Null).map_err(|e| load_error(self.name, e)),
            Kind::Sustained => {
                if let Some(reason) = crate::sustained::fitted_on(holdout) {
                    return Err(PredictError::Load { name: self.name.to_string(), reason });
                }
                (self.load)(&serde_json::Value::Null).map_err(|e| load_error(self.name, e))
            }
            Kind::Learned { weights, .. } => match holdout {
                Some(gpu) => {
                    let file: WeightsFile = serde_json::from_str(weights).map_err(|e| load_error(self.name, e))?;
                    load_unbounded(file.without(gpu).map_err(|reason| PredictError::Load { name: self.name.to_string(), reason })?)
                }
                // The all-GPU model only; skipping the left-out models keeps start-up fast.
                None => load_unbounded(&all_only(weights).map_err(|e| load_error(self.name, e))?),
            },
        }
    }

    /// Whether it prices every op as the measured shape it corresponds to (the ladder and the
    /// sustained model): the ops the learned predictors cannot read
    /// ([`crate::unmodelled`]) are its own.
    pub fn prices_measured_shapes(&self) -> bool {
        matches!(self.kind, Kind::Ladder | Kind::Sustained)
    }

    /// [`Entry::build`] with the entry's fallbacks composed: what `--predictor NAME` runs.
    pub fn with_fallbacks(&self, holdout: Option<&str>, ops_data: Option<&std::path::Path>) -> Result<Box<dyn Predictor>, PredictError> {
        Ok(self.fallbacks.compose(self.build_with(holdout, ops_data)?, holdout))
    }
}

fn load_error(name: &str, e: serde_json::Error) -> PredictError {
    PredictError::Load { name: name.to_string(), reason: e.to_string() }
}

/// One trained model and how it was made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelFile {
    pub predictor: String,
    /// Catalog ids of the GPUs whose measurements trained it.
    pub trained_on: Vec<String>,
    pub seed: u64,
    pub params: serde_json::Value,
}

/// What `weights/<name>.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WeightsFile {
    pub all: ModelFile,
    /// Keyed by the catalog id of the GPU left out.
    #[serde(default)]
    pub holdout: BTreeMap<String, ModelFile>,
}

impl WeightsFile {
    /// The model that never saw `gpu`: its left-out model, or the all-GPU model when that was
    /// not trained on `gpu` either. A file whose all-GPU model learned from `gpu` but which has
    /// no model without it is an error, never a silent fallback to the model that saw it.
    pub fn without(&self, gpu: &str) -> Result<&ModelFile, String> {
        match self.holdout.get(gpu) {
            Some(model) if !model.trained_on.iter().any(|g| g == gpu) => Ok(model),
            Some(_) => Err(format!("its model 'without {gpu}' was trained on {gpu}")),
            None if self.all.trained_on.iter().any(|g| g == gpu) => {
                Err(format!("it was trained on {gpu} and ships no model without it (retrain it with `wavecast fit`)"))
            }
            None => Ok(&self.all),
        }
    }
}

/// Builds the predictor a model file describes (without fallbacks), bounded by the physical
/// floor like every predictor a report uses.
pub fn load(file: &ModelFile) -> Result<Box<dyn Predictor>, PredictError> {
    Ok(Box::new(crate::bounds::Bounded(Box::new(crate::unmodelled::Unmodelled(load_unbounded(file)?)))))
}

/// [`load`] without the physical floor: the model's own output, which [`crate::by_name`]
/// bounds after composing fallbacks and intervals.
pub fn load_unbounded(file: &ModelFile) -> Result<Box<dyn Predictor>, PredictError> {
    let unknown = || PredictError::Load { name: file.predictor.clone(), reason: "unknown predictor in model file".into() };
    let entry = entry(&file.predictor).filter(|e| matches!(e.kind, Kind::Learned { .. })).ok_or_else(unknown)?;
    (entry.load)(&file.params).map_err(|e| load_error(&file.predictor, e))
}

/// The all-GPU model of a weights file, read without reading on: the left-out models written
/// after it are most of the text and a start-up never needs them (skipping them still costs a
/// scan of every number).
fn all_only(text: &str) -> Result<ModelFile, serde_json::Error> {
    let mut found = None;
    let read = serde::Deserializer::deserialize_map(&mut serde_json::Deserializer::from_str(text), AllField(&mut found));
    match (found, read) {
        (Some(all), _) => Ok(all),
        (None, Err(e)) => Err(e),
        (None, Ok(())) => Err(serde::de::Error::missing_field("all")),
    }
}

/// Reads keys up to `all`, keeps its model and stops the reading there with an error the
/// caller ignores once the model is kept.
struct AllField<'a>(&'a mut Option<ModelFile>);

impl<'de> serde::de::Visitor<'de> for AllField<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a weights file (an object with `all`)")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "all" {
                *self.0 = Some(map.next_value()?);
                return Err(serde::de::Error::custom("stopped after `all`"));
            }
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
    }
}

fn shipped_text(name: &str) -> Option<&'static str> {
    match entry(name)?.kind {
        Kind::Learned { weights, .. } => Some(weights),
        Kind::Analytic | Kind::Sustained | Kind::Ladder => None,
    }
}

/// The shipped all-GPU model of `name`, if wavecast ships one.
pub fn shipped_all(name: &str) -> Option<Result<ModelFile, PredictError>> {
    shipped_text(name).map(|text| all_only(text).map_err(|e| load_error(name, e)))
}

/// The shipped weights file of `name`, if wavecast ships one.
pub fn shipped(name: &str) -> Option<Result<WeightsFile, PredictError>> {
    shipped_text(name).map(|text| serde_json::from_str(text).map_err(|e| load_error(name, e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_learned_kind_has_one_row() {
        let mut names: Vec<&str> = names().collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), PREDICTORS.len());
        assert_eq!(PREDICTORS.iter().filter(|e| e.default).count(), 1);
        for kind in [LearnedKind::Li, LearnedKind::Wavecast, LearnedKind::NeuSight, LearnedKind::Pm2Lat] {
            assert_eq!(learned().filter(|(k, _)| *k == kind).count(), 1, "{kind:?}");
        }
    }

    #[test]
    fn the_all_gpu_model_read_alone_is_the_one_the_whole_file_holds() {
        for (_, e) in learned() {
            let Kind::Learned { weights, .. } = e.kind else { unreachable!() };
            let whole: WeightsFile = serde_json::from_str(weights).unwrap();
            assert_eq!(serde_json::to_value(all_only(weights).unwrap()).unwrap(), serde_json::to_value(&whole.all).unwrap(), "{}", e.name);
        }
        // Wherever `all` stands; a file without it, or not a weights file, is an error.
        assert_eq!(all_only(r#"{"holdout":{},"all":{"predictor":"li","trained_on":[],"seed":1,"params":null}}"#).unwrap().predictor, "li");
        assert!(all_only(r#"{"holdout":{}}"#).unwrap_err().to_string().contains("missing field `all`"));
        assert!(all_only("[1]").is_err());
        assert!(all_only(r#"{"all":{"predictor":"li"}}"#).unwrap_err().to_string().contains("missing field"));
    }

    #[test]
    fn shipped_weights_load_and_name_their_row() {
        for (kind, e) in learned() {
            let file = shipped_all(e.name).unwrap().unwrap();
            assert_eq!(file.predictor, e.name);
            assert_eq!(load(&file).unwrap().name(), kind.name());
        }
        assert!(shipped_all("roofline").is_none());
        // The sustained numbers ship fitted on every modern GPU: leaving one of those out is
        // refused, leaving out another is the same model.
        let e = entry("sustained").unwrap();
        assert!(e.build(Some("h100-sxm")).err().unwrap().to_string().contains("fitted on h100-sxm"));
        assert_eq!(e.build(Some("t4")).unwrap().name(), "sustained");
        assert_eq!(entry("roofline").unwrap().build(None).unwrap().name(), "roofline");
    }

    /// The leave-one-GPU-out rule where predictions are made: a GPU whose measurements trained
    /// the all-GPU model is only ever predicted by a model that never saw them.
    #[test]
    fn a_gpu_is_predicted_without_its_measurements_or_not_at_all() {
        let model = |on: &[&str]| ModelFile { predictor: "li".into(), trained_on: on.iter().map(|s| s.to_string()).collect(), seed: 0, params: serde_json::Value::Null };
        let mut file = WeightsFile { all: model(&["mi100", "t4"]), holdout: BTreeMap::new() };
        assert!(file.without("mi100").unwrap_err().contains("trained on mi100"));
        assert_eq!(file.without("h100").unwrap().trained_on, ["mi100", "t4"], "a GPU it never saw gets the all-GPU model");
        file.holdout.insert("mi100".into(), model(&["t4"]));
        assert_eq!(file.without("mi100").unwrap().trained_on, ["t4"]);
        file.holdout.insert("t4".into(), model(&["mi100", "t4"]));
        assert!(file.without("t4").is_err(), "a left-out model that saw its GPU is refused");
        // Every shipped file obeys it for every GPU it was trained on.
        for (_, e) in learned() {
            let Kind::Learned { weights, .. } = e.kind else { continue };
            let shipped: WeightsFile = serde_json::from_str(weights).unwrap();
            for gpu in &shipped.all.trained_on {
                let m = shipped.without(gpu).unwrap_or_else(|err| panic!("{}: {err}", e.name));
                assert!(!m.trained_on.contains(gpu), "{} {gpu}", e.name);
            }
        }
    }
}
