#include "load.hpp"

#include <filesystem>
#include <iostream>

#include "nimble/trace/io.hpp"

namespace nimble::cli {

std::optional<trace::Trace> load_or_report(const std::string& path) {
  trace::LoadResult result = trace::load_trace(path);
  const std::string shown = path == "-" ? "<stdin>" : path;
  if (!result.diagnostics.items.empty()) std::cerr << result.diagnostics.format(shown);
  if (!result.trace) {
    std::cerr << shown << ": rejected with " << result.diagnostics.error_count()
              << " error(s); nothing was written. Fix the problems above and run again.\n";
  }
  return std::move(result.trace);
}

std::string bundled_sample_path() {
  namespace fs = std::filesystem;
  const fs::path relative = "docs/examples/inception_block.json";
  std::error_code ec;
  // Next to the executable: build/bin/nimble -> ../../docs/examples, then the configured source.
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path dir = exe.parent_path(); !dir.empty() && dir != dir.root_path();
         dir = dir.parent_path()) {
      if (fs::exists(dir / relative)) return (dir / relative).string();
    }
  }
  return (fs::path(NIMBLE_SOURCE_DIR) / relative).string();
}

}  // namespace nimble::cli
