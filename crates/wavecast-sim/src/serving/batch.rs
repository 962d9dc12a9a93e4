//! A static batch is the simulator with a fixed batch and no arrivals: B requests of I prompt
//! and O output tokens wait in one worker's queue at time 0 (no front end, no API server), the
//! engine admits all of them in its first iteration (the prefill of every prompt, which samples
//! each first token) and then runs O − 1 decode iterations of B sequences. Every iteration is
//! the one [`simulate`] schedules and the worker's [`IterationModel`] prices, so `predict --mode
//! serve` and `serve-sim` give the same answer for the same batch.

use super::cost::StepParts;
use super::deploy::{kv_bytes_per_token, Layout, Prepared, WorkerMemory};
use super::engine::{simulate, Batch, Deployment, Outcome, Role, StepCost};
use super::load::{Arrival, Load, Request};
use crate::SimError;
use std::cell::RefCell;
use wavecast_workload::TransformerSpec;

/// What a static batch did, iteration by iteration.
#[derive(Debug, Clone)]
pub struct BatchRun {
    /// The first iteration: every prompt prefilled together.
    pub prefill: StepParts,
    /// Milliseconds of the first iteration in collectives.
    pub prefill_collectives_ms: f64,
    /// Each decode iteration (O − 1 of them), in order; with one output token, the decode
    /// iteration that would follow (so a decode step is always reported).
    pub decode: Vec<StepParts>,
    pub decode_collectives_ms: Vec<f64>,
    /// Requests' timelines and engine counters, as `serve-sim` reports them.
    pub outcome: Outcome,
    /// One GPU's memory as the engine lays it out (the KV cache is the pool it may fill).
    pub memory: WorkerMemory,
    /// Bytes of KV cache the batch holds per GPU when every sequence has I + O tokens.
    pub batch_kv_bytes: f64,
}

/// The worker's iteration model, keeping every batch the simulator asks it to price.
struct Recorder<'a> {
    cost: &'a dyn StepCost,
    batches: RefCell<Vec<Batch>>,
}

impl StepCost for Recorder<'_> {
    fn step_ms(&self, batch: &Batch) -> f64 {
        self.batches.borrow_mut().push(batch.clone());
        self.cost.step_ms(batch)
    }
}

fn no_delay(_: u64) -> f64 {
    0.0
}

impl Prepared {
    /// Runs `batch` requests of `input` prompt and `output` generated tokens, all in the
    /// engine at time 0, on the deployment's one aggregated worker (sized with room for the
    /// whole batch in one iteration: at least `batch` sequences and `batch × input` tokens), or
    /// says why the batch cannot run as one. One iteration holds the whole batch's activations,
    /// where an engine under load prefills in chunks: a batch can be refused here that
    /// `serve-sim` runs, and the refusal says so.
    pub fn run_batch(&self, spec: &TransformerSpec, batch: u64, input: u64, output: u64) -> Result<BatchRun, SimError> {
        let [w] = self.workers.as_slice() else { return Err(SimError::Invalid("a static batch runs on one aggregated worker".into())) };
        if !matches!(self.options.layout, Layout::Agg { pool } if pool.workers == 1 && pool.parallel.pp == 1) || w.role != Role::Mixed {
            return Err(SimError::Invalid("a static batch runs on one aggregated worker without pipeline stages".into()));
        }
        let c = w.config;
        if c.max_seqs < batch || c.max_batched_tokens < batch.saturating_mul(input) {
            return Err(SimError::Invalid(format!("a batch of {batch} × {input} prompt tokens does not fit one iteration of {} sequences and {} tokens", c.max_seqs, c.max_batched_tokens)));
        }
        let context = input.saturating_add(output);
        let Layout::Agg { pool } = self.options.layout else { unreachable!("checked above") };
        let per_token = kv_bytes_per_token(spec, &self.options.formats, &pool.parallel, context)?;
        let batch_kv_bytes = per_token * context as f64 * batch as f64;
        let blocks = batch.saturating_mul(context.div_ceil(c.block_size));
        if blocks > c.kv_blocks {
            let m = &w.memory;
            // Both sides in the cache's pages, as the check counts them, and to as many
            // decimals as it takes to tell them apart ("needs 3.0 GB but 3.0 GB remain").
            let gb = |pages: u64| pages as f64 * c.block_size as f64 * per_token / 1e9;
            let (need, have) = (gb(blocks), gb(c.kv_blocks));
            let decimals = (1..=3).find(|&d| format!("{need:.d$}") != format!("{have:.d$}")).unwrap_or(3);
            return Err(SimError::Invalid(format!(
                "does not fit in memory: the batch's KV cache needs {need:.decimals$} GB per GPU but {have:.decimals$} GB remain beside weights {:.1} GB, activations {:.1} GB{} and runtime {:.1} GB; use more GPUs (--tp), fewer or shorter requests, a smaller format, or serve-sim, whose engine prefills in chunks with smaller activations",
                m.weights_gb,
                m.activations_gb,
                if m.linear_state_gb > 0.0 { format!(", linear-attention state {:.1} GB", m.linear_state_gb) } else { String::new() },
                m.runtime_gb
            )));
        }
        let load = Load { arrival: Arrival::Trace, requests: (0..batch).map(|_| Request { arrival_s: 0.0, input_len: input, output_len: output }).collect() };
        let recorder = Recorder { cost: &w.cost, batches: RefCell::new(Vec::new()) };
        let outcome = simulate(&load, &Deployment { workers: vec![(Role::Mixed, c, &recorder as &dyn StepCost)], transfer_ms: &no_delay, frontend_ms: 0.0, server_ms: &no_delay })?;
        let batches = recorder.batches.into_inner();
        let Some((first, rest)) = batches.split_first() else { return Err(SimError::Invalid("the batch ran no iteration".into())) };
        if first.prefill.len() as u64 != batch || outcome.stats.preemptions > 0 {
            return Err(SimError::Invalid("the batch did not run as one (the engine split or preempted it)".into()));
        }
        let after = Batch { decode_seqs: batch, decode_context: batch.saturating_mul(input + 1), prefill: Vec::new() };
        let decodes: Vec<Batch> = if rest.is_empty() { vec![after] } else { rest.to_vec() };
        Ok(BatchRun {
            prefill: w.cost.parts(first),
            prefill_collectives_ms: w.cost.collectives_ms(first),
            decode: decodes.iter().map(|b| w.cost.parts(b)).collect(),
            decode_collectives_ms: decodes.iter().map(|b| w.cost.collectives_ms(b)).collect(),
            outcome,
            memory: w.memory,
            batch_kv_bytes,
        })
    }
}
