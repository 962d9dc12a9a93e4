//! LLM serving under load: requests arrive ([`load`]), a continuous-batching engine schedules
//! them iteration by iteration over a paged KV cache ([`engine`]), each iteration is priced
//! from the per-op models ([`cost`]) for a deployment of workers, formats and engine
//! ([`deploy`], [`backend`]), the timelines become what users measure ([`metrics`]), and
//! [`plan`] searches deployments for the best throughput within a latency target.

pub mod backend;
pub mod batch;
pub mod cost;
mod decoding;
pub mod deploy;
pub mod engine;
pub mod load;
pub mod metrics;
pub mod plan;

pub use backend::{Backend, BACKENDS};
pub use batch::BatchRun;
pub use cost::{Formats, Parallel, PriceCache, Pricing, StepParts};
pub use deploy::{serve_sim, Layout, Pool, Prepared, ServeSimOptions, ServeSimReport, WorkerMemory};
pub use engine::{simulate, Batch, Chunk, Deployment, EngineConfig, EngineStats, Outcome, Role, StepCost, Timeline};
pub use load::{benchmark_requests, closed_loop_requests, Arrival, BENCHMARK_ROUNDS, Lengths, Load, Request, MAX_TOKENS};
pub use metrics::{metrics, Latency, Metrics, Slo};
pub use plan::{plan_serve, PlanPoint, PlanServeReport, PlanServeRequest, DEFAULT_USERS_PER_WORKER};
