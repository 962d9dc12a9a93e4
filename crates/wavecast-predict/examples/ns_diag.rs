// Temporary diagnostics (removed before hand-off).
use wavecast_data::load_neusight_dir;
use wavecast_gpu::Catalog;
use wavecast_predict::physics::Family;
use wavecast_predict::neusight::*;
use wavecast_predict::registry::WeightsFile;
use wavecast_predict::sample::{samples, kernel_dominated};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let set = args.get(1).cloned().unwrap_or("test".into());
    let wf = args.get(2).cloned().unwrap_or("/tmp/ns/neusight.json".into());
    let cat = Catalog::builtin();
    let rep = load_neusight_dir(std::path::Path::new(&format!("../shared/data/neusight/ops/{set}")), &cat).unwrap();
    let all = samples(&rep.rows, &cat);
    let usable = kernel_dominated(&all);
    let file: WeightsFile = serde_json::from_str(&std::fs::read_to_string(wf).unwrap()).unwrap();
    for g in ["a100-pcie-40gb", "p100-pcie", "p4", "t4", "v100-pcie"] {
        for (name, mf) in [("held", &file.holdout[g]), ("all ", &file.all)] {
            let m: NeuSight = serde_json::from_value(mf.params.clone()).unwrap();
            let mut line = format!("{g:15} {name}");
            for fam in Family::ALL {
                let rows: Vec<_> = usable.iter().filter(|s| s.gpu.id == g && s.family == fam).collect();
                let (mut ape, mut lr, mut floor, mut tile_ok, mut n) = (0.0, 0.0, 0, 0, 0);
                for s in rows {
                    let t = s.kernel_s();
                    let tile = m.tile_for(&s.op, fam, &s.gpu);
                    if Some(tile) == measured_tile(s) { tile_ok += 1 }
                    let w = decompose(&s.op, fam, &s.gpu, tile).unwrap();
                    let u = utilization(&m.families[&fam].0.predict_all(&features(&s.op, &s.gpu, &w)), w.waves);
                    if u <= 0.0201 { floor += 1 }
                    let p = m.kernel_seconds(&s.op, &s.gpu).unwrap();
                    ape += (p - t).abs() / t; lr += (p / t).ln(); n += 1;
                }
                let n1 = n.max(1) as f64;
                line += &format!(" | {} ape {:.0}% lr {:+.2} fl {:.0}% tile {:.0}%", fam.as_str(), 100.0 * ape / n1, lr / n1, 100.0 * floor as f64 / n1, 100.0 * tile_ok as f64 / n1);
            }
            println!("{line}");
        }
    }
}
