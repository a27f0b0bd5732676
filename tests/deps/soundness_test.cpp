// Randomised soundness: random programs (streams, events, host syncs, allocations, accesses)
// are fed to the engine and to a brute-force model of CUDA's ordering rules. Every ordering
// the model requires must be implied by the engine's deps (transitively).
#include <bitset>
#include <cstring>
#include <random>
#include <sstream>

#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

constexpr std::size_t kMaxTasks = 256;
using Bits = std::bitset<kMaxTasks>;

struct RefAccess {
  bool everything = false;
  Access mode = Access::ReadWrite;
  std::uint64_t lo = 0, hi = 0;
};

bool writes(Access m) { return m != Access::Read; }

bool conflict(const RefAccess& a, const RefAccess& b) {
  if (!writes(a.mode) && !writes(b.mode)) return false;
  if (a.everything || b.everything) return true;
  return a.lo < b.hi && b.lo < a.hi;
}

// Brute-force model. pending[s]: every task that must finish before the next operation on
// stream object s may start (transitively closed). Operations on the legacy stream wait for
// all blocking streams; operations on a blocking stream wait for the legacy stream.
class Reference {
 public:
  Reference() { legacy_ = add_stream(true, true); }

  void created(StreamHandle h, unsigned flags) { handles_[h] = add_stream(false, (flags & 1) == 0); }
  void destroyed(StreamHandle h) { handles_.erase(h); }

  void begin() {
    capturing_ = true;
    for (auto& s : streams_) s.pending.reset();
    events_.clear();
    host_done_.reset();
    required_.clear();
    mem_.clear();
  }
  void end() { capturing_ = false; }
  bool capturing() const { return capturing_; }

  std::size_t task(StreamHandle h, ThreadId th, const std::vector<RefAccess>& acc) {
    const int s = resolve(h, th);
    const std::size_t t = required_.size();
    Bits req = streams_[s].pending | cross(s) | host_done_;
    for (std::size_t u = 0; u < t; ++u) {
      for (const auto& a : mem_[u]) {
        for (const auto& b : acc) {
          if (conflict(a, b)) req.set(u);
        }
      }
    }
    required_.push_back(req);
    mem_.push_back(acc);
    streams_[s].pending = req;
    streams_[s].pending.set(t);
    return t;
  }

  void record(EventHandle e, StreamHandle h, ThreadId th) {
    const int s = resolve(h, th);
    if (s == legacy_) streams_[s].pending |= cross(s);  // the record op waited for them
    events_[e] = streams_[s].pending | cross(s);
  }

  void wait(StreamHandle h, EventHandle e, ThreadId th) {
    const int s = resolve(h, th);
    streams_[s].pending |= cross(s);
    if (auto it = events_.find(e); it != events_.end()) streams_[s].pending |= it->second;
  }

  void sync_stream(StreamHandle h, ThreadId th) { add_sync(streams_[resolve(h, th)].pending); }
  void sync_event(EventHandle e) {
    auto it = events_.find(e);
    add_sync(it == events_.end() ? Bits{} : it->second);
  }
  void sync_context() {
    Bits all;
    for (const auto& s : streams_) all |= s.pending;
    add_sync(all);
  }

  const std::vector<Bits>& required() const { return required_; }

 private:
  struct Stream {
    bool legacy;
    bool blocking;
    Bits pending;
  };

  int add_stream(bool legacy, bool blocking) {
    streams_.push_back({legacy, blocking, {}});
    return static_cast<int>(streams_.size()) - 1;
  }

  int resolve(StreamHandle h, ThreadId th) {
    if (h == kLegacyStream) return legacy_;
    if (h == kPerThreadStream) {
      auto it = per_thread_.find(th);
      if (it == per_thread_.end()) it = per_thread_.emplace(th, add_stream(false, true)).first;
      return it->second;
    }
    auto it = handles_.find(h);
    if (it == handles_.end()) it = handles_.emplace(h, add_stream(false, true)).first;  // unknown
    return it->second;
  }

  Bits cross(int s) const {
    Bits b;
    if (s == legacy_) {
      for (const auto& o : streams_) {
        if (!o.legacy && o.blocking) b |= o.pending;
      }
    } else if (streams_[s].blocking) {
      b |= streams_[legacy_].pending;
    }
    return b;
  }

  void add_sync(const Bits& waited) {
    const std::size_t t = required_.size();
    Bits req = waited | host_done_;
    required_.push_back(req);
    mem_.emplace_back();
    host_done_ = req;
    host_done_.set(t);
  }

  std::vector<Stream> streams_;
  int legacy_ = 0;
  std::map<StreamHandle, int> handles_;
  std::map<ThreadId, int> per_thread_;
  std::map<EventHandle, Bits> events_;
  Bits host_done_;
  std::vector<Bits> required_;
  std::vector<std::vector<RefAccess>> mem_;
  bool capturing_ = false;
};

// Feeds one random program to both the engine and the model; returns a description of the
// first ordering the engine misses, or "" when it is sound.
std::string check_program(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t n) { return static_cast<std::uint64_t>(rng() % n); };
  std::ostringstream log;

  Engine engine;
  Reference ref;
  const StreamHandle handles[] = {kLegacyStream, kPerThreadStream, 0x100, 0x101, 0x200, 0x300};
  const EventHandle events[] = {0xe0, 0xe1, 0xe2};
  struct Alloc {
    std::uint64_t base, size;
  };
  std::vector<Alloc> allocs;
  for (std::uint64_t i = 0; i < 4; ++i) {
    allocs.push_back({0x10000 * (i + 1), 0x100});
    engine.allocated(allocs.back().base, allocs.back().size, AllocKind::Device, kLegacyStream);
  }
  auto create = [&](StreamHandle h, unsigned flags) {
    engine.stream_created(h, flags, 0, 1);
    ref.created(h, flags);
    log << "create " << std::hex << h << " flags " << flags << std::dec << "\n";
  };
  create(0x100, 0);
  create(0x101, static_cast<unsigned>(pick(2)));
  create(0x200, 1);

  const int ops = 20 + static_cast<int>(pick(100));
  const int begin_at = pick(3) == 0 ? static_cast<int>(pick(ops / 2 + 1)) : 0;
  const int end_at = pick(5) == 0 ? ops - static_cast<int>(pick(5)) : ops;
  std::vector<trace::TaskId> engine_ids;

  for (int op = 0; op < ops; ++op) {
    if (op == begin_at) {
      engine.begin_capture();
      ref.begin();
      log << "begin_capture\n";
    }
    if (op == end_at) {
      engine.end_capture();
      ref.end();
      log << "end_capture\n";
    }
    const ThreadId th = 1 + pick(2);
    const StreamHandle s = handles[pick(std::size(handles))];
    const EventHandle e = events[pick(std::size(events))];
    const auto dice = pick(100);
    if (dice < 48) {
      std::vector<MemAccess> acc;
      std::vector<RefAccess> racc;
      const auto n = 1 + pick(3);
      for (std::uint64_t k = 0; k < n; ++k) {
        const Access mode = static_cast<Access>(pick(3));
        const auto kind = pick(20);
        if (kind == 0) {
          acc.push_back({0, 0, mode, true});
          racc.push_back({true, mode, 0, 0});
        } else if (kind <= 2) {
          // A pointer argument: the engine resolves it; the model takes the whole allocation.
          const Alloc& a = allocs[pick(allocs.size())];
          const std::uint64_t words[2] = {7, a.base + pick(a.size)};
          auto resolved = engine.resolve_pointers(reinterpret_cast<const std::uint8_t*>(words),
                                                  {{0, 4}, {8, 8}}, nullptr);
          if (resolved.size() != 1 || resolved[0].addr != a.base || resolved[0].size != a.size) {
            return "pointer resolution disagrees with the allocation table\n" + log.str();
          }
          acc.push_back(resolved[0]);
          racc.push_back({false, Access::ReadWrite, a.base, a.base + a.size});
        } else {
          const bool outside = kind == 3;
          const Alloc& a = allocs[pick(allocs.size())];
          const std::uint64_t base = outside ? 0x90000 : a.base;
          const std::uint64_t size = outside ? 0x100 : a.size;
          const std::uint64_t off = 0x10 * pick(size / 0x10);
          const std::uint64_t len = 0x10 * (1 + pick((size - off) / 0x10));
          acc.push_back({base + off, len, mode, false});
          racc.push_back({false, mode, base + off, base + off + len});
        }
      }
      log << "task on " << std::hex << s << std::dec << " thread " << th << " accesses";
      for (const auto& r : racc) {
        log << " [" << (r.everything ? std::string("everything") : std::to_string(r.lo) + ".." + std::to_string(r.hi))
            << " mode " << static_cast<int>(r.mode) << "]";
      }
      log << "\n";
      const auto id = launch(engine, s, acc, th);
      if (ref.capturing()) {
        const auto rid = ref.task(s, th, racc);
        if (id != static_cast<trace::TaskId>(rid)) return "task ids disagree\n" + log.str();
      } else if (id != kNoTask) {
        return "task recorded outside the window\n" + log.str();
      }
    } else if (dice < 62) {
      engine.event_recorded(e, s, th);
      ref.record(e, s, th);
      log << "record " << std::hex << e << " on " << s << std::dec << " thread " << th << "\n";
    } else if (dice < 76) {
      engine.stream_waited(s, e, th);
      ref.wait(s, e, th);
      log << "wait " << std::hex << s << " on " << e << std::dec << " thread " << th << "\n";
    } else if (dice < 80) {
      engine.host_synced_stream(s, th, "cuStreamSynchronize");
      if (ref.capturing()) ref.sync_stream(s, th);
      log << "sync stream " << std::hex << s << std::dec << " thread " << th << "\n";
    } else if (dice < 84) {
      engine.host_synced_event(e, th, "cuEventSynchronize");
      if (ref.capturing()) ref.sync_event(e);
      log << "sync event " << std::hex << e << std::dec << "\n";
    } else if (dice < 87) {
      engine.host_synced_context(th, "cuCtxSynchronize");
      if (ref.capturing()) ref.sync_context();
      log << "sync context\n";
    } else if (dice < 93) {
      // Free and reallocate at the same address with another size (address reuse).
      Alloc& a = allocs[pick(allocs.size())];
      engine.freed(a.base, kLegacyStream);
      a.size = 0x80 * (1 + pick(3));
      engine.allocated(a.base, a.size, AllocKind::Async, s);
      log << "realloc " << std::hex << a.base << " size " << a.size << std::dec << "\n";
    } else if (dice < 96) {
      engine.stream_destroyed(0x101);
      ref.destroyed(0x101);
      log << "destroy 101\n";
      if (pick(2) == 0) create(0x101, static_cast<unsigned>(pick(2)));
    }
  }
  engine.end_capture();

  const trace::Trace t = engine.build_trace();
  const auto& required = ref.required();
  if (t.tasks.size() != required.size()) return "task counts disagree\n" + log.str();
  std::vector<Bits> ancestors(t.tasks.size());
  for (std::size_t i = 0; i < t.tasks.size(); ++i) {
    const auto& task = t.tasks[i];
    if (task.id != static_cast<trace::TaskId>(i)) return "ids not in order\n" + log.str();
    for (auto d : task.deps) {
      if (d < 0 || d >= task.id) return "dep not earlier\n" + log.str();
      ancestors[i] |= ancestors[static_cast<std::size_t>(d)];
      ancestors[i].set(static_cast<std::size_t>(d));
    }
    if (task.extra.at("dep_reasons").size() != task.deps.size()) {
      return "dep_reasons do not match deps\n" + log.str();
    }
    const Bits missing = required[i] & ~ancestors[i];
    if (missing.any()) {
      std::size_t u = 0;
      while (!missing.test(u)) ++u;
      std::ostringstream msg;
      msg << "seed " << seed << ": task " << i << " is not ordered after task " << u << "\n"
          << log.str();
      return msg.str();
    }
  }
  return "";
}

TEST(Soundness, RandomProgramsRespectEveryRequiredOrdering) {
  for (std::uint64_t seed = 1; seed <= 4000; ++seed) {
    const std::string problem = check_program(seed);
    ASSERT_EQ(problem, "") << "seed " << seed;
  }
}

// The model itself requires the orderings that matter and no ordering between unrelated work.
TEST(Soundness, ModelDetectsAMissingEdge) {
  Reference ref;
  ref.created(0x100, 0);
  ref.begin();
  ref.task(0x100, 1, {});
  ref.task(0x100, 1, {});
  EXPECT_TRUE(ref.required()[1].test(0));  // stream order is required, so dropping it is caught
  Reference mem;
  mem.created(0x100, 1);
  mem.created(0x200, 1);
  mem.created(0x300, 1);
  mem.begin();
  mem.task(0x100, 1, {{false, Access::Write, 0, 16}});
  mem.task(0x200, 1, {{false, Access::Read, 8, 9}});
  mem.task(0x300, 1, {{false, Access::Read, 16, 32}});
  EXPECT_TRUE(mem.required()[1].test(0));
  EXPECT_FALSE(mem.required()[2].test(0));
}

}  // namespace
}  // namespace nimble::deps::testing
