//! Communication time between the GPUs of one node: an α–β model of NCCL-style ring
//! collectives over the catalog's NVLink (or PCIe) bandwidth.
//!
//! A ring all-reduce of S bytes over N GPUs runs 2(N−1) steps (reduce-scatter, then
//! all-gather), each sending S/N bytes to the next GPU, so
//!
//!   t = launch + 2(N−1)·α + 2(N−1)/N · S / (η · B)
//!
//! with B the one-direction link bandwidth per GPU, η the fraction of it a collective achieves,
//! α the per-step latency and `launch` the fixed cost of starting the collective kernel.
//! All-gather and reduce-scatter are half of that (N−1 steps), as is an all-to-all (each GPU
//! sends (N−1)/N of its payload, one slice to each peer); a send/receive is one step.
//!
//! A group that spans nodes runs over the scale-out network, whose per-GPU NIC is the slowest
//! hop of NCCL's rings (nccl-tests' bus bandwidth across nodes sits near the NIC line rate), so
//! the same formula applies with B = η_net × NIC rate and a larger α. Every predictor prices
//! such a group with this model ([`outside_tables`]): the measured collective tables are all
//! taken inside one server.
//!
//! Constants (documented so they can be argued with):
//! - η_NVLink = 0.80: NCCL's maintainers quote ~370 GB/s effective of the H100's 450 GB/s
//!   per-direction NVLink line rate (protocol overhead ~20 %); A100 nodes report ~230 of 300.
//! - η_PCIe = 0.75: a PCIe 4.0 x16 link moves ~24 of its 32 GB/s per direction GPU to GPU.
//! - launch = 5 µs and α = 0.5 µs per ring step on NVLink: a small all-reduce then costs 6 µs
//!   on 2 GPUs (what NCCL users report for 2 H100s with CUDA graphs) and 12 µs on 8; serving
//!   engines' one-shot kernels for small messages sit in the same range. α = 3 µs on PCIe,
//!   where each step crosses a PCIe switch or host bridge.
//! - η_net = 0.80 and α = 2 µs per step across nodes: NDR InfiniBand (400 Gb/s = 50 GB/s)
//!   reaches ~40 GB/s of all-reduce bus bandwidth in published nccl-tests runs, and a switch
//!   hop adds about a microsecond each way. A GPU without a NIC figure in the catalog gets a
//!   100 Gb/s NIC, a commodity Ethernet port.
//! - PCIe-card NVLink bridges join pairs of GPUs only: groups larger than 2 of such cards
//!   communicate over PCIe. SXM/OAM parts sit on a switch (NVSwitch, Infinity Fabric) that
//!   gives every GPU its full link bandwidth in any group.

use wavecast_gpu::Gpu;
use wavecast_ir::ops::{Comm, CommKind};

/// GPUs in one server where nothing says otherwise: the eight of a DGX or HGX board. A group
/// larger than this (and than the GPU's NVLink domain) spans servers.
pub const SERVER_GPUS: u64 = 8;

/// Which wire a collective runs over, with its model parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    pub kind: LinkKind,
    /// Effective one-direction bandwidth per GPU, bytes/s (η × line rate).
    pub bandwidth: f64,
    /// Latency per ring step, seconds.
    pub alpha: f64,
    /// Nodes a group on this link spans (1 inside a node or NVLink domain): an all-reduce over
    /// several nodes may run as NCCL's double binary tree, whose latency grows with log2 of
    /// the group instead of its size.
    pub nodes: u32,
    /// Effective one-direction bandwidth per GPU inside a node, bytes/s: `bandwidth` itself
    /// for a link that stays inside one.
    pub inside_bandwidth: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    NvLink,
    Pcie,
    /// The scale-out network between nodes (InfiniBand or RoCE), one NIC per GPU.
    Network,
}

impl LinkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkKind::NvLink => "nvlink",
            LinkKind::Pcie => "pcie",
            LinkKind::Network => "network",
        }
    }
}

/// The α–β collective model; [`CommModel::default`] holds the documented constants.
#[derive(Debug, Clone, PartialEq)]
pub struct CommModel {
    pub launch_s: f64,
    pub nvlink_alpha_s: f64,
    pub nvlink_efficiency: f64,
    pub pcie_alpha_s: f64,
    pub pcie_efficiency: f64,
    pub network_alpha_s: f64,
    pub network_efficiency: f64,
}

/// NIC line rate assumed for a GPU whose catalog entry gives none, Gbit/s.
pub const DEFAULT_NIC_GBPS: f64 = 100.0;

impl Default for CommModel {
    fn default() -> CommModel {
        CommModel { launch_s: 5e-6, nvlink_alpha_s: 0.5e-6, nvlink_efficiency: 0.80, pcie_alpha_s: 3e-6, pcie_efficiency: 0.75, network_alpha_s: 2e-6, network_efficiency: 0.80 }
    }
}

/// PCIe cards whose NVLink is a bridge between two boards rather than a switch.
fn bridged_pairs_only(gpu: &Gpu) -> bool {
    gpu.form_factor.starts_with("pcie")
}

impl CommModel {
    /// The link `group` GPUs of this kind talk over.
    pub fn link(&self, gpu: &Gpu, group: u32) -> Link {
        let nvlink = gpu.interconnect.nvlink_gbs > 0.0 && !(bridged_pairs_only(gpu) && group > 2);
        if nvlink {
            // The catalog stores total bidirectional bandwidth: half of it flows each way.
            let b = gpu.interconnect.nvlink_gbs * 1e9 / 2.0;
            let bandwidth = self.nvlink_efficiency * b;
            Link { kind: LinkKind::NvLink, bandwidth, alpha: self.nvlink_alpha_s, nodes: 1, inside_bandwidth: bandwidth }
        } else {
            // Missing PCIe figures fall back to a PCIe 4.0 x16 slot (64 GB/s both ways).
            let total = if gpu.interconnect.pcie_gbs > 0.0 { gpu.interconnect.pcie_gbs } else { 64.0 };
            let b = total * 1e9 / 2.0;
            let bandwidth = self.pcie_efficiency * b;
            Link { kind: LinkKind::Pcie, bandwidth, alpha: self.pcie_alpha_s, nodes: 1, inside_bandwidth: bandwidth }
        }
    }

    /// The link of a group that spans nodes: each GPU's NIC at `nic_gbps` (the catalog's figure
    /// when `None`), never faster than the GPUs' own links inside a node.
    pub fn network_link(&self, gpu: &Gpu, group: u32, nic_gbps: Option<f64>) -> Link {
        let rate = nic_gbps.unwrap_or(if gpu.interconnect.nic_gbps > 0.0 { gpu.interconnect.nic_gbps } else { DEFAULT_NIC_GBPS });
        let inside = self.link(gpu, group);
        let bandwidth = (self.network_efficiency * rate * 1e9 / 8.0).min(inside.bandwidth);
        Link { kind: LinkKind::Network, bandwidth, alpha: self.network_alpha_s.max(inside.alpha), nodes: group, inside_bandwidth: inside.bandwidth }
    }

    /// The link of a group of `size` GPUs whose members are `stride` ranks apart, on servers of
    /// `gpus_per_node` GPUs (the GPU catalog's NVLink domain when it reaches further, as in an
    /// NVL72 rack): inside the domain its NVLink (or PCIe); across domains hierarchical, as
    /// NCCL runs it — each domain's members reduce among themselves over NVLink and send their
    /// shares across the network at once, each through its own NIC, so the group's bus
    /// bandwidth is that of all its NICs in a domain together, at most the NVLink's.
    pub fn group_link(&self, gpu: &Gpu, stride: u64, size: u64, gpus_per_node: u64, nic_gbps: Option<f64>) -> Link {
        let domain = gpus_per_node.max(gpu.interconnect.nvlink_domain).max(1);
        let stride = stride.max(1);
        if size <= 1 || stride.saturating_mul(size) <= domain {
            return self.link(gpu, size.min(u32::MAX as u64) as u32);
        }
        // Members of the group inside one domain, each with its own NIC.
        let local = (domain / stride).clamp(1, size);
        let nodes = size.div_ceil(local).min(u32::MAX as u64) as u32;
        let one_nic = self.network_link(gpu, size.min(u32::MAX as u64) as u32, nic_gbps);
        let inside = self.link(gpu, local as u32);
        let bandwidth = (one_nic.bandwidth * local as f64).min(inside.bandwidth.max(one_nic.bandwidth));
        Link { kind: LinkKind::Network, bandwidth, alpha: one_nic.alpha, nodes, inside_bandwidth: inside.bandwidth }
    }

    /// Seconds `comm` takes when its group spans servers of [`SERVER_GPUS`] (beyond the GPU's
    /// NVLink domain), its members consecutive ranks: over the network, hierarchically, as
    /// [`CommModel::group_link`] prices it. `None` for a group inside one server or domain.
    /// The measured collective tables are all taken inside one server, so they cannot price it.
    pub fn across_servers_seconds(&self, comm: &Comm, gpu: &Gpu) -> Option<f64> {
        let link = self.server_link(gpu, u64::from(comm.group));
        (link.kind == LinkKind::Network).then(|| self.seconds_over(comm, &link))
    }

    /// The link `group` consecutive GPUs talk over on servers of [`SERVER_GPUS`]: the
    /// server's own (or the GPU's wider NVLink domain's), else the network.
    pub fn server_link(&self, gpu: &Gpu, group: u64) -> Link {
        self.group_link(gpu, 1, group, SERVER_GPUS, None)
    }

    /// Seconds `comm` takes on GPUs in servers of [`SERVER_GPUS`]: over the network when its
    /// group spans servers, else over the server's own link.
    pub fn seconds_on_servers(&self, comm: &Comm, gpu: &Gpu) -> f64 {
        self.across_servers_seconds(comm, gpu).unwrap_or_else(|| self.seconds(comm, gpu))
    }

    /// Seconds one collective takes on each GPU of the group (0 for a group of one), inside a node.
    pub fn seconds(&self, comm: &Comm, gpu: &Gpu) -> f64 {
        self.seconds_over(comm, &self.link(gpu, comm.group))
    }

    /// Seconds one collective takes over `link`.
    pub fn seconds_over(&self, comm: &Comm, link: &Link) -> f64 {
        let n = comm.group as f64;
        if comm.group <= 1 || comm.bytes <= 0.0 {
            return 0.0;
        }
        // (ring steps, fraction of the payload each GPU sends over the whole collective)
        let (steps, volume) = match comm.kind {
            // Across nodes NCCL picks the double binary tree when its latency (up and down a
            // tree of depth log2 n) beats the ring's; both move the same bytes per GPU.
            CommKind::AllReduce if link.nodes > 1 => ((2.0 * (n - 1.0)).min(2.0 * n.log2().ceil()), 2.0 * (n - 1.0) / n),
            CommKind::AllReduce => (2.0 * (n - 1.0), 2.0 * (n - 1.0) / n),
            CommKind::AllGather | CommKind::ReduceScatter | CommKind::AllToAll => (n - 1.0, (n - 1.0) / n),
            CommKind::SendRecv => (1.0, 1.0),
        };
        if comm.kind == CommKind::AllToAll && link.kind == LinkKind::Network && link.nodes > 1 {
            return self.launch_s + f64::from(link.nodes) * link.alpha + all_to_all_wire_seconds(comm, link);
        }
        self.launch_s + steps * link.alpha + volume * comm.bytes / link.bandwidth
    }
}

/// Seconds on the wire of an all-to-all whose group spans `link.nodes` nodes.
///
/// It aggregates nothing: each member's share for the other nodes leaves through its own NIC,
/// so the group's bus bandwidth (all the node's NICs together) is shared by the node's
/// members. Its sends to every peer are posted at once, not passed along a ring, and the
/// libraries that run it (NCCL with PXN, DeepEP) send one message per remote node and forward
/// it inside the node over NVLink: the latency grows with the nodes, not the peers.
///
/// An MoE dispatch (or combine) holds `fanout` copies of each token, one per chosen expert.
/// The dispatchers built for it (DeepEP, Megatron-Core's HybridEP) send a token once to each
/// remote node that hosts any of its experts and copy it to those experts over the node's own
/// links, so the network carries each token once per remote node it reaches: with experts
/// spread evenly and chosen uniformly, `(nodes − 1) · (1 − (1 − q / (nodes − 1))^fanout)`
/// times, where `q` is the share of the group outside the sender's node. The copying inside
/// the receiving node overlaps the network transfer; the slower of the two counts.
fn all_to_all_wire_seconds(comm: &Comm, link: &Link) -> f64 {
    let n = f64::from(comm.group);
    let nodes = f64::from(link.nodes);
    let local = (n / nodes).ceil().max(1.0);
    let off_node = (n - local) / n;
    let fanout = f64::from(comm.fanout.max(1));
    let remote_nodes_per_token = (nodes - 1.0) * (1.0 - (1.0 - off_node / (nodes - 1.0)).powf(fanout));
    let network = comm.bytes / fanout * remote_nodes_per_token * local / link.bandwidth;
    if comm.fanout <= 1 {
        return network;
    }
    let forwarded = comm.bytes * (local - 1.0) / local / link.inside_bandwidth;
    network.max(forwarded)
}

/// [`outside_tables`]' seconds, never below the collective's [`server_share`] as `inside`
/// (the asking predictor) prices it.
pub fn outside_tables_at_least(op: &wavecast_ir::Op, gpu: &Gpu, inside: impl Fn(&wavecast_ir::Op) -> Option<f64>) -> Option<f64> {
    let across = outside_tables(op, gpu)?;
    Some(across.max(server_share(op).and_then(|share| inside(&share)).unwrap_or(0.0)))
}

/// The same collective over one server's GPUs, for a collective whose group spans servers:
/// its members inside each server still pass every byte over the server's own links (the
/// hierarchical algorithms reduce and gather there first), so it is never faster than this
/// share. Matters where those links are the slow ones: eight PCIe cards behind host bridges
/// (L40S, L4, RTX 4090) move less per GPU than their NICs do.
pub fn server_share(op: &wavecast_ir::Op) -> Option<wavecast_ir::Op> {
    match op {
        wavecast_ir::Op::Comm(c) if u64::from(c.group) > SERVER_GPUS => Some(wavecast_ir::Op::Comm(Comm { group: SERVER_GPUS as u32, ..c.clone() })),
        _ => None,
    }
}

/// Seconds of `op` when it is a collective no measured table prices: nothing for a group of
/// one GPU, the network model for a group that spans servers (see
/// [`CommModel::across_servers_seconds`]); `None` for any other collective and any other op.
/// Every predictor that prices collectives from tables measured inside a server asks this
/// first.
pub fn outside_tables(op: &wavecast_ir::Op, gpu: &Gpu) -> Option<f64> {
    match op {
        wavecast_ir::Op::Comm(c) if c.group <= 1 => Some(0.0),
        wavecast_ir::Op::Comm(c) => CommModel::default().across_servers_seconds(c, gpu),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wavecast_gpu::Catalog;
    use wavecast_ir::DType;

    fn ar(bytes: f64, group: u32) -> Comm {
        Comm::new(CommKind::AllReduce, bytes, group, DType::Bf16, false)
    }

    /// ep16 over two DGX H100 nodes: each GPU sends 8/16 of its bytes off the node through its
    /// own 400 Gb/s NIC (η 0.8: 40 GB/s), not through the node's eight NICs at once.
    #[test]
    fn all_to_all_across_nodes_crosses_one_nic_per_gpu() {
        let cat = Catalog::builtin();
        let h100 = cat.get("h100-sxm").unwrap();
        let m = CommModel::default();
        let link = m.group_link(h100, 1, 16, 8, None);
        assert_eq!(link.nodes, 2);
        let bytes = 256.0 * 1024.0 * 1024.0;
        let a2a = Comm::new(CommKind::AllToAll, bytes, 16, DType::Bf16, false);
        let t = m.seconds_over(&a2a, &link);
        let nic = link.bandwidth / 8.0;
        // Latency: one network step per node the sends reach, not one per peer.
        let wire = t - m.launch_s - 2.0 * link.alpha;
        assert!((wire - 0.5 * bytes / nic).abs() < 1e-12, "{wire} vs {}", 0.5 * bytes / nic);
        // A reduce-scatter of the same bytes uses all of the node's NICs.
        let rs = Comm { kind: CommKind::ReduceScatter, ..a2a };
        assert!(m.seconds_over(&rs, &link) < t / 4.0);
    }

    /// A training MoE dispatch of top-8 over ep16 on two DGX H100 nodes: a token is sent once
    /// to the other node (it reaches it with probability 1 − (1/2)^8), not once per expert
    /// there (4 copies on average), and copied to its experts over NVLink, which overlaps.
    #[test]
    fn expert_dispatch_across_nodes_sends_a_token_once_per_remote_node() {
        let cat = Catalog::builtin();
        let h100 = cat.get("h100-sxm").unwrap();
        let m = CommModel::default();
        let link = m.group_link(h100, 1, 16, 8, None);
        let bytes = 4096.0 * 8.0 * 2048.0 * 2.0;
        let per_expert = Comm::new(CommKind::AllToAll, bytes, 16, DType::Bf16, false);
        let dispatch = Comm { fanout: 8, ..per_expert.clone() };
        let fixed = m.launch_s + 2.0 * link.alpha;
        let nic = 0.8 * 400e9 / 8.0;
        let network = bytes / 8.0 * (1.0 - 0.5f64.powi(8)) / nic;
        let nvlink = bytes * 7.0 / 8.0 / (0.8 * 450e9);
        assert!(network > nvlink, "here the network is the slower half");
        let t = m.seconds_over(&dispatch, &link);
        assert!((t - fixed - network).abs() < 1e-12, "{t} vs {}", fixed + network);
        let copies = m.seconds_over(&per_expert, &link) - fixed;
        assert!((copies / (t - fixed) - 4.0 / (1.0 - 0.5f64.powi(8))).abs() < 1e-9);
        // Inside one node nothing changes: the dispatcher's savings are the network's.
        let inside = m.link(h100, 8);
        let (a, b) = (Comm { group: 8, ..dispatch.clone() }, Comm { group: 8, ..per_expert });
        assert_eq!(m.seconds_over(&a, &inside), m.seconds_over(&b, &inside));
        // Over a slow link inside the node (1 GB/s) the copying there is what counts.
        let slow = Link { inside_bandwidth: 1e9, ..link };
        let forwarded = bytes * 7.0 / 8.0 / slow.inside_bandwidth;
        assert!((m.seconds_over(&dispatch, &slow) - fixed - forwarded).abs() < 1e-12);
    }

    /// Serving prices collectives from tables measured inside one server. A 16-GPU all-to-all
    /// on HGX B200 (eight GPUs a server) spans two, and is priced over the network; inside a
    /// GB200 NVL72 rack the same group stays on NVLink, as does an 8-GPU group anywhere.
    #[test]
    fn groups_past_a_server_are_priced_over_the_network() {
        let cat = Catalog::builtin();
        let (b200, gb200) = (cat.get("b200").unwrap(), cat.get("gb200").unwrap());
        let m = CommModel::default();
        let a2a = Comm::new(CommKind::AllToAll, 4.0e6, 16, DType::Bf16, false);
        let t = m.across_servers_seconds(&a2a, b200).expect("16 B200s span two servers");
        // Each GPU sends the half of its bytes bound for the other server through its own
        // 400 Gb/s NIC at η 0.8 (40 GB/s), after the launch and one network step per server.
        let hand = 5e-6 + 2.0 * 2e-6 + 0.5 * 4.0e6 / 40e9;
        assert!((t - hand).abs() < 1e-12, "{t} vs {hand}");
        assert!(t > 2.0 * m.seconds(&a2a, b200), "the network is slower than NVLink");
        let op = wavecast_ir::Op::Comm(a2a.clone());
        assert_eq!(outside_tables(&op, b200), Some(t));
        assert_eq!(outside_tables(&op, gb200), None);
        assert_eq!(outside_tables(&wavecast_ir::Op::Comm(Comm { group: 1, ..a2a.clone() }), b200), Some(0.0), "a group of one sends nothing");
        let eight = Comm { group: 8, ..a2a.clone() };
        assert_eq!(m.across_servers_seconds(&eight, b200), None);
        assert_eq!((m.seconds_on_servers(&a2a, b200), m.seconds_on_servers(&eight, b200)), (t, m.seconds(&eight, b200)));
    }

    #[test]
    fn large_all_reduce_is_bandwidth_bound_on_nvlink() {
        let cat = Catalog::builtin();
        let h100 = cat.get("h100-sxm").unwrap();
        let m = CommModel::default();
        // 1 GiB over 8 GPUs: 2·7/8 · 2^30 / (0.8 · 450 GB/s) + 5 µs + 14 × 0.5 µs.
        let t = m.seconds(&ar(1073741824.0, 8), h100);
        let expect = 5e-6 + 7e-6 + 1.75 * 1073741824.0 / 360e9;
        assert!((t - expect).abs() < 1e-12, "{t} vs {expect}");
    }

    #[test]
    fn small_all_reduce_is_latency_bound() {
        let cat = Catalog::builtin();
        let m = CommModel::default();
        let t = m.seconds(&ar(8.0, 2), cat.get("h100-sxm").unwrap());
        assert!((t - 6e-6).abs() < 1e-9, "{t}");
        assert_eq!(m.seconds(&ar(1e6, 1), cat.get("h100-sxm").unwrap()), 0.0);
    }

    #[test]
    fn pcie_cards_use_their_bridge_for_pairs_and_pcie_beyond() {
        let cat = Catalog::builtin();
        let m = CommModel::default();
        let a40 = cat.get("a40").unwrap();
        assert_eq!(m.link(a40, 2).kind, LinkKind::NvLink);
        assert_eq!(m.link(a40, 4).kind, LinkKind::Pcie);
        let l40 = cat.get("l40").unwrap();
        let link = m.link(l40, 2);
        assert_eq!(link.kind, LinkKind::Pcie);
        assert!((link.bandwidth - 0.75 * 32e9).abs() < 1.0);
        assert_eq!(m.link(cat.get("h100-sxm").unwrap(), 8).kind, LinkKind::NvLink);
        // Same bytes, slower wire: PCIe costs more.
        let b = 64.0 * 8192.0 * 2.0;
        assert!(m.seconds(&ar(b, 4), a40) > m.seconds(&ar(b, 4), cat.get("a100-sxm-80gb").unwrap()));
    }

    #[test]
    fn groups_across_nodes_run_at_the_nic_rate() {
        let cat = Catalog::builtin();
        let m = CommModel::default();
        let h100 = cat.get("h100-sxm").unwrap();
        let net = m.network_link(h100, 16, None);
        assert_eq!(net.kind, LinkKind::Network);
        // DGX H100: 400 Gb/s per GPU at 80 % → 40 GB/s.
        assert!((net.bandwidth - 40e9).abs() < 1.0, "{}", net.bandwidth);
        let c = ar(1e9, 16);
        assert!(m.seconds_over(&c, &net) > 5.0 * m.seconds_over(&c, &m.link(h100, 16)));
        // A NIC faster than NVLink does not make the group faster than NVLink.
        assert_eq!(m.network_link(h100, 16, Some(1e6)).bandwidth, m.link(h100, 16).bandwidth);
        // No NIC figure: a 100 Gb/s port.
        assert!((m.network_link(cat.get("l4").unwrap(), 2, None).bandwidth - 0.8 * 12.5e9).abs() < 1.0);
    }

    #[test]
    fn hierarchical_bus_bandwidths_match_hand_computed_figures() {
        let cat = Catalog::builtin();
        let m = CommModel::default();
        let h100 = cat.get("h100-sxm").unwrap();
        // Inside a DGX H100: NVLink 900 GB/s both ways → 450 each way × 0.8 = 360 GB/s.
        let inside = m.group_link(h100, 1, 8, 8, None);
        assert_eq!(inside.kind, LinkKind::NvLink);
        assert!((inside.bandwidth - 360e9).abs() < 1.0, "{}", inside.bandwidth);
        // dp 16 over two nodes, 8 members per node: eight 400 Gb/s NICs at once, 8 × 50 GB/s ×
        // 0.8 = 320 GB/s, under the NVLink's 360.
        let two_nodes = m.group_link(h100, 1, 16, 8, None);
        assert_eq!((two_nodes.kind, two_nodes.nodes), (LinkKind::Network, 2));
        assert!((two_nodes.bandwidth - 320e9).abs() < 1.0, "{}", two_nodes.bandwidth);
        // tp 8 inside each node, dp 16 across: one member per node, one NIC: 40 GB/s.
        let one_nic = m.group_link(h100, 8, 16, 8, None);
        assert!((one_nic.bandwidth - 40e9).abs() < 1.0, "{}", one_nic.bandwidth);
        // tp 4, dp 8 across four nodes: two members per node, two NICs: 80 GB/s.
        assert!((m.group_link(h100, 4, 8, 8, None).bandwidth - 80e9).abs() < 1.0);
        // Faster NICs never beat the NVLink inside: 8 × 200 GB/s × 0.8 caps at 360 GB/s.
        assert!((m.group_link(h100, 1, 16, 8, Some(1600.0)).bandwidth - 360e9).abs() < 1.0);
        // A GB200 NVL72 rack: 64 GPUs in trays of 4 stay on NVLink (1800 GB/s → 720 GB/s).
        let gb200 = cat.get("gb200").unwrap();
        let rack = m.group_link(gb200, 1, 64, 4, None);
        assert_eq!(rack.kind, LinkKind::NvLink);
        assert!((rack.bandwidth - 720e9).abs() < 1.0, "{}", rack.bandwidth);
        // 144 GPUs leave the rack: 72 members per domain, NICs capped by the NVLink.
        assert_eq!(m.group_link(gb200, 1, 144, 4, None).kind, LinkKind::Network);
    }

    #[test]
    fn all_reduce_across_nodes_takes_the_tree_latency_when_it_is_shorter() {
        let cat = Catalog::builtin();
        let m = CommModel::default();
        let h100 = cat.get("h100-sxm").unwrap();
        let link = m.group_link(h100, 8, 1024, 8, None);
        // 8 bytes over 1024 GPUs: a ring takes 2·1023 steps, the tree 2·log2(1024) = 20.
        let t = m.seconds_over(&ar(8.0, 1024), &link);
        let expect = m.launch_s + 20.0 * link.alpha + 2.0 * 1023.0 / 1024.0 * 8.0 / link.bandwidth;
        assert!((t - expect).abs() < 1e-12, "{t} vs {expect}");
        // Inside a node the ring's 2·7 steps stand.
        let nv = m.link(h100, 8);
        let inside = m.seconds_over(&ar(8.0, 8), &nv);
        assert!((inside - (m.launch_s + 14.0 * nv.alpha + 1.75 * 8.0 / nv.bandwidth)).abs() < 1e-12);
    }
}
