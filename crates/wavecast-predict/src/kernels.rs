//! What the kernel-aware baselines (`neusight`, `pm2lat`) need to know about library kernels:
//! reading tile sizes and kernel identities from the recorded kernel names, and a table of
//! training rows that says which kernel a library picks for a shape on a GPU — including a GPU
//! that was never measured, which borrows the choices of its nearest measured relative.

use crate::mlp::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use wavecast_gpu::{Gpu, Vendor};

/// Output tile of a cuBLAS SGEMM kernel, read from the two integers after `sgemm_`
/// (`ampere_sgemm_128x64_tn` → (128, 64), `sgemm_32x32x32_NN` → (32, 32)). cuBLAS is
/// column-major, so the first number spans the output's columns and the second its rows (the
/// recorded grids confirm it: grid x = ⌈cols/first⌉, grid y = ⌈rows/second⌉).
pub fn sgemm_tile(name: &str) -> Option<(u32, u32)> {
    let rest = &name[name.find("sgemm_")? + "sgemm_".len()..];
    let (first, rest) = leading_number(rest)?;
    let (second, _) = leading_number(rest.strip_prefix('x')?)?;
    (first > 0 && second > 0).then_some((first, second))
}

/// A GEMM kernel's output tile as the library names it: cuBLAS SGEMM (`sgemm_128x64`, see
/// [`sgemm_tile`]) or AMD's Tensile and hipBLASLt (`MT128x64x16`, see [`macro_tile`]); (output
/// columns, output rows) either way.
pub fn gemm_tile(name: &str) -> Option<(u32, u32)> {
    sgemm_tile(name).or_else(|| macro_tile(name).map(|t| (t.cols, t.rows)))
}

/// A Tensile / hipBLASLt kernel's tiling, read from its name
/// (`Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_…_WG64_4_1_…`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacroTile {
    /// `MT0`: spans Tensile's free index `i` of `C[i,j]`, which is column-major, so the output's
    /// columns as PyTorch (row-major) sees them — the same orientation as cuBLAS names.
    pub cols: u32,
    /// `MT1`: the output's rows.
    pub rows: u32,
    /// `DepthU`: the reduction depth loaded per main-loop iteration.
    pub depth: u32,
    /// The matrix-core (MFMA) instruction's output block (`MI32x32…` → (32, 32)); `None` for a
    /// kernel on the vector ALUs.
    pub mfma: Option<(u32, u32)>,
    /// Work-items per workgroup (`WG64_4_1` → 256), when the name says.
    pub workgroup: Option<u32>,
    /// Workgroups sharing one output tile's reduction (`GSU4`: global split-U, Tensile's
    /// split-K); 1 when the name gives none or a mode instead of a number (`GSUAMB`).
    pub split: u32,
}

impl MacroTile {
    /// Workgroups the kernel launches for a GEMM of `batch` products with a `rows` × `cols`
    /// output: one per macro-tile and split.
    pub fn workgroups(&self, batch: f64, rows: f64, cols: f64) -> f64 {
        crate::physics::tiles(batch, rows, cols, self.rows as f64, self.cols as f64) * self.split as f64
    }

    /// Whether the kernel runs stream-K (`SK1`…): it launches about one workgroup per CU
    /// whatever the tile count, so [`MacroTile::workgroups`] does not describe its launch.
    pub fn stream_k(name: &str) -> bool {
        name.split('_').any(|f| f.strip_prefix("SK").and_then(|r| r.parse::<u32>().ok()).is_some_and(|k| k > 0))
    }
}

/// The macro-tile of a Tensile / hipBLASLt kernel name: `_MT<c>x<r>x<depth>_` (all positive),
/// and the `_MI<m>x<n>…_` instruction when present. The token must start a `_`-separated field,
/// so names that merely contain the letters (`…_MTX…`) are not read as tiles.
pub fn macro_tile(name: &str) -> Option<MacroTile> {
    let field = |tag: &str| name.split('_').find_map(|f| f.strip_prefix(tag).filter(|r| r.starts_with(|c: char| c.is_ascii_digit())));
    let dims = |s: &str| -> Vec<u32> { s.split('x').map_while(|d| d.parse().ok()).collect() };
    let mt = dims(field("MT")?);
    let [cols, rows, depth] = mt[..] else { return None };
    if cols == 0 || rows == 0 || depth == 0 {
        return None;
    }
    let mfma = field("MI").map(dims).and_then(|d| match d[..] {
        [m, n, ..] if m > 0 && n > 0 => Some((m, n)),
        _ => None,
    });
    // `WG64_4_1`: the sizes are the field's number and the two fields after it.
    let fields: Vec<&str> = name.split('_').collect();
    let workgroup = fields.iter().position(|f| f.strip_prefix("WG").is_some_and(|r| r.parse::<u32>().is_ok())).and_then(|i| {
        let sizes: Vec<u32> = std::iter::once(&fields[i][2..]).chain(fields[i + 1..].iter().copied()).take(3).map_while(|d| d.parse().ok()).collect();
        (sizes.len() == 3).then(|| sizes.iter().try_fold(1u32, |a, &d| a.checked_mul(d))).flatten().filter(|&t| t > 0)
    });
    let split = field("GSU").and_then(|r| r.parse().ok()).filter(|&g: &u32| g > 0).unwrap_or(1);
    Some(MacroTile { cols, rows, depth, mfma, workgroup, split })
}

/// The decimal number at the start of `s` and what follows it.
fn leading_number(s: &str) -> Option<(u32, &str)> {
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    Some((s[..end].parse().ok()?, &s[end..]))
}

/// Whether an SGEMM kernel splits the reduction inside a thread block (`_sliced1x4_`).
pub fn is_sliced(name: &str) -> bool {
    name.contains("sliced")
}

/// The kernel's function name without namespaces, template arguments or parameters
/// (`void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, …>(…)` →
/// `cunn_SoftMaxForward`): what tells two kernels serving the same op apart.
pub fn kernel_function(name: &str) -> String {
    let s = name.trim();
    let s = s.strip_prefix("void ").unwrap_or(s).replace("(anonymous namespace)::", "");
    let head = s.split(['<', '(']).next().unwrap_or("");
    head.rsplit("::").next().unwrap_or("").trim().to_string()
}

/// A measured GPU as the table knows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableGpu {
    pub id: String,
    /// `None` in tables written before AMD GPUs were measured: NVIDIA.
    #[serde(default)]
    pub vendor: Option<Vendor>,
    pub architecture: String,
    /// Compute capability as a number (7.5); 0 when unknown.
    pub compute_capability: f64,
    /// log2 of SM count, FP32 peak and memory bandwidth: tie-breaker between candidates.
    pub figures: [f64; 3],
}

impl TableGpu {
    pub fn of(gpu: &Gpu) -> TableGpu {
        TableGpu {
            id: gpu.id.clone(),
            vendor: Some(gpu.vendor),
            architecture: gpu.architecture.clone(),
            compute_capability: gpu.compute_capability.parse().unwrap_or(0.0),
            figures: figures(gpu),
        }
    }
}

fn figures(gpu: &Gpu) -> [f64; 3] {
    let l = |v: f64| v.max(1e-9).log2();
    [l(gpu.sm_count as f64), l(gpu.peak_tflops.fp32), l(gpu.memory_bandwidth_gbs)]
}

/// Shape resolution of the table: log2 of each dimension in eighths of an octave (9 % steps),
/// one byte per dimension (shapes beyond 2^31 saturate, which leaves the largest rows nearest).
const STEPS_PER_OCTAVE: f64 = 8.0;
/// Neighbours that vote on the kernel: the library's choice is noisy at boundaries, and a
/// small majority is steadier than the single nearest row.
const NEIGHBOURS: usize = 5;

/// Training rows (GPU, shape, kernel label), subsampled per GPU. Which kernel a library picks
/// for a shape is answered by the nearest rows in log-dimension space — distances in octaves,
/// so a batch of 2 vs 4 weighs as much as m of 2048 vs 4096 (NeuSight's raw Euclidean distance
/// lets the largest dimension and the GPU's FLOP/s decide) — among the rows of the GPU itself or,
/// for an unmeasured GPU, of the measured GPU closest to it (same architecture first, then
/// nearest compute capability, then nearest figures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(try_from = "PackedTable", into = "PackedTable")]
pub struct KernelTable {
    pub gpus: Vec<TableGpu>,
    pub labels: Vec<String>,
    /// Per GPU (in the order of `gpus`), its rows: label index, then the quantised shape.
    pub rows: Vec<Vec<Vec<u8>>>,
}

/// How a [`KernelTable`] is stored: each GPU's rows as one hex string of fixed-width records
/// (label index, then one byte per dimension), about a third of the size of JSON arrays.
#[derive(Serialize, Deserialize)]
struct PackedTable {
    gpus: Vec<TableGpu>,
    labels: Vec<String>,
    /// Bytes per row.
    width: usize,
    rows: Vec<String>,
}

impl From<KernelTable> for PackedTable {
    fn from(t: KernelTable) -> PackedTable {
        let width = t.rows.iter().flatten().map(Vec::len).max().unwrap_or(0);
        let hex = |rows: &Vec<Vec<u8>>| rows.iter().flatten().map(|b| format!("{b:02x}")).collect();
        PackedTable { gpus: t.gpus, labels: t.labels, width, rows: t.rows.iter().map(hex).collect() }
    }
}

impl TryFrom<PackedTable> for KernelTable {
    type Error = String;
    fn try_from(p: PackedTable) -> Result<KernelTable, String> {
        if p.rows.len() != p.gpus.len() {
            return Err(format!("kernel table has {} GPUs but rows for {}", p.gpus.len(), p.rows.len()));
        }
        let mut rows = Vec::with_capacity(p.rows.len());
        for text in &p.rows {
            let records = unhex(text).filter(|b| b.is_empty() || (p.width > 0 && b.len() % p.width == 0));
            let bytes = records.ok_or("kernel table rows are not whole hex records")?;
            let gpu_rows: Vec<Vec<u8>> = bytes.chunks(p.width.max(1)).map(<[u8]>::to_vec).collect();
            if gpu_rows.iter().any(|r| r[0] as usize >= p.labels.len()) {
                return Err("kernel table row names an unknown label".into());
            }
            rows.push(gpu_rows);
        }
        Ok(KernelTable { gpus: p.gpus, labels: p.labels, rows })
    }
}

/// Bytes of a hex string; `None` if it is not one.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len() / 2).map(|i| text.get(2 * i..2 * i + 2).and_then(|h| u8::from_str_radix(h, 16).ok())).collect()
}

/// One training row for [`KernelTable::build`].
pub struct Entry<'a> {
    pub gpu: &'a Gpu,
    pub dims: Vec<f64>,
    pub label: String,
}

fn quantise(d: f64) -> u8 {
    (d.max(1.0).log2() * STEPS_PER_OCTAVE).round().clamp(0.0, u8::MAX as f64) as u8
}

impl KernelTable {
    /// Keeps at most `per_gpu` randomly chosen entries of each GPU (and at most 256 labels).
    pub fn build(entries: Vec<Entry>, per_gpu: usize, seed: u64) -> KernelTable {
        let mut by_gpu: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
        for e in entries {
            by_gpu.entry(e.gpu.id.clone()).or_default().push(e);
        }
        let mut table = KernelTable::default();
        let mut rng = Rng::new(seed);
        for (_, mut list) in by_gpu {
            table.gpus.push(TableGpu::of(list[0].gpu));
            rng.shuffle(&mut list);
            let mut rows = Vec::new();
            for e in list.into_iter().take(per_gpu) {
                let Some(label) = table.label_index(e.label) else { continue };
                rows.push(std::iter::once(label).chain(e.dims.iter().map(|&d| quantise(d))).collect());
            }
            table.rows.push(rows);
        }
        table
    }

    fn label_index(&mut self, label: String) -> Option<u8> {
        let i = match self.labels.iter().position(|l| *l == label) {
            Some(i) => i,
            None => {
                self.labels.push(label);
                self.labels.len() - 1
            }
        };
        u8::try_from(i).ok()
    }

    /// Index of the measured GPU whose kernel choices stand in for `gpu`'s.
    pub fn reference(&self, gpu: &Gpu) -> Option<usize> {
        if let Some(i) = self.gpus.iter().position(|g| g.id == gpu.id) {
            return Some(i);
        }
        let me = TableGpu::of(gpu);
        // A GPU of the same vendor first (its libraries are the same). Across vendors the
        // choice is a guess: an AMD gfx target reads as compute capability 0, so the NVIDIA
        // part with the lowest capability stands in (the baselines' published behaviour).
        let key = |g: &TableGpu| {
            let same_vendor = g.vendor.unwrap_or(Vendor::Nvidia) == gpu.vendor;
            let other_arch = (g.architecture != me.architecture) as u8 as f64;
            let cc = (g.compute_capability - me.compute_capability).abs();
            let fig: f64 = g.figures.iter().zip(&me.figures).map(|(a, b)| (a - b) * (a - b)).sum();
            (f64::from(u8::from(!same_vendor)), other_arch, cc, fig)
        };
        (0..self.gpus.len()).min_by(|&a, &b| key(&self.gpus[a]).partial_cmp(&key(&self.gpus[b])).unwrap_or(std::cmp::Ordering::Equal))
    }

    /// The label the library most likely uses for a shape of `dims` on `gpu`; `None` when the
    /// table is empty or the shape has another rank.
    pub fn lookup(&self, gpu: &Gpu, dims: &[f64]) -> Option<&str> {
        let rows = self.rows.get(self.reference(gpu)?)?;
        let q: Vec<u8> = dims.iter().map(|&d| quantise(d)).collect();
        // The nearest rows, kept sorted by distance.
        let mut best: Vec<(u32, u8)> = Vec::with_capacity(NEIGHBOURS + 1);
        for row in rows.iter().filter(|r| r.len() == q.len() + 1) {
            let d: u32 = row[1..].iter().zip(&q).map(|(&a, &b)| (a as i32 - b as i32).pow(2) as u32).sum();
            if best.len() < NEIGHBOURS || d < best[best.len() - 1].0 {
                let at = best.partition_point(|(bd, _)| *bd <= d);
                best.insert(at, (d, row[0]));
                best.truncate(NEIGHBOURS);
            }
        }
        // Majority vote; a tie goes to the label of the nearer row (the first in `best`).
        let votes = |l: u8| best.iter().filter(|(_, x)| *x == l).count();
        let winner = best.iter().map(|(_, l)| *l).max_by(|&a, &b| votes(a).cmp(&votes(b)).then_with(|| first(&best, b).cmp(&first(&best, a))))?;
        self.labels.get(winner as usize).map(String::as_str)
    }
}

/// Position of the first row voting for `label`.
fn first(best: &[(u32, u8)], label: u8) -> usize {
    best.iter().position(|(_, l)| *l == label).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_gpu::Catalog;

    #[test]
    fn reads_tensile_macro_tiles() {
        // MI100's NeuSight rows (Tensile) and the MI250 trace (hipBLASLt).
        let mi100 = "Cijk_Ailk_Bljk_SB_MT128x64x16_MI32x32x2x1_SE_1LDSB0_APM1_ABV0_ACED0_ISA908_WG64_4_1_WGM2";
        assert_eq!(macro_tile(mi100), Some(MacroTile { cols: 128, rows: 64, depth: 16, mfma: Some((32, 32)), workgroup: Some(256), split: 1 }));
        let simt = "Cijk_Ailk_Bljk_SB_MT16x8x32_SE_1LDSB0_APM1_GSU4_ISA908_WG8_4_4_WGM1";
        assert_eq!(macro_tile(simt), Some(MacroTile { cols: 16, rows: 8, depth: 32, mfma: None, workgroup: Some(128), split: 4 }));
        // A 2048 × 256 output (row-major) in 128-column, 64-row tiles: 2 × 32 workgroups, as
        // the measured launch of that MI100 kernel shows (global size 512 = 2 × 256 work-items).
        assert_eq!(macro_tile(mi100).unwrap().workgroups(1.0, 2048.0, 256.0), 64.0);
        // Orientation: 100 rows × 300 columns in 128 × 64 tiles is ⌈300/128⌉ · ⌈100/64⌉ = 6, the
        // other way round ⌈300/64⌉ · ⌈100/128⌉ = 5.
        assert_eq!(macro_tile(mi100).unwrap().workgroups(1.0, 100.0, 300.0), 6.0);
        assert!(MacroTile::stream_k("Cijk_Alik_Bljk_HHS_BH_MT256x256x64_MI16x16x1_SK3_ISA942") && !MacroTile::stream_k(mi100));
        let lt = "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_ISA90a";
        assert_eq!(macro_tile(lt).map(|t| (t.cols, t.rows, t.mfma, t.workgroup, t.split)), Some((64, 16, Some((16, 16)), None, 1)));
        assert_eq!(gemm_tile(mi100), Some((128, 64)));
        assert_eq!(gemm_tile("ampere_sgemm_128x64_tn"), Some((128, 64)));
        for bad in ["Cijk_MT128x64_SE", "Cijk_MT0x64x16_SE", "Cijk_SMT128x64x16", "Cijk_MTx64x16", "vectorized_elementwise_kernel"] {
            assert_eq!(macro_tile(bad), None, "{bad}");
        }
    }

    #[test]
    fn reads_tiles_from_kernel_names() {
        assert_eq!(sgemm_tile("ampere_sgemm_128x64_tn"), Some((128, 64)));
        assert_eq!(sgemm_tile("volta_sgemm_32x32_sliced1x4_nn"), Some((32, 32)));
        assert_eq!(sgemm_tile("sgemm_32x32x32_NN_vec"), Some((32, 32)));
        assert_eq!(sgemm_tile("maxwell_sgemm_128x128x8_NT"), Some((128, 128)));
        assert_eq!(sgemm_tile("void at::native::vectorized_elementwise_kernel<4>"), None);
        assert_eq!(sgemm_tile("sgemm_x64"), None);
        assert_eq!(sgemm_tile("sgemm_0x64_nn"), None);
        assert!(is_sliced("ampere_sgemm_64x32_sliced1x4_tn") && !is_sliced("ampere_sgemm_64x32_tn"));
    }

    #[test]
    fn names_kernel_functions() {
        let k = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*, float const*, int)";
        assert_eq!(kernel_function(k), "cunn_SoftMaxForward");
        let k = "void (anonymous namespace)::softmax_warp_forward<float, float, float, 8, false, false>(float*, int)";
        assert_eq!(kernel_function(k), "softmax_warp_forward");
        assert_eq!(kernel_function("volta_sgemm_64x64_nn"), "volta_sgemm_64x64_nn");
        assert_eq!(kernel_function(""), "");
    }

    #[test]
    fn looks_up_nearest_rows_of_the_nearest_gpu() {
        let cat = Catalog::builtin();
        let (t4, v100, a100) = (cat.get("t4").unwrap(), cat.get("v100-pcie").unwrap(), cat.get("a100-pcie-40gb").unwrap());
        let mut entries = Vec::new();
        for m in [64.0, 96.0, 128.0, 4096.0, 6144.0, 8192.0] {
            let label = if m < 1000.0 { "small" } else { "big" };
            entries.push(Entry { gpu: t4, dims: vec![1.0, m, 512.0], label: label.into() });
            entries.push(Entry { gpu: v100, dims: vec![1.0, m, 512.0], label: format!("v-{label}") });
        }
        let table = KernelTable::build(entries, 100, 1);
        assert_eq!(table.lookup(t4, &[1.0, 100.0, 512.0]), Some("small"));
        assert_eq!(table.lookup(t4, &[1.0, 5000.0, 512.0]), Some("big"));
        assert_eq!(table.lookup(v100, &[1.0, 5000.0, 512.0]), Some("v-big"));
        // A100 (8.0) is nearer T4 (7.5) than V100 (7.0) by compute capability.
        assert_eq!(table.gpus[table.reference(a100).unwrap()].id, "t4");
        assert_eq!(table.lookup(t4, &[1.0, 5000.0]), None);
        assert_eq!(KernelTable::default().lookup(t4, &[1.0]), None);
        let text = serde_json::to_string(&table).unwrap();
        assert_eq!(serde_json::from_str::<KernelTable>(&text).unwrap(), table);
    }

    #[test]
    fn rejects_damaged_tables() {
        let bad = [
            r#"{"gpus":[],"labels":[],"width":2,"rows":["0a"]}"#,
            r#"{"gpus":[{"id":"t4","architecture":"turing","compute_capability":7.5,"figures":[1,1,1]}],"labels":["a"],"width":2,"rows":["0a0"]}"#,
            r#"{"gpus":[{"id":"t4","architecture":"turing","compute_capability":7.5,"figures":[1,1,1]}],"labels":["a"],"width":2,"rows":["010a"]}"#,
            r#"{"gpus":[{"id":"t4","architecture":"turing","compute_capability":7.5,"figures":[1,1,1]}],"labels":["a"],"width":2,"rows":["zz0a"]}"#,
        ];
        for text in bad {
            assert!(serde_json::from_str::<KernelTable>(text).is_err(), "{text}");
        }
    }
}
