// Temporary diagnostics for the neusight/pm2lat baselines (removed before hand-off).
use std::collections::BTreeMap;
use wavecast_data::load_neusight_dir;
use wavecast_gpu::Catalog;
use wavecast_predict::physics::Family;
use wavecast_predict::pm2lat::{gemm_features, GemmConfig, Pm2Lat};
use wavecast_predict::registry::shipped;
use wavecast_predict::sample::samples;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let set = args.get(1).cloned().unwrap_or("test".into());
    let cat = Catalog::builtin();
    let rep = load_neusight_dir(std::path::Path::new(&format!("../shared/data/neusight/ops/{set}")), &cat).unwrap();
    let all = samples(&rep.rows, &cat);
    let file = shipped("pm2lat").unwrap().unwrap();
    for g in ["a100-pcie-40gb", "p100-pcie", "p4", "t4", "v100-pcie"] {
        let m: Pm2Lat = serde_json::from_value(file.holdout[g].params.clone()).unwrap();
        let mall: Pm2Lat = serde_json::from_value(file.all.params.clone()).unwrap();
        for fam in [Family::Linear, Family::Bmm] {
            let rows: Vec<_> = all.iter().filter(|s| s.gpu.id == g && s.family == fam).collect();
            let (mut same, mut n) = (0, 0);
            let mut e_pool = vec![]; let mut e_pred = vec![]; let mut e_true = vec![]; let mut e_all = vec![]; let mut sign = vec![];
            let mut conf: BTreeMap<(String, String), usize> = BTreeMap::new();
            for s in rows {
                let Some(k) = s.kernel.as_deref() else { continue };
                let Some(truth) = GemmConfig::of_kernel(k, s.grid_blocks, &s.op) else { continue };
                let pred = m.gemm_config(&s.op, fam, &s.gpu);
                n += 1; if pred.fit_key() == truth.fit_key() { same += 1 }
                *conf.entry((truth.fit_key(), pred.fit_key())).or_default() += 1;
                let t = s.kernel_s();
                let tp = m.kernel_seconds(&s.op, &s.gpu).unwrap();
                let tt = m.gemm_seconds(&s.op, &s.gpu, truth).unwrap();
                let ta = mall.kernel_seconds(&s.op, &s.gpu).unwrap();
                e_pred.push((tp - t).abs() / t); e_true.push((tt - t).abs() / t); e_all.push((ta - t).abs()/t);
                sign.push((tp / t).ln());
                let fits = &m.families[&fam];
                let x = gemm_features(&s.op, &s.gpu, pred).unwrap();
                let tpool: f64 = fits.pooled.iter().zip(&x).map(|(a, b)| a * b).sum::<f64>().max(wavecast_predict::roofline::roofline_seconds(&s.op, &s.gpu));
                e_pool.push((tpool - t).abs() / t);
            }
            let mean = |v: &Vec<f64>| 100.0 * v.iter().sum::<f64>() / v.len().max(1) as f64;
            println!("{g} {:?}: n {n} config match {:.0}%  kernel APE pred-config {:.1}% true-config {:.1}% all-gpu-model {:.1}%  mean ln(pred/meas) {:.2} pooled-transfer {:.1}%",
                fam, 100.0 * same as f64 / n.max(1) as f64, mean(&e_pred), mean(&e_true), mean(&e_all), sign.iter().sum::<f64>() / sign.len().max(1) as f64, mean(&e_pool));
            let mut c: Vec<_> = conf.into_iter().collect(); c.sort_by(|a, b| b.1.cmp(&a.1));
            println!("   {:?}", &c[..c.len().min(6)]);
        }
    }
}
