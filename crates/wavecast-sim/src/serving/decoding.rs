//! The decoding sequences of a worker held as one group: in an iteration that gives every one
//! of them its next token, each cache grows by one, so the group needs only its size, the sum
//! of its cache lengths and how many of them cross a KV page boundary — not a walk over every
//! sequence. A sequence's own counters are stored as of the tick it joined and read back by
//! adding the ticks since, so an iteration costs the same with 4 or 4,000 sequences decoding;
//! only the ones that finish (kept in order of when they will) are touched.

use super::engine::Seq;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

pub(super) struct DecodeGroup {
    block: u64,
    /// Iterations that gave every member its token.
    ticks: u64,
    /// Members by admission number; `computed` and `generated` as of tick `since`.
    seqs: BTreeMap<u64, Seq>,
    /// Σ (computed − since) over members: the cache lengths are this plus size × ticks.
    offset_sum: i64,
    /// Members by (computed − since) mod the page size: which phase of a page they are in.
    by_phase: Vec<u64>,
    /// (tick at which a member has generated its last token, its admission number).
    finishing: BinaryHeap<Reverse<(u64, u64)>>,
}

impl DecodeGroup {
    pub(super) fn new(block: u64) -> DecodeGroup {
        DecodeGroup { block, ticks: 0, seqs: BTreeMap::new(), offset_sum: 0, by_phase: vec![0; block as usize], finishing: BinaryHeap::new() }
    }

    pub(super) fn len(&self) -> usize {
        self.seqs.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.seqs.is_empty()
    }

    /// The most recently admitted member's admission number.
    pub(super) fn last_admitted(&self) -> Option<u64> {
        self.seqs.keys().next_back().copied()
    }

    fn phase(&self, s: &Seq) -> usize {
        ((s.computed % self.block + self.block - s.since % self.block) % self.block) as usize
    }

    /// Adds a decoding sequence (its cache holding exactly the pages its tokens fill, nothing
    /// scheduled).
    pub(super) fn join(&mut self, s: Seq) {
        let s = self.counted(s);
        self.seqs.insert(s.adm, s);
    }

    /// Adds decoding sequences in admission order, as [`DecodeGroup::join`] one by one would.
    /// Into an empty group (a worker regrouping after a preemption took it apart) they are
    /// filed at once, not one search each.
    pub(super) fn join_all(&mut self, seqs: Vec<Seq>) {
        if self.seqs.is_empty() {
            self.seqs = seqs.into_iter().map(|s| self.counted(s)).map(|s| (s.adm, s)).collect();
        } else {
            seqs.into_iter().for_each(|s| self.join(s));
        }
    }

    /// `s` as of this tick, counted in the group's sums, its end awaited.
    fn counted(&mut self, mut s: Seq) -> Seq {
        debug_assert!(s.computed >= s.prompt && s.generated < s.output && s.scheduled == 0);
        s.since = self.ticks;
        let phase = self.phase(&s);
        self.by_phase[phase] += 1;
        self.offset_sum += s.computed as i64 - s.since as i64;
        self.finishing.push(Reverse((s.since + s.output - s.generated, s.adm)));
        s
    }

    /// Σ (cache length + the token this iteration adds) over members: the batch's decode context.
    pub(super) fn context(&self) -> u64 {
        (self.offset_sum + self.seqs.len() as i64 * (self.ticks as i64 + 1)) as u64
    }

    /// Members whose next token starts a new page (their cache fills its last page exactly).
    pub(super) fn pages_due(&self) -> u64 {
        self.by_phase[((self.block - self.ticks % self.block) % self.block) as usize]
    }

    /// Pages the members need, beyond those of the iteration being scheduled, for `j` more
    /// tokens each: a member whose cache holds c tokens now crosses ⌊(c mod page + j) / page⌋
    /// page boundaries.
    pub(super) fn pages_ahead(&self, j: u64) -> u64 {
        let b = self.block;
        self.by_phase.iter().enumerate().filter(|(_, &n)| n > 0).map(|(p, &n)| n * (((p as u64 + self.ticks) % b + j) / b)).sum()
    }

    /// Tokens the member nearest its end still has to generate (before this iteration).
    pub(super) fn fewest_to_go(&self) -> u64 {
        self.finishing.peek().map_or(0, |Reverse((at, _))| at - self.ticks)
    }

    /// Every member gets `n` tokens.
    pub(super) fn advance(&mut self, n: u64) {
        self.ticks += n;
    }

    /// `s` as of now: its counters advanced by the ticks since it joined, the pages its cache
    /// fills (the group takes each page as a token needs it).
    fn current(&self, mut s: Seq) -> Seq {
        let since = self.ticks - s.since;
        s.computed += since;
        s.generated += since;
        s.since = self.ticks;
        s.blocks = s.computed.div_ceil(self.block).saturating_sub(s.prefix_blocks);
        s
    }

    fn remove(&mut self, adm: u64) -> Option<Seq> {
        let s = self.seqs.remove(&adm)?;
        let phase = self.phase(&s);
        self.by_phase[phase] -= 1;
        self.offset_sum -= s.computed as i64 - s.since as i64;
        Some(self.current(s))
    }

    /// Takes out the members that have generated their last token, in admission order.
    pub(super) fn take_finished(&mut self, out: &mut Vec<Seq>) {
        while let Some(&Reverse((at, adm))) = self.finishing.peek() {
            if at > self.ticks {
                break;
            }
            self.finishing.pop();
            out.extend(self.remove(adm));
        }
        out.sort_by_key(|s| s.adm);
    }

    /// Every member as of now, in admission order; the group is left empty.
    pub(super) fn take_all(&mut self) -> Vec<Seq> {
        let seqs = std::mem::take(&mut self.seqs);
        self.finishing.clear();
        self.offset_sum = 0;
        self.by_phase.iter_mut().for_each(|n| *n = 0);
        seqs.into_values().map(|s| self.current(s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoding(adm: u64, computed: u64, generated: u64, output: u64) -> Seq {
        Seq { id: adm as usize, prompt: computed - generated, computed, generated, output, blocks: computed.div_ceil(16), prefix_blocks: 0, scheduled: 0, adm, since: 0 }
    }

    /// What the group knows of its members.
    #[derive(Debug, PartialEq)]
    struct State {
        /// Size, context, pages due, pages for 37 more tokens, fewest tokens to go.
        sums: [u64; 5],
        /// Every member as of now: admission, cache, generated, pages.
        members: Vec<[u64; 4]>,
    }

    fn state(g: &mut DecodeGroup) -> State {
        let sums = [g.len() as u64, g.context(), g.pages_due(), g.pages_ahead(37), g.fewest_to_go()];
        State { sums, members: g.take_all().into_iter().map(|s| [s.adm, s.computed, s.generated, s.blocks]).collect() }
    }

    /// Sequences filed at once, into an empty group or beside members already there, leave the
    /// group as joining them one by one does, however many ticks the group has run.
    #[test]
    fn joining_all_at_once_is_joining_one_by_one() {
        let batch = |from: u64| (from..from + 40).map(|a| decoding(a, 100 + a * 7 % 53, 1 + a % 5, 20 + a % 9)).collect::<Vec<Seq>>();
        for ticks in [0, 3, 17] {
            let (mut at_once, mut one_by_one) = (DecodeGroup::new(16), DecodeGroup::new(16));
            for g in [&mut at_once, &mut one_by_one] {
                g.advance(ticks);
            }
            at_once.join_all(batch(0));
            batch(0).into_iter().for_each(|s| one_by_one.join(s));
            for g in [&mut at_once, &mut one_by_one] {
                g.advance(2);
            }
            // The second batch joins a group that has members.
            at_once.join_all(batch(100));
            batch(100).into_iter().for_each(|s| one_by_one.join(s));
            let (mut done_a, mut done_b) = (Vec::new(), Vec::new());
            at_once.advance(4);
            one_by_one.advance(4);
            at_once.take_finished(&mut done_a);
            one_by_one.take_finished(&mut done_b);
            let ids = |v: &[Seq]| v.iter().map(|s| (s.adm, s.computed)).collect::<Vec<_>>();
            assert_eq!(ids(&done_a), ids(&done_b), "ticks {ticks}");
            let (a, b) = (state(&mut at_once), state(&mut one_by_one));
            assert_eq!(a, b, "ticks {ticks}");
            assert_eq!(a.members.len() + done_a.len(), 80, "every member is in the group or finished");
        }
    }
}
