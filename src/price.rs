//! `--price`: the user's own price per GPU-hour, over the catalog's.

use crate::{Error, Result};
use std::path::Path;
use wavecast_gpu::Catalog;

/// The catalog a request prices with: the built-in GPUs, its GPU file over them, then its
/// prices, each `GPU=USD` for one of the `asked` GPUs, or a bare `USD` when it asks about one
/// (a request about several GPUs must name them). A price for a GPU the request does not ask
/// about would change nothing: it is refused, not ignored.
pub fn catalog(gpu_file: Option<&Path>, prices: &[String], asked: &[String]) -> Result<Catalog> {
    let mut catalog = Catalog::load(gpu_file)?;
    let default_gpu = if let [gpu] = asked { Some(gpu.as_str()) } else { None };
    let mut priced: Vec<String> = Vec::new();
    for price in prices {
        let (gpu, usd) = match price.split_once('=') {
            Some((gpu, usd)) => (gpu.trim(), usd),
            None => (default_gpu.ok_or_else(|| Error::new(format!("--price {price}: name the GPU it is for (e.g. --price h100={price})")))?, price.as_str()),
        };
        let usd: f64 = usd.trim().trim_start_matches('$').parse().map_err(|_| Error::new(format!("--price {price}: expected [GPU=]USD per GPU-hour, e.g. 2.5 or h100=2.5")))?;
        // Two prices for one GPU (by any of its names) contradict each other.
        let id = catalog.get(gpu)?.id.clone();
        if !asked.iter().any(|a| catalog.get(a).is_ok_and(|g| g.id == id)) {
            return Err(Error::new(format!("--price {price}: {id} is not a GPU this request asks about")));
        }
        if priced.contains(&id) {
            return Err(Error::new(format!("--price names {id} twice: give one price per GPU")));
        }
        priced.push(id);
        catalog.set_user_price(gpu, usd)?;
    }
    Ok(catalog)
}
