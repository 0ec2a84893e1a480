// A grouped bar chart written as SVG, with no dependency: what `gpudict
// compare --chart FILE.svg` draws (one group per table row, one bar per
// structure, the fastest of each group marked). scripts/compare_chart.py
// draws the same from compare's CSV with matplotlib (PNG and SVG).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace gpudict {

struct BarChart {
  std::string title;     // first line above the plot
  std::string subtitle;  // second line (the device, the repetitions)
  std::string y_label;
  std::vector<std::string> series;  // one per bar of a group, in the legend's order
  struct Group {
    std::string label, sublabel;  // two lines under the group
    std::vector<double> values;   // one per series; negative: no bar
    int marked = -1;              // the series whose bar gets a '*'
  };
  std::vector<Group> groups;
};

// Writes `chart` as a standalone SVG document. Values share one linear axis
// from 0 to a rounded maximum; labels are XML-escaped.
void write_bar_chart_svg(std::FILE* out, const BarChart& chart);

}  // namespace gpudict
