// Draws the charts of an inferload report from REPORT (see report/html.go).
// Text from the run never goes through innerHTML: labels are fixed by the
// report builder, and event marks are painted on the canvas.
(function () {
  "use strict";
  var dpr = window.devicePixelRatio || 1;
  var plots = [];

  // marks draws every run event (or the chart's own marks, such as the
  // knee) as a dashed vertical line with its label, labels laid out so
  // none overlaps another (inferloadChart.drawMarks).
  function marks(list) {
    list = list || REPORT.marks;
    return { hooks: { draw: [function (u) { inferloadChart.drawMarks(u, list, dpr); }] } };
  }

  // msTicks writes log-scale ticks with two or three significant digits.
  function msTicks(u, splits) {
    return splits.map(function (v) {
      if (v == null) { return ""; }
      return v >= 100 ? v.toFixed(0) : v >= 1 ? v.toPrecision(2) : v.toPrecision(1);
    });
  }

  // niceTicks are the 1, 2, 5 × 10^k values within [lo, hi]: a log axis's
  // labels, where uPlot's own for a range under a decade fall between bins
  // (3981, 5981, 7981) and leave the top band unlabelled.
  function niceTicks(lo, hi) {
    var out = [];
    for (var p = Math.pow(10, Math.floor(Math.log10(lo))); p <= hi * 1.0001; p *= 10) {
      [1, 2, 5].forEach(function (k) {
        var v = k * p;
        if (v >= lo * 0.9999 && v <= hi * 1.0001) { out.push(v); }
      });
    }
    return out;
  }

  // niceRange widens [lo, hi] to the 1, 2, 5 × 10^k values around it, so
  // the lowest and the highest band both sit between two labels.
  function niceRange(lo, hi) {
    var floor = function (v) {
      var p = Math.pow(10, Math.floor(Math.log10(v) + 1e-9)), m = v / p;
      return (m >= 5 - 1e-9 ? 5 : m >= 2 - 1e-9 ? 2 : 1) * p;
    };
    var ceil = function (v) {
      var p = Math.pow(10, Math.floor(Math.log10(v) + 1e-9)), m = v / p;
      return (m <= 1 + 1e-9 ? 1 : m <= 2 + 1e-9 ? 2 : m <= 5 + 1e-9 ? 5 : 10) * p;
    };
    return [floor(lo), ceil(hi)];
  }
  window.inferloadHeatTicks = {};

  function width(el) { return Math.max(320, (el.clientWidth || 560) - 4); }

  function timeChart(el, c) {
    var scales = { x: { time: false }, y: { auto: true } };
    var axes = [{ label: "seconds since start" }, { label: c.ylabel, scale: "y" }];
    if (c.y2label) {
      scales.y2 = { auto: true };
      axes.push({ label: c.y2label, scale: "y2", side: 1, grid: { show: false } });
    }
    var series = [{ label: "t (s)" }].concat(c.series.map(function (s) {
      return { label: s.label, stroke: s.color, width: 1.5, scale: s.right ? "y2" : "y", points: inferloadChart.points() };
    }));
    var data = [c.x].concat(c.series.map(function (s) { return s.values; }));
    return new uPlot({ width: width(el), height: 260, scales: scales, axes: axes, series: series, plugins: [marks()] }, data, el);
  }

  // curveChart draws figures against load or input length: points joined
  // by lines, with the chart's own vertical marks.
  function curveChart(el, c) {
    var scales = { x: { time: false, distr: c.logx ? 3 : 1 }, y: { auto: true } };
    var axes = [{ label: c.xlabel }, { label: c.ylabel, scale: "y" }];
    if (c.y2label) {
      scales.y2 = { auto: true };
      axes.push({ label: c.y2label, scale: "y2", side: 1, grid: { show: false } });
    }
    var series = [{ label: c.xlabel }].concat(c.series.map(function (s) {
      return { label: s.label, stroke: s.color, width: 1.5, scale: s.right ? "y2" : "y", points: { show: true, size: 6 } };
    }));
    var data = [c.x].concat(c.series.map(function (s) { return s.values; }));
    return new uPlot({ width: width(el), height: 260, scales: scales, axes: axes, series: series, plugins: [marks(c.vmarks || [])] }, data, el);
  }

  function histChart(el, c) {
    var s = c.series[0];
    return new uPlot({
      width: width(el), height: 220, legend: { show: false },
      scales: { x: { time: false, distr: 3 }, y: { range: function (u, lo, hi) { return [0, hi * 1.05 || 1]; } } },
      axes: [{ label: "ms (log scale)", values: msTicks }, { label: c.ylabel }],
      series: [{}, { label: s.label, stroke: s.color, fill: s.color + "99", paths: uPlot.paths.bars({ size: [0.9, 80], align: 1 }) }]
    }, [c.x, s.values], el);
  }

  // heatChart paints one rectangle per (time column, latency bin), darker
  // for more requests (square-root scale so a sparse tail stays visible).
  function heatChart(el, c) {
    var most = 1;
    c.cells.forEach(function (col) { col.forEach(function (n) { most = Math.max(most, n); }); });
    var x1 = c.x[c.x.length - 1] + c.width_s;
    var paint = function (u) {
      var ctx = u.ctx;
      ctx.save();
      c.cells.forEach(function (col, i) {
        var l = u.valToPos(c.x[i], "x", true), r = u.valToPos(c.x[i] + c.width_s, "x", true);
        col.forEach(function (n, j) {
          if (n === 0) { return; }
          var top = u.valToPos(c.y[j + 1], "y", true), bottom = u.valToPos(c.y[j], "y", true);
          ctx.fillStyle = "rgba(31,92,168," + (0.12 + 0.88 * Math.sqrt(n / most)).toFixed(3) + ")";
          ctx.fillRect(l, top, Math.max(1, r - l), Math.max(1, bottom - top));
        });
      });
      ctx.restore();
    };
    var plugins = [{ hooks: { draw: [paint] } }, marks()];
    var yr = niceRange(c.y[0], c.y[c.y.length - 1]), ticks = niceTicks(yr[0], yr[1]);
    window.inferloadHeatTicks[c.id] = { range: yr, ticks: ticks, top: c.y[c.y.length - 1], bottom: c.y[0] };
    return new uPlot({
      width: width(el), height: 260, legend: { show: false }, plugins: plugins,
      scales: { x: { time: false, range: [c.x[0], x1] }, y: { distr: 3, range: yr } },
      axes: [{ label: "seconds since start" }, { label: c.ylabel + " (log scale)", values: msTicks, splits: function () { return ticks; } }],
      series: [{}, { label: "count", paths: function () { return null; }, points: { show: false } }]
    }, [c.x, c.x.map(function () { return null; })], el);
  }

  // stackChart draws one bar per label, stacking its series' values
  // bottom first (a null value is no segment); the legend names the series.
  function stackChart(el, c) {
    var n = c.x.length, top = 0;
    c.x.forEach(function (_, i) {
      var sum = 0;
      c.series.forEach(function (s) { sum += s.values[i] || 0; });
      top = Math.max(top, sum);
    });
    var paint = function (u) {
      var ctx = u.ctx, half = Math.max(2 * dpr, 0.35 * u.bbox.width / n);
      ctx.save();
      c.x.forEach(function (x, i) {
        var base = 0, mid = u.valToPos(x, "x", true);
        c.series.forEach(function (s) {
          var v = s.values[i] || 0;
          if (v <= 0) { return; }
          var y0 = u.valToPos(base, "y", true), y1 = u.valToPos(base + v, "y", true);
          ctx.fillStyle = s.color;
          ctx.fillRect(mid - half, y1, 2 * half, Math.max(1, y0 - y1));
          base += v;
        });
      });
      ctx.restore();
    };
    return new uPlot({
      width: width(el), height: 280, plugins: [{ hooks: { draw: [paint] } }],
      scales: { x: { time: false, range: [-0.5, n - 0.5] }, y: { range: [0, top * 1.05 || 1] } },
      axes: [{ label: c.xlabel, splits: function () { return c.x; },
               values: function (u, splits) { return splits.map(function (v) { return c.labels[v] || ""; }); } },
             { label: c.ylabel }],
      series: [{ label: c.xlabel, value: function (u, v) { return v == null ? "" : c.labels[v] || ""; } }].concat(c.series.map(function (s) {
        return { label: s.label, stroke: s.color, fill: s.color, width: 0, paths: function () { return null; }, points: { show: false } };
      }))
    }, [c.x].concat(c.series.map(function (s) { return s.values; })), el);
  }

  var kinds = { time: timeChart, curve: curveChart, hist: histChart, heat: heatChart, stack: stackChart };
  REPORT.charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    var draw = kinds[c.kind];
    if (el && draw && c.x.length > 0) { plots.push({ el: el, plot: draw(el, c) }); }
  });
  window.addEventListener("resize", function () {
    plots.forEach(function (p) { p.plot.setSize({ width: width(p.el), height: p.plot.height }); });
  });
  window.inferloadCharts = plots.length;
})();
