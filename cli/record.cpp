// nimble record -o trace.json [--capture-range R] [--iteration N] -- COMMAND ARGS...
// Runs COMMAND with libnimble.so preloaded and NIMBLE_* set (docs/recording.md), exits with its
// status, and summarises the trace: tasks by kind, bytes copied, coverage against CUPTI.
#include "record.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>

#include "commands.hpp"
#include "hints.hpp"
#include "hooks/config.hpp"
#include "nimble/replayer/bench_report.hpp"
#include "nimble/replayer/run_report.hpp"
#include "nimble/trace/io.hpp"
#include "nimble/trace/recorded.hpp"
#include "settings/output_path.hpp"

namespace nimble::cli {
namespace {

namespace fs = std::filesystem;

struct FileStamp {
  bool exists = false;
  ino_t inode = 0;
  timespec modified{};
};

FileStamp stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {true, st.st_ino, st.st_mtim};
}

bool rewritten(const FileStamp& before, const FileStamp& after) {
  if (!after.exists) return false;
  if (!before.exists) return true;
  return before.inode != after.inode || before.modified.tv_sec != after.modified.tv_sec ||
         before.modified.tv_nsec != after.modified.tv_nsec;
}

// fork + execvp with the recording environment; the parent ignores ^C like system() does, so
// the signal reaches the program and nimble reports how it ended.
int run(const RecordOptions& options, const std::vector<std::string>& env, const std::string& verb) {
  struct sigaction ignore {}, old_int {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t child = fork();
  if (child == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    for (const std::string& e : env) {
      const auto eq = e.find('=');
      setenv(e.substr(0, eq).c_str(), e.substr(eq + 1).c_str(), 1);
    }
    std::vector<char*> argv;
    for (const std::string& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::cerr << verb << ": cannot run " << options.command[0] << ": " << std::strerror(errno) << "\n";
    _exit(127);
  }
  int status = 0;
  if (child < 0) {
    std::cerr << verb << ": fork failed: " << std::strerror(errno) << "\n";
    status = 1 << 8;
  } else {
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);
  return exit_status(status);
}

std::string bytes_text(std::uint64_t bytes) {
  std::ostringstream out;
  out.precision(3);
  if (bytes >= (1u << 20)) out << static_cast<double>(bytes) / (1 << 20) << " MiB";
  else if (bytes >= (1u << 10)) out << static_cast<double>(bytes) / (1 << 10) << " KiB";
  else out << bytes << " B";
  return out.str();
}

std::string no_trace_advice(const RecordOptions& options) {
  if (options.capture_range == "auto") {
    return "no repeating iteration was found. Run more iterations (the detector needs three identical "
           "ones, then records iteration --iteration after them), or bracket one iteration with "
           "cudaProfilerStart/Stop and use --capture-range cudaProfilerApi.";
  }
  if (options.capture_range.rfind("nvtx:", 0) == 0) {
    return "no NVTX range named \"" + options.capture_range.substr(5) +
           "\" was seen (or fewer than --iteration of them). Check the name, and that the program "
           "emits NVTX ranges (torch.cuda.nvtx.range_push/range_pop).";
  }
  return "the capture range never started: the program must call cudaProfilerStart() and "
         "cudaProfilerStop() around the iteration to record (torch.cuda.profiler.start()/stop(), "
         "cupy.cuda.profiler.start()/stop()), at least --iteration times; or use "
         "--capture-range auto.";
}

// "a, b or c".
std::string either(const std::vector<std::string>& names) {
  std::string words;
  for (std::size_t i = 0; i < names.size(); ++i) {
    words += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  return words;
}

// The help of an option that sets a Choice setting: its names, the one it holds first as the
// default, each with what it does ("memory (default: tasks ...) or stream-order (every ...)").
std::string choice_help(const settings::Setting& setting, const std::string& current) {
  static const std::map<std::string, std::string> what = {
      {"auto", "find the repeating iteration"},
      {"stream-order", "every task after the previous one on its stream"},
      {"memory", "tasks of one stream ordered only by memory conflicts, events and syncs"},
  };
  std::vector<std::string> names = settings::choices(setting);
  std::stable_partition(names.begin(), names.end(), [&](const std::string& name) { return name == current; });
  for (std::string& name : names) {
    const auto it = what.find(name);
    const std::string does = it == what.end() ? "" : it->second;
    if (name == current) name += " (default" + (does.empty() ? "" : ": " + does) + ")";
    else if (!does.empty()) name += " (" + does + ")";
  }
  return either(names);
}

// The check of such an option: the values the library takes, in the CLI's words.
std::function<std::string(const std::string&)> choice_check(const std::string& option, const settings::Setting& setting) {
  return [option, &setting](const std::string& value) -> std::string {
    if (settings::is_choice(setting, value)) return "";
    return option + " must be " + either(settings::choices(setting)) + ", not \"" + value + "\"";
  };
}

}  // namespace

std::string preload_library_path() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "libnimble.so";
  return (exe.parent_path().parent_path() / "lib" / "libnimble.so").lexically_normal().string();
}

namespace {
// The trace path the program is given for -o (and whose folder output_folder_problem makes).
fs::path program_output_path(const std::string& output) { return fs::absolute(output).lexically_normal(); }
}  // namespace

std::vector<std::string> record_environment(const RecordOptions& options, const std::string& preload,
                                            const char* ld_preload) {
  std::string preload_list = preload;
  if (ld_preload && *ld_preload) preload_list += std::string(":") + ld_preload;
  std::vector<std::string> env = {"LD_PRELOAD=" + preload_list};
  auto set = [&env](const settings::Setting& setting, const std::string& value) {
    env.push_back(settings::assignment(setting, value));
  };
  set(settings::mode, "record");
  set(settings::output, program_output_path(options.output).string());
  set(settings::range_text, options.capture_range);
  set(settings::iteration, std::to_string(options.iteration));
  set(settings::dependencies, options.dependencies);
  if (options.bench_iterations > 0) set(settings::bench_iterations, std::to_string(options.bench_iterations));
  if (options.bench_max_streams) set(settings::bench_max_streams, std::to_string(*options.bench_max_streams));
  if (options.run) set(settings::run, "1");
  if (options.run_piece) set(settings::run_piece, std::to_string(*options.run_piece));
  if (options.run_max_streams) set(settings::run_max_streams, std::to_string(*options.run_max_streams));
  if (options.run_compare > 0) set(settings::run_compare, std::to_string(options.run_compare));
  // NVTX hands its ranges to the library named here (nimble exports InitializeInjectionNvtx2).
  if (options.capture_range.rfind("nvtx:", 0) == 0) env.push_back("NVTX_INJECTION64_PATH=" + preload);
  return env;
}

void add_recording_options(CLI::App& cmd, RecordOptions& options) {
  auto* output = cmd.add_option("-o,--output", options.output,
                                options.output.empty() ? "trace file to write (its folder is made if missing)"
                                                       : "trace file to write (default " + options.output +
                                                             "; its folder is made if missing)");
  if (options.output.empty()) output->required();
  cmd.add_option("--capture-range", options.capture_range, choice_help(settings::range_text, options.capture_range))
      ->check(choice_check("--capture-range", settings::range_text));
  cmd.add_option("--iteration", options.iteration,
                 "which range (cudaProfilerApi, nvtx) or which detected iteration (auto) to record (default " +
                     std::to_string(options.iteration) + ")")
      ->check(CLI::PositiveNumber);
  cmd.add_option("COMMAND", options.command, "the program and its arguments, after --")->required();
}

void add_dependencies_option(CLI::App& cmd, RecordOptions& options) {
  cmd.add_option("--dependencies", options.dependencies, choice_help(settings::dependencies, options.dependencies))
      ->check(choice_check("--dependencies", settings::dependencies));
}

int exit_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::string summarize_recording(const trace::Trace& trace) {
  const auto hint = shared_allocation_hint(trace);
  std::map<std::string, std::size_t> kinds;
  std::map<std::string, std::uint64_t> copied;  // bytes by direction
  std::map<std::string, std::size_t> library_calls, reasons;
  std::size_t edges = 0, timed = 0;
  for (const auto& t : trace.tasks) {
    ++kinds[t.kind];
    edges += t.deps.size();
    if (t.duration_us) ++timed;
    if (t.extra.contains("copy")) {
      const trace::CopyRecord copy = trace::read_copy(t);
      copied[copy.direction] += copy.bytes;
    }
    if (t.extra.contains("library_call") && t.extra["library_call"].is_string()) {
      ++library_calls[t.extra["library_call"].get<std::string>()];
    }
    for (const trace::TaskId dep : t.deps) {  // "stream; memory RAW alloc 3 ..." -> stream, memory
      for (const trace::DepReason& why : trace::read_reasons(t, dep).value_or(std::vector<trace::DepReason>{})) {
        ++reasons[why.label];
      }
    }
  }
  std::ostringstream out;
  out << "  tasks        " << trace.tasks.size() << " (";
  bool first = true;
  for (const auto& [kind, n] : kinds) {
    out << (first ? "" : ", ") << n << " " << kind;
    first = false;
  }
  out << ")\n";
  if (!copied.empty()) {
    std::uint64_t total = 0;
    for (const auto& [dir, n] : copied) total += n;
    out << "  copied       " << bytes_text(total) << " (";
    first = true;
    for (const auto& [dir, n] : copied) {
      out << (first ? "" : ", ") << dir << " " << bytes_text(n);
      first = false;
    }
    out << ")\n";
  }
  out << "  dependencies " << edges;
  if (!reasons.empty()) {
    out << " (reasons: ";
    first = true;
    for (const auto& [why, n] : reasons) {
      out << (first ? "" : ", ") << why << " " << n;
      first = false;
    }
    out << ")";
  }
  out << "\n";
  const auto& extra = trace.extra;
  if (extra.contains("streams") && extra["streams"].is_array()) {
    out << "  streams      " << extra["streams"].size();
    if (extra.contains("allocations") && extra["allocations"].is_array()) {
      out << ", allocations " << extra["allocations"].size();
    }
    out << "\n";
  }
  if (!library_calls.empty()) {
    out << "  library      ";
    first = true;
    for (const auto& [name, n] : library_calls) {
      out << (first ? "" : ", ") << name << " " << n;
      first = false;
    }
    out << " tasks\n";
  }
  const auto coverage = extra.value("coverage", trace::json::object());
  const auto traced = coverage.value("traced_kernels", std::int64_t{-1});
  if (coverage.contains("cupti_kernels") && coverage["cupti_kernels"].is_number()) {
    const auto cupti = coverage["cupti_kernels"].get<std::int64_t>();
    const auto in_graphs = coverage.value("cupti_graph_kernels", std::int64_t{0});
    out << "  coverage     " << traced << " kernels traced, CUPTI counted " << cupti
        << (in_graphs > 0 ? " (" + std::to_string(in_graphs) + " as graph nodes)" : std::string())
        << (traced == cupti ? " (complete)" : " (MISSING " + std::to_string(cupti - traced) + ")")
        << "; durations for " << timed << " of " << trace.tasks.size() << " tasks\n";
  } else {
    out << "  coverage     " << traced << " kernels traced; no CUPTI reference ("
        << coverage.value("cupti_note", std::string("unavailable")) << ")\n";
  }
  if (extra.contains("device") && extra["device"].is_object()) {
    const auto& d = extra["device"];
    if (d.contains("name") && d["name"].is_string()) out << "  device       " << d["name"].get<std::string>() << "\n";
  }
  if (auto capture = capture_text(trace)) out << "  capture      " << *capture << "\n";
  if (hint) out << "  note         " << *hint << "\n";
  return out.str();
}

namespace {

// One file a process of the program may write for -o (settings/output_path.hpp): the -o path
// itself; TRACE.rankR.json for each rank of several and TRACE.pidP.json for each process that
// found TRACE.json held by another; or, when -o names %p or %r, every file that pattern makes
// (placeholders in the file name, not in the directory).
struct OutputFile {
  std::string path;
  std::string who;      // "", "rank R" or "process P"
  long order = -1;      // the rank or pid, to list them in order (the -o file itself first)
};

std::string regex_escaped(const std::string& text) {
  static const std::string special = R"(\^$.|?*+()[]{})";
  std::string out;
  for (char c : text) {
    if (special.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

std::vector<OutputFile> output_files(const std::string& output) {
  const fs::path parent = fs::path(output).parent_path();
  const std::string name = fs::path(output).filename().string();
  // The file names as regular expressions, each with who wrote it; the first placeholder's number
  // tells which one.
  std::vector<std::pair<std::regex, std::string>> matchers;  // (file name, "rank" or "process")
  std::string pattern;
  std::string first;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '%' && i + 1 < name.size() && (name[i + 1] == 'p' || name[i + 1] == 'r')) {
      if (first.empty()) first = name[i + 1] == 'r' ? "rank" : "process";
      pattern += "([0-9]{1,9})";
      ++i;
    } else {
      pattern += regex_escaped(std::string(1, name[i]));
    }
  }
  if (!first.empty()) {
    matchers.emplace_back(std::regex(pattern), first);
  } else {
    // No placeholder: the -o file, and the rank and process files beside it.
    const auto beside = [&](const std::string& tagged, const std::string& tag, const std::string& who) {
      const std::size_t at = tagged.rfind(tag);
      matchers.emplace_back(std::regex(regex_escaped(tagged.substr(0, at)) + regex_escaped(tag.substr(0, tag.size() - 1)) +
                                       "([0-9]{1,9})" + regex_escaped(tagged.substr(at + tag.size()))),
                            who);
    };
    beside(fs::path(settings::rank_path(name, 0)).filename().string(), ".rank0", "rank");
    beside(fs::path(settings::pid_path(name, 0)).filename().string(), ".pid0", "process");
  }
  std::vector<OutputFile> out;
  if (fs::exists(output)) out.push_back({output, "", -1});
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent.empty() ? fs::path(".") : parent, error)) {
    const std::string file = entry.path().filename().string();
    if (file == name) continue;
    for (const auto& [matcher, who] : matchers) {
      std::smatch m;
      if (!std::regex_match(file, m, matcher)) continue;
      const long number = std::stol(m[1].str());
      out.push_back({(parent / file).string(), who + " " + std::to_string(number), number});
      break;
    }
  }
  std::sort(out.begin(), out.end(), [](const OutputFile& a, const OutputFile& b) { return a.order < b.order; });
  return out;
}

// The folder -o writes into, made if missing (as mkdir -p would) and tried with a file of our own:
// the program's trace writer could only say it cannot write there after the whole run. Empty when
// it is fine, else what is wrong.
std::string output_folder_problem(const std::string& output) {
  const fs::path folder = program_output_path(output).parent_path();
  const std::string text = folder.string();
  if (text.find("%p") != std::string::npos || text.find("%r") != std::string::npos) {
    return "-o " + output + ": %p and %r go in the file name, not in the folder";
  }
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) return "cannot make the folder " + folder.string() + " for -o: " + error.message();
  std::string probe = (folder / ".nimble-write-test-XXXXXX").string();
  const int fd = mkstemp(probe.data());
  if (fd < 0) return "cannot write into " + folder.string() + " (for -o): " + std::strerror(errno);
  close(fd);
  fs::remove(probe, error);
  return "";
}

}  // namespace

std::string rank_note(const RecordedProcess& process) {
  return process.who.empty() ? "" : " (" + process.who + ")";
}

namespace {
// The JSON object in `file`; null when it is missing or not an object.
trace::json json_object_in(const std::string& file) {
  std::ifstream in(file);
  trace::json json = trace::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return in && json.is_object() ? json : trace::json(nullptr);
}

// The reason a run summary gives for replaying nothing; "" when there is no such summary.
std::string nothing_replayed_because(const std::string& summary_path) {
  const trace::json summary = json_object_in(summary_path);
  const trace::json why = summary.is_object() ? summary.value(replayer::kNothingReplayedBecause, trace::json()) : trace::json();
  return why.is_string() ? why.get<std::string>() : "";
}
}  // namespace

trace::json results_written_with(const std::string& file, const RecordedProcess& process) {
  std::error_code a, b;
  const auto results = fs::last_write_time(file, a), trace = fs::last_write_time(process.path, b);
  if (a || b || results < trace) return nullptr;  // none, or an earlier run's
  return json_object_in(file);
}

std::vector<RecordedProcess> record_program(const RecordOptions& options, const std::string& verb) {
  const std::string preload = preload_library_path();
  if (!fs::exists(preload)) {
    std::cerr << verb << ": " << preload << " not found; build the nimble_preload target "
              << "(libnimble.so is expected in ../lib beside the nimble executable)\n";
    exit_code() = kExitBadInput;
    return {};
  }
  if (const std::string problem = output_folder_problem(options.output); !problem.empty()) {
    std::cerr << verb << ": " << problem << "; choose another path with -o\n";
    exit_code() = kExitBadInput;
    return {};
  }
  // What exists before the run, so that only files this run wrote are read back.
  std::map<std::string, FileStamp> before;
  for (const OutputFile& f : output_files(options.output)) before[f.path] = stamp(f.path);
  std::vector<std::string> environment = record_environment(options, preload, std::getenv("LD_PRELOAD"));
  // A NIMBLE_* variable libnimble.so would refuse, alone or with another (and then not record at
  // all): said now, by libnimble.so's own reading, not after a whole run that recorded nothing for a
  // reason the summary could not name. The values nimble sets itself come from its options.
  const auto program_sees = [&environment](const char* name) -> const char* {
    const std::string prefix = std::string(name) + "=";
    for (const std::string& e : environment) {
      if (e.rfind(prefix, 0) == 0) return e.c_str() + prefix.size();
    }
    return std::getenv(name);
  };
  if (const std::vector<std::string> refused = hooks::parse_config(program_sees).errors; !refused.empty()) {
    for (const std::string& error : refused) std::cerr << verb << ": " << error << "; fix or unset it\n";
    exit_code() = kExitBadInput;
    return {};
  }
#ifdef NIMBLE_ASAN_RUNTIME
  // Sanitized build (NIMBLE_SANITIZE): its libnimble.so needs the ASan runtime loaded before it.
  for (auto& e : environment)
    if (e.rfind("LD_PRELOAD=", 0) == 0) e.insert(11, NIMBLE_ASAN_RUNTIME ":");
#endif
  // The run's claims on its output files (settings/output_claim.hpp), kept until the program ends:
  // a process without a rank that writes after another has ended still gets a name of its own.
  std::string claims = (fs::temp_directory_path() / "nimble-claims-XXXXXX").string();
  if (::mkdtemp(claims.data())) {
    environment.push_back(settings::assignment(settings::output_claims, claims));
  } else {
    claims.clear();  // claims then last as long as their process
  }
  const int status = run(options, environment, verb);
  exit_code() = status;
  if (!claims.empty()) {
    std::error_code ignored;
    fs::remove_all(claims, ignored);
  }

  std::vector<OutputFile> written;
  for (const OutputFile& f : output_files(options.output)) {
    if (rewritten(before.count(f.path) ? before[f.path] : FileStamp{}, stamp(f.path))) written.push_back(f);
  }
  // nimble run stands in for the program: whatever nimble found or not, its exit status is the
  // program's (a job that ran fine must not fail for it); `record` exists to write the trace.
  const bool failing_is_ours = !options.run && status == 0;
  if (written.empty()) {
    const std::string why =
        (status != 0 ? "the program ended with status " + std::to_string(status) + " first, or " : std::string()) +
        no_trace_advice(options);
    if (options.run) {
      // What the program's libnimble.so saw, when it said (nimble run removed the summary before).
      const std::string said = nothing_replayed_because(replayer::beside_trace(options.output, "run"));
      std::cerr << verb << ": nothing was replayed: "
                << (said.empty() ? "nothing was recorded (" + why + ")" : said) << "\n";
    } else {
      std::cerr << verb << ": no trace was written to " << options.output << ": " << why << "\n";
    }
    if (failing_is_ours) exit_code() = kExitBadInput;
    return {};
  }
  std::vector<RecordedProcess> out;
  for (const OutputFile& f : written) {
    trace::LoadResult loaded = trace::load_trace(f.path);
    if (!loaded.diagnostics.items.empty()) std::cerr << loaded.diagnostics.format(f.path);
    if (!loaded.trace) {
      std::cerr << verb << ": " << f.path << " was written but is not a valid trace\n";
      if (failing_is_ours) exit_code() = kExitBadInput;
      continue;
    }
    out.push_back({f.path, f.who, status, std::move(*loaded.trace)});
  }
  return out;
}

void add_record_command(CLI::App& app) {
  auto options = std::make_shared<RecordOptions>();
  auto* cmd = app.add_subcommand(
      "record",
      "Run a CUDA program with libnimble.so preloaded and record one iteration of its GPU work");
  cmd->footer(
      "Example: nimble record -o resnet.json -- python train.py --epochs 1\n"
      "The program brackets the iteration to record with cudaProfilerStart/Stop (e.g.\n"
      "torch.cuda.profiler.start()/stop()), or use --capture-range auto or nvtx:NAME.\n"
      "nimble exits with the program's status (128+N if it died of signal N).\n"
      "See docs/recording.md (or `nimble settings`) for the environment variables behind\n"
      "this command.");
  add_recording_options(*cmd, *options);
  add_dependencies_option(*cmd, *options);
  cmd->callback([options] {
    for (const RecordedProcess& p : record_program(*options, "nimble record")) {
      std::cout << "nimble record: " << p.path << rank_note(p) << " (program exited with " << p.status << ")\n"
                << summarize_recording(p.trace);
    }
  });
}

}  // namespace nimble::cli
