// SPDX-License-Identifier: GPL-2.0
#include "util/report_json.h"

#include <gtest/gtest.h>

namespace cpuhp::report_json {
namespace {

using nlohmann::json;

TEST(ReportJsonTest, GetAndPathNeverThrow) {
  json r = json::parse(R"({"a": {"b": {"c": 7}}, "arr": [1, 2], "s": "x"})");
  EXPECT_EQ(Get(r, "a")["b"]["c"], 7);
  EXPECT_TRUE(Get(r, "missing").is_null());
  EXPECT_TRUE(Get(r["arr"], "a").is_null());  // not an object
  EXPECT_TRUE(Get(json(), "a").is_null());
  EXPECT_EQ(Path(r, {"a", "b", "c"}), 7);
  EXPECT_TRUE(Path(r, {"a", "x", "c"}).is_null());
  EXPECT_TRUE(Path(r, {"s", "b"}).is_null());
  EXPECT_EQ(&Path(r, {}), &r);
}

TEST(ReportJsonTest, NumbersAbsentAreNotZero) {
  json j = json::parse(R"({"n": 2.5, "i": -3, "s": "5", "big": 18446744073709551615,
                           "f": 1e30, "neg": -1.5, "t": true})");
  EXPECT_EQ(OptNum(j, "n"), 2.5);
  EXPECT_EQ(OptNum(j, "missing"), std::nullopt);
  EXPECT_EQ(OptNum(j, "s"), std::nullopt);  // a string is not a number
  EXPECT_EQ(OptNum(j, "t"), std::nullopt);
  EXPECT_EQ(Num(j, "missing", -1), -1);
  EXPECT_EQ(Num(j, "i"), -3);
  // U64: exact to 2^64-1, too big clamps to 2^64-1; negative, absent or a
  // string reads 0.
  EXPECT_EQ(U64(j, "big"), 18446744073709551615ull);
  EXPECT_EQ(U64(j, "i"), 0u);
  EXPECT_EQ(U64(j, "neg"), 0u);
  EXPECT_EQ(U64(j, "f"), UINT64_MAX);
  EXPECT_EQ(U64(j, "n"), 2u);
  EXPECT_EQ(U64(j, "s"), 0u);
  EXPECT_EQ(U64(json{{"x", int64_t{42}}}, "x"), 42u);
  EXPECT_EQ(U64(json{{"x", uint64_t{1} << 60}}, "x"), uint64_t{1} << 60);
}

TEST(ReportJsonTest, StringsAndSummaries) {
  json j = {{"s", "text"}, {"n", 1}};
  EXPECT_EQ(Str(j, "s"), "text");
  EXPECT_EQ(Str(j, "n", "fb"), "fb");
  EXPECT_EQ(Str(j, "missing"), "");
  EXPECT_TRUE(IsSummary(json{{"count", 3}, {"p50_ns", 10}}));
  EXPECT_FALSE(IsSummary(json{{"count", 3}}));
  EXPECT_FALSE(IsSummary(json{{"count", "3"}, {"p50_ns", 10}}));
  EXPECT_FALSE(IsSummary(json::array()));
}

TEST(ReportJsonTest, SourceStatus) {
  json r = {{"timing_sources",
             {{"kmod", {{"status", "unavailable"}, {"reason", "/dev/cpuhp_probe: gone"}}},
              {"disturbance", {{"status", "ok"}}}}}};
  std::string why;
  EXPECT_EQ(SourceStatus(r, "kmod", &why), "unavailable");
  EXPECT_EQ(why, "/dev/cpuhp_probe: gone");
  EXPECT_EQ(SourceStatus(r, "disturbance", &why), "ok");
  EXPECT_EQ(why, "");
  EXPECT_EQ(SourceStatus(r, "tracepoints"), "absent");
  EXPECT_EQ(SourceStatus(json::array(), "kmod"), "absent");
}

TEST(ReportJsonTest, FmtHasNoLengthLimit) {
  EXPECT_EQ(Fmt("%d-%s", 5, "x"), "5-x");
  std::string long_text(5000, 'a');
  EXPECT_EQ(Fmt("<%s>", long_text.c_str()), "<" + long_text + ">");
  EXPECT_EQ(Fmt("%s", ""), "");
}

TEST(ReportJsonTest, Escapes) {
  EXPECT_EQ(XmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(XmlEscape(std::string("x\x01y\nz\tw\x1f", 8)), "x y\nz\tw ");
  EXPECT_EQ(HtmlEscape("<svg>"), "&lt;svg&gt;");
  EXPECT_EQ(XmlEscape("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 passes through
}

TEST(ReportJsonTest, WrapKeepsWordsAndIndentsTheRest) {
  EXPECT_EQ(Wrap("one two three four", 12, "> ", "  "), "> one two\n  three four\n");
  EXPECT_EQ(Wrap("", 12, "  FAIL x  ", "  "), "  FAIL x\n");  // no trailing spaces
  EXPECT_EQ(Wrap("a  b", 80, "", ""), "a b\n");
  // A word longer than a line is cut, never past the width, never inside
  // a UTF-8 character.
  EXPECT_EQ(Wrap("abcdefghij", 6, "- ", "  "), "- abcd\n  efgh\n  ij\n");
  EXPECT_EQ(Wrap("caf\xc3\xa9s", 4, "", ""), "caf\n\xc3\xa9s\n");
  // A first prefix already as wide as the line: the text starts below it.
  EXPECT_EQ(Wrap("msg", 6, "  name  ", "   "), "  name\n   msg\n");
}

}  // namespace
}  // namespace cpuhp::report_json
