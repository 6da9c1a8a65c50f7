// SPDX-License-Identifier: GPL-2.0
#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>

#include "util/report_json.h"

namespace cpuhp {
namespace {

using report_json::Fmt;
using report_json::HtmlEscape;

// 1, 2 or 5 times a power of ten, about n steps over [lo, hi].
double NiceStep(double lo, double hi, int n) {
  double raw = (hi - lo) / n;
  if (!(raw > 0))
    return 1;
  double p = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p)
      return m * p;
  return 10 * p;
}

// Ticks first, first + step, ... up to last + slack, at most kMaxTicks. Each
// is first + i * step: adding step to a value it cannot change (1e17 + 2)
// made the loop endless on a fuzzed report.
constexpr int kMaxTicks = 64;
std::vector<double> Ticks(double first, double last, double step, double slack) {
  std::vector<double> t;
  for (int i = 0; i < kMaxTicks; ++i) {
    double v = first + i * step;
    if (!(v <= last + slack))
      break;
    t.push_back(v);
  }
  return t;
}

std::string TickText(double v, double step) {
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
  return Fmt("%.*f", std::min(decimals, 6), v);
}

// A bar's value as people read it: 46219, 177.7, 3.12, 0.0421.
std::string ValueText(double v) {
  double a = std::fabs(v);
  return a >= 1000 ? Fmt("%.0f", v)
         : a >= 10 ? Fmt("%.1f", v)
         : a >= 1  ? Fmt("%.2f", v)
                   : Fmt("%.3g", v);
}

}  // namespace

std::string RenderChart(const Chart& c) {
  // The legend sits under the x axis label, three entries a row.
  size_t legend_entries = c.marks.empty() ? 0 : 1;
  for (const ChartSeries& s : c.series)
    legend_entries += s.legend;
  const int legend_rows = static_cast<int>((legend_entries + 2) / 3);
  const int height = c.height + legend_rows * 16;
  const double left = 70, right = 20, top = 36, bottom = 56 + legend_rows * 16;
  const double pw = c.width - left - right, ph = height - top - bottom;
  // On a log axis y is plotted as log10(y); non-positive values cannot be.
  auto ty = [&](double y) { return c.log_y ? std::log10(y) : y; };
  auto drawable = [&](double y) { return std::isfinite(y) && (!c.log_y || y > 0); };
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  for (const ChartSeries& s : c.series)
    for (auto [x, y] : s.points) {
      if (!drawable(y))
        continue;
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x + (c.bars ? c.bar_width : 0));
      ymin = std::min(ymin, ty(y));
      ymax = std::max(ymax, ty(y));
    }
  for (const ChartMark& m : c.marks) {
    xmin = std::min(xmin, m.x);
    xmax = std::max(xmax, m.x);
  }
  std::string out =
      Fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 %d %d\" "
          "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n",
          c.width, height, c.width, height, HtmlEscape(c.title).c_str());
  out += Fmt("<text x=\"%d\" y=\"20\" class=\"title\" text-anchor=\"middle\">%s</text>\n",
             c.width / 2, HtmlEscape(c.title).c_str());
  if (!std::isfinite(xmin)) {
    out += Fmt("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no data</text>\n</svg>\n",
               c.width / 2, height / 2);
    return out;
  }
  if (!std::isfinite(ymin)) {  // only marks
    ymin = 0;
    ymax = 1;
  }
  if (c.y_from_zero && !c.log_y)
    ymin = std::min(0.0, ymin);
  if (xmax <= xmin) {
    xmin -= 1;
    xmax += 1;
  }
  if (ymax <= ymin)
    ymax = ymin + 1;
  double ystep = c.log_y ? 1 : NiceStep(ymin, ymax, 5);
  ymax = std::ceil(ymax / ystep) * ystep;
  ymin = std::floor(ymin / ystep) * ystep;
  double xstep = NiceStep(xmin, xmax, 8);
  if (xstep < 1 && xmax - xmin >= 1 && std::floor(xmin) == xmin && std::floor(xmax) == xmax)
    xstep = 1;  // counts: no fractional ticks
  auto X = [&](double x) { return left + (x - xmin) / (xmax - xmin) * pw; };
  auto Y = [&](double y) { return top + ph - (ty(y) - ymin) / (ymax - ymin) * ph; };
  auto YT = [&](double t) { return top + ph - (t - ymin) / (ymax - ymin) * ph; };

  out += Fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"plot\"/>\n", left,
             top, pw, ph);
  for (double t : Ticks(ymin, ymax, ystep, ystep / 2)) {
    out += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", left,
               left + pw, YT(t), YT(t));
    std::string text = c.log_y ? Fmt("%g", std::pow(10, t)) : TickText(t, ystep);
    out += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>\n",
               left - 6, YT(t) + 4, text.c_str());
  }
  for (double x : Ticks(std::ceil(xmin / xstep) * xstep, xmax, xstep, xstep / 1e6)) {
    out += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>", X(x), X(x),
               top + ph, top + ph + 5);
    out += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s</text>\n",
               X(x), top + ph + 18, TickText(x, xstep).c_str());
  }
  out += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"label\" text-anchor=\"middle\">%s</text>\n",
             left + pw / 2, top + ph + 40, HtmlEscape(c.x_label).c_str());
  out += Fmt(
      "<text x=\"16\" y=\"%.1f\" class=\"label\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 16 %.1f)\">%s</text>\n",
      top + ph / 2, top + ph / 2, HtmlEscape(c.y_label + (c.log_y ? ", log scale" : "")).c_str());

  for (const ChartMark& m : c.marks)
    out +=
        Fmt("<line class=\"mark\" data-series=\"event\" data-x=\"%.10g\"%s x1=\"%.1f\" x2=\"%.1f\" "
            "y1=\"%.1f\" y2=\"%.1f\"><title>%s</title></line>\n",
            m.x, m.kind.empty() ? "" : (" data-kind=\"" + HtmlEscape(m.kind) + "\"").c_str(),
            X(m.x), X(m.x), top, top + ph, HtmlEscape(m.label).c_str());

  for (const ChartSeries& s : c.series) {
    std::string name = HtmlEscape(s.name);
    out += "<g class=\"series\" data-name=\"" + name + "\">\n";
    if (c.bars) {
      for (auto [x, y] : s.points)
        if (drawable(y))
          out +=
              Fmt("<rect class=\"pt\" data-series=\"%s\" data-x=\"%.10g\" data-y=\"%.10g\" "
                  "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%g: %g"
                  "</title></rect>\n",
                  name.c_str(), x, y, X(x), Y(y), std::max(1.0, X(x + c.bar_width) - X(x) - 0.5),
                  YT(ymin) - Y(y), s.color.c_str(), x, y);
    } else {
      std::vector<std::pair<double, double>> pts;
      std::vector<const uint64_t*> ns;  // the point's n, or null
      for (size_t i = 0; i < s.points.size(); i++)
        if (drawable(s.points[i].second)) {
          pts.push_back(s.points[i]);
          ns.push_back(s.n.size() == s.points.size() ? &s.n[i] : nullptr);
        }
      if (s.line && pts.size() > 1) {
        out += Fmt("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s points=\"",
                   s.color.c_str(), s.dashed ? " stroke-dasharray=\"5 3\"" : "");
        for (auto [x, y] : pts)
          out += Fmt("%.1f,%.1f ", X(x), Y(y));
        out += "\"/>\n";
      }
      for (size_t i = 0; i < pts.size(); i++) {
        auto [x, y] = pts[i];
        if (!ns[i]) {
          out +=
              Fmt("<circle class=\"pt\" data-series=\"%s\" data-x=\"%.10g\" data-y=\"%.10g\" "
                  "cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>%s: %g, %g</title>"
                  "</circle>\n",
                  name.c_str(), x, y, X(x), Y(y), s.markers ? "3" : "0.8", s.color.c_str(),
                  name.c_str(), x, y);
          continue;
        }
        const uint64_t n = *ns[i];
        const double r =
            2 + std::min(3.0, std::log10(static_cast<double>(std::max<uint64_t>(n, 1))));
        const bool few = n < kFewOps;
        out +=
            Fmt("<circle class=\"pt\" data-series=\"%s\" data-x=\"%.10g\" data-y=\"%.10g\" "
                "data-n=\"%llu\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" stroke=\"%s\">"
                "<title>%s: %g, %g (n=%llu)</title></circle>\n",
                name.c_str(), x, y, static_cast<unsigned long long>(n), X(x), Y(y), r,
                few ? "#fff" : s.color.c_str(), s.color.c_str(), name.c_str(), x, y,
                static_cast<unsigned long long>(n));
      }
    }
    out += "</g>\n";
  }
  // Legend under the axis label.
  int entry = 0;
  auto legend_at = [&](int i) {
    return std::pair<double, double>(left + (i % 3) * (pw / 3), top + ph + 58 + (i / 3) * 16);
  };
  for (const ChartSeries& s : c.series) {
    if (!s.legend)
      continue;
    auto [lx, ly] = legend_at(entry++);
    out +=
        Fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"4\" fill=\"%s\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">%s</text>\n",
            lx, ly - 4, s.color.c_str(), lx + 18, ly,
            HtmlEscape(s.legend_label.empty() ? s.name : s.legend_label).c_str());
  }
  if (!c.marks.empty()) {
    auto [lx, ly] = legend_at(entry++);
    out +=
        Fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"4\" class=\"markkey\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">%s</text>\n",
            lx, ly - 4, lx + 18, ly, HtmlEscape(c.mark_legend).c_str());
  }
  out += "</svg>\n";
  return out;
}

std::string RenderBars(const std::string& title, const std::string& unit,
                       const std::vector<BarItem>& items, const std::string& series_name,
                       const BarLegend& legend) {
  // 11 px labels: at most ~6.6 px a character in the fonts browsers pick.
  size_t longest = 0;
  for (const BarItem& b : items)
    longest = std::max(longest, b.label.size());
  const int row = 22, plot = 480, right = 120;
  const int left = std::max(120, static_cast<int>(6.6 * static_cast<double>(longest)) + 16);
  const int width = left + plot + right;
  const int top = legend.empty() ? 34 : 54;
  int height = top + row * static_cast<int>(items.size()) + 30;
  double vmax = 0;
  for (const BarItem& b : items)
    vmax = std::max(vmax, b.value);
  if (vmax <= 0)
    vmax = 1;
  std::string out =
      Fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 %d %d\" "
          "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n",
          width, height, width, height, HtmlEscape(title).c_str());
  out += Fmt("<text x=\"%d\" y=\"20\" class=\"title\" text-anchor=\"middle\">%s</text>\n",
             width / 2, HtmlEscape(title).c_str());
  double lx = left;
  for (const auto& [color, text] : legend) {
    out +=
        Fmt("<rect class=\"legend-key\" x=\"%.1f\" y=\"30\" width=\"12\" height=\"12\" "
            "fill=\"%s\"/><text x=\"%.1f\" y=\"40\" class=\"legend\">%s</text>\n",
            lx, HtmlEscape(color).c_str(), lx + 16, HtmlEscape(text).c_str());
    lx += 16 + 6.6 * static_cast<double>(text.size()) + 18;
  }
  int y = top;
  for (const BarItem& b : items) {
    double w = b.value / vmax * plot;
    out += Fmt("<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"end\">%s</text>", left - 8,
               y + 15, HtmlEscape(b.label).c_str());
    out +=
        Fmt("<rect class=\"pt\" data-series=\"%s\" data-x=\"%s\" data-y=\"%.10g\" x=\"%d\" "
            "y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s: %g %s</title></rect>",
            HtmlEscape(b.series.empty() ? series_name : b.series).c_str(),
            HtmlEscape(b.x.empty() ? b.label : b.x).c_str(), b.value, left, y + 3, std::max(1.0, w),
            row - 6, b.color.empty() ? "#4e79a7" : HtmlEscape(b.color).c_str(),
            HtmlEscape(b.label).c_str(), b.value, HtmlEscape(unit).c_str());
    out += Fmt("<text x=\"%.1f\" y=\"%d\" class=\"tick\">%s %s</text>\n", left + w + 6, y + 15,
               ValueText(b.value).c_str(), HtmlEscape(unit).c_str());
    y += row;
  }
  out += Fmt("<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%s</text>\n",
             (left + width - right) / 2, height - 8, HtmlEscape(unit).c_str());
  out += "</svg>\n";
  return out;
}

}  // namespace cpuhp
