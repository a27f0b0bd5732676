// Several threads issuing at once, each on its own streams.
#include <thread>

#include "deps_test_util.hpp"

namespace nimble::deps::testing {
namespace {

constexpr int kThreads = 4;
constexpr int kTasksPerThread = 60;

// Every thread launches on its own created stream and its per-thread default stream,
// touching only its own memory: each stream must form an intact chain and nothing may cross.
// Under the Memory policy every task still writes base + 0x800, so each stream is a WAW chain.
void run_once(bool per_thread_stream, StreamOrderPolicy policy = StreamOrderPolicy::Keep) {
  Engine engine;
  engine.set_stream_order_policy(policy);
  engine.begin_window();
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&engine, i, per_thread_stream] {
      const ThreadId thread = 100 + i;
      const StreamHandle stream = per_thread_stream ? kPerThreadStream : 0x1000 * (i + 1);
      if (!per_thread_stream) engine.stream_created(stream, 0x1, 0, thread);
      const std::uint64_t base = 0x100000ull * (i + 1);
      engine.allocated(base, 0x1000, AllocKind::Async, stream);
      for (int k = 0; k < kTasksPerThread; ++k) {
        launch(engine, stream, {rd(base + 0x10 * (k % 8), 0x10), wr(base + 0x800, 0x10)}, thread);
        if (k % 16 == 0) engine.event_recorded(0xe000 + i, stream, thread);
      }
    });
  }
  for (auto& t : threads) t.join();
  engine.end_window();

  auto t = engine.build_trace();
  expect_well_formed(t);
  ASSERT_EQ(t.tasks.size(), static_cast<std::size_t>(kThreads * kTasksPerThread));
  std::map<int, trace::TaskId> last_on_stream;
  std::map<int, std::int64_t> thread_of_stream;
  for (const auto& task : t.tasks) {
    ASSERT_TRUE(task.stream.has_value());
    const int s = *task.stream;
    const auto thread = task.extra.at("thread").get<std::int64_t>();
    auto [it, fresh] = thread_of_stream.emplace(s, thread);
    EXPECT_EQ(it->second, thread) << "a stream received tasks from two threads";
    auto prev = last_on_stream.find(s);
    if (prev == last_on_stream.end()) {
      EXPECT_TRUE(task.deps.empty()) << "task " << task.id;
    } else {
      EXPECT_EQ(task.deps, Ids{prev->second}) << "task " << task.id;
    }
    last_on_stream[s] = task.id;
  }
  EXPECT_EQ(last_on_stream.size(), static_cast<std::size_t>(kThreads));
}

TEST(Threads, ConcurrentIssueOnCreatedStreams) {
  for (int iteration = 0; iteration < 300; ++iteration) {
    run_once(false);
    if (HasFailure()) return;
  }
}

TEST(Threads, ConcurrentIssueOnPerThreadDefaultStreams) {
  for (int iteration = 0; iteration < 300; ++iteration) {
    run_once(true);
    if (HasFailure()) return;
  }
}

TEST(Threads, ConcurrentIssueUnderTheMemoryPolicy) {
  for (int iteration = 0; iteration < 150; ++iteration) {
    run_once(iteration % 2 == 0, StreamOrderPolicy::Memory);
    if (HasFailure()) return;
  }
}

TEST(Threads, ResolveWhileAllocating) {
  Engine engine;
  std::thread allocator([&] {
    for (std::uint64_t i = 0; i < 2000; ++i) {
      engine.allocated(0x100000 + i * 0x100, 0x100, AllocKind::Async, kLegacyStream);
      if (i >= 10) engine.freed(0x100000 + (i - 10) * 0x100, kLegacyStream);
    }
  });
  std::uint64_t resolved = 0;
  for (int i = 0; i < 2000; ++i) {
    std::uint64_t words[2] = {0x100000 + (i % 2000) * 0x100ull + 8, 42};
    auto acc = engine.resolve_pointers(reinterpret_cast<const std::uint8_t*>(words), sizeof words,
                                       {{0, 8}, {8, 8}}, nullptr);
    ASSERT_LE(acc.size(), 1u);
    if (!acc.empty()) {
      // Whatever is resolved must be a whole allocation containing the pointer.
      EXPECT_LE(acc[0].addr, words[0]);
      EXPECT_LT(words[0], acc[0].addr + acc[0].size);
      ++resolved;
    }
  }
  allocator.join();
  (void)resolved;
}

}  // namespace
}  // namespace nimble::deps::testing
