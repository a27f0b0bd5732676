// Randomised soundness: random programs (streams, events, host syncs, allocations, accesses,
// task kinds) are fed to the engine and to a brute-force model of CUDA's ordering rules. Every
// ordering the model requires must be implied by the engine's deps (transitively).
//
// Under the Keep policy the model requires every ordering CUDA guarantees between two tasks
// plus every memory conflict. Under the Memory policy it drops one kind of pair: two relaxable
// tasks (kernel, memcpy or memset without an `everything` access) on the same stream need not
// be ordered unless their accesses conflict or a required chain through other tasks orders
// them. Everything else stays: conflicting accesses; any pair CUDA orders where one task is not
// relaxable (host syncs included); pairs on different streams CUDA orders (events, the legacy
// stream), which the engine keeps as the program's explicit cross-stream intent.
#include <bitset>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>

#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

constexpr std::size_t kMaxTasks = 512;
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

bool relaxable_kind(trace::TaskKind kind) {
  return kind == trace::TaskKind::Kernel || kind == trace::TaskKind::Memcpy || kind == trace::TaskKind::Memset;
}

// Brute-force model. pending[s]: every task CUDA orders before the next operation on stream
// object s (transitively closed; memory plays no part in it). Operations on the legacy stream
// wait for all blocking streams; operations on a blocking stream wait for the legacy stream.
// A task's required predecessors are the tasks CUDA orders before it plus the tasks it conflicts
// with; under Memory, a relaxable task drops the relaxable tasks of its own stream from the
// first part (what still orders them, e.g. a non-relaxable task in between, stays required and
// the check is transitive).
class Reference {
 public:
  explicit Reference(StreamOrderPolicy policy = StreamOrderPolicy::Keep) : policy_(policy) {
    legacy_ = add_stream(true, true);
  }

  void created(StreamHandle h, unsigned flags) { handles_[h] = add_stream(false, (flags & 1) == 0); }
  void destroyed(StreamHandle h) { handles_.erase(h); }

  void begin() {
    capturing_ = true;
    for (auto& s : streams_) s.pending.reset(), s.relaxable.reset();
    events_.clear();
    host_done_.reset();
    required_.clear();
    mem_.clear();
    stream_of_.clear();
    relaxable_.clear();
  }
  void end() { capturing_ = false; }
  bool capturing() const { return capturing_; }

  std::size_t task(StreamHandle h, ThreadId th, const std::vector<RefAccess>& acc,
                   trace::TaskKind kind = trace::TaskKind::Kernel) {
    const int s = resolve(h, th);
    const std::size_t t = required_.size();
    bool relaxable = policy_ == StreamOrderPolicy::Memory && relaxable_kind(kind);
    for (const auto& a : acc) relaxable = relaxable && !a.everything;
    Stream& st = streams_[s];
    const Bits cuda = st.pending | cross(s) | host_done_;
    Bits req = relaxable ? cuda & ~st.relaxable : cuda;
    for (std::size_t u = 0; u < t; ++u) {
      for (const auto& a : mem_[u]) {
        for (const auto& b : acc) {
          if (conflict(a, b)) req.set(u);
        }
      }
    }
    required_.push_back(req);
    mem_.push_back(acc);
    stream_of_.push_back(s);
    relaxable_.push_back(relaxable);
    st.pending = cuda;
    st.pending.set(t);
    if (relaxable) st.relaxable.set(t);
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
  // Stream object of each task (-1 for host syncs) and whether it was relaxable.
  const std::vector<int>& stream_of() const { return stream_of_; }
  const std::vector<bool>& relaxable() const { return relaxable_; }

 private:
  struct Stream {
    bool legacy;
    bool blocking;
    Bits pending;
    Bits relaxable;  // relaxable tasks issued on this stream
  };

  int add_stream(bool legacy, bool blocking) {
    streams_.push_back({legacy, blocking, {}, {}});
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
    stream_of_.push_back(-1);
    relaxable_.push_back(false);
    host_done_ = req;
    host_done_.set(t);
  }

  StreamOrderPolicy policy_;
  std::vector<Stream> streams_;
  int legacy_ = 0;
  std::map<StreamHandle, int> handles_;
  std::map<ThreadId, int> per_thread_;
  std::map<EventHandle, Bits> events_;
  Bits host_done_;
  std::vector<Bits> required_;
  std::vector<std::vector<RefAccess>> mem_;
  std::vector<int> stream_of_;
  std::vector<bool> relaxable_;
  bool capturing_ = false;
};

// What random programs look like.
struct Profile {
  int min_ops = 20;
  int extra_ops = 100;     // ops = min_ops + [0, extra_ops)
  bool few_streams = false;  // mostly one stream, like a framework (long pending sets)
  int sync_per_mille = 110;  // host syncs of any kind, per 1000 ops
};

// How much ordering the engine left out, over relaxable same-stream pairs the model allows
// to run unordered.
struct Precision {
  std::uint64_t allowed = 0;    // pairs the model does not require to be ordered
  std::uint64_t unordered = 0;  // ... that the engine left unordered
};

// Feeds one random program to both the engine and the model; returns a description of the
// first ordering the engine misses, or "" when it is sound.
std::string check_program(std::uint64_t seed, StreamOrderPolicy policy, const Profile& profile = {},
                          Precision* precision = nullptr) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t n) { return static_cast<std::uint64_t>(rng() % n); };
  std::ostringstream log;
  log << "policy " << stream_order_policy_name(policy) << "\n";

  Engine engine;
  engine.set_stream_order_policy(policy);
  Reference ref(policy);
  const StreamHandle handles[] = {kLegacyStream, kPerThreadStream, 0x100, 0x101, 0x200, 0x300};
  const EventHandle events[] = {0xe0, 0xe1, 0xe2};
  struct Alloc {
    std::uint64_t base, size;
  };
  std::vector<Alloc> allocs;
  const std::uint64_t alloc_count = profile.few_streams ? 8 : 4;
  for (std::uint64_t i = 0; i < alloc_count; ++i) {
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

  const int ops = profile.min_ops + static_cast<int>(pick(static_cast<std::uint64_t>(profile.extra_ops)));
  const int begin_at = pick(3) == 0 ? static_cast<int>(pick(ops / 2 + 1)) : 0;
  const int end_at = pick(5) == 0 ? ops - static_cast<int>(pick(5)) : ops;
  // In the few-streams profile one stream gets most of the work.
  const StreamHandle main_stream = handles[pick(std::size(handles))];

  for (int op = 0; op < ops; ++op) {
    if (op == begin_at) {
      engine.begin_window();
      ref.begin();
      log << "begin_window\n";
    }
    if (op == end_at) {
      engine.end_window();
      ref.end();
      log << "end_window\n";
    }
    const ThreadId th = 1 + pick(2);
    StreamHandle s = handles[pick(std::size(handles))];
    if (profile.few_streams && pick(10) < 8) s = main_stream;
    const EventHandle e = events[pick(std::size(events))];
    auto dice = static_cast<int>(pick(1000));
    // Thin the host-sync band [760, 870) out to the profile's rate (the rest become tasks).
    if (dice >= 760 && dice < 870 && profile.sync_per_mille < 110 &&
        static_cast<int>(pick(110)) >= profile.sync_per_mille) {
      dice = 0;
    }
    if (dice < 480) {
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
          auto resolved = engine.resolve_pointers(reinterpret_cast<const std::uint8_t*>(words), sizeof words,
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
      using K = trace::TaskKind;
      static const K kinds[] = {K::Kernel, K::Kernel, K::Kernel, K::Kernel, K::Kernel, K::Kernel,
                                K::Kernel,  K::Memcpy, K::Memset, K::Graph,  K::HostFunc};
      const K kind = kinds[pick(std::size(kinds))];
      log << trace::kind_name(kind) << " on " << std::hex << s << std::dec << " thread " << th << " accesses";
      for (const auto& r : racc) {
        log << " [" << (r.everything ? std::string("everything") : std::to_string(r.lo) + ".." + std::to_string(r.hi))
            << " mode " << static_cast<int>(r.mode) << "]";
      }
      log << "\n";
      const auto id = launch(engine, s, acc, th, kind);
      if (ref.capturing()) {
        const auto rid = ref.task(s, th, racc, kind);
        if (id != static_cast<trace::TaskId>(rid)) return "task ids disagree\n" + log.str();
      } else if (id != kNoTask) {
        return "task recorded outside the window\n" + log.str();
      }
    } else if (dice < 620) {
      engine.event_recorded(e, s, th);
      ref.record(e, s, th);
      log << "record " << std::hex << e << " on " << s << std::dec << " thread " << th << "\n";
    } else if (dice < 760) {
      engine.stream_waited(s, e, th);
      ref.wait(s, e, th);
      log << "wait " << std::hex << s << " on " << e << std::dec << " thread " << th << "\n";
    } else if (dice < 800) {
      engine.host_synced_stream(s, th, "cuStreamSynchronize");
      if (ref.capturing()) ref.sync_stream(s, th);
      log << "sync stream " << std::hex << s << std::dec << " thread " << th << "\n";
    } else if (dice < 840) {
      engine.host_synced_event(e, th, "cuEventSynchronize");
      if (ref.capturing()) ref.sync_event(e);
      log << "sync event " << std::hex << e << std::dec << "\n";
    } else if (dice < 870) {
      engine.host_synced_context(th, "cuCtxSynchronize");
      if (ref.capturing()) ref.sync_context();
      log << "sync context\n";
    } else if (dice < 930) {
      // Free and reallocate at the same address with another size (address reuse).
      Alloc& a = allocs[pick(allocs.size())];
      engine.freed(a.base, kLegacyStream);
      a.size = 0x80 * (1 + pick(3));
      engine.allocated(a.base, a.size, AllocKind::Async, s);
      log << "realloc " << std::hex << a.base << " size " << a.size << std::dec << "\n";
    } else if (dice < 960) {
      engine.stream_destroyed(0x101);
      ref.destroyed(0x101);
      log << "destroy 101\n";
      if (pick(2) == 0) create(0x101, static_cast<unsigned>(pick(2)));
    }
  }
  engine.end_window();

  const trace::Trace t = engine.build_trace();
  if (t.extra.at("dependency_policy") != stream_order_policy_name(policy)) {
    return "dependency_policy is not written\n" + log.str();
  }
  const auto& required = ref.required();
  if (t.tasks.size() != required.size()) return "task counts disagree\n" + log.str();
  if (t.tasks.size() > kMaxTasks) return "program too long for the model\n" + log.str();
  std::vector<Bits> ancestors(t.tasks.size());
  std::vector<Bits> required_closure(t.tasks.size());
  for (std::size_t i = 0; i < t.tasks.size(); ++i) {
    const auto& task = t.tasks[i];
    if (task.id != static_cast<trace::TaskId>(i)) return "ids not in order\n" + log.str();
    for (std::size_t k = 1; k < task.deps.size(); ++k) {
      if (task.deps[k - 1] >= task.deps[k]) return "deps not sorted and unique\n" + log.str();
    }
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
    required_closure[i] = required[i];
    for (std::size_t u = 0; u < i; ++u) {
      if (required[i].test(u)) required_closure[i] |= required_closure[u];
    }
  }
  if (precision != nullptr) {
    const auto& stream_of = ref.stream_of();
    const auto& relaxable = ref.relaxable();
    for (std::size_t i = 0; i < t.tasks.size(); ++i) {
      if (!relaxable[i]) continue;
      for (std::size_t u = 0; u < i; ++u) {
        if (!relaxable[u] || stream_of[u] != stream_of[i] || required_closure[i].test(u)) continue;
        ++precision->allowed;
        if (!ancestors[i].test(u)) ++precision->unordered;
      }
    }
  }
  return "";
}

TEST(Soundness, RandomProgramsRespectEveryRequiredOrdering) {
  for (std::uint64_t seed = 1; seed <= 4000; ++seed) {
    const std::string problem = check_program(seed, StreamOrderPolicy::Keep);
    ASSERT_EQ(problem, "") << "seed " << seed;
  }
}

// The Memory policy over the same programs: sound, and it does leave same-stream work unordered.
TEST(Soundness, MemoryPolicyRandomProgramsRespectEveryRequiredOrdering) {
  Precision precision;
  for (std::uint64_t seed = 1; seed <= 4000; ++seed) {
    const std::string problem = check_program(seed, StreamOrderPolicy::Memory, {}, &precision);
    ASSERT_EQ(problem, "") << "seed " << seed;
  }
  std::cout << "[ INFO     ] " << precision.unordered << " of " << precision.allowed
            << " same-stream relaxable pairs the model allows unordered were left unordered\n";
  ASSERT_GT(precision.allowed, 0u);
  EXPECT_GT(precision.unordered * 4, precision.allowed * 3)
      << precision.unordered << " of " << precision.allowed << " pairs left unordered";
}

// Framework-like programs: long, mostly on one stream, few host syncs, so pending sets grow
// long and frontiers get collapsed.
TEST(Soundness, MemoryPolicyLongSingleStreamPrograms) {
  const Profile profile{150, 250, true, 15};
  Precision precision;
  for (std::uint64_t seed = 1; seed <= 1500; ++seed) {
    const std::string problem = check_program(seed, StreamOrderPolicy::Memory, profile, &precision);
    ASSERT_EQ(problem, "") << "seed " << seed;
  }
  std::cout << "[ INFO     ] " << precision.unordered << " of " << precision.allowed
            << " same-stream relaxable pairs the model allows unordered were left unordered\n";
  ASSERT_GT(precision.allowed, 0u);
  EXPECT_GT(precision.unordered * 4, precision.allowed * 3)
      << precision.unordered << " of " << precision.allowed << " pairs left unordered";
}

TEST(Soundness, KeepPolicyLongSingleStreamPrograms) {
  const Profile profile{150, 250, true, 15};
  Precision precision;
  for (std::uint64_t seed = 1; seed <= 500; ++seed) {
    const std::string problem = check_program(seed, StreamOrderPolicy::Keep, profile, &precision);
    ASSERT_EQ(problem, "") << "seed " << seed;
  }
  EXPECT_EQ(precision.allowed, 0u);  // under Keep the model relaxes nothing
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

// Under Memory the model relaxes exactly same-stream order between relaxable tasks.
TEST(Soundness, MemoryModelRelaxesOnlyRelaxablePairs) {
  Reference ref(StreamOrderPolicy::Memory);
  ref.created(0x100, 1);
  ref.created(0x200, 1);
  ref.begin();
  ref.task(0x100, 1, {{false, Access::Write, 0, 16}});            // 0
  ref.task(0x100, 1, {{false, Access::Write, 16, 32}});           // 1: independent of 0
  ref.task(0x100, 1, {{false, Access::Read, 0, 8}});              // 2: RAW on 0
  ref.task(0x100, 1, {}, trace::TaskKind::Graph);                                // 3: not relaxable
  ref.task(0x100, 1, {{true, Access::Read, 0, 0}});               // 4: everything: not relaxable
  ref.task(0x100, 1, {{false, Access::Write, 64, 80}}, trace::TaskKind::Memset); // 5
  ref.record(0xe, 0x100, 1);
  ref.wait(0x200, 0xe, 1);
  ref.task(0x200, 1, {});                                         // 6
  ref.task(0x200, 1, {});                                         // 7
  const auto& r = ref.required();
  EXPECT_FALSE(r[1].test(0));
  EXPECT_TRUE(r[2].test(0));
  EXPECT_FALSE(r[2].test(1));
  EXPECT_TRUE(r[3].test(0) && r[3].test(1) && r[3].test(2));
  EXPECT_TRUE(r[4].test(3));
  EXPECT_TRUE(r[5].test(4));
  EXPECT_TRUE(r[6].test(5) && r[6].test(4));
  EXPECT_TRUE(r[7].test(5));  // cross-stream waits cover every later task of the waiting stream
  EXPECT_FALSE(r[7].test(6));
}

}  // namespace
}  // namespace nimble::deps::testing
