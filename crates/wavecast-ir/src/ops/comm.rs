//! Collective and point-to-point communication between GPUs. Compute predictors do not price
//! these; a communication model does (or they are reported as unpriced).

use crate::DType;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommKind {
    AllReduce,
    AllGather,
    ReduceScatter,
    /// Every GPU sends a different slice to every other (MoE dispatch and combine).
    AllToAll,
    SendRecv,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comm {
    pub kind: CommKind,
    /// Payload per GPU in bytes.
    pub bytes: f64,
    /// GPUs taking part.
    pub group: u32,
    pub dtype: DType,
    /// True when the transfer can overlap with compute (e.g. data-parallel gradient buckets).
    #[serde(default)]
    pub overlappable: bool,
    /// Copies of each token in the payload, each for a different expert: an MoE all-to-all's
    /// top-k (1 for every other collective). Across servers a dispatcher sends a token once to
    /// each server that hosts any of its experts, so fewer bytes cross the network than the
    /// payload holds.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub fanout: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl Comm {
    /// A collective of `bytes` per GPU over `group` GPUs, each token sent once.
    pub fn new(kind: CommKind, bytes: f64, group: u32, dtype: DType, overlappable: bool) -> Comm {
        Comm { kind, bytes, group, dtype, overlappable, fanout: 1 }
    }

    pub fn bytes(&self) -> f64 {
        self.bytes
    }
}
