//! Loading, merging and name resolution for the catalog.

use crate::Gpu;
use serde::Deserialize;
use std::path::Path;
use thiserror::Error;

const BUILTIN: &str = include_str!("../data/gpus.toml");

#[derive(Debug, Error)]
pub enum CatalogError {
    #[error("unknown GPU '{name}'{}", suggestions(.closest))]
    Unknown { name: String, closest: Vec<String> },
    #[error("cannot read GPU file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("malformed GPU file {path}: {reason}")]
    Parse { path: String, reason: String },
    #[error("{0}")]
    Invalid(String),
}

fn suggestions(closest: &[String]) -> String {
    if closest.is_empty() {
        " (run `wavecast gpus` to list the catalog)".to_string()
    } else {
        format!("; closest matches: {} (run `wavecast gpus` for all)", closest.join(", "))
    }
}

/// The TOML parser's message and where it happened, on one line (its own rendering quotes the
/// offending source lines, and errors here are one line).
fn one_line_toml_error(e: &toml::de::Error, text: &str) -> String {
    let message = e.message().trim().replace('\n', "; ");
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.chars().rev().take_while(|&c| c != '\n').count() + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

#[derive(Deserialize)]
struct CatalogFile {
    gpu: Vec<Gpu>,
}

#[derive(Debug, Clone)]
pub struct Catalog {
    gpus: Vec<Gpu>,
}

/// Prints each warning on stderr the first time it comes up in this process (a command may
/// load the same GPU file more than once).
fn warn_once(warnings: &[String]) {
    static SHOWN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut shown = SHOWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for w in warnings {
        if !shown.contains(w) {
            eprintln!("wavecast: warning: {w}");
            shown.push(w.clone());
        }
    }
}

/// Lower-case and drop separators, so `H100 SXM`, `h100-sxm` and `H100_SXM` compare equal.
fn normalize(name: &str) -> String {
    normalized(name).collect()
}

/// `name`'s characters as [`normalize`] keeps them, without building a string: the price
/// ladder looks GPUs up by id for every op it prices.
fn normalized(name: &str) -> impl Iterator<Item = char> + '_ {
    name.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase())
}

impl Catalog {
    /// The catalog shipped inside the binary, a copy to change or merge into.
    pub fn builtin() -> Catalog {
        Catalog::shipped().clone()
    }

    /// The catalog shipped inside the binary, parsed once per process: parsing its TOML costs
    /// milliseconds, and many lookups need only to read it.
    pub fn shipped() -> &'static Catalog {
        static SHIPPED: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        SHIPPED.get_or_init(|| Catalog::parse(BUILTIN, "built-in catalog").expect("built-in GPU catalog is valid (tested)"))
    }

    pub fn parse(text: &str, origin: &str) -> Result<Catalog, CatalogError> {
        let file: CatalogFile = toml::from_str(text)
            .map_err(|e| CatalogError::Parse { path: origin.to_string(), reason: one_line_toml_error(&e, text) })?;
        for g in &file.gpu {
            g.validate().map_err(|reason| CatalogError::Parse { path: origin.to_string(), reason })?;
        }
        let cat = Catalog { gpus: file.gpu };
        cat.check_unique_names(origin)?;
        Ok(cat)
    }

    /// Built-in catalog with a user file merged over it: entries with an existing id replace it.
    /// An entry may start from a built-in GPU (`base = "h100-sxm"`) and give only what differs;
    /// see [`Catalog::parse_user`]. Assumptions it made are printed once each on stderr.
    pub fn with_user_file(path: &Path) -> Result<Catalog, CatalogError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| CatalogError::Read { path: path.display().to_string(), reason: e.to_string() })?;
        let (user, warnings) = Catalog::parse_user(&text, &path.display().to_string())?;
        warn_once(&warnings);
        let mut cat = Catalog::builtin();
        for g in user.gpus {
            // The shared measured tables are keyed by id: an entry that keeps a measured GPU's
            // id but not its figures would be priced from another GPU's measurements.
            if let Some(measured) = cat.gpus.iter().find(|b| b.id == g.id && !b.measured.is_empty()) {
                let differing = g.kernel_figures_differing_from(measured);
                if !differing.is_empty() {
                    return Err(CatalogError::Invalid(format!(
                        "GPU file {}: '{}' is a built-in GPU with measured tables, which would price it, but this entry changes its {}: give it its own id (with base = \"{}\" to start from the built-in figures)",
                        path.display(),
                        g.id,
                        differing.join(", "),
                        g.id
                    )));
                }
            }
            cat.gpus.retain(|existing| existing.id != g.id);
            cat.gpus.push(g);
        }
        cat.check_unique_names(&path.display().to_string())?;
        Ok(cat)
    }

    /// A user's GPU file: each `[[gpu]]` entry completed (a `base` GPU under its fields, the
    /// architecture's occupancy limits and links where it gives none), then read and checked
    /// like the built-in catalog. Every missing or implausible field of an entry is named in one
    /// error. Returns the entries and the assumptions made, one line each.
    pub fn parse_user(text: &str, origin: &str) -> Result<(Catalog, Vec<String>), CatalogError> {
        let parse_error = |reason: String| CatalogError::Parse { path: origin.to_string(), reason };
        let file: toml::Table = toml::from_str(text).map_err(|e| parse_error(one_line_toml_error(&e, text)))?;
        let entries = match file.get("gpu") {
            Some(toml::Value::Array(entries)) => entries.clone(),
            _ => return Err(parse_error("expected [[gpu]] entries".into())),
        };
        let builtin = Catalog::builtin();
        let find = |name: &str| builtin.get(name).ok().cloned();
        let (mut gpus, mut warnings) = (Vec::new(), Vec::new());
        for entry in entries {
            let toml::Value::Table(entry) = entry else { return Err(parse_error("each [[gpu]] entry must be a table".into())) };
            let completed = crate::user_file::complete(entry, builtin.all(), &find).map_err(parse_error)?;
            let gpu: Gpu = toml::Value::Table(completed.table).try_into().map_err(|e: toml::de::Error| parse_error(e.message().trim().replace('\n', "; ")))?;
            gpu.validate().map_err(parse_error)?;
            warnings.extend(completed.warnings);
            gpus.push(gpu);
        }
        let cat = Catalog { gpus };
        cat.check_unique_names(origin)?;
        Ok((cat, warnings))
    }

    fn check_unique_names(&self, origin: &str) -> Result<(), CatalogError> {
        let mut seen = std::collections::HashMap::new();
        let mut ids = std::collections::HashSet::new();
        for g in &self.gpus {
            // Two entries with one id would leave the later one silently winning.
            if !ids.insert(g.id.as_str()) {
                return Err(CatalogError::Invalid(format!("{origin}: two entries have the id '{}'; give each GPU its own", g.id)));
            }
            for n in g.names() {
                if let Some(other) = seen.insert(normalize(n), g.id.clone()) {
                    if other != g.id {
                        return Err(CatalogError::Invalid(format!(
                            "{origin}: name '{n}' is used by both '{other}' and '{}'",
                            g.id
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// Gives GPU `name` the user's price per GPU-hour (tier `user`, e.g. from `--price`).
    pub fn set_user_price(&mut self, name: &str, usd_per_hour: f64) -> Result<(), CatalogError> {
        let (lo, hi) = crate::spec::PLAUSIBLE;
        if !(usd_per_hour.is_finite() && (lo..=hi).contains(&usd_per_hour)) {
            return Err(CatalogError::Invalid(format!("a price must be a positive number of dollars per GPU-hour between {lo} and {hi:e}, got {}", wavecast_ir::quoted(usd_per_hour))));
        }
        let id = self.get(name)?.id.clone();
        let gpu = self.gpus.iter_mut().find(|g| g.id == id).expect("get found it");
        gpu.price = Some(crate::Price { usd_per_hour, source: "given with --price".into(), date: String::new(), tier: crate::PriceTier::User });
        Ok(())
    }

    pub fn all(&self) -> &[Gpu] {
        &self.gpus
    }

    /// Finds a GPU by id, display name or alias, ignoring case and separators.
    pub fn get(&self, name: &str) -> Result<&Gpu, CatalogError> {
        // Most lookups pass a catalog id (the predictors' tables are keyed by it); names are
        // unique after normalising, so an id found as is is the entry normalising would find.
        if let Some(g) = self.gpus.iter().find(|g| g.id == name) {
            return Ok(g);
        }
        let key = normalize(name);
        if key.is_empty() {
            return Err(CatalogError::Unknown { name: name.to_string(), closest: Vec::new() });
        }
        self.gpus
            .iter()
            .find(|g| g.names().any(|n| normalized(n).eq(key.chars())))
            .ok_or_else(|| CatalogError::Unknown { name: name.to_string(), closest: self.closest(name, 3) })
    }

    /// The GPU a measurement names, told apart by the figures it recorded with the name: where
    /// `name` is a family name several entries share (`NVIDIA H100`: SXM and PCIe boards), the
    /// entry with `sm_count` SMs whose bandwidth is nearest `bandwidth_gbs`. Also the entry an
    /// exact name picks when its figures contradict the row's. Returns the entry and, when the
    /// figures decided, one line saying which entry was chosen from what.
    pub fn resolve(&self, name: &str, sm_count: Option<u32>, bandwidth_gbs: Option<f64>) -> Result<(&Gpu, Option<String>), CatalogError> {
        let named = self.get(name);
        let Some(sms) = sm_count else { return named.map(|g| (g, None)) };
        let off = |g: &Gpu| bandwidth_gbs.filter(|b| *b > 0.0).map_or(0.0, |b| (g.memory_bandwidth_gbs / b).ln().abs());
        if let Ok(g) = named {
            if g.sm_count == sms && off(g) < 0.1 {
                return Ok((g, None));
            }
        }
        let key = normalize(name);
        let family = self.gpus.iter().filter(|g| !key.is_empty() && g.names().any(|n| normalize(n).starts_with(&key)));
        let Some(g) = family.filter(|g| g.sm_count == sms).min_by(|a, b| off(a).total_cmp(&off(b))) else { return named.map(|g| (g, None)) };
        let bandwidth = bandwidth_gbs.map_or(String::new(), |b| format!(", {b:.0} GB/s"));
        Ok((g, Some(format!("'{name}' ({sms} SMs{bandwidth}) read as {} ({} SMs, {:.0} GB/s)", g.id, g.sm_count, g.memory_bandwidth_gbs))))
    }

    /// The built-in catalog, or the built-in one with `user_file` merged over it.
    pub fn load(user_file: Option<&Path>) -> Result<Catalog, CatalogError> {
        match user_file {
            Some(p) => Catalog::with_user_file(p),
            None => Ok(Catalog::builtin()),
        }
    }

    /// The ids whose names are most similar to `name`.
    pub fn closest(&self, name: &str, count: usize) -> Vec<String> {
        let key = normalize(name);
        let mut scored: Vec<(f64, &str)> = self
            .gpus
            .iter()
            .map(|g| {
                let best = g
                    .names()
                    .map(|n| {
                        let n = normalize(n);
                        let sim = strsim::jaro_winkler(&key, &n);
                        if n.contains(&key) || key.contains(&n) { sim + 0.2 } else { sim }
                    })
                    .fold(0.0, f64::max);
                (best, g.id.as_str())
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().filter(|(s, _)| *s > 0.6).take(count).map(|(_, id)| id.to_string()).collect()
    }
}

impl Gpu {
    /// The built-in catalog's GPU named `name` (id, display name or alias, as `nvidia-smi` and
    /// `torch.cuda.get_device_name` print it or shorter). Use [`Catalog::get`] for a catalog
    /// with user entries.
    pub fn find(name: &str) -> Result<Gpu, CatalogError> {
        Catalog::shipped().get(name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_ir::DType;

    #[test]
    fn builtin_catalog_loads_and_covers_required_gpus() {
        let cat = Catalog::builtin();
        for id in [
            "p4", "p100-pcie", "t4", "v100-pcie", "v100-sxm2", "rtx-2080-ti", "rtx-3090", "rtx-4090", "a10", "a10g",
            "a40", "a100-pcie-40gb", "a100-sxm-40gb", "a100-pcie-80gb", "a100-sxm-80gb", "l4", "l40s", "h100-pcie",
            "h100-sxm", "h200", "b200", "mi100", "mi210", "mi250", "mi300x", "l40", "l20", "h20", "h800",
            "rtx-a6000", "rtx-6000-ada", "rtx-pro-6000-blackwell", "rtx-pro-6000-server", "gb200", "b300", "gb300",
            "h200-nvl", "rtx-5090", "gb10", "jetson-thor",
        ] {
            assert!(cat.get(id).is_ok(), "missing {id}");
        }
    }

    #[test]
    fn aliases_resolve_to_the_same_gpu() {
        let cat = Catalog::builtin();
        for n in ["h100", "H100 SXM", "NVIDIA H100 80GB HBM3", "h100_sxm"] {
            assert_eq!(cat.get(n).unwrap().id, "h100-sxm", "{n}");
        }
        assert_eq!(cat.get("Tesla V100-PCIE-32GB").unwrap().id, "v100-pcie");
        assert_eq!(cat.get("NVIDIA_A100-PCIE-40GB").unwrap().id, "a100-pcie-40gb");
    }

    #[test]
    fn every_normalized_name_belongs_to_one_gpu() {
        let mut owner: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
        let cat = Catalog::builtin();
        for g in cat.all() {
            for n in g.names() {
                let key = normalize(n);
                assert!(!key.is_empty(), "{}: name '{n}' has no letters or digits", g.id);
                if let Some(other) = owner.insert(key, &g.id) {
                    assert_eq!(other, g.id, "name '{n}' resolves to both '{other}' and '{}'", g.id);
                }
            }
        }
    }

    /// Names other tools print or use for a GPU: `nvidia-smi` / `torch.cuda.get_device_name`,
    /// short names, AIConfigurator's system folders and `device` column, Vidur's and PipeWeave's
    /// folder names, PipeWeave's `hardware` column and NeuSight's folder names.
    #[test]
    fn a_family_name_is_resolved_by_its_sm_count_and_bandwidth_and_says_so() {
        let cat = Catalog::builtin();
        let (pcie, note) = cat.resolve("NVIDIA H100", Some(114), Some(2000.0)).unwrap();
        assert_eq!(pcie.id, "h100-pcie");
        assert!(note.unwrap().contains("read as h100-pcie"));
        assert_eq!(cat.resolve("NVIDIA H100", Some(132), Some(3350.0)).unwrap().0.id, "h100-sxm");
        assert!(cat.resolve("NVIDIA H100", None, None).is_err(), "a family name alone names no one GPU");
        let (exact, note) = cat.resolve("NVIDIA H20", Some(78), Some(4022.8)).unwrap();
        assert_eq!((exact.id.as_str(), note), ("h20", None), "agreeing figures change nothing");
    }

    #[test]
    fn names_from_tools_and_data_sets_resolve_to_the_right_gpu() {
        let cat = Catalog::builtin();
        let expected = [
            // nvidia-smi / torch.cuda.get_device_name
            ("NVIDIA H100 80GB HBM3", "h100-sxm"),
            ("NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"),
            ("NVIDIA B200", "b200"),
            ("NVIDIA GB200", "gb200"),
            ("NVIDIA H200", "h200"),
            ("NVIDIA H200 NVL", "h200-nvl"),
            ("NVIDIA H20", "h20"),
            ("NVIDIA H800", "h800"),
            ("NVIDIA L20", "l20"),
            ("NVIDIA L40S", "l40s"),
            ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-server"),
            ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-blackwell"),
            ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"),
            ("NVIDIA A40", "a40"),
            ("NVIDIA B300 SXM6 AC", "b300"),
            ("NVIDIA GB300", "gb300"),
            ("NVIDIA GeForce RTX 5090", "rtx-5090"),
            ("NVIDIA GB10", "gb10"),
            ("NVIDIA Thor", "jetson-thor"),
            // short names
            ("RTX PRO 6000 S", "rtx-pro-6000-server"),
            ("H800", "h800"),
            ("H20", "h20"),
            ("L20", "l20"),
            ("B200", "b200"),
            ("GB200", "gb200"),
            ("DGX Spark", "gb10"),
            ("Jetson AGX Thor", "jetson-thor"),
            // AIConfigurator systems
            ("a100_sxm", "a100-sxm-80gb"),
            ("h100_sxm", "h100-sxm"),
            ("b200_sxm", "b200"),
            ("gb200", "gb200"),
            ("l40s", "l40s"),
            ("rtx_pro_6000_server", "rtx-pro-6000-server"),
            // Vidur (compute/<gpu>, network/<gpu>_<topology>): its A100 is the 80 GB SXM4
            ("a100", "a100-sxm-80gb"),
            ("a40", "a40"),
            ("h100", "h100-sxm"),
            // PipeWeave collective/<GPU> folders and the gemm `hardware` column
            ("A100", "a100-sxm-80gb"),
            ("H100", "h100-sxm"),
            ("H20", "h20"),
            ("H800", "h800"),
            ("RTX 6000 Ada", "rtx-6000-ada"),
            ("RTX PRO 6000 S", "rtx-pro-6000-server"),
            ("NVIDIA H20", "h20"),
            ("NVIDIA H800", "h800"),
            // NeuSight folders
            ("Tesla_P4", "p4"),
            ("Tesla_P100-PCIE-16GB", "p100-pcie"),
            ("Tesla_T4", "t4"),
            ("Tesla_V100-PCIE-32GB", "v100-pcie"),
            ("NVIDIA_A100-PCIE-40GB", "a100-pcie-40gb"),
            ("NVIDIA_A100-SXM4-40GB", "a100-sxm-40gb"),
            ("AMD_Instinct_MI100", "mi100"),
            // AMD Instinct, as rocm-smi, rocminfo and torch.cuda.get_device_name print them
            ("AMD Instinct MI250X", "mi250x"),
            ("MI250X (GCD)", "mi250x"),
            ("mi250x-gcd", "mi250x"),
            // torch.cuda.get_device_name on a GCD of either MI250 part; mapped to the MI250X.
            ("AMD Instinct MI250X / MI250", "mi250x"),
            // rocminfo's marketing name for the same device.
            ("AMD Instinct MI250X/MI250", "mi250x"),
            ("AMD Instinct MI250", "mi250"),
            ("MI250 (GCD)", "mi250"),
            ("mi250-gcd", "mi250"),
            ("AMD_Instinct_MI250", "mi250"),
            ("AMD INSTINCT MI250 (MCM) OAM AC MBA", "mi250"),
            ("AMD Instinct MI300X", "mi300x"),
            ("MI300X", "mi300x"),
            ("AMD Instinct MI300A", "mi300a"),
            ("AMD Instinct MI325X", "mi325x"),
            ("AMD Instinct MI350X", "mi350x"),
            ("AMD Instinct MI355X", "mi355x"),
            ("AMD Instinct MI210", "mi210"),
            ("AMD Instinct MI100", "mi100"),
        ];
        for (name, id) in expected {
            match cat.get(name) {
                Ok(g) => assert_eq!(g.id, id, "'{name}'"),
                Err(e) => panic!("'{name}': {e}"),
            }
        }
    }

    #[test]
    fn fp4_peaks_only_on_blackwell_and_cdna4_and_above_fp8() {
        let cat = Catalog::builtin();
        for g in cat.all() {
            let fp4_units = matches!(g.architecture.as_str(), "blackwell" | "cdna4");
            assert_eq!(g.peak_tflops.fp4.is_some(), fp4_units, "{}: fp4 is set exactly on Blackwell and CDNA4 parts", g.id);
            if let (Some(fp4), Some(fp8)) = (g.peak_tflops.fp4, g.peak_tflops.fp8) {
                assert!(fp4 >= fp8, "{}", g.id);
            }
        }
        for id in ["b200", "gb200", "b300", "gb300", "rtx-pro-6000-blackwell", "rtx-pro-6000-server", "rtx-5090", "gb10", "jetson-thor"] {
            assert!(cat.get(id).unwrap().peak_tflops.fp4.is_some(), "{id}");
        }
    }

    #[test]
    fn measured_lists_name_known_sources() {
        let cat = Catalog::builtin();
        let has = |id: &str, source: &str| cat.get(id).unwrap().measured.iter().any(|m| m == source);
        assert!(has("h100-sxm", "aiconfigurator") && has("h100-sxm", "vidur") && has("h100-sxm", "pipeweave"));
        assert!(has("a100-pcie-40gb", "neusight") && has("mi100", "neusight") && has("rtx-pro-6000-server", "aiconfigurator"));
        assert!(cat.get("rtx-pro-6000-blackwell").unwrap().measured.is_empty());
        let mut t4 = cat.get("t4").unwrap().clone();
        t4.measured = vec!["mlperf".into()];
        assert!(t4.validate().unwrap_err().contains("unknown source 'mlperf'"));
        t4.measured = vec!["neusight".into(), "neusight".into()];
        assert!(t4.validate().unwrap_err().contains("twice"));
    }

    #[test]
    fn every_catalog_price_says_where_it_comes_from_and_its_tier() {
        for g in Catalog::builtin().all() {
            let Some(p) = &g.price else { continue };
            assert!(!p.source.is_empty() && !p.date.is_empty(), "{}", g.id);
            let rental = p.source.contains("marketplace") || p.source.contains("Community Cloud");
            assert_eq!(p.tier == crate::PriceTier::Marketplace, rental, "{}: {} ({:?})", g.id, p.source, p.tier);
            assert!(p.describe().starts_with(p.tier.as_str()), "{}", p.describe());
        }
    }

    #[test]
    fn unknown_gpu_names_closest_matches() {
        let cat = Catalog::builtin();
        let err = cat.get("h1000").unwrap_err().to_string();
        assert!(err.contains("unknown GPU 'h1000'"), "{err}");
        assert!(err.contains("h100"), "{err}");
    }

    #[test]
    fn tensor_peaks_exceed_vector_peaks_where_present() {
        for g in Catalog::builtin().all() {
            if let Some(bf16) = g.peak_tflops.bf16 {
                assert!(bf16 >= g.peak_tflops.fp32, "{}", g.id);
            }
        }
    }

    #[test]
    fn user_file_overrides_and_rejects_bad_values() {
        let dir = std::env::temp_dir().join(format!("wavecast-gpu-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let builtin = Catalog::builtin();
        let mut t4 = builtin.get("t4").unwrap().clone();
        #[derive(serde::Serialize)]
        struct F<'a> {
            gpu: Vec<&'a Gpu>,
        }
        let good = dir.join("good.toml");
        let with = |gpu: &Gpu| {
            std::fs::write(&good, toml::to_string(&F { gpu: vec![gpu] }).unwrap()).unwrap();
            Catalog::with_user_file(&good)
        };
        // A measured GPU's memory size is not a kernel figure: it may change under its id.
        t4.memory_gb = 15.0;
        let cat = with(&t4).unwrap();
        assert_eq!(cat.get("t4").unwrap().memory_gb, 15.0);
        assert_eq!(cat.all().len(), builtin.all().len());
        // Its bandwidth is: NeuSight's T4 tables would price another GPU.
        t4.memory_bandwidth_gbs = 123.0;
        let err = with(&t4).unwrap_err().to_string();
        assert!(err.contains("changes its memory_bandwidth_gbs") && err.contains("own id"), "{err}");
        // A GPU nobody measured can take any figures under its own id.
        let mut l4 = builtin.get("l4").unwrap().clone();
        assert!(l4.measured.is_empty());
        l4.memory_bandwidth_gbs = 123.0;
        assert_eq!(with(&l4).unwrap().get("l4").unwrap().memory_bandwidth_gbs, 123.0);

        t4.memory_bandwidth_gbs = -1.0;
        let bad = dir.join("bad.toml");
        std::fs::write(&bad, toml::to_string(&F { gpu: vec![&t4] }).unwrap()).unwrap();
        let err = Catalog::with_user_file(&bad).unwrap_err().to_string();
        assert!(err.contains("memory_bandwidth_gbs"), "{err}");
        t4.memory_bandwidth_gbs = 320.0;
        // Fields a prediction divides by (occupancy) and a price that would print negative.
        let mut zero_warp = t4.clone();
        zero_warp.occupancy.warp_size = 0;
        let mut negative_price = t4.clone();
        negative_price.price = Some(crate::spec::Price { usd_per_hour: -1.0, ..Default::default() });
        for (gpu, field) in [(zero_warp, "occupancy.warp_size"), (negative_price, "price.usd_per_hour")] {
            std::fs::write(&bad, toml::to_string(&F { gpu: vec![&gpu] }).unwrap()).unwrap();
            let err = Catalog::with_user_file(&bad).unwrap_err().to_string();
            assert!(err.contains(field), "{err}");
        }

        let garbage = dir.join("garbage.toml");
        std::fs::write(&garbage, "[[gpu]]\nid = 3").unwrap();
        let err = Catalog::with_user_file(&garbage).unwrap_err();
        assert!(matches!(err, CatalogError::Parse { .. }));
        assert_eq!(err.to_string().lines().count(), 1, "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn dtypes_are_supported_only_where_the_datasheet_gives_a_rate() {
        let cat = Catalog::builtin();
        let runs = |gpu: &str, d: DType| cat.get(gpu).unwrap().supports(d);
        assert!(cat.all().iter().all(|g| g.supports(DType::Fp32)));
        assert!(runs("t4", DType::Fp16) && !runs("t4", DType::Bf16) && !runs("v100", DType::Bf16));
        assert!(runs("a100", DType::Bf16) && !runs("a100", DType::Fp8) && runs("h100", DType::Fp8));
        assert!(!runs("p4", DType::Fp16));
        let err = cat.get("t4").unwrap().check_dtype(DType::Bf16).unwrap_err();
        assert!(err.contains("t4") && err.contains("fp32, fp16"), "{err}");
    }
}
