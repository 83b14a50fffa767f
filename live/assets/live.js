// The live page of an inferload run: reads /api/events (server-sent
// events, one message a second holding only new points), keeps the last
// `window` seconds, and redraws tiles, charts and tables. Text from the
// run or the target is only ever set with textContent, never parsed as
// markup; event labels are painted on the canvas.
(function () {
  "use strict";
  var dpr = window.devicePixelRatio || 1;
  var pts = [], tel = { server: [], client: [] }, events = [], win = 3600, charts = {}, state = null, finished = false;

  function $(id) { return document.getElementById(id); }
  function fmt(v, d) { return v == null || isNaN(v) ? "–" : Number(v).toFixed(d); }
  function dur(s) {
    s = Math.max(0, Math.round(s));
    var h = Math.floor(s / 3600), m = Math.floor(s % 3600 / 60), r = s % 60;
    return (h ? h + "h" : "") + (h || m ? m + "m" : "") + r + "s";
  }
  function nz(v) { return v > 0 ? v : null; }
  function tv(p, k) { var v = p.values[k]; return v == null ? null : v; }

  // marks paints every event as a dashed vertical line with its label,
  // labels laid out so none overlaps another (inferloadChart.drawMarks).
  function marks() {
    return { hooks: { draw: [function (u) {
      inferloadChart.drawMarks(u, events.map(function (e) { return { t: e.t, label: e.message.slice(0, 60) }; }), dpr);
    }] } };
  }

  function width(el) { return Math.max(320, (el.clientWidth || 560) - 4); }

  // specs: each chart's series, read from a point.
  var pct = function (key) {
    return [
      { label: "P50", stroke: "#2b7bb9", get: function (p) { return nz(p[key][0]); } },
      { label: "P90", stroke: "#e69f00", get: function (p) { return nz(p[key][1]); } },
      { label: "P99", stroke: "#c0392b", get: function (p) { return nz(p[key][2]); } }
    ];
  };
  var specs = {
    "c-ttft": { ylabel: "ms", series: pct("ttft") },
    "c-itl": { ylabel: "ms", series: pct("itl") },
    "c-tpot": { ylabel: "ms", series: pct("tpot") },
    "c-e2e": { ylabel: "ms", series: pct("e2e") },
    "c-thr": { ylabel: "requests/s", y2label: "output tok/s", series: [
      { label: "requests/s", stroke: "#2b7bb9", get: function (p) { return p.completed; } },
      { label: "output tok/s", stroke: "#16a085", right: true, get: function (p) { return p.out_tokens; } }
    ] },
    "c-server": { tel: "server", ylabel: "requests", y2label: "%", series: [
      { label: "queue depth", stroke: "#e67e22", get: function (p) { return tv(p, "queue_depth"); } },
      { label: "running", stroke: "#2b7bb9", get: function (p) { return tv(p, "running"); } },
      { label: "KV cache %", stroke: "#8e44ad", right: true, get: function (p) { var v = tv(p, "kv_cache_usage"); return v == null ? null : 100 * v; } },
      { label: "GPU util %", stroke: "#16a085", right: true, get: function (p) { return tv(p, "gpu_util_pct"); } },
      { label: "GPU mem %", stroke: "#7f8c8d", right: true, get: function (p) { var v = tv(p, "gpu_mem_used_frac"); return v == null ? null : 100 * v; } }
    ] },
    "c-client": { tel: "client", ylabel: "client CPU %", y2label: "ms", series: [
      { label: "client CPU %", stroke: "#c0392b", get: function (p) { return tv(p, "client_cpu_pct"); } },
      { label: "sched lag p99 ms", stroke: "#2b7bb9", right: true, get: function (p) { return tv(p, "client_sched_lag_p99_ms"); } },
      { label: "pacer lag ms", stroke: "#e69f00", right: true, get: function (p) { return tv(p, "client_pacer_lag_ms"); } }
    ] },
    "c-fail": { ylabel: "failed/s", y2label: "in flight / load", series: [
      { label: "failed/s", stroke: "#c0392b", get: function (p) { return p.failed; } },
      { label: "in flight", stroke: "#8e44ad", right: true, get: function (p) { return p.in_flight; } },
      { label: "load", stroke: "#7f8c8d", right: true, get: function (p) { return p.level; } }
    ] }
  };

  function makeChart(id) {
    var c = specs[id], el = $(id);
    var scales = { x: { time: false }, y: { auto: true, range: function (u, lo, hi) { return [0, hi > 0 ? hi * 1.1 : 1]; } } };
    var axes = [{ label: "seconds since start" }, { label: c.ylabel, scale: "y" }];
    if (c.y2label) {
      scales.y2 = { auto: true, range: function (u, lo, hi) { return [0, hi > 0 ? hi * 1.1 : 1]; } };
      axes.push({ label: c.y2label, scale: "y2", side: 1, grid: { show: false } });
    }
    var series = [{ label: "t (s)" }].concat(c.series.map(function (s) {
      return { label: s.label, stroke: s.stroke, width: 1.5, scale: s.right ? "y2" : "y", spanGaps: false, points: inferloadChart.points() };
    }));
    charts[id] = new uPlot({ width: width(el), height: 220, scales: scales, axes: axes, series: series, plugins: [marks()] }, data(c), el);
  }

  function data(c) {
    var src = c.tel ? tel[c.tel] : pts;
    var x = src.map(function (p) { return p.t; });
    return [x].concat(c.series.map(function (s) { return src.map(s.get); }));
  }

  // addTelemetry keeps the samples in time order per side, merging the
  // server's sources (metrics, GPUs) that fall in the same second.
  function addTelemetry(list) {
    (list || []).forEach(function (p) {
      var side = p.client ? tel.client : tel.server, last = side[side.length - 1];
      if (!p.client && last && Math.floor(last.t) === Math.floor(p.t)) {
        Object.keys(p.values).forEach(function (k) { last.values[k] = p.values[k]; });
        return;
      }
      side.push({ t: p.t, values: Object.assign({}, p.values) });
      if (side.length > win) { side.splice(0, side.length - win); }
    });
    if (tel.server.length) { $("server-chart").hidden = false; }
    if (tel.client.length) { $("client-chart").hidden = false; }
  }

  function redraw() {
    Object.keys(specs).forEach(function (id) {
      var c = specs[id];
      if (c.tel && !tel[c.tel].length) { return; }
      if (!charts[id]) { makeChart(id); return; }
      charts[id].setData(data(specs[id]));
    });
  }

  function unit(mode) { return mode === "open" ? "requests/s" : "users"; }

  function tiles(s) {
    var left = s.total_s > 0 && !s.final ? " / " + dur(s.total_s - s.elapsed_s) : "";
    $("t-elapsed").textContent = dur(s.elapsed_s) + left;
    $("t-level-label").textContent = s.load.mode ? unit(s.load.mode) : "load";
    $("t-level").textContent = s.load.level ? String(s.load.level) + (s.load.paused ? " (paused)" : "") : "–";
    $("t-inflight").textContent = String(s.in_flight);
    $("t-reqs").textContent = fmt(s.req_per_s, 1);
    $("t-toks").textContent = fmt(s.out_tok_per_s, 0);
    $("t-fail").textContent = fmt(100 * s.failure_rate, 1) + "%";
    $("t-done").textContent = s.completed + " / " + s.failed;
    $("dir").textContent = s.dir || "";
    $("unit").textContent = unit(s.load.mode);
    if (s.load.max_level) { $("level").max = String(s.load.max_level); $("level").title = "at most " + s.load.max_level + " (the plan's limit)"; }
    // A reader without the token sees the run, never steers it: the
    // server refuses its changes (401), so the page offers none.
    ["set-load", "level", "pause", "resume"].forEach(function (id) { $(id).disabled = s.locked || !s.load.steerable || finished; });
    ["stop", "abort", "add-note", "note"].forEach(function (id) { $(id).disabled = s.locked || finished || !!s.load.fixed; });
    $("locked-msg").hidden = !s.locked || finished;
    if (s.load.fixed) { $("control-msg").textContent = s.load.fixed; }
  }

  // segments fills a distributed run's per-segment table.
  function segments(s) {
    var list = s.segments || [];
    $("segments-section").hidden = !list.length;
    fill("segments", list.map(function (g) {
      var tr = document.createElement("tr");
      cell(tr, g.segment); cell(tr, g.state, "state-" + g.state);
      cell(tr, String(g.completed)); cell(tr, String(g.failed)); cell(tr, String(g.late));
      cell(tr, fmt(g.req_per_s, 1));
      cell(tr, g.in_flight < 0 ? "–" : String(g.in_flight));
      cell(tr, g.last_seen_s < 0 ? "never" : fmt(g.last_seen_s, 1) + " s ago");
      cell(tr, g.client_cpu_pct < 0 ? "–" : fmt(g.client_cpu_pct, 0) + "%");
      return tr;
    }));
  }

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) { td.className = cls; }
    tr.appendChild(td);
  }

  function fill(id, rows) {
    var body = $(id).tBodies[0];
    body.replaceChildren.apply(body, rows);
  }

  // optionalColumns shows a table's TTFO and accuracy columns only when
  // one of its rows has the figure (a reasoning model, graded answers).
  function optionalColumns(id, rows) {
    var opt = {
      ttfo: rows.some(function (b) { return b.reasoning; }),
      acc: rows.some(function (b) { return b.accuracy; })
    };
    $(id).querySelectorAll("th.ttfo").forEach(function (th) { th.hidden = !opt.ttfo; });
    $(id).querySelectorAll("th.acc").forEach(function (th) { th.hidden = !opt.acc; });
    return opt;
  }

  function breakdownRow(name, b, opt) {
    var tr = document.createElement("tr");
    cell(tr, name);
    cell(tr, String(b.requests.total));
    cell(tr, String(b.requests.failed));
    cell(tr, fmt(b.metrics.ttft_ms.p50, 1));
    cell(tr, fmt(b.metrics.ttft_ms.p99, 1));
    cell(tr, fmt(b.metrics.e2e_ms.p99, 1));
    cell(tr, fmt(b.throughput.output_tokens_per_s, 1));
    if (opt.ttfo) { cell(tr, b.reasoning && b.metrics.ttfo_ms ? fmt(b.metrics.ttfo_ms.p50, 1) : "–", "ttfo"); }
    if (opt.acc) { cell(tr, b.accuracy ? fmt(b.accuracy.rate * 100, 1) + "%" : "–", "acc"); }
    return tr;
  }

  // sessionRow is one conversational class's figures (summary.json's
  // sessions.<class>): conversations by outcome, the time to finish a
  // completed one (ms), calls per completed one, and session goodput
  // (conversations/s in which every call met the SLO, and their share,
  // as the Tasks table shows task goodput).
  function sessionRow(name, c) {
    var tr = document.createElement("tr");
    cell(tr, name);
    cell(tr, String(c.turns));
    cell(tr, String(c.completed));
    cell(tr, String(c.failed));
    cell(tr, String(c.incomplete));
    cell(tr, c.duration_ms.count ? fmt(c.duration_ms.p50, 1) : "–");
    cell(tr, c.duration_ms.count ? fmt(c.duration_ms.p90, 1) : "–");
    cell(tr, fmt(c.calls_per_session, 1));
    cell(tr, fmt(c.goodput.sessions_per_s, 2) + "/s (" + fmt(100 * c.goodput.attainment, 0) + "%)");
    return tr;
  }

  // sessions shows the Sessions table only when the run has conversations.
  function sessions(s) {
    var names = Object.keys(s.sessions || {}).sort();
    $("sessions-box").hidden = names.length === 0;
    fill("sessions", names.map(function (n) { return sessionRow(n, s.sessions[n]); }));
  }

  // taskRows are one chain or graph class's rows (summary.json's
  // chains.<class>): the class's tasks by outcome, the time to finish a
  // successful one (ms), calls per task and task goodput (tasks/s whose
  // every model call met the SLO, when the class has one); then one row
  // per node in topological order, a fan-out's copies together: its
  // calls, failures and own latency in successful tasks.
  function taskRows(name, c) {
    var tr = document.createElement("tr");
    cell(tr, name);
    cell(tr, String(c.chains));
    cell(tr, String(c.failed));
    cell(tr, c.e2e_ms.count ? fmt(c.e2e_ms.p50, 1) : "–");
    cell(tr, c.e2e_ms.count ? fmt(c.e2e_ms.p90, 1) : "–");
    cell(tr, c.calls_per_task.count ? fmt(c.calls_per_task.mean, 1) : "–");
    cell(tr, c.goodput ? fmt(c.goodput.tasks_per_s, 2) + "/s (" + fmt(100 * c.goodput.attainment, 0) + "%)" : "–");
    var rows = [tr];
    (c.steps || []).forEach(function (n) {
      var nr = document.createElement("tr");
      nr.className = "node";
      cell(nr, "\u21b3 " + n.name + " (" + n.kind + ")");
      cell(nr, String(n.started) + (n.skipped ? " +" + n.skipped + " skipped" : ""));
      cell(nr, String(n.failed));
      cell(nr, n.latency_ms.count ? fmt(n.latency_ms.p50, 1) : "–");
      cell(nr, n.latency_ms.count ? fmt(n.latency_ms.p90, 1) : "–");
      cell(nr, "");
      cell(nr, "");
      rows.push(nr);
    });
    return rows;
  }

  // tasks shows the Tasks table only when the run has chain or graph
  // classes.
  function tasks(s) {
    var names = Object.keys(s.chains || {}).sort();
    $("tasks-box").hidden = names.length === 0;
    fill("tasks", [].concat.apply([], names.map(function (n) { return taskRows(n, s.chains[n]); })));
  }

  function tables(s) {
    fill("errors", (s.errors || []).map(function (e) {
      var tr = document.createElement("tr");
      cell(tr, e.kind); cell(tr, String(e.count)); cell(tr, (e.latest || []).join("\n"), "msg");
      return tr;
    }));
    var names = Object.keys(s.classes || {}).sort();
    var classOpt = optionalColumns("classes", names.map(function (n) { return s.classes[n]; }));
    fill("classes", names.map(function (n) { return breakdownRow(n, s.classes[n], classOpt); }));
    var buckets = (s.buckets || []).filter(function (b) { return b.requests.total > 0; });
    var bucketOpt = optionalColumns("buckets", buckets);
    fill("buckets", buckets.map(function (b) { return breakdownRow(b.label, b, bucketOpt); }));
    sessions(s);
    tasks(s);
    var ul = $("events");
    ul.replaceChildren.apply(ul, events.slice().reverse().map(function (e) {
      var li = document.createElement("li");
      li.textContent = dur(e.t) + "  " + e.kind + ": " + e.message;
      return li;
    }));
  }

  function final(s) {
    if (!s.final || finished) { return; }
    finished = true;
    var f = s.final.summary, t = "Results in " + s.final.dir + ".";
    if (f) {
      t += " " + f.requests.succeeded + " succeeded, " + f.requests.failed + " failed; " +
        fmt(f.throughput.requests_per_s, 2) + " req/s, " + fmt(f.throughput.output_tokens_per_s, 1) +
        " output tok/s; TTFT P50 " + fmt(f.metrics.ttft_ms.p50, 1) + " ms, P99 " + fmt(f.metrics.ttft_ms.p99, 1) +
        " ms" + (f.interrupted ? " (interrupted)" : "") + ".";
    }
    if (!s.final.report_url) { t += " report.html is in the run directory."; }
    if (s.final.error) { t = "The run failed: " + s.final.error; }
    $("final-text").textContent = t;
    if (s.final.report_url) {
      var a = document.createElement("a");
      a.href = s.final.report_url;
      a.id = "report-link";
      a.textContent = "open report.html";
      $("final").appendChild(a);
    }
    $("final").hidden = false;
    $("status").textContent = "finished";
  }

  function update(s) {
    state = s;
    win = s.window || win;
    var have = pts.length ? pts[pts.length - 1].t : -1;
    (s.points || []).forEach(function (p) { if (p.t > have) { pts.push(p); } });
    if (pts.length > win) { pts.splice(0, pts.length - win); }
    events = s.events || [];
    addTelemetry(s.telemetry);
    tiles(s); tables(s); segments(s); redraw(); final(s);
    if (!finished) { $("status").textContent = s.load.paused ? "paused" : s.load.stopping ? "stopping" : "running"; }
  }

  function post(path, body) {
    $("control-msg").textContent = "";
    return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) })
      .then(function (r) {
        return r.json().then(function (j) {
          if (!r.ok) { $("control-msg").textContent = j.error || r.statusText; }
          return j;
        });
      }).catch(function (e) { $("control-msg").textContent = String(e); });
  }

  $("load-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    post("api/load", { level: Number($("level").value) });
  });
  $("note-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var text = $("note").value;
    post("api/note", { text: text }).then(function () { $("note").value = ""; });
  });
  $("pause").addEventListener("click", function () { post("api/pause"); });
  $("resume").addEventListener("click", function () { post("api/resume"); });
  $("stop").addEventListener("click", function () { post("api/stop"); });
  $("abort").addEventListener("click", function () {
    if (window.confirm("Abort cancels the requests in flight. Abort?")) { post("api/abort"); }
  });

  var es = new EventSource("api/events");
  es.onmessage = function (m) { update(JSON.parse(m.data)); };
  es.onerror = function () {
    if (finished) { es.close(); return; }
    $("status").textContent = "disconnected; retrying";
  };
  window.addEventListener("resize", function () {
    Object.keys(charts).forEach(function (id) { charts[id].setSize({ width: width($(id)), height: 220 }); });
  });
})();
