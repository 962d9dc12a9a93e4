//! Operator IR: the typed operators a workload is made of, and the graph that holds them.
//!
//! Every operator family lives in its own file under `ops/` and owns the only formulas for its
//! FLOPs, bytes moved, parameters and backward operators. Predictors and reports read those
//! numbers from here and nowhere else.

pub mod dims;
pub mod dtype;
pub mod engine;
pub mod format;
pub mod graph;
pub mod ops;
pub mod quant;

pub use dims::{checked_mul, dim, quoted, DimError, MAX_DIM, MAX_ELEMENTS, MAX_WORK};
pub use dtype::DType;
pub use engine::Engine;
pub use format::Precision;
pub use graph::{grad_clip_ops, Graph, Node, Phase, ResidentFloor, Role};
pub use ops::{Op, OpClass};
pub use quant::Quant;
