// SPDX-License-Identifier: GPL-2.0
#include "cli/cli_parse.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>

#include <CLI/CLI.hpp>

namespace cpuhp {
namespace {

class Formatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    if (is_positional)
      return CLI::Formatter::make_option_name(opt, is_positional);
    std::string names;
    for (const std::string& s : opt->get_snames())
      names += (names.empty() ? "-" : ",-") + s;
    for (const std::string& l : opt->get_lnames())
      names += (names.empty() ? "--" : ",--") + l;
    return names;
  }
};

// "-o", "--backend": the next option, not a value; "-5", "-1" and "-" (stdout)
// are values.
bool LooksLikeOption(const std::string& v) {
  return v.size() > 1 && v[0] == '-' && !std::isdigit(static_cast<unsigned char>(v[1])) &&
         v[1] != '.';
}

constexpr const char* kEmpty = "empty value";
constexpr const char* kOptionAsValue = "option as value";

// One occurrence of an option on the command line: the name as typed and the
// word given as its value (the next word, or what follows `=` or `-o`).
struct Typed {
  std::string name;
  std::string value;
  bool has_value = false;
};

std::vector<Typed> Occurrences(const CLI::Option& opt, const std::vector<std::string>& args) {
  std::vector<Typed> found;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--")
      break;
    Typed t;
    if (a.rfind("--", 0) == 0) {
      const size_t eq = a.find('=');
      t.name = a.substr(0, eq);
      if (!opt.check_lname(t.name.substr(2)))
        continue;
      if (eq != std::string::npos)
        t.value = a.substr(eq + 1), t.has_value = true;
    } else if (a.size() > 1 && a[0] == '-') {
      t.name = a.substr(0, 2);
      if (!opt.check_sname(t.name.substr(1)))
        continue;
      if (a.size() > 2)
        t.value = a.substr(2), t.has_value = true;  // -ovalue (CLI11 reads -o=x as "=x")
    } else {
      continue;
    }
    if (!t.has_value && i + 1 < args.size())
      t.value = args[i + 1], t.has_value = true;
    found.push_back(std::move(t));
  }
  return found;
}

// The option CLI11 named at the start of its message ("--backend: ...").
const CLI::Option* NamedOption(const CLI::App& sub, const std::string& what) {
  for (const CLI::Option* o : sub.get_options()) {
    const std::string name = o->get_name();
    if (!name.empty() && what.rfind(name + ":", 0) == 0)
      return o;
  }
  return nullptr;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The long option `typed` most likely meant: a prefix of it, or at most two
// edits away; none for short options (every letter is one edit from another).
std::string Suggestion(const CLI::App& sub, const std::string& typed) {
  if (typed.rfind("--", 0) != 0 || typed.size() < 4)
    return {};
  std::string best;
  size_t best_score = 3;
  for (const CLI::Option* o : sub.get_options())
    for (const std::string& l : o->get_lnames()) {
      const std::string name = "--" + l;
      const size_t score = name.rfind(typed, 0) == 0 ? 1 : EditDistance(typed, name);
      if (score < best_score)
        best = name, best_score = score;
    }
  return best;
}

std::string ExtrasLine(const CLI::App& app, const CLI::App& sub, const std::string& what,
                       const std::vector<std::string>& args) {
  const std::vector<std::string> extras = app.remaining(true);
  const std::set<std::string> extra(extras.begin(), extras.end());
  // An unknown option first: the words after it are likely its values.
  for (const std::string& a : args)
    if (extra.count(a) && LooksLikeOption(a)) {
      const std::string name = a.substr(0, a.find('='));
      const std::string hint = Suggestion(sub, name);
      return "unknown option " + name +
             (hint.empty() ? " (see --help)" : " (did you mean " + hint + "?)");
    }
  for (const std::string& a : args)
    if (extra.count(a))
      return "unexpected argument '" + a + "' (see --help)";
  return what + " (see --help)";
}

// More than one value for a single-value option, or none.
std::string MismatchLine(const CLI::Option& opt, const std::vector<Typed>& typed) {
  if (typed.empty())
    return opt.get_name() + " needs a value";
  if (typed.size() == 1)  // --cpus= is empty, --cpus last is missing
    return typed[0].name +
           (typed[0].has_value && typed[0].value.empty() ? ": empty value" : " needs a value");
  std::vector<std::string> names;
  for (const Typed& t : typed)
    if (std::find(names.begin(), names.end(), t.name) == names.end())
      names.push_back(t.name);
  const std::string times = typed.size() == 2 ? "twice" : std::to_string(typed.size()) + " times";
  if (names.size() == 1)
    return names[0] + " given " + times;
  std::string joined = names[0];
  for (size_t i = 1; i < names.size(); ++i)
    joined += " and " + names[i];
  return joined + " are one option, given " + times;
}

std::string ValueLine(const CLI::Option& opt, const std::vector<Typed>& typed) {
  if (opt.get_lnames().empty() && opt.get_snames().empty())
    return opt.get_name() + ": " + kEmpty;  // positional
  for (const Typed& t : typed)
    if (t.has_value && t.value.empty())
      return t.name + ": " + kEmpty;
  for (const Typed& t : typed)
    if (t.has_value && LooksLikeOption(t.value))
      return t.name + " needs a value (found the option " + t.value + ")";
  return {};
}

}  // namespace

void UseCliFormatter(CLI::App* app) {
  app->formatter(std::make_shared<Formatter>());
}

void CheckCliValues(CLI::App* app) {
  for (CLI::Option* opt : app->get_options()) {
    if (opt->get_type_size() == 0)
      continue;  // a flag
    const bool positional = opt->get_lnames().empty() && opt->get_snames().empty();
    opt->check(CLI::Validator(
        [positional](std::string& v) -> std::string {
          if (v.empty())
            return kEmpty;
          return !positional && LooksLikeOption(v) ? kOptionAsValue : "";
        },
        ""));
  }
  for (CLI::App* sub : app->get_subcommands({}))
    CheckCliValues(sub);
}

std::string CliErrorLine(const CLI::App& app, const CLI::Error& e,
                         const std::vector<std::string>& args) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  const CLI::App& sub = parsed.empty() ? app : *parsed.front();
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e))
    return ExtrasLine(app, sub, what, args);
  const CLI::Option* opt = NamedOption(sub, what);
  if (opt && dynamic_cast<const CLI::ArgumentMismatch*>(&e))
    return MismatchLine(*opt, Occurrences(*opt, args));
  if (opt && dynamic_cast<const CLI::ValidationError*>(&e)) {
    const std::string line = ValueLine(*opt, Occurrences(*opt, args));
    if (!line.empty())
      return line;
  }
  return what + " (see --help)";
}

}  // namespace cpuhp
