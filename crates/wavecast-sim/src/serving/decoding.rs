//! The decoding sequences of a worker held as one group: in an iteration that gives every one
//! of them its next token, each cache grows by one, so the group needs only its size, the sum
//! of its cache lengths and how many of them cross a KV page boundary — not a walk over every
//! sequence. A sequence's own counters are stored as of the tick it joined and read back by
//! adding the ticks since, so an iteration costs the same with 4 or 4,000 sequences decoding;
//! only the ones that finish (kept in order of when they will) are touched.

use super::engine::{owned_blocks_of, Seq};
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
        s.blocks = owned_blocks_of(s.computed, self.block, s.prefix_blocks);
        s
    }

    fn remove(&mut self, adm: u64) -> Option<Seq> {
        let s = self.seqs.remove(&adm)?;
        Some(self.uncounted(s))
    }

    /// A member just taken out of `seqs`, taken out of the group's sums too, as of now.
    fn uncounted(&mut self, s: Seq) -> Seq {
        let phase = self.phase(&s);
        self.by_phase[phase] -= 1;
        self.offset_sum -= s.computed as i64 - s.since as i64;
        self.current(s)
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
        self.drop_stale_ends();
    }

    /// Members preempted out of the group leave their ends in the heap; the one on top must be
    /// a member's, for [`DecodeGroup::fewest_to_go`].
    fn drop_stale_ends(&mut self) {
        while self.finishing.peek().is_some_and(|Reverse((_, adm))| !self.seqs.contains_key(adm)) {
            self.finishing.pop();
        }
    }

    /// What scheduling the members' next tokens one by one in admission order, with `free` pages
    /// and `after` the sequences admitted after every member (in admission order, holding their
    /// pages), would preempt: each member in turn takes the page its token is due (when its
    /// cache fills its last page exactly); while none is free the most recently admitted
    /// sequence gives its pages back — those of `after` first, the one whose turn it is too when
    /// it is the last. Returns how many of `after` go (from its end), and takes out the members
    /// that go, last admitted first, as of now and their pages still counted as theirs.
    pub(super) fn preempt_for_pages(&mut self, mut free: u64, after: &[Seq]) -> (usize, Vec<Seq>) {
        if self.pages_due() <= free {
            return (0, Vec::new());
        }
        let block = self.block;
        let members: Vec<(bool, u64)> = self
            .seqs
            .values()
            .map(|s| {
                let cache = s.computed + (self.ticks - s.since);
                (cache.is_multiple_of(block), owned_blocks_of(cache, block, s.prefix_blocks))
            })
            .collect();
        let (mut turn, mut kept, mut others) = (0, members.len(), after.len());
        while turn < kept {
            let due = u64::from(members[turn].0);
            while free < due && kept + others > turn + 1 {
                if others > 0 {
                    others -= 1;
                    free += after[others].blocks;
                } else {
                    kept -= 1;
                    free += members[kept].1;
                }
            }
            if free < due {
                kept -= 1;
                break;
            }
            free -= due;
            turn += 1;
        }
        let mut out = Vec::with_capacity(members.len() - kept);
        while self.seqs.len() > kept {
            let Some((_, s)) = self.seqs.pop_last() else { break };
            out.push(self.uncounted(s));
        }
        self.drop_stale_ends();
        (after.len() - others, out)
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

    /// What the engine preempts scheduling the members one by one in admission order with
    /// `free` pages, the sequences admitted after them holding `after` pages: how many of those
    /// (from the end) and which members (last admitted first). A member takes the page its
    /// token is due; while none is free the last one gives its pages back, itself when it is
    /// the last.
    fn preempted_one_by_one(members: Vec<Seq>, after: &[u64], mut free: u64, block: u64) -> (usize, Vec<u64>) {
        let due = |s: &Seq| (s.computed + 1).div_ceil(block) - s.prefix_blocks - s.blocks;
        let mut running: Vec<(Option<u64>, u64, u64)> = members.iter().map(|s| (Some(s.adm), due(s), s.blocks)).chain(after.iter().map(|&b| (None, 0, b))).collect();
        let (mut others, mut out) = (0, Vec::new());
        let mut give_back = |running: &mut Vec<(Option<u64>, u64, u64)>| {
            let (adm, _, pages) = running.pop().unwrap();
            match adm {
                Some(adm) => out.push(adm),
                None => others += 1,
            }
            pages
        };
        let mut i = 0;
        while i < running.len() && running[i].0.is_some() {
            let due = running[i].1;
            while free < due && running.len() > i + 1 {
                free += give_back(&mut running);
            }
            if free < due {
                give_back(&mut running);
                break;
            }
            free -= due;
            i += 1;
        }
        (others, out)
    }

    /// With pages of 4 tokens many members are due one at once, so one preemption's pages
    /// cover only some of them: from no page free to enough for all, in groups of one (which
    /// preempts itself) to thirty, alone or with sequences admitted after them (which go first).
    #[test]
    fn preempting_in_the_group_takes_out_whom_one_by_one_would() {
        let block = 4;
        let members = |n: u64, ticks: u64| {
            let mut g = DecodeGroup::new(block);
            g.advance(ticks);
            let seqs: Vec<Seq> = (0..n).map(|a| Seq { blocks: 1 + a % 3, ..decoding(a, 4 + a % 3 * 4, 1, 50) }).collect();
            g.join_all(seqs);
            g.advance(ticks % 5);
            g
        };
        let mut shapes = std::collections::BTreeSet::new();
        let cases = [1, 2, 30].into_iter().flat_map(|n| [0, 1, 4, 9].map(|t| (n, t)));
        let later: Vec<Seq> = [2, 1, 3].iter().zip(100..).map(|(&pages, adm)| Seq { blocks: pages, ..decoding(adm, 1, 0, 50) }).collect();
        for ((n, ticks), after) in cases.flat_map(|c| [(c, &[][..]), (c, &later[..])]) {
            for free in 0..40 {
                let mut g = members(n, ticks);
                let pages: Vec<u64> = after.iter().map(|s| s.blocks).collect();
                let expected = preempted_one_by_one(members(n, ticks).take_all(), &pages, free, block);
                let (others, out) = g.preempt_for_pages(free, after);
                let taken: Vec<u64> = out.iter().map(|s| s.adm).collect();
                assert_eq!((others, taken.clone()), expected, "{n} members, {pages:?} pages after, ticks {ticks}, {free} pages free");
                assert_eq!(g.len() + taken.len(), n as usize);
                // What stays is counted as it would be had it joined without the others.
                let stayed = members(n, ticks).take_all().into_iter().filter(|s| !taken.contains(&s.adm)).collect::<Vec<_>>();
                let mut fresh = DecodeGroup::new(block);
                fresh.advance(g.ticks);
                fresh.join_all(stayed.clone());
                assert_eq!([g.context(), g.pages_due(), g.pages_ahead(7)], [fresh.context(), fresh.pages_due(), fresh.pages_ahead(7)]);
                assert_eq!(g.fewest_to_go(), fresh.fewest_to_go());
                let members_out = match taken.len() as u64 { 0 => 0, k if k == n => 3, 1 => 1, _ => 2 };
                shapes.insert((members_out, others));
            }
        }
        // Members out: none, one, several, all; of the three after: some without a member,
        // all before one.
        let seen = |members_out: u64| shapes.iter().any(|s| s.0 == members_out);
        assert!((0..4).all(seen), "{shapes:?}");
        assert!(shapes.contains(&(0, 1)) && shapes.contains(&(1, 3)), "{shapes:?}");
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
