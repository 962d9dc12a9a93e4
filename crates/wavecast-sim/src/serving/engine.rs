//! Continuous batching, iteration by iteration, the way vLLM, SGLang and TensorRT-LLM schedule:
//! each iteration first gives every running sequence its next token (or its next prompt chunk),
//! then admits waiting requests first come, first served while the token budget, the sequence
//! limit and the paged KV cache allow. A sequence that needs a page when none is free preempts
//! the most recently admitted one, which gives its pages back and later recomputes its prompt
//! and the tokens it had generated. The iteration's time comes from a [`StepCost`].
//!
//! Disaggregated serving runs prefill-only and decode-only workers: a prompt is prefilled on
//! one, its KV cache crosses the link, and a decode worker generates the rest.

use super::decoding::DecodeGroup;
use super::load::{Arrival, Load};
use crate::SimError;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// One prompt chunk of an iteration: `tokens` new prompt tokens after `past` cached ones;
/// `last` when it ends the prompt (the sequence then samples its first token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub tokens: u64,
    pub past: u64,
    pub last: bool,
}

/// What one iteration computes on one worker.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    /// Sequences generating one token, and the sum of their KV lengths (cache plus the new token).
    pub decode_seqs: u64,
    pub decode_context: u64,
    pub prefill: Vec<Chunk>,
}

impl Batch {
    pub fn tokens(&self) -> u64 {
        self.decode_seqs + self.prefill.iter().map(|c| c.tokens).sum::<u64>()
    }

    pub fn is_empty(&self) -> bool {
        self.decode_seqs == 0 && self.prefill.is_empty()
    }
}

/// Milliseconds one iteration takes on one worker.
pub trait StepCost {
    fn step_ms(&self, batch: &Batch) -> f64;

    /// Successive decode-only iterations of `seqs` sequences, the first with `context` tokens of
    /// cache in all (each new token included), each next one `seqs` longer: `each` gets every
    /// iteration's time, as [`StepCost::step_ms`] gives it, and says whether to go on.
    fn decode_steps(&self, seqs: u64, context: u64, each: &mut dyn FnMut(f64) -> bool) {
        let mut context = context;
        while each(self.step_ms(&Batch { decode_seqs: seqs, decode_context: context, prefill: Vec::new() })) {
            context += seqs;
        }
    }
}

/// What a worker does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Prefill and decode in the same iterations (aggregated serving).
    Mixed,
    Prefill,
    Decode,
}

/// A worker's scheduler limits and KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EngineConfig {
    /// Most sequences in one iteration (vLLM `max_num_seqs`, SGLang `max_running_requests`,
    /// TensorRT-LLM `max_batch_size`).
    pub max_seqs: u64,
    /// Most tokens in one iteration (`max_num_batched_tokens`, `chunked_prefill_size`,
    /// `max_num_tokens`).
    pub max_batched_tokens: u64,
    /// Long prompts are split over iterations; without it a prompt is prefilled whole.
    pub chunked_prefill: bool,
    /// Tokens per KV page.
    pub block_size: u64,
    /// Pages of KV cache the worker has.
    pub kv_blocks: u64,
    /// Every request shares its first `shared_prefix` prompt tokens (a system prompt).
    pub shared_prefix: u64,
    /// Cached prefix pages are reused instead of recomputed.
    pub prefix_caching: bool,
    /// Prefill first (SGLang's default): while prompts wait, an iteration computes prompt
    /// chunks only and the decoding sequences wait for it. Otherwise decode first (vLLM V1,
    /// TensorRT-LLM's in-flight batching): every running sequence gets its token and new
    /// prompts fill the rest of the token budget in the same iteration.
    pub prefill_first: bool,
}

#[derive(Debug, Clone)]
pub(super) struct Seq {
    pub(super) id: usize,
    /// Tokens to hold in the cache before decoding: the prompt (plus, after a preemption, the
    /// tokens generated before it).
    pub(super) prompt: u64,
    pub(super) computed: u64,
    pub(super) generated: u64,
    pub(super) output: u64,
    pub(super) blocks: u64,
    /// Pages of the shared prefix this sequence reads instead of owning.
    pub(super) prefix_blocks: u64,
    pub(super) scheduled: u64,
    /// When it was admitted to run (a worker's running sequences are in this order).
    pub(super) adm: u64,
    /// In a [`DecodeGroup`]: the group's tick its counters are as of.
    pub(super) since: u64,
}

/// Per request: when it arrived, produced its first token and finished (seconds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timeline {
    pub arrival_s: f64,
    pub first_token_s: f64,
    pub finish_s: f64,
    pub input_len: u64,
    pub output_len: u64,
}

/// What a simulation produced: every request's timeline, and engine counters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    pub timelines: Vec<Timeline>,
    pub stats: EngineStats,
}

/// What the engine did over a simulation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EngineStats {
    pub iterations: u64,
    pub preemptions: u64,
    /// Mean tokens per iteration, over every worker.
    pub mean_batch_tokens: f64,
    /// Mean sequences decoding per iteration.
    pub mean_decode_seqs: f64,
    /// Highest share of any worker's KV pages in use.
    pub peak_kv_usage: f64,
}

struct Worker<'a> {
    role: Role,
    cfg: EngineConfig,
    cost: &'a dyn StepCost,
    waiting: VecDeque<Seq>,
    /// Running sequences in admission order, apart from those held in `group`.
    running: Vec<Seq>,
    /// Running sequences that decode a token every iteration they are scheduled, held together
    /// (empty where `grouped` is off, and whenever a scheduling step needs them one by one).
    group: DecodeGroup,
    /// Whether the group scheduled this iteration.
    group_scheduled: bool,
    grouped: bool,
    /// Iterations to wait before regrouping after the group had to be taken apart.
    hold_ungrouped: u32,
    admitted: u64,
    /// Scratch lists kept between iterations (no allocation per iteration).
    plan: Vec<(usize, u64)>,
    finished: Vec<Seq>,
    own_events: Vec<(u64, Event)>,
    free_blocks: u64,
    /// The shared prefix's pages, once computed and kept (prefix caching).
    prefix_cached: bool,
    busy_until: Option<f64>,
    decode_seqs_total: u64,
}

/// Iterations a worker keeps its running sequences apart after its group had to be taken apart.
/// The answers do not depend on it, only the time taken: apart, every iteration walks every
/// running sequence; regrouping files them all again (at once, into the empty group). Since
/// preemptions no longer take the group apart (`preempt_beside_group`), 1 and 4 take the same
/// time (DeepSeek-V3 over capacity, 10,000 requests: 17-20 ms; `eval serving` 4.7-5.2 s;
/// `cargo bench --bench predict`, 2026-11-29); before, 16 was a quarter slower than 4.
const HOLD_UNGROUPED: u32 = 4;

fn blocks_for(tokens: u64, block: u64) -> u64 {
    tokens.div_ceil(block)
}

/// Pages a sequence owns for `tokens` cached tokens in pages of `block`, beyond the
/// `prefix_blocks` of a shared prefix it reads instead.
pub(super) fn owned_blocks_of(tokens: u64, block: u64, prefix_blocks: u64) -> u64 {
    blocks_for(tokens, block).saturating_sub(prefix_blocks)
}

impl<'a> Worker<'a> {
    fn new(role: Role, cfg: EngineConfig, cost: &'a dyn StepCost, grouped: bool) -> Worker<'a> {
        Worker {
            role,
            cfg,
            cost,
            waiting: VecDeque::new(),
            running: Vec::new(),
            group: DecodeGroup::new(cfg.block_size),
            group_scheduled: false,
            grouped,
            hold_ungrouped: 0,
            admitted: 0,
            plan: Vec::new(),
            finished: Vec::new(),
            own_events: Vec::new(),
            free_blocks: cfg.kv_blocks,
            prefix_cached: false,
            busy_until: None,
            decode_seqs_total: 0,
        }
    }

    fn load(&self) -> usize {
        self.running_count() + self.waiting.len()
    }

    fn running_count(&self) -> usize {
        self.running.len() + self.group.len()
    }

    /// Puts the group's members back among the running sequences, in admission order.
    fn ungroup(&mut self) {
        if self.group.is_empty() {
            return;
        }
        let members = self.group.take_all();
        let singles = std::mem::take(&mut self.running);
        self.running.reserve(members.len() + singles.len());
        let (mut a, mut b) = (members.into_iter().peekable(), singles.into_iter().peekable());
        while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
            let next = if x.adm < y.adm { a.next() } else { b.next() };
            self.running.extend(next);
        }
        self.running.extend(a);
        self.running.extend(b);
    }

    /// Moves the running sequences that decode into the group (after an iteration completes).
    fn regroup(&mut self) {
        if self.hold_ungrouped > 0 {
            self.hold_ungrouped -= 1;
            return;
        }
        if !self.grouped || self.running.iter().all(|s| s.computed < s.prompt) {
            return;
        }
        // Both parts keep their (admission) order; the running list keeps its allocation.
        let decoding: Vec<Seq> = self.running.extract_if(.., |s| s.computed >= s.prompt).collect();
        self.group.join_all(decoding);
    }

    fn prefix_blocks(&self) -> u64 {
        self.cfg.shared_prefix / self.cfg.block_size
    }

    /// Pages `s` must own to hold `tokens` tokens.
    fn owned_blocks(&self, s: &Seq, tokens: u64) -> u64 {
        owned_blocks_of(tokens, self.cfg.block_size, s.prefix_blocks)
    }

    fn release(&mut self, s: &Seq) {
        self.free_blocks += s.blocks;
    }

    /// Sends the most recently admitted running sequence back to the front of the queue to
    /// recompute later.
    fn requeue_last(&mut self) {
        if let Some(s) = self.running.pop() {
            self.requeue(s);
        }
    }

    /// Gives a preempted sequence's pages back and queues it first, to recompute.
    fn requeue(&mut self, mut s: Seq) {
        self.release(&s);
        // Its prompt and every token it generated are recomputed as one longer prompt (the
        // last generated token had not entered the cache yet).
        if s.generated > 0 {
            s.prompt = s.computed + 1;
        }
        s.computed = 0;
        s.blocks = 0;
        s.prefix_blocks = 0;
        s.scheduled = 0;
        self.waiting.push_front(s);
    }

    /// Tokens `s` would compute this iteration within `budget`, or None if it must wait.
    fn want(&self, s: &Seq, budget: u64) -> Option<u64> {
        if s.computed < s.prompt {
            let rest = s.prompt - s.computed;
            if rest <= budget {
                Some(rest)
            } else if self.cfg.chunked_prefill && budget > 0 {
                Some(budget)
            } else {
                None
            }
        } else {
            (budget > 0).then_some(1)
        }
    }

    /// Chooses the next iteration's work; counts preemptions.
    fn schedule(&mut self, preemptions: &mut u64) -> Batch {
        // The group's members all decode: only the others can have prompt tokens to compute.
        let prompts_pending = || !self.waiting.is_empty() || self.running.iter().any(|s| s.computed < s.prompt);
        if self.cfg.prefill_first && prompts_pending() {
            let b = self.schedule_with(preemptions, true);
            if !b.prefill.is_empty() {
                return b;
            }
        }
        self.schedule_with(preemptions, false)
    }

    /// One iteration's work; with `prompts_only` the decoding sequences sit it out.
    fn schedule_with(&mut self, preemptions: &mut u64, prompts_only: bool) -> Batch {
        // Without a group, scheduling the running sequences one by one gives what the grouped
        // pass would (nobody is preempted where their pages fit), in one pass over them.
        let grouped = if self.group.is_empty() {
            self.group_scheduled = false;
            None
        } else {
            self.schedule_grouped(prompts_only)
        };
        let (budget, preempted) = match grouped.map(|b| (b, false)).or_else(|| self.preempt_beside_group(preemptions, prompts_only)) {
            Some(scheduled) => scheduled,
            None => {
                if !self.group.is_empty() {
                    self.ungroup();
                    // What needed them one by one (pages short, a preemption) tends to last:
                    // regrouping at once would only be undone again.
                    self.hold_ungrouped = HOLD_UNGROUPED;
                }
                self.schedule_running(preemptions, prompts_only, self.cfg.max_batched_tokens)
            }
        };
        self.admit(budget, preempted);
        self.batch()
    }

    /// The running sequences' share of the iteration with the group kept whole, when that is
    /// what scheduling them one by one in admission order would give: the group decodes (its
    /// members take one token each, first) unless `prompts_only`, then the other running
    /// sequences in order; nobody is preempted (the pages they need are free), and either the
    /// group comes before every other running sequence or every sequence gets all it wants (so
    /// the order does not matter). Returns the token budget left, or None (nothing changed).
    fn schedule_grouped(&mut self, prompts_only: bool) -> Option<u64> {
        self.group_scheduled = false;
        if self.prefix_pending() {
            return None;
        }
        let members = if prompts_only { 0 } else { self.group.len() as u64 };
        let mut budget = self.cfg.max_batched_tokens.checked_sub(members)?;
        let group_first = members == 0 || self.group_admitted_first();
        let mut pages = if members > 0 { self.group.pages_due() } else { 0 };
        let mut plan = std::mem::take(&mut self.plan);
        plan.clear();
        let mut all_served = true;
        for (i, s) in self.running.iter().enumerate() {
            if prompts_only && s.computed >= s.prompt {
                continue;
            }
            let full = if s.computed < s.prompt { s.prompt - s.computed } else { 1 };
            let Some(n) = self.want(s, budget) else {
                all_served = false;
                break;
            };
            all_served &= n == full;
            pages += self.owned_blocks(s, s.computed + n).saturating_sub(s.blocks);
            budget -= n;
            plan.push((i, n));
        }
        let fits = pages <= self.free_blocks && (group_first || all_served);
        if fits {
            self.free_blocks -= pages;
            self.group_scheduled = members > 0;
            for &(i, n) in &plan {
                let need = self.owned_blocks(&self.running[i], self.running[i].computed + n).saturating_sub(self.running[i].blocks);
                let s = &mut self.running[i];
                s.blocks += need;
                s.scheduled = n;
            }
        }
        self.plan = plan;
        fits.then_some(budget)
    }

    /// Whether this worker is still to compute the shared prefix (prefix caching on, prompts
    /// computed here, no prompt through the prefix yet): until then the first prompt's pages
    /// become everyone's, which only one-by-one scheduling follows.
    fn prefix_pending(&self) -> bool {
        self.cfg.prefix_caching && self.role != Role::Decode && !self.prefix_cached
    }

    /// Whether every member of the group was admitted before every other running sequence.
    fn group_admitted_first(&self) -> bool {
        self.running.first().is_none_or(|s| Some(s.adm) > self.group.last_admitted())
    }

    /// The running sequences' share of the iteration when scheduling them one by one would
    /// preempt, with the group kept: every member was admitted before every other running
    /// sequence, so one by one the members come first and take the pages they are due; where
    /// none is free, the last admitted go (the others first, then members, which leave the group
    /// for the front of the queue); the others left follow one by one. Otherwise None: the
    /// group must be taken apart. Returns the token budget left and whether anything was
    /// preempted.
    fn preempt_beside_group(&mut self, preemptions: &mut u64, prompts_only: bool) -> Option<(u64, bool)> {
        let members = self.group.len() as u64;
        let group_first = self.group_admitted_first();
        if prompts_only || members == 0 || members > self.cfg.max_batched_tokens || !group_first || self.prefix_pending() {
            return None;
        }
        let (others, out) = self.group.preempt_for_pages(self.free_blocks, &self.running);
        let preempted = others + out.len();
        *preemptions += preempted as u64;
        (0..others).for_each(|_| self.requeue_last());
        out.into_iter().for_each(|s| self.requeue(s));
        self.free_blocks -= self.group.pages_due();
        self.group_scheduled = !self.group.is_empty();
        let (budget, preempted_after) = self.schedule_running(preemptions, false, self.cfg.max_batched_tokens - self.group.len() as u64);
        Some((budget, preempted > 0 || preempted_after))
    }

    /// The running sequences outside the group, one by one in admission order, within `budget`
    /// tokens; a sequence that needs a page when none is free preempts the most recently
    /// admitted. Returns the token budget left and whether anything was preempted.
    fn schedule_running(&mut self, preemptions: &mut u64, prompts_only: bool, mut budget: u64) -> (u64, bool) {
        let mut i = 0;
        let mut preempted = false;
        while i < self.running.len() {
            if prompts_only && self.running[i].computed >= self.running[i].prompt {
                i += 1;
                continue;
            }
            let Some(n) = self.want(&self.running[i], budget) else { break };
            let need = self.owned_blocks(&self.running[i], self.running[i].computed + n).saturating_sub(self.running[i].blocks);
            while self.free_blocks < need && self.running.len() > i + 1 {
                self.requeue_last();
                *preemptions += 1;
                preempted = true;
            }
            if self.free_blocks < need {
                // Not even this sequence fits alone: it waits for pages too.
                self.requeue_last();
                *preemptions += 1;
                preempted = true;
                break;
            }
            self.free_blocks -= need;
            let s = &mut self.running[i];
            s.blocks += need;
            s.scheduled = n;
            budget -= n;
            i += 1;
        }
        (budget, preempted)
    }

    /// Admits waiting requests, first come first served, while the budget, the sequence limit
    /// and the free pages allow (none after a preemption).
    fn admit(&mut self, mut budget: u64, preempted: bool) {
        while !preempted && budget > 0 && (self.running_count() as u64) < self.cfg.max_seqs {
            let Some(front) = self.waiting.front() else { break };
            let mut s = front.clone();
            if self.cfg.prefix_caching && self.role != Role::Decode && self.prefix_cached && s.computed == 0 {
                s.prefix_blocks = self.prefix_blocks().min(s.prompt.saturating_sub(1) / self.cfg.block_size);
                s.computed = s.prefix_blocks * self.cfg.block_size;
            }
            let Some(n) = self.want(&s, budget) else { break };
            let need = self.owned_blocks(&s, s.computed + n);
            if self.free_blocks < need {
                break;
            }
            self.waiting.pop_front();
            self.free_blocks -= need;
            s.blocks = need;
            s.scheduled = n;
            s.adm = self.admitted;
            self.admitted += 1;
            budget -= n;
            self.running.push(s);
        }
    }

    /// What the scheduled sequences compute.
    fn batch(&self) -> Batch {
        let mut b = Batch::default();
        if self.group_scheduled {
            b.decode_seqs = self.group.len() as u64;
            b.decode_context = self.group.context();
        }
        for s in &self.running {
            match s.scheduled {
                0 => {}
                n if s.computed >= s.prompt => {
                    b.decode_seqs += 1;
                    b.decode_context += s.computed + n;
                }
                n => b.prefill.push(Chunk { tokens: n, past: s.computed, last: s.computed + n >= s.prompt }),
            }
        }
        b
    }
}

/// Decode iterations a worker ran without anything happening: how many, and their sequences
/// and tokens, for the engine's counters.
struct Skipped {
    iterations: u64,
    seqs: u64,
}

impl Worker<'_> {
    /// Whether the iteration just scheduled, `b`, decodes every running sequence and nothing
    /// else, and the engine could keep running such iterations unchanged: nothing waits that a
    /// later identical iteration could admit (the token budget, the sequence limit and the free
    /// pages only shrink while the batch decodes), and no prefix is about to be cached.
    /// Either every running sequence is in the group or none is.
    fn decodes_alone(&self, b: &Batch) -> bool {
        b.prefill.is_empty()
            && b.decode_seqs > 0
            && b.decode_seqs == self.running_count() as u64
            && (self.group.is_empty() || self.running.is_empty())
            && self.role != Role::Prefill
            && (self.prefix_cached || !self.cfg.prefix_caching)
    }

    /// Runs, at once, the decode iterations that follow the one just scheduled (`b`, which
    /// started at `start_s` and takes `ms`) and change nothing but the cache lengths: every one
    /// that ends before a sequence finishes, starts before `limit_s` (the next arrival or another
    /// worker's next event), and needs no page the worker lacks. The worker is left with the
    /// next iteration scheduled and returns when it ends, as if each had run in turn.
    fn skip_decodes(&mut self, b: &Batch, start_s: f64, ms: f64, limit_s: f64) -> (f64, Skipped) {
        let mut end = start_s + ms / 1e3;
        let none = Skipped { iterations: 0, seqs: 0 };
        // Iteration i (0 the scheduled one) ends with the sequences that had i + 1 tokens to go.
        let fewest_to_go = if self.group.is_empty() { self.running.iter().map(|s| s.output - s.generated).min().unwrap_or(0) } else { self.group.fewest_to_go() };
        let mut most = fewest_to_go.saturating_sub(1);
        // Fewer if the pages they need run out: the most that fit (the need only grows with j).
        if most > 0 && end < limit_s && self.pages_for(most) > self.free_blocks {
            let (mut fits, mut short) = (0, most);
            while short - fits > 1 {
                let mid = (fits + short) / 2;
                if self.pages_for(mid) <= self.free_blocks {
                    fits = mid;
                } else {
                    short = mid;
                }
            }
            most = fits;
        }
        if most == 0 || end >= limit_s {
            return (end, none);
        }
        let seqs = b.decode_seqs;
        // Iterations 1..=j: each starts where the last ended, before the limit.
        let mut j = 0;
        self.cost.decode_steps(seqs, b.decode_context + seqs, &mut |next| {
            if !(next.is_finite() && next > 0.0) {
                return false;
            }
            j += 1;
            end += next / 1e3;
            j < most && end < limit_s
        });
        if j == 0 {
            return (end, none);
        }
        let need = self.pages_for(j);
        self.free_blocks -= need;
        self.group.advance(j);
        let block = self.cfg.block_size;
        for s in self.running.iter_mut() {
            s.computed += j;
            s.generated += j;
            s.blocks = s.blocks.max(owned_blocks_of(s.computed + 1, block, s.prefix_blocks));
        }
        self.decode_seqs_total += j * seqs;
        (end, Skipped { iterations: j, seqs: j * seqs })
    }

    /// Pages the running sequences need beyond their own to decode `j` more tokens each after
    /// the scheduled iteration.
    fn pages_for(&self, j: u64) -> u64 {
        self.group.pages_ahead(j) + self.running.iter().map(|s| self.owned_blocks(s, s.computed + 1 + j).saturating_sub(s.blocks)).sum::<u64>()
    }
}

/// What happens to a sequence at the end of an iteration.
enum Event {
    FirstToken(usize),
    Finished(usize),
    /// Prefilled on a prefill worker: its cache moves to a decode worker.
    Handoff(Seq),
}

impl Worker<'_> {
    /// Applies the iteration's results at time `t`: events in admission order.
    fn complete(&mut self, events: &mut Vec<Event>) {
        let mut finished = std::mem::take(&mut self.finished);
        if std::mem::take(&mut self.group_scheduled) {
            self.group.advance(1);
            self.group.take_finished(&mut finished);
        }
        let mut own = std::mem::take(&mut self.own_events);
        self.complete_running(&mut own);
        for s in &finished {
            self.free_blocks += s.blocks;
        }
        // Both lists are in admission order: merge them.
        let mut theirs = finished.drain(..).map(|s| (s.adm, Event::Finished(s.id))).peekable();
        for (adm, e) in own.drain(..) {
            while theirs.peek().is_some_and(|(a, _)| *a < adm) {
                events.extend(theirs.next().map(|(_, e)| e));
            }
            events.push(e);
        }
        events.extend(theirs.map(|(_, e)| e));
        self.finished = finished;
        self.own_events = own;
        self.regroup();
    }

    /// [`Worker::complete`] for the sequences outside the group; events with their admission
    /// numbers.
    fn complete_running(&mut self, events: &mut Vec<(u64, Event)>) {
        let prefix_tokens = self.prefix_blocks() * self.cfg.block_size;
        // In place, in admission order (the last admitted is the first preempted).
        let mut running = std::mem::take(&mut self.running);
        running.retain_mut(|s| {
            let n = std::mem::take(&mut s.scheduled);
            if n == 0 {
                return true;
            }
            let was_prefill = s.computed < s.prompt;
            s.computed += n;
            if self.prefix_pending() && prefix_tokens > 0 && s.computed >= prefix_tokens && s.prefix_blocks == 0 {
                // This sequence's first pages become the shared prefix, kept for everyone.
                self.prefix_cached = true;
                s.prefix_blocks = self.prefix_blocks();
                s.blocks -= s.prefix_blocks;
            }
            if was_prefill && s.computed < s.prompt {
                return true;
            }
            s.generated += 1;
            if s.generated == 1 {
                events.push((s.adm, Event::FirstToken(s.id)));
            }
            if s.generated >= s.output {
                self.free_blocks += s.blocks;
                events.push((s.adm, Event::Finished(s.id)));
                false
            } else if self.role == Role::Prefill {
                self.free_blocks += s.blocks;
                events.push((s.adm, Event::Handoff(s.clone())));
                false
            } else {
                true
            }
        });
        self.running = running;
    }

    fn kv_usage(&self) -> f64 {
        if self.cfg.kv_blocks == 0 {
            return 0.0;
        }
        1.0 - self.free_blocks as f64 / self.cfg.kv_blocks as f64
    }
}

/// A pending arrival: a new request, or a prefilled sequence reaching the decode pool.
struct Pending {
    at: f64,
    order: u64,
    what: Arriving,
}

enum Arriving {
    /// A client sent request i: it queues at the API server.
    Sent(usize),
    /// Request i reaches the engine's scheduler.
    Request(usize),
    Handoff(Box<Seq>),
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    /// Earliest first (the heap is a max-heap), ties in submission order.
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.total_cmp(&self.at).then(o.order.cmp(&self.order))
    }
}

/// The workers of one deployment: aggregated (`Mixed` workers) or disaggregated (`Prefill` and
/// `Decode` workers; `transfer_ms` says how long a prompt's cache takes to move).
pub struct Deployment<'a> {
    pub workers: Vec<(Role, EngineConfig, &'a dyn StepCost)>,
    pub transfer_ms: &'a dyn Fn(u64) -> f64,
    /// Time between a client sending a request and the engine scheduling it (HTTP handling,
    /// tokenization, routing), ms; counted in its latencies.
    pub frontend_ms: f64,
    /// The API server handles requests one at a time (one process parses, validates and
    /// tokenizes each): ms of its time a request of that many prompt tokens takes. Requests
    /// sent together queue here before they reach the engine.
    pub server_ms: &'a dyn Fn(u64) -> f64,
}

/// The API server in front of the engine: one request at a time, first come, first served.
struct ApiServer<'a> {
    free_at: f64,
    per_request_ms: &'a dyn Fn(u64) -> f64,
}

impl ApiServer<'_> {
    /// When a request sent at `sent_s` with `input_len` prompt tokens leaves the server.
    fn admit(&mut self, sent_s: f64, input_len: u64) -> f64 {
        let start = self.free_at.max(sent_s);
        self.free_at = start + (self.per_request_ms)(input_len).max(0.0) / 1e3;
        self.free_at
    }
}

/// Most iterations one simulation may run (a guard against a load that never drains).
const MAX_ITERATIONS: u64 = 200_000_000;

/// Replays `load` on `deployment` and returns every request's timeline.
pub fn simulate(load: &Load, deployment: &Deployment) -> Result<Outcome, SimError> {
    simulate_with(load, deployment, true, true)
}

/// [`simulate`]; with `skip` false every decode iteration runs in turn, with `grouped` false
/// every sequence is scheduled one by one (what the skipping and the grouping must reproduce
/// exactly).
fn simulate_with(load: &Load, deployment: &Deployment, skip: bool, grouped: bool) -> Result<Outcome, SimError> {
    let mut workers: Vec<Worker> = deployment.workers.iter().map(|(r, c, cost)| Worker::new(*r, *c, *cost, grouped)).collect();
    check(load, &workers)?;
    let n = load.requests.len();
    let mut timelines: Vec<Timeline> = load.requests.iter().map(|r| Timeline { arrival_s: f64::NAN, first_token_s: f64::NAN, finish_s: f64::NAN, input_len: r.input_len, output_len: r.output_len }).collect();
    let mut pending = BinaryHeap::new();
    let mut order = 0u64;
    let frontend_s = deployment.frontend_ms.max(0.0) / 1e3;
    let mut server = ApiServer { free_at: 0.0, per_request_ms: deployment.server_ms };
    let mut push = |pending: &mut BinaryHeap<Pending>, at: f64, what: Arriving| {
        order += 1;
        pending.push(Pending { at, order, what });
    };
    let mut next_request = match load.arrival {
        Arrival::Concurrency { clients } => (clients as usize).min(n),
        _ => n,
    };
    // Closed loop: each client's first request at its own start time (all 0: they start
    // together, as a benchmark's clients do). A request is sent, waits its turn at the API
    // server, then reaches the engine after the front end's latency.
    for (i, r) in load.requests.iter().enumerate().take(next_request) {
        timelines[i].arrival_s = r.arrival_s;
        push(&mut pending, r.arrival_s, Arriving::Sent(i));
    }
    let (mut iterations, mut preemptions, mut tokens_total, mut done) = (0u64, 0u64, 0u64, 0usize);
    let mut peak_kv: f64 = 0.0;
    let mut t = 0.0;
    let mut events = Vec::new();
    let mut decoding_alone = Vec::new();
    while done < n {
        decoding_alone.clear();
        for (k, w) in workers.iter_mut().enumerate().filter(|(_, w)| w.busy_until.is_none()) {
            if w.running_count() == 0 && w.waiting.is_empty() {
                continue;
            }
            let preempted_before = preemptions;
            let batch = w.schedule(&mut preemptions);
            if batch.is_empty() {
                continue;
            }
            let ms = w.cost.step_ms(&batch);
            if !(ms.is_finite() && ms > 0.0) {
                return Err(SimError::Invalid(format!("an iteration of {} tokens was priced at {ms} ms", batch.tokens())));
            }
            iterations += 1;
            tokens_total += batch.tokens();
            w.decode_seqs_total += batch.decode_seqs;
            peak_kv = peak_kv.max(w.kv_usage());
            w.busy_until = Some(t + ms / 1e3);
            // A preemption skips this iteration's admissions, so the next may differ.
            if skip && preemptions == preempted_before && w.decodes_alone(&batch) {
                decoding_alone.push((k, batch, ms));
            }
        }
        // Identical decode iterations up to the next thing that happens anywhere run at once
        // (event by event, not iteration by iteration: the answer is the same).
        for (k, batch, ms) in decoding_alone.drain(..) {
            let others = workers.iter().enumerate().filter(|(i, _)| *i != k).filter_map(|(_, w)| w.busy_until).fold(f64::INFINITY, f64::min);
            let limit = pending.peek().map_or(f64::INFINITY, |p| p.at).min(others);
            let w = &mut workers[k];
            let (end, skipped) = w.skip_decodes(&batch, t, ms, limit);
            iterations += skipped.iterations;
            tokens_total += skipped.seqs;
            peak_kv = peak_kv.max(w.kv_usage());
            w.busy_until = Some(end);
        }
        if iterations > MAX_ITERATIONS {
            return Err(SimError::Invalid("the simulation passed 200 million iterations without draining the load".into()));
        }
        let next_iter = workers.iter().filter_map(|w| w.busy_until).min_by(f64::total_cmp);
        let next_arrival = pending.peek().map(|p| p.at);
        t = match (next_iter, next_arrival) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => {
                return Err(SimError::Invalid(stuck_reason(&workers)));
            }
        };
        while pending.peek().is_some_and(|p| p.at <= t) {
            let p = pending.pop().expect("peeked");
            match p.what {
                Arriving::Sent(i) => {
                    let at = server.admit(p.at, load.requests[i].input_len) + frontend_s;
                    push(&mut pending, at, Arriving::Request(i));
                }
                Arriving::Request(i) => {
                    let r = &load.requests[i];
                    let s = Seq { id: i, prompt: r.input_len, computed: 0, generated: 0, output: r.output_len, blocks: 0, prefix_blocks: 0, scheduled: 0, adm: 0, since: 0 };
                    least_loaded(&mut workers, |r| r != Role::Decode).waiting.push_back(s);
                }
                Arriving::Handoff(s) => least_loaded(&mut workers, |r| r == Role::Decode).waiting.push_back(*s),
            }
        }
        for w in workers.iter_mut() {
            if w.busy_until.is_some_and(|b| b <= t) {
                w.busy_until = None;
                w.complete(&mut events);
            }
        }
        for e in events.drain(..) {
            match e {
                Event::FirstToken(i) => timelines[i].first_token_s = t,
                Event::Finished(i) => {
                    timelines[i].finish_s = t;
                    done += 1;
                    if matches!(load.arrival, Arrival::Concurrency { .. }) && next_request < n {
                        timelines[next_request].arrival_s = t;
                        push(&mut pending, t, Arriving::Sent(next_request));
                        next_request += 1;
                    }
                }
                Event::Handoff(mut s) => {
                    let at = t + (deployment.transfer_ms)(s.computed) / 1e3;
                    // The first token reaches the user with the cache, from the decode worker.
                    timelines[s.id].first_token_s = at;
                    s.blocks = 0;
                    s.prefix_blocks = 0;
                    push(&mut pending, at, Arriving::Handoff(Box::new(s)));
                }
            }
        }
    }
    let decode_total: u64 = workers.iter().map(|w| w.decode_seqs_total).sum();
    let per_iter = |x: u64| if iterations == 0 { 0.0 } else { x as f64 / iterations as f64 };
    Ok(Outcome { timelines, stats: EngineStats { iterations, preemptions, mean_batch_tokens: per_iter(tokens_total), mean_decode_seqs: per_iter(decode_total), peak_kv_usage: peak_kv } })
}

fn least_loaded<'w, 'a>(workers: &'w mut [Worker<'a>], role: impl Fn(Role) -> bool) -> &'w mut Worker<'a> {
    workers.iter_mut().filter(|w| role(w.role)).min_by_key(|w| w.load()).expect("the deployment was checked to have a worker for every role")
}

/// Rejects deployments that cannot serve the load at all (rather than simulating forever).
fn check(load: &Load, workers: &[Worker]) -> Result<(), SimError> {
    let has = |r: Role| workers.iter().any(|w| w.role == r);
    if workers.is_empty() {
        return Err(SimError::Invalid("a deployment needs at least one worker".into()));
    }
    if has(Role::Mixed) && (has(Role::Prefill) || has(Role::Decode)) {
        return Err(SimError::Invalid("a deployment is either aggregated or disaggregated, not both".into()));
    }
    if has(Role::Prefill) != has(Role::Decode) {
        return Err(SimError::Invalid("disaggregated serving needs at least one prefill and one decode worker".into()));
    }
    let longest = load.max_context();
    let longest_input = load.requests.iter().map(|r| r.input_len).max().unwrap_or(0);
    let shortest_input = load.requests.iter().map(|r| r.input_len).min().unwrap_or(0);
    for w in workers {
        let c = &w.cfg;
        if c.max_seqs == 0 || c.max_batched_tokens == 0 || c.block_size == 0 {
            return Err(SimError::Invalid("max sequences, max batched tokens and the KV page size must be at least 1".into()));
        }
        if c.prefix_caching && !(1..=shortest_input).contains(&c.shared_prefix) {
            return Err(SimError::Invalid(format!(
                "prefix caching needs a shared prefix (--shared-prefix) of 1 to {shortest_input} tokens (the shortest prompt), got {}",
                c.shared_prefix
            )));
        }
        let reserved = if c.prefix_caching && w.role != Role::Decode { c.shared_prefix / c.block_size } else { 0 };
        let held = if w.role == Role::Prefill { longest_input } else { longest };
        if blocks_for(held, c.block_size).saturating_add(reserved) > c.kv_blocks {
            return Err(SimError::Invalid(format!(
                "the KV cache holds {} tokens per worker but the longest request needs {held}{}; use more GPUs per worker, FP8 KV cache or shorter requests",
                c.kv_blocks.saturating_mul(c.block_size),
                if reserved > 0 { format!(" beside the {} tokens of the cached prefix", reserved * c.block_size) } else { String::new() }
            )));
        }
        if !c.chunked_prefill && longest > c.max_batched_tokens {
            return Err(SimError::Invalid(format!(
                "without chunked prefill a prompt (plus recomputed output) of up to {longest} tokens must fit the {} batched tokens of an iteration: raise --max-batched-tokens to {longest} or more, or keep chunked prefill",
                c.max_batched_tokens
            )));
        }
    }
    Ok(())
}

fn stuck_reason(workers: &[Worker]) -> String {
    let waiting: usize = workers.iter().map(|w| w.waiting.len()).sum();
    format!("the simulation stalled with {waiting} request(s) waiting and nothing running (a request needs more KV cache than a worker has)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serving::load::{Lengths, Request};

    /// Every iteration takes the same time.
    struct Fixed(f64);
    impl StepCost for Fixed {
        fn step_ms(&self, _: &Batch) -> f64 {
            self.0
        }
    }

    fn cfg(max_seqs: u64, kv_blocks: u64) -> EngineConfig {
        EngineConfig { max_seqs, max_batched_tokens: 1 << 20, chunked_prefill: true, block_size: 16, kv_blocks, shared_prefix: 0, prefix_caching: false, prefill_first: false }
    }

    fn agg<'a>(c: EngineConfig, cost: &'a dyn StepCost, transfer: &'a dyn Fn(u64) -> f64) -> Deployment<'a> {
        Deployment { workers: vec![(Role::Mixed, c, cost)], transfer_ms: transfer, frontend_ms: 0.0, server_ms: &no_server }
    }

    fn no_transfer(_: u64) -> f64 {
        0.0
    }

    fn no_server(_: u64) -> f64 {
        0.0
    }

    fn fixed_load(n: u64, clients: u64, input: u64, output: u64) -> Load {
        Load::synthetic(n, Arrival::Concurrency { clients }, Lengths::Fixed { tokens: input }, Lengths::Fixed { tokens: output }, 0).unwrap()
    }

    #[test]
    fn a_fixed_cost_gives_the_hand_computed_queue() {
        // 2 clients, 4 requests of 10 in / 5 out, every iteration 10 ms, room for everyone:
        // iteration 1 prefills both (first tokens at 10 ms), iterations 2–5 decode (finish at
        // 50 ms); the next two requests arrive at 50 ms and repeat the pattern (finish at 100 ms).
        let cost = Fixed(10.0);
        let o = simulate(&fixed_load(4, 2, 10, 5), &agg(cfg(8, 1000), &cost, &no_transfer)).unwrap();
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        for (i, t) in o.timelines.iter().enumerate() {
            let start = if i < 2 { 0.0 } else { 0.05 };
            assert!(near(t.arrival_s, start) && near(t.first_token_s, start + 0.01) && near(t.finish_s, start + 0.05), "{i}: {t:?}");
        }
        assert_eq!(o.stats.iterations, 10);
        assert_eq!(o.stats.preemptions, 0);
        assert!(near(o.stats.mean_decode_seqs, 1.6), "{}", o.stats.mean_decode_seqs);
    }

    #[test]
    fn users_starting_together_queue_for_prefill() {
        // 4 users send 10-token prompts (3 output tokens) at once; 22 tokens an iteration,
        // no chunking, 10 ms an iteration. Iteration 1 prefills users 1 and 2 (20 tokens);
        // iteration 2 decodes them (2 tokens) and prefills users 3 and 4 (20): first tokens at
        // 10, 10, 20 and 20 ms, a mean of 15 ms that an evenly spread start would not show.
        let cost = Fixed(10.0);
        let mut c = cfg(8, 1000);
        c.max_batched_tokens = 22;
        c.chunked_prefill = false;
        let o = simulate(&fixed_load(4, 4, 10, 3), &agg(c, &cost, &no_transfer)).unwrap();
        let ttft: Vec<f64> = o.timelines.iter().map(|t| ((t.first_token_s - t.arrival_s) * 1e3 * 1e6).round() / 1e6).collect();
        assert_eq!(ttft, vec![10.0, 10.0, 20.0, 20.0]);
        // The same with an API server that takes 1 ms a request, one at a time: requests reach
        // the engine at 1, 2, 3 and 4 ms. Iteration 1 (1–11 ms) prefills user 1 alone; iteration
        // 2 (11–21 ms) decodes user 1 and prefills users 2 and 3 (22 tokens); iteration 3
        // (21–31 ms) decodes users 1–3 and prefills user 4: first tokens at 11, 21, 21, 31 ms.
        let server = |_: u64| 1.0;
        let d = Deployment { workers: vec![(Role::Mixed, c, &cost as &dyn StepCost)], transfer_ms: &no_transfer, frontend_ms: 0.0, server_ms: &server };
        let o = simulate(&fixed_load(4, 4, 10, 3), &d).unwrap();
        let first: Vec<f64> = o.timelines.iter().map(|t| (t.first_token_s * 1e3 * 1e6).round() / 1e6).collect();
        assert_eq!(first, vec![11.0, 21.0, 21.0, 31.0]);
    }

    #[test]
    fn users_released_together_do_not_stay_a_wave() {
        // 8 users send 20-token prompts (10 output tokens), two rounds; 30 tokens an iteration
        // (one prompt beside up to ten decodes), no chunking, 10 ms an iteration. Round 1 is a
        // wave: one prompt an iteration, first tokens at 10, 20, … 80 ms (mean TTFT 45 ms).
        // User i finishes nine iterations after its first token, at 10 (i + 9) ms, and sends
        // its next request then: the returns come one iteration apart, as the admissions did,
        // so in round 2 no prompt waits for another and every TTFT is the same short wait,
        // however many users there are. (`Prepared::run_steady` therefore takes the first round
        // as the in-step extreme.)
        let cost = Fixed(10.0);
        let mut c = cfg(8, 1000);
        c.max_batched_tokens = 30;
        c.chunked_prefill = false;
        let o = simulate(&fixed_load(16, 8, 20, 10), &agg(c, &cost, &no_transfer)).unwrap();
        let ms = |x: f64| (x * 1e3 * 1e6).round() / 1e6;
        let ttft: Vec<f64> = o.timelines.iter().map(|t| ms(t.first_token_s - t.arrival_s)).collect();
        assert_eq!(ttft[..8], [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]);
        let returns: Vec<f64> = o.timelines[8..].iter().map(|t| ms(t.arrival_s)).collect();
        assert_eq!(returns, [100.0, 110.0, 120.0, 130.0, 140.0, 150.0, 160.0, 170.0]);
        assert!(ttft[8..].iter().all(|&t| t == ttft[8] && t <= 20.0), "{ttft:?}");
    }

    #[test]
    fn prefill_first_engines_pause_decoding_for_new_prompts() {
        // One user decodes (10 in, 4 out); a second request arrives at 15 ms. Decode first
        // (vLLM): the iteration at 20 ms decodes user 1 and prefills user 2 together, user 1
        // finishes at 40 ms. Prefill first (SGLang): that iteration prefills user 2 alone, user
        // 1 waits one iteration and finishes at 50 ms; user 2's first token comes at 30 ms
        // either way.
        let cost = Fixed(10.0);
        let load = Load { arrival: Arrival::Trace, requests: vec![Request { arrival_s: 0.0, input_len: 10, output_len: 4 }, Request { arrival_s: 0.015, input_len: 10, output_len: 4 }] };
        let run = |prefill_first: bool| {
            let mut c = cfg(8, 1000);
            c.prefill_first = prefill_first;
            simulate(&load, &agg(c, &cost, &no_transfer)).unwrap()
        };
        let (decode_first, prefill_first) = (run(false), run(true));
        let ms = |x: f64| (x * 1e3 * 1e6).round() / 1e6;
        assert_eq!((ms(decode_first.timelines[0].finish_s), ms(decode_first.timelines[1].first_token_s)), (40.0, 30.0));
        assert_eq!((ms(prefill_first.timelines[0].finish_s), ms(prefill_first.timelines[1].first_token_s)), (50.0, 30.0));
    }

    #[test]
    fn the_sequence_limit_queues_requests() {
        // One sequence at a time: the second request waits for the first to finish (4 iterations).
        let cost = Fixed(1.0);
        let o = simulate(&fixed_load(2, 2, 8, 4), &agg(cfg(1, 1000), &cost, &no_transfer)).unwrap();
        assert!((o.timelines[1].first_token_s - 0.005).abs() < 1e-9, "{:?}", o.timelines[1]);
        assert!((o.timelines[1].finish_s - 0.008).abs() < 1e-9);
    }

    #[test]
    fn preemption_happens_exactly_when_pages_run_out() {
        // Pages of 16 tokens. Two requests of 16 in / 20 out hold at most 16 + 19 = 35 tokens,
        // three pages each; in lockstep both need their third page when token 33 enters.
        let cost = Fixed(1.0);
        let load = fixed_load(2, 2, 16, 20);
        let roomy = simulate(&load, &agg(cfg(8, 6), &cost, &no_transfer)).unwrap();
        assert_eq!(roomy.stats.preemptions, 0);
        // One page short: the later request is preempted at that step, the earlier one runs on
        // untouched, and the preempted one recomputes and finishes after it.
        let tight = simulate(&load, &agg(cfg(8, 5), &cost, &no_transfer)).unwrap();
        assert!(tight.stats.preemptions >= 1);
        assert_eq!(tight.timelines[0], roomy.timelines[0]);
        assert!(tight.timelines[1].finish_s > roomy.timelines[1].finish_s);
        // Until token 33, five pages are as good as six: no preemption with 17 output tokens.
        let short = fixed_load(2, 2, 16, 17);
        assert_eq!(simulate(&short, &agg(cfg(8, 4), &cost, &no_transfer)).unwrap().stats.preemptions, 0);
        assert!(simulate(&fixed_load(2, 2, 16, 18), &agg(cfg(8, 4), &cost, &no_transfer)).unwrap().stats.preemptions >= 1);
        // Two pages cannot hold one 35-token request: refused up front.
        let e = simulate(&load, &agg(cfg(8, 2), &cost, &no_transfer)).unwrap_err().to_string();
        assert!(e.contains("KV cache holds 32 tokens"), "{e}");
    }

    #[test]
    fn chunked_prefill_splits_long_prompts_over_the_token_budget() {
        let cost = Fixed(1.0);
        let mut c = cfg(8, 1000);
        c.max_batched_tokens = 100;
        let o = simulate(&fixed_load(1, 1, 250, 2), &agg(c, &cost, &no_transfer)).unwrap();
        // 3 prefill iterations (100, 100, 50 tokens), the first token after the third.
        assert!((o.timelines[0].first_token_s - 0.003).abs() < 1e-9);
        c.chunked_prefill = false;
        assert!(simulate(&fixed_load(1, 1, 250, 2), &agg(c, &cost, &no_transfer)).is_err());
    }

    #[test]
    fn prefix_caching_skips_the_shared_prompt() {
        struct PerToken;
        impl StepCost for PerToken {
            fn step_ms(&self, b: &Batch) -> f64 {
                1.0 + b.tokens() as f64
            }
        }
        let mut c = cfg(1, 1000);
        c.shared_prefix = 64;
        let load = fixed_load(2, 1, 100, 1);
        let off = simulate(&load, &agg(c, &PerToken, &no_transfer)).unwrap();
        c.prefix_caching = true;
        let on = simulate(&load, &agg(c, &PerToken, &no_transfer)).unwrap();
        let ttft = |o: &Outcome| o.timelines[1].first_token_s - o.timelines[1].arrival_s;
        assert!((ttft(&off) - 0.101).abs() < 1e-9, "{}", ttft(&off));
        // The second request computes only 100 − 64 = 36 tokens.
        assert!((ttft(&on) - 0.037).abs() < 1e-9, "{}", ttft(&on));
    }

    #[test]
    fn disaggregated_requests_cross_the_link_between_pools() {
        let cost = Fixed(10.0);
        let transfer = |tokens: u64| tokens as f64 * 0.1;
        let d = Deployment { workers: vec![(Role::Prefill, cfg(8, 100), &cost as &dyn StepCost), (Role::Decode, cfg(8, 100), &cost)], transfer_ms: &transfer, frontend_ms: 0.0, server_ms: &no_server };
        let o = simulate(&fixed_load(1, 1, 100, 3), &d).unwrap();
        let t = o.timelines[0];
        // Prefill 10 ms, transfer of 100 tokens 10 ms: first token at 20 ms; two decode steps.
        assert!((t.first_token_s - 0.02).abs() < 1e-9 && (t.finish_s - 0.04).abs() < 1e-9, "{t:?}");
        let bad = Deployment { workers: vec![(Role::Prefill, cfg(8, 100), &cost as &dyn StepCost)], transfer_ms: &transfer, frontend_ms: 0.0, server_ms: &no_server };
        assert!(simulate(&fixed_load(1, 1, 100, 3), &bad).is_err());
    }

    #[test]
    fn decode_iterations_run_at_once_give_the_same_answer_as_one_by_one() {
        // A cost that grows with the cache, so every skipped iteration's time matters; pages
        // short enough to preempt (with 100 pages and one-page prompts, a decoding group short
        // of pages preempts the prompts admitted after it, then members of its own); drawn
        // lengths; users, a rate and disaggregated pools; both admission policies.
        struct Growing;
        impl StepCost for Growing {
            fn step_ms(&self, b: &Batch) -> f64 {
                1.0 + 0.01 * b.tokens() as f64 + 1e-4 * b.decode_context as f64 + 0.002 * b.prefill.iter().map(|c| c.past).sum::<u64>() as f64
            }
        }
        let transfer = |tokens: u64| 0.5 + tokens as f64 * 0.001;
        let server = |tokens: u64| 0.3 + tokens as f64 * 1e-4;
        let lengths = |mean: f64| Lengths::LogNormal { mean, cv: 0.8 };
        let loads = [
            Load::synthetic(60, Arrival::Concurrency { clients: 12 }, lengths(200.0), lengths(120.0), 7).unwrap(),
            Load::synthetic(80, Arrival::Rate { per_s: 40.0 }, lengths(300.0), lengths(200.0), 3).unwrap(),
            Load::synthetic(40, Arrival::Concurrency { clients: 40 }, Lengths::Fixed { tokens: 100 }, Lengths::Fixed { tokens: 300 }, 0).unwrap(),
            Load::synthetic(80, Arrival::Concurrency { clients: 40 }, Lengths::Fixed { tokens: 16 }, lengths(200.0), 5).unwrap(),
        ];
        let (mut ran_some, mut preempted_some) = (false, false);
        for load in &loads {
            for prefill_first in [false, true] {
                for blocks in [100, 200, 4000] {
                    let mut c = cfg(16, blocks);
                    c.max_batched_tokens = 512;
                    c.prefill_first = prefill_first;
                    let agg = Deployment { workers: vec![(Role::Mixed, c, &Growing as &dyn StepCost)], transfer_ms: &transfer, frontend_ms: 2.0, server_ms: &server };
                    let disagg = Deployment { workers: vec![(Role::Prefill, cfg(4, 4000), &Growing as &dyn StepCost), (Role::Decode, c, &Growing), (Role::Decode, c, &Growing)], transfer_ms: &transfer, frontend_ms: 2.0, server_ms: &server };
                    for d in [&agg, &disagg] {
                        let slow = simulate_with(load, d, false, false).map_err(|e| e.to_string());
                        for (skip, grouped) in [(true, false), (false, true), (true, true)] {
                            let fast = simulate_with(load, d, skip, grouped).map_err(|e| e.to_string());
                            assert_eq!(fast, slow, "skip {skip}, grouped {grouped}");
                        }
                        ran_some |= slow.as_ref().is_ok_and(|o| o.stats.iterations > 0);
                        preempted_some |= slow.is_ok_and(|o| o.stats.preemptions > 0);
                    }
                }
            }
        }
        assert!(ran_some && preempted_some);
    }

    #[test]
    fn open_loop_arrivals_wait_for_their_time() {
        let cost = Fixed(1.0);
        let load = Load { arrival: Arrival::Trace, requests: vec![Request { arrival_s: 0.5, input_len: 4, output_len: 2 }] };
        let o = simulate(&load, &agg(cfg(8, 100), &cost, &no_transfer)).unwrap();
        assert!((o.timelines[0].first_token_s - 0.501).abs() < 1e-9);
    }
}
