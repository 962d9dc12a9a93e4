//! The GPU catalog: the single source of hardware facts (clocks, SMs, bandwidth, peaks per
//! dtype, occupancy limits, interconnect, price). The built-in catalog is `data/gpus.toml`,
//! embedded in the binary; users add or override entries with a file of the same format.

mod catalog;
mod spec;
mod user_file;
pub mod occupancy;

pub use catalog::{Catalog, CatalogError};
pub use spec::{Gpu, Interconnect, Occupancy, Package, PeakTflops, Price, PriceTier, Vendor, L2_BYTES_PER_SM_CLOCK, MEASUREMENT_SOURCES};
