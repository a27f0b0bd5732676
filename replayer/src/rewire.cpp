#include "nimble/replayer/rewire.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "nimble/scheduler/chains.hpp"
#include "nimble/scheduler/reduction.hpp"
#include "nimble/scheduler/schedule.hpp"

namespace nimble::replayer::rewire {

namespace {

// The tensor of the operation that contains `word`, preferring a written one when storages
// touch (a word at the end of one and the start of the next lies only in the next).
const Extent* containing(const std::vector<Extent>& operation, std::uint64_t word) {
  const Extent* found = nullptr;
  for (const Extent& e : operation) {
    if (word >= e.addr && word - e.addr < e.size && (!found || (e.written && !found->written))) found = &e;
  }
  return found;
}

// Inferred dependencies (predecessor lists by node index) from the engine under the Memory
// policy: the same conflict rules as a recording, on one stream.
std::vector<std::vector<scheduler::NodeIndex>> infer(const std::vector<Node>& nodes) {
  deps::Engine engine;
  constexpr deps::StreamHandle kStream = 0x100;
  engine.stream_created(kStream, /*CU_STREAM_NON_BLOCKING*/ 0x1, 0, 0);
  engine.set_stream_order_policy(deps::StreamOrderPolicy::Memory);
  engine.begin_window();
  std::unordered_map<trace::TaskId, scheduler::NodeIndex> index_of;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    deps::TaskEvent event;
    event.kind = trace::kind_of(node_kind_name(nodes[i].kind));
    event.stream = kStream;
    event.accesses = nodes[i].accesses;
    if (nodes[i].operation != 0) {
      // One byte per operation, far above any user-space address: its nodes all write it.
      constexpr std::uint64_t kOperationSpace = 0xff00000000000000ULL;
      event.accesses.push_back({kOperationSpace + nodes[i].operation, 1, deps::Access::ReadWrite, false});
    }
    index_of[engine.task(std::move(event))] = static_cast<scheduler::NodeIndex>(i);
  }
  engine.end_window();
  const trace::Trace trace = engine.build_trace();
  std::vector<std::vector<scheduler::NodeIndex>> preds(nodes.size());
  for (const trace::Task& t : trace.tasks) {
    auto me = index_of.find(t.id);
    if (me == index_of.end()) continue;  // not one of the nodes (the engine adds none today)
    for (trace::TaskId d : t.deps) {
      auto p = index_of.find(d);
      if (p == index_of.end()) throw std::logic_error("rewire: a dependency on an unknown task");
      preds[me->second].push_back(p->second);
    }
  }
  return preds;
}

std::size_t longest_path(const scheduler::Adjacency& preds) {
  std::vector<std::size_t> depth(preds.nodes(), 1);
  std::size_t best = 0;
  for (scheduler::NodeIndex v = 0; v < preds.nodes(); ++v) {
    for (scheduler::NodeIndex p : preds[v]) depth[v] = std::max(depth[v], depth[p] + 1);
    best = std::max(best, depth[v]);
  }
  return best;
}

}  // namespace

std::vector<deps::MemAccess> kernel_accesses(const std::vector<std::uint8_t>& args,
                                             const std::vector<deps::ParamLayout>& params,
                                             const std::vector<Extent>& operation,
                                             const RangeLookup& lookup, PointerCounts* counts) {
  std::vector<deps::MemAccess> out;
  for (const deps::ParamLayout& p : params) {
    const std::uint64_t begin = (std::uint64_t{p.offset} + 7) / 8 * 8;
    for (std::uint64_t w = begin; w + 8 <= std::uint64_t{p.offset} + p.size && w + 8 <= args.size(); w += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, args.data() + w, 8);
      if (word == 0) continue;
      if (const Extent* e = containing(operation, word)) {
        out.push_back({e->addr, e->size, e->written ? deps::Access::ReadWrite : deps::Access::Read, false});
        if (counts) ++counts->in_operation_tensors;
      } else if (auto range = lookup(word)) {
        out.push_back({range->addr, range->size, deps::Access::ReadWrite, false});
        if (counts) ++counts->whole_allocations;
      }
    }
  }
  return out;
}

const char* node_kind_name(NodeKind kind) {
  switch (kind) {
    case NodeKind::Kernel: return "kernel";
    case NodeKind::Memcpy: return "memcpy";
    case NodeKind::Memset: return "memset";
    case NodeKind::Other: break;
  }
  return "other";  // not relaxable: keeps all order around it
}

const char* wiring_name(Wiring wiring) {
  switch (wiring) {
    case Wiring::Chain: return "chain";
    case Wiring::Reduced: return "reduced";
    case Wiring::Schedule: return "schedule";
  }
  return "?";
}

std::string wiring_name(const WiringSpec& spec) {
  std::string name = wiring_name(spec.wiring);
  if (spec.wiring == Wiring::Schedule && spec.max_streams) name.append(":").append(std::to_string(spec.max_streams));
  return name;
}

std::optional<WiringSpec> parse_wiring(std::string_view name) {
  constexpr std::uint32_t kMostStreams = 1024;
  std::uint32_t streams = 0;
  if (const auto colon = name.find(':'); colon != std::string_view::npos) {
    const std::string_view count = name.substr(colon + 1);
    name = name.substr(0, colon);
    const auto [end, error] = std::from_chars(count.data(), count.data() + count.size(), streams);
    if (error != std::errc() || end != count.data() + count.size() || streams < 1 || streams > kMostStreams ||
        name != wiring_name(Wiring::Schedule)) {
      return std::nullopt;
    }
  }
  for (Wiring w : {Wiring::Chain, Wiring::Reduced, Wiring::Schedule}) {
    if (name == wiring_name(w)) return WiringSpec{w, streams};
  }
  return std::nullopt;
}

std::vector<std::ptrdiff_t> same_pairs(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& edges,
                                       const std::vector<std::pair<std::uint32_t, std::uint32_t>>& captured) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::ptrdiff_t> index;
  for (std::size_t i = 0; i < captured.size(); ++i) index.emplace(captured[i], static_cast<std::ptrdiff_t>(i));
  std::vector<std::ptrdiff_t> out;
  out.reserve(edges.size());
  for (const auto& e : edges) {
    const auto it = index.find(e);
    out.push_back(it == index.end() ? -1 : it->second);
  }
  return out;
}

Rewiring plan(const std::vector<Node>& nodes, const WiringSpec& spec) {
  const Wiring wiring = spec.wiring;
  if (nodes.empty()) throw std::invalid_argument("the captured graph has no nodes");
  Rewiring out;
  scheduler::Dag dag;
  dag.predecessors = infer(nodes);
  const scheduler::Adjacency all = scheduler::predecessor_adjacency(dag);
  const scheduler::Adjacency reduced = scheduler::transitive_reduction(all);
  out.dependencies = all.edges();
  out.reduced = reduced.edges();
  out.longest_path = longest_path(reduced);
  const auto n = static_cast<scheduler::NodeIndex>(nodes.size());
  switch (wiring) {
    case Wiring::Chain:
      for (scheduler::NodeIndex v = 1; v < n; ++v) out.edges.emplace_back(v - 1, v);
      break;
    case Wiring::Reduced:
      for (scheduler::NodeIndex v = 0; v < n; ++v) {
        for (scheduler::NodeIndex p : reduced[v]) out.edges.emplace_back(p, v);
      }
      break;
    case Wiring::Schedule: {
      scheduler::Options options;
      options.max_streams = spec.max_streams;
      const scheduler::ScheduleResult s = scheduler::schedule_dag(dag, options);
      const std::vector<scheduler::NodeIndex> previous = scheduler::stream_predecessors(s.schedule.assignment);
      for (scheduler::NodeIndex v = 0; v < n; ++v) {
        if (previous[v] != scheduler::kNoNode) out.edges.emplace_back(previous[v], v);
        for (scheduler::NodeIndex w : s.schedule.waits[v]) out.edges.emplace_back(w, v);
      }
      out.streams = s.stats.streams;
      out.syncs = s.stats.waits;
      break;
    }
  }
  return out;
}

}  // namespace nimble::replayer::rewire
