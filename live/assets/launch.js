// The launcher page of `inferload ui`: composes a run, starts it, and
// lists the run directories with links to their report.html. Names are
// set with textContent only.
(function () {
  "use strict";
  function $(id) { return document.getElementById(id); }
  var fields = ["url", "model", "api", "plan", "mode", "duration", "input_tokens", "output_tokens"];

  function listRuns() {
    return fetch("api/runs").then(function (r) { return r.json(); }).then(function (list) {
      var runs = list.runs;
      $("live-link").hidden = !list.live;
      $("live-link").textContent = list.running ? "watch the run going on" : "the last run's live page";
      var body = $("runs").tBodies[0];
      body.replaceChildren.apply(body, runs.map(function (e) {
        var tr = document.createElement("tr"), name = document.createElement("td"), rep = document.createElement("td");
        name.textContent = e.name;
        if (e.report) {
          var a = document.createElement("a");
          a.href = e.report;
          a.textContent = "report.html";
          rep.appendChild(a);
        } else {
          rep.textContent = "–";
        }
        tr.appendChild(name); tr.appendChild(rep);
        return tr;
      }));
    });
  }

  $("run-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var req = { level: Number($("level").value) };
    fields.forEach(function (f) { req[f] = $(f).value; });
    $("msg").textContent = "starting…";
    fetch("api/runs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(req) })
      .then(function (r) {
        return r.json().then(function (j) {
          if (!r.ok) { $("msg").textContent = j.error || r.statusText; return; }
          window.location.href = j.live;
        });
      }).catch(function (e) { $("msg").textContent = String(e); });
  });

  listRuns();
})();
