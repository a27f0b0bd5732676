#include "nimble/replayer/library_memo.hpp"

#include <algorithm>

namespace nimble::replayer {
namespace {

// Ops a skipped call can stand for: work the short-circuit launches from its graphs. A host copy
// a sync or a graph launch inside a library call needs the program's own call. `at` receives the
// op that rules it out.
std::string why_not_skippable(const ReplayPlan& plan, std::size_t first, std::size_t end, bool has_key,
                              const std::vector<bool>& across, std::string& at) {
  if (!has_key) return "the recorder computed no key for its inputs";
  for (std::size_t i = first; i < end; ++i) {
    const Op& op = plan.ops[i];
    std::string why;
    if (op.kind == OpKind::Nop) why = "an op inside it launches nothing (a sync)";
    else if (op.kind == OpKind::Graph) why = "an op inside it launches the program's own graph";
    else if (op.kind == OpKind::Copy && op.copy.direction != CopyDirection::DtoD) why = "an op inside it copies to or from the host";
    // Its contents are the host's to change at any time, and the key (the call's arguments and
    // the library state it reads) does not cover them.
    else if (op.touches_host_memory) why = "an op inside it reads or writes page-locked host memory";
    else if (across[i]) why = "an op inside it is ordered against another stream's work by events (the library's own, which a skipped call does not make)";
    if (!why.empty()) {
      at = describe_op(op);
      return why;
    }
  }
  return "";
}

// Ops ordered against work on another stream of the program (a dependency edge either way
// between two launching ops whose streams the trace names and differ). Such edges come from
// event records and waits, and when a library call forks work onto its own stream (cuDNN does,
// for some convolutions' backward pass) they are its host code's: a skipped call records and
// waits on nothing, and its ops race with the program's (ResNet-18, H200: wrong results).
std::vector<bool> ordered_across_streams(const ReplayPlan& plan) {
  std::vector<bool> across(plan.ops.size(), false);
  const auto stream_of = [&](std::size_t i) { return plan.ops[i].kind == OpKind::Nop ? 0 : plan.ops[i].program_stream; };
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    for (std::size_t p : plan.ops[i].deps) {
      if (p >= plan.ops.size() || !stream_of(i) || !stream_of(p) || stream_of(i) == stream_of(p)) continue;
      across[i] = across[p] = true;
    }
  }
  return across;
}

// Where two sets of launches of one site differ first: op, byte offset, and the bytes there before
// and now, at most a word's worth (a patch may be a whole argument struct of hundreds of bytes,
// which says nothing when printed whole).
std::string first_difference(const ReplayPlan& plan, const OpPatches& before, const OpPatches& now, std::size_t first_op) {
  for (std::size_t k = 0; k < before.size() && k < now.size(); ++k) {
    if (before[k] == now[k]) continue;
    const std::vector<std::uint8_t> recorded = recorded_parameters(plan.ops[first_op + k]);
    const std::vector<std::uint8_t> was = with_patches(recorded, before[k]), is = with_patches(recorded, now[k]);
    std::size_t at = 0;
    while (at < was.size() && at < is.size() && was[at] == is[at]) ++at;
    if (at == was.size() && at == is.size()) continue;  // patches that write the same bytes
    std::size_t end = at;  // past the last differing byte within a word from `at`
    for (std::size_t i = at; i < at + 8 && i < std::max(was.size(), is.size()); ++i) {
      if (i >= was.size() || i >= is.size() || was[i] != is[i]) end = i + 1;
    }
    const auto window = [&](const std::vector<std::uint8_t>& bytes) {
      return at < bytes.size() ? trace::to_hex(bytes.data() + at, std::min(end, bytes.size()) - at) : std::string("(none)");
    };
    return "op " + std::to_string(first_op + k) + ", bytes at " + std::to_string(at) + ": " + window(was) + " then " + window(is);
  }
  return "other ops";
}

}  // namespace

std::set<std::string> function_names(const std::string& list) {
  std::set<std::string> names;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    std::size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    std::string name = list.substr(begin, end - begin);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty() && name != "none") names.insert(name);
    begin = end + 1;
  }
  return names;
}

std::vector<LibrarySite> library_sites(const ReplayPlan& plan) {
  std::vector<LibrarySite> sites;
  // After the last op that launches something, or a host read the program runs there itself.
  std::size_t launching_end = plan.ops.size();
  while (launching_end > 0 && plan.ops[launching_end - 1].kind == OpKind::Nop && !plan.ops[launching_end - 1].end_read) {
    --launching_end;
  }
  const std::vector<bool> across = ordered_across_streams(plan);
  std::size_t i = 0;
  while (i < plan.ops.size()) {
    const std::int64_t call = plan.ops[i].library_call;
    std::size_t end = i + 1;
    if (call < 0) {
      i = end;
      continue;
    }
    while (end < plan.ops.size() && plan.ops[end].library_call == call) ++end;
    LibrarySite site;
    site.symbol = plan.ops[i].library_symbol;
    site.first_op = i;
    site.ops = end - i;
    site.recorded_key = plan.ops[i].library_key;
    site.not_skippable = why_not_skippable(plan, i, end, site.recorded_key.has_value(), across, site.not_skippable_at);
    // A recorded stretch may end inside a call: the call's later launches are not in it, and
    // skipping the call would lose them (a recording of the first 282 calls of a training step
    // ended after two of a convolution's kernels).
    if (site.not_skippable.empty() && end >= launching_end) {
      site.not_skippable = "the recorded iteration ends with it: the call may launch more than the recording holds";
    }
    // The same call's ops elsewhere (not contiguous): other work came in between; never skip it.
    for (std::size_t j = end; j < plan.ops.size() && site.not_skippable.empty(); ++j) {
      if (plan.ops[j].library_call == call) site.not_skippable = "its ops are not contiguous in the iteration";
    }
    sites.push_back(std::move(site));
    i = end;
  }
  return sites;
}

LibraryMemo::LibraryMemo(const ReplayPlan& plan, LibraryMemoOptions options)
    : options_(options), plan_(plan), sites_(library_sites(plan)), state_(sites_.size()) {
  options_.trust = std::max<std::size_t>(1, options_.trust);
  options_.recheck = std::max<std::size_t>(1, options_.recheck);
  for (std::size_t s = 0; s < sites_.size(); ++s) {
    site_by_first_op_[sites_[s].first_op] = s;
    const bool named = options_.symbols.count(sites_[s].symbol) > 0;
    if (sites_[s].not_skippable.empty() && !named) {
      sites_[s].not_skippable = "NIMBLE_RUN_SKIP_CALLS does not name " + sites_[s].symbol;
    }
    if (!sites_[s].not_skippable.empty()) {
      state_[s].disabled = true;
      if (named) {
        unskippable_.push_back({sites_[s].symbol, describe_op(plan_.ops[sites_[s].first_op]), sites_[s].not_skippable,
                                sites_[s].not_skippable_at});
      }
      continue;
    }
    // The recording is the first observation of its key: launched exactly the recorded bytes.
    Entry recorded;
    recorded.patches.assign(sites_[s].ops, {});
    recorded.seen = 1;
    recorded.provisional = true;
    state_[s].keys.emplace(*sites_[s].recorded_key, std::move(recorded));
  }
}

std::optional<std::size_t> LibraryMemo::site_at(std::size_t op, const std::string& symbol) const {
  auto it = site_by_first_op_.find(op);
  if (it == site_by_first_op_.end() || sites_[it->second].symbol != symbol) return std::nullopt;
  return it->second;
}

LibraryDecision LibraryMemo::decide(std::size_t site, std::uint64_t key, bool may_skip) {
  LibraryDecision d;
  d.site = site;
  ++stats_[sites_.at(site).symbol].calls;
  SiteState& state = state_[site];
  if (state.disabled || !may_skip) return d;
  auto it = state.keys.find(key);
  if (it == state.keys.end() || it->second.seen < options_.trust) return d;
  Entry& entry = it->second;
  if (++entry.uses % options_.recheck == 0) return d;  // run it now and then, and compare
  d.skip = true;
  d.patches = &entry.patches;
  ++stats_[sites_[site].symbol].skipped;
  return d;
}

void LibraryMemo::observed(std::size_t site, std::uint64_t key, const std::optional<OpPatches>& patches,
                           std::uint64_t host_ns) {
  LibrarySymbolStats& stats = stats_[sites_.at(site).symbol];
  stats.run_ns += host_ns;
  ++stats.runs_timed;
  SiteState& state = state_[site];
  if (state.disabled) return;
  auto it = state.keys.find(key);
  if (!patches) {
    // Its ops did not match the recording. With inputs seen before, the key failed to tell.
    if (it != state.keys.end()) disable(site, "inputs seen before launched other work than the recording");
    return;
  }
  if (it == state.keys.end()) {
    if (state.keys.size() < options_.max_keys) state.keys.emplace(key, Entry{*patches, 1, 0, false});
    return;
  }
  if (it->second.patches != *patches && it->second.provisional) {
    it->second = Entry{*patches, 1, 0, false};  // the recording's path left other stack bytes
    return;
  }
  it->second.provisional = false;
  if (it->second.patches != *patches) {
    disable(site, "the same inputs launched other argument bytes (the key misses an input)",
            first_difference(plan_, it->second.patches, *patches, sites_[site].first_op));
    return;
  }
  ++it->second.seen;
}

void LibraryMemo::disable(std::size_t site, std::string reason, std::string detail) {
  state_[site].disabled = true;
  state_[site].keys.clear();
  disabled_.push_back({sites_[site].symbol, describe_op(plan_.ops[sites_[site].first_op]), std::move(reason), std::move(detail)});
}

std::string NeverSkipped::text() const {
  return symbol + " at " + at + ": " + reason + (detail.empty() ? "" : ": " + detail);
}

}  // namespace nimble::replayer
