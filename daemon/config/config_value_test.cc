// SPDX-License-Identifier: GPL-2.0
#include "config/config_value.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "testing/config_documents.h"

namespace cpuhp {
namespace {

using nlohmann::json;

// ---- Durations ----

TEST(ConfigDuration, ParsesUnitsAndCombinations) {
  const struct {
    const char* text;
    uint64_t ns;
  } kCases[] = {
      {"0", 0},
      {"0s", 0},
      {"1ns", 1},
      {"1us", 1000},
      {"500ms", 500000000},
      {"30s", 30000000000},
      {"90m", 5400000000000},
      {"24h", 86400000000000},
      {"1d", 86400000000000},
      {"2h30m", 9000000000000},
      {"1d1h1m1s1ms1us1ns", 90061001001001},
      {"05m", 300000000000},
      {"5124095h34m33s709ms551us615ns", UINT64_MAX},
  };
  for (const auto& c : kCases) {
    uint64_t ns = 12345;
    std::string err;
    EXPECT_TRUE(ParseDuration(c.text, &ns, &err)) << c.text << ": " << err;
    EXPECT_EQ(ns, c.ns) << c.text;
  }
}

TEST(ConfigDuration, RejectsBadSyntaxWithReason) {
  const struct {
    const char* text;
    const char* err;
  } kCases[] = {
      {"",
       "bad duration \"\": expected a duration like \"30s\", \"2h30m\" or \"0\", not an "
       "empty string"},
      {"5", "bad duration \"5\": missing unit after \"5\" (use ns, us, ms, s, m, h or d)"},
      {"00", "bad duration \"00\": missing unit after \"00\" (use ns, us, ms, s, m, h or d)"},
      {"-5s", "bad duration \"-5s\": negative durations are not allowed"},
      {"+5s", "bad duration \"+5s\": expected a number before \"+5s\""},
      {"h", "bad duration \"h\": expected a number before \"h\""},
      {"1.5h", "bad duration \"1.5h\": fractions are not allowed (write 1h30m, 1500ms)"},
      {"5x", "bad duration \"5x\": unknown unit \"x\" (use ns, us, ms, s, m, h or d)"},
      {"24H", "bad duration \"24H\": unknown unit \"H\" (use ns, us, ms, s, m, h or d)"},
      {"24 h", "bad duration \"24 h\": unknown unit \" h\" (use ns, us, ms, s, m, h or d)"},
      {"5\xc2\xb5s",
       "bad duration \"5\xc2\xb5s\": unknown unit \"\xc2\xb5s\" (use ns, us, ms, s, "
       "m, h or d)"},
      {"30m2h",
       "bad duration \"30m2h\": units must come largest first, each at most once (e.g. "
       "2h30m)"},
      {"1h1h",
       "bad duration \"1h1h\": units must come largest first, each at most once (e.g. "
       "2h30m)"},
      {"213504d",
       "bad duration \"213504d\": too large (the maximum is "
       "5124095h34m33s709ms551us615ns)"},
      {"18446744073709551616ns",
       "bad duration \"18446744073709551616ns\": too large (the "
       "maximum is 5124095h34m33s709ms551us615ns)"},
      {"5124095h34m33s709ms551us616ns",
       "bad duration \"5124095h34m33s709ms551us616ns\": too "
       "large (the maximum is 5124095h34m33s709ms551us615ns)"},
  };
  for (const auto& c : kCases) {
    uint64_t ns = 777;
    std::string err;
    EXPECT_FALSE(ParseDuration(c.text, &ns, &err)) << c.text;
    EXPECT_EQ(err, c.err);
    EXPECT_EQ(ns, 777u) << c.text;
  }
  for (const char* text : {" 1s", "1s ", "1s\n", "s1", "1h-5m", "1e3s", "0x10s", "1_000ms"}) {
    uint64_t ns = 0;
    std::string err;
    EXPECT_FALSE(ParseDuration(text, &ns, &err)) << text;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
}

TEST(ConfigDuration, FormatsCompactAndRoundTrips) {
  const struct {
    uint64_t ns;
    const char* text;
  } kCases[] = {
      {0, "0"},
      {1, "1ns"},
      {1500, "1us500ns"},
      {500000000, "500ms"},
      {1500000000, "1s500ms"},
      {30000000000, "30s"},
      {5400000000000, "1h30m"},
      {86400000000000, "24h"},
      {172800000000000, "48h"},
      {UINT64_MAX, "5124095h34m33s709ms551us615ns"},
  };
  for (const auto& c : kCases) {
    EXPECT_EQ(FormatDuration(c.ns), c.text);
    uint64_t back = 1;
    std::string err;
    EXPECT_TRUE(ParseDuration(FormatDuration(c.ns), &back, &err)) << err;
    EXPECT_EQ(back, c.ns);
  }
}

TEST(ConfigErrors, KeysAreEscapedAsJsonPointerOnOneLine) {
  EXPECT_PRED2(StartsWith, ApplyError(R"({"a/b~c": 1})"), "t.json: /a~1b~0c: unknown key ");
  EXPECT_PRED2(StartsWith, ApplyError("{\"a\\nb\": 1}"), "t.json: /a\\u000ab: unknown key ");
}

TEST(ConfigErrors, BadDurations) {
  EXPECT_EQ(
      ApplyError(R"({"duration": "5"})"),
      "t.json: /duration: missing unit after \"5\" (use ns, us, ms, s, m, h or d), got \"5\"");
  EXPECT_EQ(ApplyError(R"({"interval": "1.5s"})"),
            "t.json: /interval: fractions are not allowed (write 1h30m, 1500ms), got \"1.5s\"");
  EXPECT_EQ(ApplyError(R"({"duration": ""})"),
            "t.json: /duration: expected a duration like \"30s\", \"2h30m\" or \"0\", not an empty "
            "string, got \"\"");
}

TEST(ConfigErrors, RootMustBeObject) {
  EXPECT_EQ(ApplyError("[1, 2]"), "t.json: /: expected a JSON object, got array");
  EXPECT_EQ(ApplyError("\"x\""), "t.json: /: expected a JSON object, got string");
  EXPECT_EQ(ApplyError("null"), "t.json: /: expected a JSON object, got null");
}

TEST(ConfigErrors, NonFiniteNumbersBuiltInCode) {
  Config cfg;
  std::string err;
  EXPECT_FALSE(ApplyConfigJson(json{{"sim", {{"jitter", INFINITY}}}}, "cli", &cfg, &err));
  EXPECT_EQ(err, "cli: /sim/jitter: expected a number from 0 to 1, got inf");
  EXPECT_FALSE(ApplyConfigJson(json{{"sim", {{"error_rate", NAN}}}}, "cli", &cfg, &err));
  EXPECT_EQ(err, "cli: /sim/error_rate: expected a number from 0 to 1, got nan");
  EXPECT_FALSE(ApplyConfigJson(json{{"min_online", -INFINITY}}, "cli", &cfg, &err));
  EXPECT_EQ(err, "cli: /min_online: expected an integer from 1 to 8192, got -inf");
}

TEST(ConfigErrors, LongValuesAreTruncated) {
  EXPECT_EQ(ApplyError(json{{"report", 1}, {"pattern", std::string(5000, 'x')}}.dump()),
            "t.json: /pattern: expected one of \"roundrobin\", \"all\", \"random\", \"sweep\", "
            "\"fault_sweep\", \"smt\", got "
            "\"" +
                std::string(36, 'x') + "...");
  // Escapes count as rendered: six "\u0000" after the quote.
  std::string e = ApplyError(json{{"pattern", std::string(100, '\0')}}.dump());
  EXPECT_EQ(e.substr(e.rfind("got ") + 4), "\"\\u0000\\u0000\\u0000\\u0000\\u0000\\u0000...");
  // Cut on a UTF-8 character boundary, never inside one.
  std::string utf8 = "a";
  for (int i = 0; i < 30; ++i)
    utf8 += "\xc3\xa9";  // é
  e = ApplyError(json{{"pattern", utf8}}.dump());
  EXPECT_EQ(e.substr(e.rfind("got ") + 4), "\"" + utf8.substr(0, 35) + "...");
  std::string deep = std::string(60, '[') + std::string(60, ']');
  e = ApplyError("{\"sweep\": " + deep + "}");
  EXPECT_EQ(e, "t.json: /sweep: expected a JSON object, got " + std::string(37, '[') + "...");
}

}  // namespace
}  // namespace cpuhp
