// Helpers for driving the engine with synthetic programs and reading back the trace.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "deps/engine.hpp"

namespace nimble::deps::testing {

inline MemAccess rd(std::uint64_t addr, std::uint64_t size) { return {addr, size, Access::Read, false}; }
inline MemAccess wr(std::uint64_t addr, std::uint64_t size) { return {addr, size, Access::Write, false}; }
inline MemAccess rw(std::uint64_t addr, std::uint64_t size) { return {addr, size, Access::ReadWrite, false}; }
inline MemAccess everything(Access mode = Access::ReadWrite) { return {0, 0, mode, true}; }

inline trace::TaskId launch(Engine& engine, StreamHandle stream, std::vector<MemAccess> accesses = {},
                            ThreadId thread = 0, trace::TaskKind kind = trace::TaskKind::Kernel) {
  TaskEvent ev;
  ev.kind = std::move(kind);
  ev.stream = stream;
  ev.thread = thread;
  ev.accesses = std::move(accesses);
  return engine.task(std::move(ev));
}

inline const trace::Task& task_of(const trace::Trace& t, trace::TaskId id) {
  return t.tasks.at(static_cast<std::size_t>(id));
}

inline std::vector<trace::TaskId> deps_of(const trace::Trace& t, trace::TaskId id) {
  return task_of(t, id).deps;
}

inline std::string reason(const trace::Trace& t, trace::TaskId id, trace::TaskId dep) {
  const auto& reasons = task_of(t, id).extra.at("dep_reasons");
  auto it = reasons.find(std::to_string(dep));
  return it == reasons.end() ? std::string("<none>") : it->template get<std::string>();
}

using Ids = std::vector<trace::TaskId>;

// Structural invariants every trace from the engine must satisfy: ids 0..n-1 in order, deps
// sorted, unique and earlier, and exactly one reason per dep.
inline void expect_well_formed(const trace::Trace& t) {
  for (std::size_t i = 0; i < t.tasks.size(); ++i) {
    const trace::Task& task = t.tasks[i];
    ASSERT_EQ(task.id, static_cast<trace::TaskId>(i));
    EXPECT_TRUE(std::is_sorted(task.deps.begin(), task.deps.end())) << "task " << i;
    EXPECT_EQ(std::adjacent_find(task.deps.begin(), task.deps.end()), task.deps.end()) << "task " << i;
    for (auto d : task.deps) {
      EXPECT_GE(d, 0) << "task " << i;
      EXPECT_LT(d, task.id) << "task " << i;
    }
    ASSERT_TRUE(task.extra.contains("dep_reasons")) << "task " << i;
    const auto& reasons = task.extra.at("dep_reasons");
    EXPECT_EQ(reasons.size(), task.deps.size()) << "task " << i;
    for (auto d : task.deps) {
      auto it = reasons.find(std::to_string(d));
      ASSERT_NE(it, reasons.end()) << "task " << i << " dep " << d;
      EXPECT_FALSE(it->template get<std::string>().empty());
    }
  }
}

}  // namespace nimble::deps::testing
