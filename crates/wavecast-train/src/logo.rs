//! The leave-one-GPU-out loop every learned model is trained with: once on every GPU's rows,
//! then once per measured GPU on the rows of all the others. A left-out GPU's rows never reach
//! its model: the fit only ever sees the filtered rows.

use std::collections::BTreeMap;

/// A model trained on every GPU and, per measured GPU, one trained without it.
#[derive(Debug, Clone)]
pub struct Logo<M> {
    pub all: M,
    /// Keyed by the id of the GPU left out (empty when left-out models were not asked for).
    pub holdout: BTreeMap<String, M>,
}

/// The measured GPUs of `rows`, sorted and without repeats.
pub fn gpus<S>(rows: &[S], gpu_of: impl Fn(&S) -> &str) -> Vec<String> {
    let mut gpus: Vec<String> = rows.iter().map(|r| gpu_of(r).to_string()).collect();
    gpus.sort();
    gpus.dedup();
    gpus
}

/// Calls `fit(rows, None)` for the all-GPU model and, when `holdout`, `fit(rows without g,
/// Some(g))` for every GPU `g` of `rows` in id order.
pub fn leave_one_gpu_out<S: Clone, M, E>(
    rows: &[S],
    gpu_of: impl Fn(&S) -> &str,
    holdout: bool,
    mut fit: impl FnMut(&[S], Option<&str>) -> Result<M, E>,
) -> Result<Logo<M>, E> {
    let all = fit(rows, None)?;
    let mut models = BTreeMap::new();
    if holdout {
        for g in gpus(rows, &gpu_of) {
            let rest: Vec<S> = rows.iter().filter(|r| gpu_of(r) != g).cloned().collect();
            models.insert(g.clone(), fit(&rest, Some(&g))?);
        }
    }
    Ok(Logo { all, holdout: models })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_row_of_the_left_out_gpu_reaches_its_model() {
        let rows: Vec<(&str, u32)> = vec![("t4", 1), ("v100", 2), ("t4", 3), ("p4", 4), ("v100", 5)];
        let logo = leave_one_gpu_out(&rows, |r| r.0, true, |train, left_out| {
            assert!(train.iter().all(|r| Some(r.0) != left_out));
            Ok::<_, ()>(train.iter().map(|r| r.1).collect::<Vec<_>>())
        })
        .unwrap();
        assert_eq!(logo.all, vec![1, 2, 3, 4, 5]);
        assert_eq!(logo.holdout.keys().collect::<Vec<_>>(), ["p4", "t4", "v100"]);
        assert_eq!(logo.holdout["t4"], vec![2, 4, 5]);
        let only_all = leave_one_gpu_out(&rows, |r| r.0, false, |t, _| Ok::<_, ()>(t.len())).unwrap();
        assert!(only_all.holdout.is_empty());
    }
}
