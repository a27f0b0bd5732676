// Fuzz target: what `nimble check FILE` does with the bytes of a file (cli/check.cpp, load.cpp):
// parse the JSON text, build the typed trace, validate it (tasks, recorder fields, schedule) and
// format every diagnostic. Built with libFuzzer by scripts/fuzz.sh (clang, NIMBLE_FUZZ=ON), and
// in every build as trace_check_corpus_tests, which feeds it the committed corpus.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nimble/trace/io.hpp"

namespace {

// A broken promise of parse_trace is a finding like a crash: say which and abort.
void require(bool ok, const char* promise) {
  if (ok) return;
  std::fprintf(stderr, "trace_check_fuzz: broken promise: %s\n", promise);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nimble::trace::LoadResult result = nimble::trace::parse_trace(text);
  const std::string report = result.diagnostics.format("fuzz.json");

  // A trace comes back exactly when there is no error, and a rejection always says why.
  require(result.trace.has_value() == !result.diagnostics.has_errors(), "trace returned iff no error");
  require(result.diagnostics.items.empty() || !report.empty(), "every diagnostic is formatted");
  // parse_trace turns an unexpected exception into an "internal error" diagnostic so a tool never
  // crashes; for the fuzzer that is still a bug (a check that throws instead of reporting).
  for (const auto& d : result.diagnostics.items) {
    require(d.message.rfind("internal error", 0) != 0, "no check throws (internal error)");
  }
  return 0;
}
