// SPDX-License-Identifier: GPL-2.0
#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>

namespace cpuhp {
namespace {

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[1024];
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

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

std::string TickText(double v, double step) {
  int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step)));
  return Fmt("%.*f", std::min(decimals, 6), v);
}

}  // namespace

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderChart(const Chart& c) {
  const double left = 70, right = 20, top = 36, bottom = 56;
  const double pw = c.width - left - right, ph = c.height - top - bottom;
  double xmin = std::numeric_limits<double>::infinity(), xmax = -xmin, ymin = xmin, ymax = -xmin;
  for (const ChartSeries& s : c.series)
    for (auto [x, y] : s.points) {
      xmin = std::min(xmin, x);
      xmax = std::max(xmax, x + (c.bars ? c.bar_width : 0));
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
  for (const ChartMark& m : c.marks) {
    xmin = std::min(xmin, m.x);
    xmax = std::max(xmax, m.x);
  }
  std::string out =
      Fmt("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 %d %d\" "
          "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\">\n",
          c.width, c.height, c.width, c.height, HtmlEscape(c.title).c_str());
  out += Fmt("<text x=\"%d\" y=\"20\" class=\"title\" text-anchor=\"middle\">%s</text>\n",
             c.width / 2, HtmlEscape(c.title).c_str());
  if (!std::isfinite(xmin)) {
    out += Fmt("<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no data</text>\n</svg>\n",
               c.width / 2, c.height / 2);
    return out;
  }
  if (c.y_from_zero)
    ymin = std::min(0.0, ymin);
  if (xmax <= xmin) {
    xmin -= 1;
    xmax += 1;
  }
  if (ymax <= ymin)
    ymax = ymin + 1;
  double ystep = NiceStep(ymin, ymax, 5);
  ymax = std::ceil(ymax / ystep) * ystep;
  ymin = std::floor(ymin / ystep) * ystep;
  double xstep = NiceStep(xmin, xmax, 8);
  auto X = [&](double x) { return left + (x - xmin) / (xmax - xmin) * pw; };
  auto Y = [&](double y) { return top + ph - (y - ymin) / (ymax - ymin) * ph; };

  out += Fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"plot\"/>\n", left,
             top, pw, ph);
  for (double y = ymin; y <= ymax + ystep / 2; y += ystep) {
    out += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", left,
               left + pw, Y(y), Y(y));
    out += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%s</text>\n",
               left - 6, Y(y) + 4, TickText(y, ystep).c_str());
  }
  for (double x = std::ceil(xmin / xstep) * xstep; x <= xmax + xstep / 1e6; x += xstep) {
    out += Fmt("<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>", X(x), X(x),
               top + ph, top + ph + 5);
    out += Fmt("<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s</text>\n",
               X(x), top + ph + 18, TickText(x, xstep).c_str());
  }
  out += Fmt("<text x=\"%.1f\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%s</text>\n",
             left + pw / 2, c.height - 10, HtmlEscape(c.x_label).c_str());
  out +=
      Fmt("<text x=\"16\" y=\"%.1f\" class=\"label\" text-anchor=\"middle\" "
          "transform=\"rotate(-90 16 %.1f)\">%s</text>\n",
          top + ph / 2, top + ph / 2, HtmlEscape(c.y_label).c_str());

  for (const ChartMark& m : c.marks)
    out +=
        Fmt("<line class=\"mark\" data-series=\"event\" data-x=\"%g\" x1=\"%.1f\" x2=\"%.1f\" "
            "y1=\"%.1f\" y2=\"%.1f\"><title>%s</title></line>\n",
            m.x, X(m.x), X(m.x), top, top + ph, HtmlEscape(m.label).c_str());

  for (const ChartSeries& s : c.series) {
    std::string name = HtmlEscape(s.name);
    out += "<g class=\"series\" data-name=\"" + name + "\">\n";
    if (c.bars) {
      for (auto [x, y] : s.points)
        out +=
            Fmt("<rect class=\"pt\" data-series=\"%s\" data-x=\"%g\" data-y=\"%g\" x=\"%.1f\" "
                "y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%g: %g</title>"
                "</rect>\n",
                name.c_str(), x, y, X(x), Y(y), std::max(1.0, X(x + c.bar_width) - X(x) - 0.5),
                Y(ymin) - Y(y), s.color.c_str(), x, y);
    } else {
      if (s.line && s.points.size() > 1) {
        out += Fmt("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\"%s points=\"",
                   s.color.c_str(), s.dashed ? " stroke-dasharray=\"5 3\"" : "");
        for (auto [x, y] : s.points)
          out += Fmt("%.1f,%.1f ", X(x), Y(y));
        out += "\"/>\n";
      }
      for (auto [x, y] : s.points)
        out +=
            Fmt("<circle class=\"pt\" data-series=\"%s\" data-x=\"%g\" data-y=\"%g\" "
                "cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\"><title>%s: %g, %g</title>"
                "</circle>\n",
                name.c_str(), x, y, X(x), Y(y), s.markers ? "3" : "0.8", s.color.c_str(),
                name.c_str(), x, y);
    }
    out += "</g>\n";
  }
  // Legend, top right inside the plot.
  double ly = top + 14;
  for (const ChartSeries& s : c.series) {
    out += Fmt(
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"4\" fill=\"%s\"/>"
        "<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">%s</text>\n",
        left + pw - 170, ly - 4, s.color.c_str(), left + pw - 152, ly, HtmlEscape(s.name).c_str());
    ly += 16;
  }
  if (!c.marks.empty())
    out +=
        Fmt("<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"4\" class=\"markkey\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" class=\"legend\">kernel log event</text>\n",
            left + pw - 170, ly - 4, left + pw - 152, ly);
  out += "</svg>\n";
  return out;
}

std::string RenderBars(const std::string& title, const std::string& unit,
                       const std::vector<BarItem>& items, const std::string& series_name) {
  const int width = 900, row = 22, top = 34, left = 260, right = 110;
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
  int y = top;
  for (const BarItem& b : items) {
    double w = b.value / vmax * (width - left - right);
    out += Fmt("<text x=\"%d\" y=\"%d\" class=\"tick\" text-anchor=\"end\">%s</text>", left - 8,
               y + 15, HtmlEscape(b.label).c_str());
    out +=
        Fmt("<rect class=\"pt\" data-series=\"%s\" data-x=\"%s\" data-y=\"%g\" x=\"%d\" "
            "y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#4e79a7\"/>",
            HtmlEscape(series_name).c_str(), HtmlEscape(b.label).c_str(), b.value, left, y + 3,
            std::max(1.0, w), row - 6);
    out += Fmt("<text x=\"%.1f\" y=\"%d\" class=\"tick\">%g %s</text>\n", left + w + 6, y + 15,
               b.value, HtmlEscape(unit).c_str());
    y += row;
  }
  out += Fmt("<text x=\"%d\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%s</text>\n",
             (left + width - right) / 2, height - 8, HtmlEscape(unit).c_str());
  out += "</svg>\n";
  return out;
}

}  // namespace cpuhp
