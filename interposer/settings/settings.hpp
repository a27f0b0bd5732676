// libnimble.so's settings, generated from settings.def: each one's typed default
// (settings::defaults::run_piece), its description (settings::run_piece, and settings::all in the
// list's order) and the checks of a value. CUDA-free and free of nimble's other libraries, so the
// hooks, the replayer and the CLI all take their defaults and names from here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace nimble::settings {

enum class Kind { Switch, Flag, Count, Ratio, Text, Choice, ByHand };  // settings.def says what each accepts

// What C++ holds a setting's value in.
template <Kind> struct ValueOf { using type = const char*; };
template <> struct ValueOf<Kind::Switch> { using type = bool; };
template <> struct ValueOf<Kind::Flag> { using type = bool; };
template <> struct ValueOf<Kind::Count> { using type = int; };
template <> struct ValueOf<Kind::Ratio> { using type = double; };

struct Setting {
  const char* variable;         // "NIMBLE_RUN_PIECE"
  Kind kind;
  const char* default_text;     // the default as the variable would say it ("16"); "": unset
  const char* help;
  int max = 0;                  // Count: the largest value; 0: any of up to 9 digits
  const char* zero = nullptr;   // Count: what 0 means when it is accepted; nullptr: refused
  const char* unit = "";        // Count: what it counts, for errors
  double low = 0, high = 0;     // Ratio
  const char* choices = "";     // Choice: "a, b"
};

namespace defaults {
#define NIMBLE_SETTING(member, variable, kind, value, help) \
  inline constexpr ValueOf<Kind::kind>::type member = value;
#include "settings/settings.def"
}  // namespace defaults

// Numbers are described by their text in the list, so "1.05" stays "1.05". (Parameters are
// named apart from Setting's fields, which the designators would otherwise pick up.)
#define NIMBLE_SETTING_INFO(var, k, dflt, h, ...) \
  {.variable = #var, .kind = Kind::k, .default_text = dflt, .help = h __VA_OPT__(, ) __VA_ARGS__}
#define NIMBLE_SWITCH(m, var, val, h) inline constexpr Setting m NIMBLE_SETTING_INFO(var, Switch, #val, h);
#define NIMBLE_FLAG(m, var, val, h) inline constexpr Setting m NIMBLE_SETTING_INFO(var, Flag, #val, h);
#define NIMBLE_COUNT(m, var, val, mx, z, u, h) \
  inline constexpr Setting m NIMBLE_SETTING_INFO(var, Count, #val, h, .max = mx, .zero = z, .unit = u);
#define NIMBLE_RATIO(m, var, val, lo, hi, h) \
  inline constexpr Setting m NIMBLE_SETTING_INFO(var, Ratio, #val, h, .low = lo, .high = hi);
#define NIMBLE_TEXT(m, var, val, h) inline constexpr Setting m NIMBLE_SETTING_INFO(var, Text, val, h);
#define NIMBLE_CHOICE(m, var, val, c, h) inline constexpr Setting m NIMBLE_SETTING_INFO(var, Choice, val, h, .choices = c);
#define NIMBLE_BY_HAND(m, var, val, h) inline constexpr Setting m NIMBLE_SETTING_INFO(var, ByHand, val, h);
#include "settings/settings.def"
#undef NIMBLE_SETTING_INFO

inline constexpr Setting all[] = {
#define NIMBLE_SETTING(member, ...) member,
#include "settings/settings.def"
};

// nullptr if `variable` is none of the list's.
const Setting* find(std::string_view variable);

// Reading a value: "" when `setting` accepts `text` (then `out` holds it, and an empty text, the
// same as an unset variable, leaves `out` as it was), else what is wrong, naming the variable
// ("NIMBLE_RUN_VARIANTS=65 is not a number of execs per graph (a positive integer, at most 64)").
// Each takes the kinds its type holds: bool Switch and Flag, int Count, double Ratio, string the rest.
std::string parse(const Setting& setting, std::string_view text, bool& out);
std::string parse(const Setting& setting, std::string_view text, int& out);
std::string parse(const Setting& setting, std::string_view text, double& out);
std::string parse(const Setting& setting, std::string_view text, std::string& out);

// What `setting` accepts, in words: "a positive integer, at most 1024, or 0 for no cap",
// "one of stream-order, memory", "0 or 1"; "" for text and settings read by hand.
std::string accepted(const Setting& setting);

// A Choice's names as shown, without the other names some also accept: cudaProfilerApi, auto, nvtx:NAME.
std::vector<std::string> choices(const Setting& setting);
bool is_choice(const Setting& setting, std::string_view text);

// "NIMBLE_RUN_PIECE=8", as a program's environment holds it; without a value, the default.
std::string assignment(const Setting& setting, std::string_view value);
std::string assignment(const Setting& setting);

}  // namespace nimble::settings
