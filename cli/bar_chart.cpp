#include "cli/bar_chart.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace gpudict {

namespace {

std::string xml(const std::string& s) {
  std::string out;
  for (char c : s) switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  return out;
}

// The axis' top and tick step: the smallest 1, 2 or 5 x 10^k step that
// covers `max` in at most 6 ticks.
std::pair<double, double> nice_axis(double max) {
  if (!(max > 0) || !std::isfinite(max)) return {1.0, 0.2};
  const double raw = max / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (f * mag >= raw) {
      step = f * mag;
      break;
    }
  return {std::ceil(max / step) * step, step};
}

std::string tick_text(double v) {
  if (v >= 1000 && std::fmod(v, 1000) == 0) return fmt::format("{:.0f}k", v / 1000);
  return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v);
}

// A colour per series: the ten of matplotlib's default cycle, so the SVG
// matches compare_chart.py's PNG.
const char* colour(size_t i) {
  static const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kColours[i % 10];
}

}  // namespace

void write_bar_chart_svg(std::FILE* out, const BarChart& c) {
  const size_t ns = std::max<size_t>(1, c.series.size());
  const double bar = 12, gap = 18;                   // px: one bar, between groups
  // A group is at least as wide as its labels (10 px DejaVu Sans: about
  // 6.2 px a character), so neighbouring labels never overlap.
  size_t label_chars = 0;
  for (const auto& g : c.groups) label_chars = std::max({label_chars, g.label.size(), g.sublabel.size()});
  const double group_w = std::max(bar * static_cast<double>(ns) + gap, 6.2 * static_cast<double>(label_chars) + 10);
  const double left = 70, right = 170, top = 56, plot_h = 300, bottom = 52;
  const double plot_w = std::max(360.0, group_w * static_cast<double>(c.groups.size()));
  const double width = left + plot_w + right, height = top + plot_h + bottom;
  double max = 0;
  for (const auto& g : c.groups)
    for (double v : g.values) max = std::max(max, v);
  const auto [axis_top, step] = nice_axis(max);
  auto y_of = [&](double v) { return top + plot_h * (1.0 - v / axis_top); };

  fmt::print(out,
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
             "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"11\">\n"
             "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
             width, height);
  fmt::print(out, "<text x=\"{:.0f}\" y=\"20\" font-size=\"14\">{}</text>\n", left, xml(c.title));
  if (!c.subtitle.empty()) fmt::print(out, "<text x=\"{:.0f}\" y=\"38\" fill=\"#444\">{}</text>\n", left, xml(c.subtitle));
  // Grid and y ticks.
  for (double v = 0; v <= axis_top + step / 2; v += step) {
    const double y = y_of(v);
    fmt::print(out, "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left,
               left + plot_w, y, y);
    fmt::print(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6, y + 4, tick_text(v));
  }
  fmt::print(out,
             "<text transform=\"translate(16,{:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n"
             "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\"/>\n",
             top + plot_h / 2, xml(c.y_label), left, left + plot_w, top + plot_h, top + plot_h);
  // Bars, group by group.
  const double x0 = left + (plot_w - group_w * static_cast<double>(c.groups.size())) / 2;
  for (size_t gi = 0; gi < c.groups.size(); ++gi) {
    const auto& g = c.groups[gi];
    const double gx = x0 + group_w * static_cast<double>(gi) + (group_w - bar * static_cast<double>(ns)) / 2;
    for (size_t s = 0; s < g.values.size() && s < ns; ++s) {
      const double v = g.values[s];
      if (!(v >= 0)) continue;
      const double x = gx + bar * static_cast<double>(s), y = y_of(v);
      fmt::print(out, "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {:.1f}</title></rect>\n",
                 x, y, bar - 1, top + plot_h - y, colour(s), xml(s < c.series.size() ? c.series[s] : ""), v);
      if (g.marked == static_cast<int>(s))
        fmt::print(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">*</text>\n", x + bar / 2, y - 2);
    }
    const double cx = gx + bar * static_cast<double>(ns) / 2;
    fmt::print(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"10\">{}</text>\n", cx,
               top + plot_h + 16, xml(g.label));
    fmt::print(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"10\" fill=\"#444\">{}</text>\n",
               cx, top + plot_h + 30, xml(g.sublabel));
  }
  // Legend, right of the plot.
  for (size_t s = 0; s < c.series.size(); ++s) {
    const double y = top + 10 + 18 * static_cast<double>(s);
    fmt::print(out,
               "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>"
               "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
               left + plot_w + 16, y - 10, colour(s), left + plot_w + 34, y, xml(c.series[s]));
  }
  fmt::print(out,
             "<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#444\">* the fastest</text>\n</svg>\n",
             left + plot_w + 16, top + 18 + 18 * static_cast<double>(c.series.size()));
}

}  // namespace gpudict
