// write_trace: atomic replacement, untouched targets on failure, no temporary files left behind.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "test_support.hpp"

namespace nimble::trace::testing {
namespace {

namespace fs = std::filesystem;

Trace small_trace() { return trace_with_deps({{}, {0}}); }

// A trace whose text is about `bytes` long.
Trace large_trace(std::size_t bytes) {
  Trace t = trace_with_deps({{}});
  t.tasks[0].extra["blob"] = std::string(bytes, 'x');
  return t;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

TEST(Write, CreatesAndReplacesFiles) {
  TempDir dir;
  const auto path = dir / "out.json";
  ASSERT_EQ(write_trace(small_trace(), path.string()), std::nullopt);
  EXPECT_EQ(read_file(path), dump_trace(small_trace()));
  Trace other = trace_with_deps({{}});
  ASSERT_EQ(write_trace(other, path.string()), std::nullopt);
  EXPECT_EQ(read_file(path), dump_trace(other));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.json"});
}

TEST(Write, KeepsTheModeOfAReplacedFile) {
  TempDir dir;
  const auto path = dir / "out.json";
  write_text(path, "old");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  ASSERT_EQ(write_trace(small_trace(), path.string()), std::nullopt);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST(Write, NewFilesFollowTheUmask) {
  TempDir dir;
  const mode_t previous = umask(027);
  const auto error = write_trace(small_trace(), (dir / "new.json").string());
  umask(previous);
  ASSERT_EQ(error, std::nullopt);
  EXPECT_EQ(fs::status(dir / "new.json").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST(Write, FailedWriteLeavesTheOldFileAndNoTemporaryFile) {
  // The disk "fills up" half way: RLIMIT_FSIZE makes write() fail with EFBIG (root too).
  TempDir dir;
  const auto path = dir / "trace.json";
  write_text(path, "the old trace");
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous_handler = signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const auto error = write_trace(large_trace(1 << 20), path.string());
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, previous_handler);
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("trace.json"), std::string::npos) << *error;
  EXPECT_EQ(read_file(path), "the old trace");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"trace.json"});
}

// Makes a directory unwritable until destroyed: read-only permissions, and for root, who ignores
// permissions, the immutable attribute (as `chattr +i`).
class UnwritableDirectory {
 public:
  explicit UnwritableDirectory(const fs::path& path) : path_(path) {
    fs::permissions(path_, fs::perms::owner_read | fs::perms::owner_exec);
    if (geteuid() != 0) {
      ok_ = true;
      return;
    }
    const int fd = open(path_.c_str(), O_RDONLY | O_DIRECTORY);
    int flags = 0;
    if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
      flags |= FS_IMMUTABLE_FL;
      ok_ = immutable_ = ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    }
    if (fd >= 0) close(fd);
  }
  ~UnwritableDirectory() {
    if (immutable_) {
      const int fd = open(path_.c_str(), O_RDONLY | O_DIRECTORY);
      int flags = 0;
      if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
        flags &= ~FS_IMMUTABLE_FL;
        ioctl(fd, FS_IOC_SETFLAGS, &flags);
      }
      if (fd >= 0) close(fd);
    }
    fs::permissions(path_, fs::perms::owner_all);
  }
  bool ok() const { return ok_; }

 private:
  fs::path path_;
  bool ok_ = false;
  bool immutable_ = false;
};

TEST(Write, UnwritableDirectoryLeavesTheOldFile) {
  TempDir dir;
  const auto path = dir / "trace.json";
  write_text(path, "the old trace");
  std::optional<std::string> error;
  {
    UnwritableDirectory locked(dir.path());
    if (!locked.ok()) GTEST_SKIP() << "cannot make a directory unwritable for root on this file system";
    error = write_trace(small_trace(), path.string());
  }
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("cannot create a temporary file"), std::string::npos) << *error;
  EXPECT_EQ(read_file(path), "the old trace");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"trace.json"});
}

TEST(Write, MissingDirectoryIsReported) {
  TempDir dir;
  const auto error = write_trace(small_trace(), (dir / "no/such/dir/t.json").string());
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("No such file or directory"), std::string::npos) << *error;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Write, TargetThatIsADirectoryIsLeftAlone) {
  TempDir dir;
  fs::create_directory(dir / "taken");
  write_text(dir / "taken" / "inside", "x");
  const auto error = write_trace(small_trace(), (dir / "taken").string());
  ASSERT_TRUE(error.has_value());
  EXPECT_NE(error->find("cannot replace it"), std::string::npos) << *error;
  EXPECT_EQ(read_file(dir / "taken" / "inside"), "x");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken"});
}

TEST(Write, SymlinkedTargetIsReplacedThroughTheLink) {
  TempDir dir;
  write_text(dir / "real.json", "old");
  fs::create_symlink("real.json", dir / "link.json");
  ASSERT_EQ(write_trace(small_trace(), (dir / "link.json").string()), std::nullopt);
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(read_file(dir / "real.json"), dump_trace(small_trace()));
}

TEST(Write, DashMeansStandardOutput) {
  ::testing::internal::CaptureStdout();
  const auto error = write_trace(small_trace(), "-");
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(error, std::nullopt);
  EXPECT_EQ(out, dump_trace(small_trace()));
}

TEST(Write, WrittenFilesLoadBack) {
  TempDir dir;
  const auto path = dir / "t.json";
  const Trace original = large_trace(1000);
  ASSERT_EQ(write_trace(original, path.string()), std::nullopt);
  const auto r = load_trace(path.string());
  ASSERT_TRUE(r.trace) << dump(r.diagnostics);
  EXPECT_EQ(dump_trace(*r.trace), read_file(path));
}

}  // namespace
}  // namespace nimble::trace::testing
