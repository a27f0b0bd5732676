// Type checks on JSON fields that report at a location built from the field's path, with the
// severity the caller chooses. Used for the recorder's optional fields.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include "nimble/trace/diagnostics.hpp"
#include "nimble/trace/trace.hpp"

namespace nimble::trace::detail {

inline constexpr Severity kError = Severity::Error;
inline constexpr Severity kWarning = Severity::Warning;
inline constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
inline constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kUint32Max = std::numeric_limits<std::uint32_t>::max();

class FieldChecker {
 public:
  FieldChecker(Diagnostics& out, std::function<Location(const std::string&)> locate)
      : out_(out), locate_(std::move(locate)) {}

  void report(Severity severity, const std::string& path, std::string message) const;

  // Each returns whether the value has the type (or the value, when it has one); a mismatch is
  // reported as "\"path\" must be ..., got ...".
  bool object(const json& v, const std::string& path, Severity s, const char* shape) const;
  bool array(const json& v, const std::string& path, Severity s, const char* of) const;
  bool string(const json& v, const std::string& path, Severity s) const;
  bool string_or_null(const json& v, const std::string& path, Severity s) const;  // null: unknown
  bool boolean(const json& v, const std::string& path, Severity s) const;
  std::optional<std::int64_t> integer(const json& v, const std::string& path, Severity s,
                                      std::int64_t min = kInt64Min, std::int64_t max = kInt64Max) const;
  bool microseconds(const json& v, const std::string& path, Severity s) const;  // finite, >= 0
  std::optional<std::uint64_t> address(const json& v, const std::string& path, Severity s) const;  // "0x..."
  bool dim3(const json& v, const std::string& path, Severity s) const;  // [x, y, z], each >= 1
  // One of `allowed`.
  bool one_of(const json& v, const std::string& path, Severity s, std::initializer_list<const char*> allowed) const;

  // Members of `object`: absent is fine (nullopt / true), present ones are checked as above.
  std::optional<std::int64_t> member_integer(const json& object, const char* key, const std::string& path, Severity s,
                                             std::int64_t min = kInt64Min, std::int64_t max = kInt64Max) const;
  void require(const json& object, const std::string& path, Severity s, std::initializer_list<const char*> names) const;

 private:
  Diagnostics& out_;
  std::function<Location(const std::string&)> locate_;
};

}  // namespace nimble::trace::detail
