#include "schema_subset.hpp"

#include <regex>
#include <set>

namespace nimble::trace::testing {
namespace {

const std::set<std::string> kIgnored = {"$schema", "$id", "$defs", "$comment", "title", "description", "examples", "default"};

bool has_type(const json& value, const std::string& type) {
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "integer") return value.is_number_integer();
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "null") return value.is_null();
  return false;
}

class Checker {
 public:
  explicit Checker(const json& root) : root_(root) {}

  void check(const json& schema, const json& value, const std::string& path) {
    for (const auto& [keyword, argument] : schema.items()) {
      if (kIgnored.count(keyword)) continue;
      if (keyword == "$ref") {
        const std::string prefix = "#/$defs/";
        const std::string ref = argument.get<std::string>();
        if (ref.rfind(prefix, 0) != 0 || !root_["$defs"].contains(ref.substr(prefix.size()))) {
          problem(path, "unresolvable $ref " + ref);
        } else {
          check(root_["$defs"][ref.substr(prefix.size())], value, path);
        }
      } else if (keyword == "type") {
        bool ok = false;
        if (argument.is_string()) ok = has_type(value, argument.get<std::string>());
        for (const auto& t : argument.is_array() ? argument : json::array()) ok = ok || has_type(value, t.get<std::string>());
        if (!ok) problem(path, "is not of type " + argument.dump());
      } else if (keyword == "enum") {
        bool ok = false;
        for (const auto& option : argument) ok = ok || option == value;
        if (!ok) problem(path, value.dump() + " is not one of " + argument.dump());
      } else if (keyword == "const") {
        if (argument != value) problem(path, value.dump() + " is not " + argument.dump());
      } else if (keyword == "required") {
        for (const auto& name : argument) {
          if (value.is_object() && !value.contains(name.get<std::string>())) problem(path, "required " + name.dump() + " is missing");
        }
      } else if (keyword == "properties") {
        if (!value.is_object()) continue;
        for (const auto& [name, sub] : argument.items()) {
          if (value.contains(name)) check(sub, value[name], path + "/" + name);
        }
      } else if (keyword == "additionalProperties") {
        if (!value.is_object()) continue;
        for (const auto& [name, member] : value.items()) {
          if (schema.contains("properties") && schema["properties"].contains(name)) continue;
          if (argument.is_boolean()) {
            if (!argument.get<bool>()) problem(path, "unexpected property " + name);
          } else {
            check(argument, member, path + "/" + name);
          }
        }
      } else if (keyword == "items") {
        if (!value.is_array()) continue;
        for (std::size_t i = 0; i < value.size(); ++i) check(argument, value[i], path + "/" + std::to_string(i));
      } else if (keyword == "minItems" || keyword == "maxItems") {
        if (!value.is_array()) continue;
        const auto limit = argument.get<std::size_t>();
        if (keyword == "minItems" ? value.size() < limit : value.size() > limit) problem(path, keyword + " " + argument.dump());
      } else if (keyword == "minimum" || keyword == "maximum") {
        if (!value.is_number()) continue;
        const double v = value.get<double>(), limit = argument.get<double>();
        if (keyword == "minimum" ? v < limit : v > limit) problem(path, value.dump() + " breaks " + keyword + " " + argument.dump());
      } else if (keyword == "minLength") {
        if (value.is_string() && value.get<std::string>().size() < argument.get<std::size_t>()) problem(path, "too short");
      } else if (keyword == "pattern") {
        if (value.is_string() && !std::regex_search(value.get<std::string>(), std::regex(argument.get<std::string>()))) {
          problem(path, value.dump() + " does not match " + argument.get<std::string>());
        }
      } else if (keyword == "anyOf") {
        bool ok = false;
        for (const auto& option : argument) {
          Checker sub(root_);
          sub.check(option, value, path);
          ok = ok || sub.problems.empty();
        }
        if (!ok) problem(path, "matches none of anyOf");
      } else {
        problem(path, "unsupported schema keyword " + keyword);
      }
    }
  }

  std::vector<std::string> problems;

 private:
  void problem(const std::string& path, const std::string& what) { problems.push_back((path.empty() ? "/" : path) + ": " + what); }
  const json& root_;
};

}  // namespace

std::vector<std::string> schema_problems(const json& schema, const json& instance) {
  Checker checker(schema);
  checker.check(schema, instance, "");
  return checker.problems;
}

}  // namespace nimble::trace::testing
