/* hopscore report: sample browser. Every piece of sample text is inserted with textContent. */
(function () {
  "use strict";

  /* The sample data: plain JSON, or gzip + base64 for large reports (--compress). */
  function load() {
    var node = document.getElementById("report-data");
    if (node.dataset.encoding !== "gzip+base64") {
      return Promise.resolve(JSON.parse(node.textContent));
    }
    if (typeof DecompressionStream === "undefined") {
      return Promise.reject(new Error("this browser cannot decompress the embedded sample data " +
        "(no DecompressionStream); regenerate the report with --compress never"));
    }
    var binary = atob(node.textContent.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) { bytes[i] = binary.charCodeAt(i); }
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(function (text) { return JSON.parse(text); });
  }

  load().then(start, function (error) {
    var section = document.getElementById("browser-section");
    section.appendChild(document.createElement("p")).textContent = "Sample browser unavailable: " + error.message;
    console.error(error);
  });

  function start(data) {
    var PAGE = 50;
    var runs = data.runs;
    var samples = data.samples;
    var state = { run: 0, group: "", correct: "", category: "", search: "", page: 0, selected: null };
    var matches = [];
    var haystacks = null;
    var byId = {};
    samples.forEach(function (s, i) { byId[s.id] = i; });
    runs.forEach(function (r, i) { if (r.baseline) { state.run = i; } });

    function $(id) { return document.getElementById(id); }
    function el(tag, text, cls) {
      var node = document.createElement(tag);
      if (text !== undefined && text !== null) { node.textContent = String(text); }
      if (cls) { node.className = cls; }
      return node;
    }
    function option(select, value, text) {
      var o = el("option", text);
      o.value = value;
      select.appendChild(o);
    }
    function pct(v) { return (100 * v).toFixed(2); }

    function setupFilters() {
      var runSelect = $("filter-run");
      runs.forEach(function (r, i) { option(runSelect, String(i), r.label + (r.baseline && runs.length > 1 ? " (baseline)" : "")); });
      runSelect.value = String(state.run);
      var groups = {};
      samples.forEach(function (s) {
        Object.keys(s.g).forEach(function (k) { groups[k + "=" + s.g[k]] = true; });
      });
      var groupSelect = $("filter-group");
      Object.keys(groups).sort().forEach(function (g) { option(groupSelect, g, g); });
      fillCategories();
    }

    function fillCategories() {
      var select = $("filter-category");
      while (select.options.length > 1) { select.remove(1); }
      var run = runs[state.run];
      var seen = {};
      samples.forEach(function (s) {
        var r = s.r[state.run];
        if (!r) { return; }
        r.c.forEach(function (c, d) { if (c !== null) { seen[d + "\u0000" + c] = [d, c]; } });
      });
      Object.keys(seen).sort().forEach(function (key) {
        var pair = seen[key];
        option(select, key, run.dims[pair[0]] + ": " + pair[1]);
      });
      select.value = state.category && seen[state.category] ? state.category : "";
      state.category = select.value;
      var help = run.ok ? "✓ = " + run.ok + " is 1 in " + run.label : "no binary metric: ✓ not shown";
      $("ok-help").textContent = help;
    }

    function haystack(i) {
      if (!haystacks) {
        haystacks = samples.map(function (s) {
          var parts = [s.id, s.q || "", s.gold.join(" ")];
          s.r.forEach(function (r) { if (r && r.p) { parts.push(r.p); } });
          return parts.join("\n").toLowerCase();
        });
      }
      return haystacks[i];
    }

    function keep(s, i) {
      var r = s.r[state.run];
      if (state.group) {
        var cut = state.group.indexOf("=");
        var key = state.group.slice(0, cut), label = state.group.slice(cut + 1);
        if (s.g[key] !== label) { return false; }
      }
      if (state.correct) {
        if (!r) { return false; }
        if (state.correct === "right" && r.ok !== 1) { return false; }
        if (state.correct === "wrong" && r.ok !== 0) { return false; }
        if (state.correct === "missing" && !r.miss) { return false; }
        if ((state.correct === "rw" || state.correct === "wr") && flipsOf(s).indexOf(state.correct) < 0) { return false; }
      }
      if (state.category) {
        if (!r) { return false; }
        var pair = state.category.split("\u0000");
        if (r.c[Number(pair[0])] !== pair[1]) { return false; }
      }
      if (state.search && haystack(i).indexOf(state.search) < 0) { return false; }
      return true;
    }

    /* The flips (rw, wr) the selected run takes part in: its own against the baseline, or, for
       the baseline itself, those of every run compared with it (baseline right, that run wrong
       is "rw"), so the flip filter works whichever run is selected. */
    function flipsOf(s) {
      var r = s.r[state.run];
      if (!r) { return []; }
      if (!runs[state.run].baseline) { return r.f ? [r.f] : []; }
      var out = [];
      s.r.forEach(function (other) { if (other && other.f) { out.push(other.f); } });
      return out;
    }

    function applyFilters() {
      matches = [];
      for (var i = 0; i < samples.length; i++) { if (keep(samples[i], i)) { matches.push(i); } }
      state.page = 0;
      render();
    }

    function render() {
      var body = $("sample-rows");
      while (body.firstChild) { body.removeChild(body.firstChild); }
      var pages = Math.max(1, Math.ceil(matches.length / PAGE));
      state.page = Math.min(state.page, pages - 1);
      var start = state.page * PAGE;
      matches.slice(start, start + PAGE).forEach(function (i) {
        var s = samples[i];
        var r = s.r[state.run];
        var tr = el("tr");
        tr.dataset.id = s.id;
        if (state.selected === s.id) { tr.className = "selected"; }
        tr.appendChild(el("td", s.id, "id"));
        tr.appendChild(el("td", s.q || ""));
        tr.appendChild(el("td", r ? (r.miss ? "(no prediction)" : (r.p || "")) : "(not in this run)"));
        tr.appendChild(el("td", s.gold.join(" | ")));
        tr.appendChild(el("td", r && r.ok !== null ? (r.ok ? "✓" : "✗") : "", r && r.ok === 1 ? "ok" : "bad"));
        tr.addEventListener("click", function () { showDetail(s.id); });
        body.appendChild(tr);
      });
      $("match-count").textContent = matches.length + " of " + samples.length + " samples";
      $("page-info").textContent = "page " + (state.page + 1) + " of " + pages;
      $("page-prev").disabled = state.page === 0;
      $("page-next").disabled = state.page >= pages - 1;
    }

    function block(parent, title, text, open) {
      if (text === null || text === undefined || text === "") { return; }
      var d = el("details");
      if (open) { d.open = true; }
      d.appendChild(el("summary", title));
      d.appendChild(el("pre", text));
      parent.appendChild(d);
    }
    function field(parent, name, value) {
      var p = el("p");
      p.appendChild(el("b", name + ": "));
      p.appendChild(document.createTextNode(value === null || value === undefined ? "" : String(value)));
      parent.appendChild(p);
    }

    /* An agent's conversation: every message in full, tool calls with their arguments. */
    function conversationBlock(turns) {
      var d = el("details", null, "conversation");
      d.open = true;
      var calls = 0;
      turns.forEach(function (t) { calls += (t.calls || []).length; });
      d.appendChild(el("summary", "conversation (" + turns.length + " messages, " + calls + " tool calls)"));
      turns.forEach(function (t, i) {
        var turn = el("div", null, "turn role-" + String(t.role).replace(/[^a-z]/g, ""));
        var head = "#" + (i + 1) + " " + t.role + (t.id ? " (result of " + t.id + ")" : "");
        turn.appendChild(el("div", head, "turn-head"));
        if (t.text && t.role === "system") {
          var sys = el("details");  /* the same long prompt in every sample: closed */
          sys.appendChild(el("summary", t.text.length + " characters"));
          sys.appendChild(el("pre", t.text));
          turn.appendChild(sys);
        } else if (t.text) { turn.appendChild(el("pre", t.text)); }
        (t.calls || []).forEach(function (c) { turn.appendChild(el("pre", "→ " + c.name + " " + c.arguments, "call")); });
        if (!t.text && !(t.calls || []).length) { turn.appendChild(el("p", "(empty)", "meta")); }
        d.appendChild(turn);
      });
      return d;
    }

    /* A chain strategy's rounds: methods' answers, every chain's steps and evidence, and the
       meta-reasoner's input and output. */
    function chainsBlock(rounds) {
      var d = el("details", null, "chains");
      d.open = true;
      var last = rounds[rounds.length - 1];
      d.appendChild(el("summary", "chains (" + last.chains.length + " per round, " + rounds.length +
        " round" + (rounds.length > 1 ? "s" : "") + ")"));
      rounds.forEach(function (r) {
        var box = el("div", null, "chain-round");
        box.appendChild(el("div", "round " + r.round + ": " + (r.abstained ? "abstained" :
          String(r.answer)), "turn-head"));
        var names = Object.keys(r.methods);
        if (names.length) {
          box.appendChild(el("p", names.map(function (n) {
            var m = r.methods[n];
            var votes = m.votes ? " " + JSON.stringify(m.votes) : "";
            return n.toUpperCase() + ": " + (m.answer === null ? "-" : m.answer) +
              (m.score === null || m.score === undefined ? "" : " (" + pct(m.score) + ")") + votes;
          }).join("   "), "meta"));
        }
        r.chains.forEach(function (c) {
          var cd = el("details", null, "chain");
          cd.appendChild(el("summary", "chain " + c.i + " (temperature " + c.t +
            (c.seed === null || c.seed === undefined ? "" : ", seed " + c.seed) + ", " + c.calls +
            " calls): " + (c.answer === null ? (c.done ? "no answer" : "unfinished") : c.answer)));
          c.steps.forEach(function (st) {
            var line = st.q === null ? "final answer: " + st.a : st.q + " → " + st.a;
            cd.appendChild(el("pre", line, "step"));
            if (st.e) { cd.appendChild(el("pre", "evidence: " + st.e, "evidence")); }
          });
          if (c.text) { block(cd, "chain text", c.text, false); }
          box.appendChild(cd);
        });
        if (r.meta_in) { block(box, "meta-reasoner input", r.meta_in, false); }
        if (r.meta_out) { block(box, "meta-reasoner output", r.meta_out, true); }
        d.appendChild(box);
      });
      return d;
    }

    /* One row per metric, one column per run (scores in %). */
    function scoresTable(s) {
      var names = [];
      runs.forEach(function (run) { run.names.forEach(function (n) { if (names.indexOf(n) < 0) { names.push(n); } }); });
      var table = el("table", null, "numbers scores");
      var head = el("tr");
      head.appendChild(el("th", "score"));
      runs.forEach(function (run) { head.appendChild(el("th", run.label)); });
      table.appendChild(head);
      names.forEach(function (name) {
        var tr = el("tr");
        tr.appendChild(el("th", name));
        s.r.forEach(function (r, k) {
          var j = runs[k].names.indexOf(name);
          var td = el("td", r && j >= 0 ? pct(r.m[j]) : "");
          td.dataset.metric = name;
          td.dataset.run = runs[k].label;
          tr.appendChild(td);
        });
        table.appendChild(tr);
      });
      return table;
    }

    function showDetail(id) {
      var i = byId[id];
      if (i === undefined) { return; }
      var s = samples[i];
      state.selected = id;
      var panel = $("detail");
      while (panel.firstChild) { panel.removeChild(panel.firstChild); }
      panel.hidden = false;
      var close = el("button", "close", "close");
      close.type = "button";
      close.addEventListener("click", function () { panel.hidden = true; state.selected = null; render(); });
      panel.appendChild(close);
      panel.appendChild(el("h3", s.id, "detail-id"));
      field(panel, "question", s.q || "(not available: pass --gold)");
      field(panel, "gold", s.gold.join(" | "));
      var groups = Object.keys(s.g).map(function (k) { return k + "=" + s.g[k]; }).join(", ");
      if (groups) { field(panel, "groups", groups); }
      block(panel, "context", s.ctx, false);
      panel.appendChild(scoresTable(s));
      s.r.forEach(function (r, k) {
        var run = runs[k];
        var box = el("div", null, "run-detail");
        box.dataset.run = run.label;
        box.appendChild(el("h4", run.label));
        if (!r) { box.appendChild(el("p", "not in this run", "meta")); panel.appendChild(box); return; }
        field(box, "prediction", r.miss ? "(no prediction)" : r.p);
        if (r.ok !== null) { field(box, "outcome", (r.ok ? "right" : "wrong") + " (" + run.ok + ")"); }
        if (r.f) { field(box, "flip vs baseline", r.f === "rw" ? "right→wrong" : "wrong→right"); }
        if (run.baseline) {
          var against = [];
          s.r.forEach(function (other, j) {
            if (other && other.f) { against.push(runs[j].label + " " + (other.f === "rw" ? "right→wrong" : "wrong→right")); }
          });
          if (against.length) { field(box, "flips against this baseline", against.join("; ")); }
        }
        r.c.forEach(function (c, d) { if (c !== null) { field(box, run.dims[d], c); } });
        if (r.x) { field(box, "extracted (strict)", r.x[0]); field(box, "extracted (flexible)", r.x[1]); }
        if (r.err) { field(box, "error", r.err); }
        if (r.extra) { Object.keys(r.extra).forEach(function (key) { field(box, key, r.extra[key]); }); }
        block(box, "judge reply (raw)", r.judge, true);
        if (r.turns) { box.appendChild(conversationBlock(r.turns)); }
        if (r.chains) { box.appendChild(chainsBlock(r.chains)); }
        block(box, "raw output", r.raw, true);
        block(box, "prompt", r.prompt, false);
        block(box, "trajectory", r.traj, false);
        panel.appendChild(box);
      });
      render();
    }

    function openSample(id) {
      showDetail(id);
      $("browser-section").scrollIntoView();
    }

    function wire() {
      $("filter-run").addEventListener("change", function (e) { state.run = Number(e.target.value); fillCategories(); applyFilters(); });
      $("filter-group").addEventListener("change", function (e) { state.group = e.target.value; applyFilters(); });
      $("filter-correct").addEventListener("change", function (e) { state.correct = e.target.value; applyFilters(); });
      $("filter-category").addEventListener("change", function (e) { state.category = e.target.value; applyFilters(); });
      var timer = null;
      $("filter-search").addEventListener("input", function (e) {
        clearTimeout(timer);
        timer = setTimeout(function () { state.search = e.target.value.trim().toLowerCase(); applyFilters(); }, 120);
      });
      $("filter-reset").addEventListener("click", function () {
        state.group = state.correct = state.category = state.search = "";
        ["filter-group", "filter-correct", "filter-category", "filter-search"].forEach(function (id) { $(id).value = ""; });
        applyFilters();
      });
      $("page-prev").addEventListener("click", function () { state.page -= 1; render(); });
      $("page-next").addEventListener("click", function () { state.page += 1; render(); });
      document.addEventListener("click", function (e) {
        var target = e.target;
        if (!(target instanceof Element)) { return; }
        var link = target.closest("a.open-sample");
        if (link) { e.preventDefault(); openSample(link.dataset.id); return; }
        var cat = target.closest("a.filter-category");
        if (cat) {
          e.preventDefault();
          state.run = Number(cat.dataset.run);
          $("filter-run").value = String(state.run);
          state.category = cat.dataset.dim + "\u0000" + cat.dataset.category;
          fillCategories();
          $("filter-category").value = state.category;
          applyFilters();
          $("browser-section").scrollIntoView();
        }
      });
    }

    setupFilters();
    wire();
    applyFilters();
    document.body.dataset.ready = "1";
  }
})();
