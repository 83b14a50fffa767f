// inferloadChart: what report.html and the live page share on top of
// uPlot: event marks whose labels never overlap, and series drawn as
// points where a line cannot show them.
window.inferloadChart = (function () {
  "use strict";

  // layout places labels (each {x, w}: the mark's x and the text's width,
  // in canvas pixels) in up to rows rows so that no two overlap: each
  // takes the first row whose last label ends left of it, with pad
  // between; a label past right starts left of its mark instead. It
  // returns, per label, {x: where its text starts, row}, row -1 for one
  // that fits no row (its line is drawn unlabelled; the events table
  // lists it).
  function layout(items, rows, right, pad) {
    var ends = [];
    return items.map(function (m) {
      var x = m.x + 3;
      if (x + m.w > right) { x = m.x - 3 - m.w; }
      for (var r = 0; r < rows; r++) {
        if (ends[r] === undefined || ends[r] <= x) {
          ends[r] = x + m.w + pad;
          return { x: x, row: r };
        }
      }
      return { x: x, row: -1 };
    });
  }

  // drawMarks paints each mark ({t, label}) of list as a dashed vertical
  // line with its label, laid out by layout in four rows.
  function drawMarks(u, list, dpr) {
    var ctx = u.ctx, b = u.bbox;
    var marks = list.map(function (m) { return { x: Math.round(u.valToPos(m.t, "x", true)), label: m.label }; })
      .filter(function (m) { return m.x >= b.left && m.x <= b.left + b.width; })
      .sort(function (p, q) { return p.x - q.x; });
    ctx.save();
    ctx.strokeStyle = "rgba(90,90,90,0.7)";
    ctx.fillStyle = "#555";
    ctx.font = (10 * dpr) + "px sans-serif";
    marks.forEach(function (m) { m.w = ctx.measureText(m.label).width; });
    var placed = layout(marks, 4, b.left + b.width, 6 * dpr);
    marks.forEach(function (m, i) {
      ctx.setLineDash([4 * dpr, 4 * dpr]);
      ctx.beginPath(); ctx.moveTo(m.x, b.top); ctx.lineTo(m.x, b.top + b.height); ctx.stroke();
      if (placed[i].row >= 0) {
        ctx.fillText(m.label, placed[i].x, b.top + (12 + 11 * placed[i].row) * dpr);
      }
    });
    ctx.restore();
  }

  // sparse reports whether values hold a value with no value beside it:
  // a line needs two neighbours, so such a value would not show at all
  // (completions landing in alternate seconds).
  function sparse(values) {
    for (var i = 0; i < values.length; i++) {
      if (values[i] != null && (i === 0 || values[i - 1] == null) && (i === values.length - 1 || values[i + 1] == null)) {
        return true;
      }
    }
    return false;
  }

  // points is a uPlot series' points option: dots where the series is
  // sparse, none where its line shows every value.
  function points() {
    return { size: 5, show: function (u, si) { return sparse(u.data[si] || []); } };
  }

  return { layout: layout, drawMarks: drawMarks, sparse: sparse, points: points };
})();
