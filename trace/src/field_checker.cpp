#include "field_checker.hpp"

#include <cmath>

#include "json_checks.hpp"

namespace nimble::trace::detail {

void FieldChecker::report(Severity severity, const std::string& path, std::string message) const {
  if (severity == Severity::Error) out_.error(locate_(path), std::move(message));
  else out_.warning(locate_(path), std::move(message));
}

bool FieldChecker::object(const json& v, const std::string& path, Severity s, const char* shape) const {
  if (v.is_object()) return true;
  report(s, path, "\"" + path + "\" must be an object " + shape + ", got " + describe_value(v));
  return false;
}

bool FieldChecker::array(const json& v, const std::string& path, Severity s, const char* of) const {
  if (v.is_array()) return true;
  report(s, path, "\"" + path + "\" must be an array of " + of + ", got " + describe_value(v));
  return false;
}

bool FieldChecker::string(const json& v, const std::string& path, Severity s) const {
  if (v.is_string()) return true;
  report(s, path, "\"" + path + "\" must be a string, got " + describe_value(v));
  return false;
}

bool FieldChecker::string_or_null(const json& v, const std::string& path, Severity s) const {
  if (v.is_string() || v.is_null()) return true;
  report(s, path, "\"" + path + "\" must be a string (or null when unknown), got " + describe_value(v));
  return false;
}

bool FieldChecker::boolean(const json& v, const std::string& path, Severity s) const {
  if (v.is_boolean()) return true;
  report(s, path, "\"" + path + "\" must be true or false, got " + describe_value(v));
  return false;
}

std::optional<std::int64_t> FieldChecker::integer(const json& v, const std::string& path, Severity s,
                                                  std::int64_t min, std::int64_t max) const {
  const IntCheck check = check_int(v, min, max);
  if (!check.value) report(s, path, "\"" + path + "\" " + check.problem);
  return check.value;
}

bool FieldChecker::microseconds(const json& v, const std::string& path, Severity s) const {
  if (v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0) return true;
  report(s, path, "\"" + path + "\" must be a finite number of microseconds >= 0, got " + describe_value(v));
  return false;
}

std::optional<std::uint64_t> FieldChecker::address(const json& v, const std::string& path, Severity s) const {
  const auto address = parse_hex_address(v);
  if (!address) {
    report(s, path, "\"" + path + "\" must be an address written as a hex string such as \"0x7f3a00000000\", got " +
                        describe_value(v));
  }
  return address;
}

bool FieldChecker::dim3(const json& v, const std::string& path, Severity s) const {
  bool ok = v.is_array() && v.size() == 3;
  for (std::size_t k = 0; ok && k < 3; ++k) ok = check_int(v[k], 1, kUint32Max).value.has_value();
  if (!ok) {
    std::string got = describe_value(v);
    if (v.is_array()) {  // show the numbers: "[0,1,1]"
      got = v.dump(-1, ' ', false, json::error_handler_t::replace);
      if (got.size() > 40) got = got.substr(0, 37) + "...";
    }
    report(s, path, "\"" + path + "\" must be [x, y, z] with three integers from 1 to 4294967295, got " + got);
  }
  return ok;
}

bool FieldChecker::one_of(const json& v, const std::string& path, Severity s,
                          std::initializer_list<const char*> allowed) const {
  std::string list;
  for (const char* name : allowed) {
    if (v.is_string() && v.get_ref<const std::string&>() == name) return true;
    list += (list.empty() ? "\"" : ", \"") + std::string(name) + "\"";
  }
  report(s, path, "\"" + path + "\" must be one of " + list + ", got " + describe_value(v));
  return false;
}

std::optional<std::int64_t> FieldChecker::member_integer(const json& object, const char* key, const std::string& path,
                                                         Severity s, std::int64_t min, std::int64_t max) const {
  const auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  return integer(*it, path + "." + key, s, min, max);
}

void FieldChecker::require(const json& object, const std::string& path, Severity s,
                           std::initializer_list<const char*> names) const {
  for (const char* name : names) {
    if (!object.contains(name)) report(s, path + "." + name, "\"" + path + "\" needs \"" + name + "\"");
  }
}

}  // namespace nimble::trace::detail
