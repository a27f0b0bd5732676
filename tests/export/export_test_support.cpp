#include "export_test_support.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nimble/trace/io.hpp"

namespace nimble::export_test {

std::string example_path(const std::string& name) { return std::string(NIMBLE_SOURCE_DIR) + "/docs/examples/" + name; }

trace::Trace load_example(const std::string& name) {
  trace::LoadResult result = trace::load_trace(example_path(name));
  EXPECT_TRUE(result.trace.has_value()) << result.diagnostics.format(name);
  return result.trace ? *result.trace : trace::Trace{};
}

trace::Task make_task(trace::TaskId id, std::vector<trace::TaskId> deps, std::optional<double> duration,
                      std::optional<int> stream, const std::string& kind) {
  trace::Task t;
  t.id = id;
  t.kind = kind;
  t.deps = std::move(deps);
  t.duration_us = duration;
  t.stream = stream;
  return t;
}

trace::Trace redundant_edge_trace() {
  trace::Trace t;
  t.tasks = {make_task(10, {}, 1.0), make_task(20, {10}, 2.0), make_task(30, {10, 20}, 3.0)};
  t.tasks[1].extra["dep_reasons"] = {{"10", "stream; memory RAW alloc 0 +0x0..+0x10"}};
  t.tasks[2].extra["dep_reasons"] = {{"10", "memory WAR alloc 1 +0x0..+0x10"}, {"20", "event"}};
  return t;
}

namespace {

// Tokens of DOT: quoted strings (kept unescaped with a flag), bare IDs, punctuation, "->".
struct Token {
  enum Kind { Id, Quoted, Punct, End } kind = End;
  std::string text;
};

struct Lexer {
  const std::string& s;
  std::size_t i = 0;
  std::string error;

  Token next() {
    while (i < s.size()) {
      if (std::isspace(static_cast<unsigned char>(s[i]))) {
        ++i;
      } else if (s.compare(i, 2, "//") == 0) {
        while (i < s.size() && s[i] != '\n') ++i;
      } else {
        break;
      }
    }
    if (i >= s.size()) return {Token::End, ""};
    const char c = s[i];
    if (c == '"') {
      std::string value;
      ++i;
      while (true) {
        if (i >= s.size()) {
          error = "unterminated quoted string";
          return {Token::End, ""};
        }
        const char d = s[i];
        if (d == '"') {
          ++i;
          break;
        }
        if (d == '\n') {
          error = "raw newline inside a quoted string";
          return {Token::End, ""};
        }
        if (d == '\\' && i + 1 < s.size()) {
          const char e = s[i + 1];
          if (e == '"' || e == '\\') {
            value += e;
          } else {
            value += '\\';
            value += e;
          }
          i += 2;
          continue;
        }
        value += d;
        ++i;
      }
      return {Token::Quoted, value};
    }
    if (s.compare(i, 2, "->") == 0) {
      i += 2;
      return {Token::Punct, "->"};
    }
    if (std::string("{}[]=;,").find(c) != std::string::npos) {
      ++i;
      return {Token::Punct, std::string(1, c)};
    }
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') {
      std::string value;
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.')) {
        value += s[i++];
      }
      if (value.empty()) {
        error = std::string("unexpected character '") + c + "'";
        return {Token::End, ""};
      }
      return {Token::Id, value};
    }
    error = std::string("unexpected character '") + c + "'";
    return {Token::End, ""};
  }
};

struct Parser {
  std::vector<Token> tokens;
  std::size_t p = 0;
  DotFile out;
  std::string error;

  const Token& peek(std::size_t ahead = 0) const {
    static const Token end;
    return p + ahead < tokens.size() ? tokens[p + ahead] : end;
  }
  bool is_id(const Token& t) const { return t.kind == Token::Id || t.kind == Token::Quoted; }
  bool punct(const char* text) {
    if (peek().kind == Token::Punct && peek().text == text) {
      ++p;
      return true;
    }
    return false;
  }
  bool fail(const std::string& what) {
    if (error.empty()) error = what + " at token " + std::to_string(p) + " ('" + peek().text + "')";
    return false;
  }
  bool attributes(std::map<std::string, std::string>& into) {
    if (!punct("[")) return true;
    while (!punct("]")) {
      if (!is_id(peek())) return fail("expected an attribute name");
      const std::string key = tokens[p++].text;
      if (!punct("=")) return fail("expected '='");
      if (!is_id(peek())) return fail("expected an attribute value");
      into[key] = tokens[p++].text;
      punct(",") || punct(";");
    }
    return true;
  }
  bool statements(const std::string& cluster, std::map<std::string, std::string>* cluster_attributes) {
    while (!punct("}")) {
      const Token& t = peek();
      if (t.kind == Token::End) return fail("unbalanced braces: end of input inside a block");
      if (t.kind == Token::Id && (t.text == "graph" || t.text == "node" || t.text == "edge") &&
          peek(1).kind == Token::Punct && peek(1).text == "[") {
        ++p;
        std::map<std::string, std::string> attrs;
        if (!attributes(attrs)) return false;
        if (t.text == "graph" && cluster.empty()) out.graph_attributes = attrs;
      } else if (t.kind == Token::Id && t.text == "subgraph") {
        ++p;
        if (!is_id(peek())) return fail("expected a subgraph name");
        const std::string name = tokens[p++].text;
        if (!punct("{")) return fail("expected '{' after subgraph");
        auto& attrs = out.clusters[name];
        if (!statements(name, &attrs)) return false;
      } else if (is_id(t) && peek(1).kind == Token::Punct && peek(1).text == "=") {
        const std::string key = tokens[p].text;
        p += 2;
        if (!is_id(peek())) return fail("expected a value");
        const std::string value = tokens[p++].text;
        if (cluster_attributes) {
          (*cluster_attributes)[key] = value;
        } else {
          out.graph_attributes[key] = value;
        }
      } else if (is_id(t) && peek(1).kind == Token::Punct && peek(1).text == "->") {
        DotEdge edge;
        edge.from = tokens[p].text;
        p += 2;
        if (!is_id(peek())) return fail("expected an edge target");
        edge.to = tokens[p++].text;
        if (!attributes(edge.attributes)) return false;
        out.edges.push_back(std::move(edge));
      } else if (is_id(t)) {
        const std::string id = tokens[p++].text;
        DotNode& node = out.nodes[id];
        if (node.attributes.empty() && node.cluster.empty()) out.node_order.push_back(id);
        node.cluster = cluster;
        ++out.node_statements;
        if (!attributes(node.attributes)) return false;
      } else {
        return fail("unexpected token");
      }
      punct(";");
    }
    return true;
  }
};

}  // namespace

DotFile parse_dot(const std::string& text) {
  Lexer lexer{text, 0, {}};
  Parser parser;
  while (true) {
    Token t = lexer.next();
    if (!lexer.error.empty()) {
      parser.out.error = lexer.error;
      return parser.out;
    }
    if (t.kind == Token::End) break;
    parser.tokens.push_back(std::move(t));
  }
  if (parser.peek().kind != Token::Id || parser.peek().text != "digraph") {
    parser.out.error = "does not start with 'digraph'";
    return parser.out;
  }
  ++parser.p;
  if (parser.is_id(parser.peek())) parser.out.graph_name = parser.tokens[parser.p++].text;
  if (!parser.punct("{")) {
    parser.out.error = "expected '{'";
    return parser.out;
  }
  if (!parser.statements("", nullptr)) {
    parser.out.error = parser.error;
    return parser.out;
  }
  if (parser.p != parser.tokens.size()) {
    parser.out.error = "text after the closing brace (unbalanced braces)";
    return parser.out;
  }
  parser.out.ok = true;
  return parser.out;
}

bool have_command(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

RunResult run_shell(const std::string& command) {
  static std::atomic<int> counter{0};
  const std::filesystem::path err_file = std::filesystem::temp_directory_path() /
                                         ("nimble_export_err_" + std::to_string(getpid()) + "_" +
                                          std::to_string(counter++));
  RunResult run;
  FILE* pipe = popen((command + " 2>" + err_file.string()).c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) run.out.append(buffer, n);
  const int raw = pclose(pipe);
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.err = read_text(err_file.string());
  std::filesystem::remove(err_file);
  return run;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace nimble::export_test
