/* judgekit viewer: run page (virtualised table), trial page, comparison page.
 *
 * Data comes from data/index.js (window.JK_DATA), the run page's rows from data/runR/rows-K.js (each
 * assigns one part of a run's rows; index.html loads them before this script) and, per trial page, one
 * data/runR/chunk-K.js file loaded with a <script> tag (file:// forbids fetch). Every text from the data is set with textContent:
 * nothing read from a transcript or a results file is ever parsed as HTML.
 */
(function () {
  "use strict";

  var DATA = window.JK_DATA;
  var complete = !!DATA;
  if (DATA) {
    // Join each run's row parts (data/runR/rows-K.js) into its rows, in order; a missing part means an
    // incomplete folder, said below rather than shown as a shorter run.
    DATA.runs.forEach(function (run) {
      if (run.rows) return;
      var rows = [];
      for (var k = 0; k < run.row_files; k++) {
        var part = run.rows_parts[k];
        if (!part) { complete = false; return; }
        for (var i = 0; i < part.length; i++) rows.push(part[i]);
      }
      run.rows = rows;
      run.rows_parts = null;
    });
  }
  var ROW_HEIGHT = 28;
  var CASE = 0, TRIAL = 1, VERDICT = 2, CATS = 3, LAYERS = 4, TRUST = 5, COST = 6, COST_WHY = 7, REASON = 8;
  var VERDICT_ORDER = ["fail", "error", "insufficient_information", "not_evaluated", "pass"];  // gate order
  var chunks = {};
  var pending = {};
  var state = {};  // per run: filters, sort, scroll position
  var app = document.getElementById("app");
  var nav = document.getElementById("nav");
  var title = document.getElementById("title");

  window.JK_CHUNK = function (run, chunk, details) {
    chunks[run + "/" + chunk] = details;
    var waiting = pending[run + "/" + chunk] || [];
    delete pending[run + "/" + chunk];
    waiting.forEach(function (fn) { fn(details); });
  };

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (key) {
        var value = attrs[key];
        if (value === null || value === undefined || value === false) return;
        if (key === "text") node.textContent = String(value);
        else if (key === "cls") node.className = value;
        else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, String(value));
      });
    }
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  function costText(usd, why) {
    if (usd === null || usd === undefined) return "unknown" + (why ? " (" + why + ")" : "");
    return "$" + Number(usd).toFixed(4);
  }

  // a judgment's cost with its tokens, and whether its replies came from the cassette (no call made now)
  function judgmentCost(j) {
    var text = costText(j.cost_usd, j.cost_unknown_reason);
    var parts = [];
    if (typeof j.prompt_tokens === "number") {
      var cached = j.cached_tokens ? " (" + j.cached_tokens + " read from the provider's prompt cache)" : "";
      parts.push(j.prompt_tokens + " tokens in" + cached + ", " + (j.completion_tokens || 0) + " out");
    }
    if (j.replayed) parts.push(j.replayed + " of " + (j.calls || j.replayed) + " replies replayed from the cassette");
    return parts.length ? text + " (" + parts.join("; ") + ")" : text;
  }

  function verdictBadge(verdict) {
    return el("span", { cls: "badge v-" + verdict, text: verdict.replace(/_/g, " ") });
  }

  function caseOf(row) { return DATA.cases[row[CASE]]; }

  // ------------------------------------------------------------------ navigation

  function renderNav(active) {
    clear(nav);
    DATA.runs.forEach(function (run, r) {
      nav.appendChild(el("a", { href: "#run/" + r, cls: active === "run/" + r ? "active" : "", text: (DATA.runs.length > 1 ? (r === 0 ? "run A: " : "run B: ") : "run: ") + run.name }));
    });
    if (DATA.compare) nav.appendChild(el("a", { href: "#compare", id: "nav-compare", cls: active === "compare" ? "active" : "", text: "comparison" }));
  }

  function route() {
    var hash = decodeURIComponent(location.hash.replace(/^#/, ""));
    var parts = hash.split("?")[0].split("/");
    if (parts[0] === "trial" && parts.length === 3) return trialPage(Number(parts[1]), Number(parts[2]));
    if (parts[0] === "compare" && DATA.compare) return comparePage();
    var r = parts[0] === "run" ? Number(parts[1]) : 0;
    return runPage(DATA.runs[r] ? r : 0, hash.split("?")[1] || "");
  }

  // ------------------------------------------------------------------ run page

  var COLUMNS = [
    { key: "case", label: "case", get: function (row) { return caseOf(row).id; } },
    { key: "trial", label: "trial", get: function (row) { return row[TRIAL]; } },
    { key: "verdict", label: "verdict", get: function (row) { return VERDICT_ORDER.indexOf(row[VERDICT]); } },
    { key: "category", label: "failure category", get: function (row) { return row[CATS]; } },
    { key: "layer", label: "layer failed", get: function (row) { return row[LAYERS]; } },
    { key: "trust", label: "trust", get: function (row) { return row[TRUST]; } },
    { key: "cost", label: "cost", get: function (row) { return row[COST] === null ? -1 : row[COST]; } },
    { key: "reason", label: "reason", get: function (row) { return row[REASON]; } }
  ];

  var FILTERS = [
    { key: "verdict", label: "verdict", values: function (row) { return [row[VERDICT]]; } },
    { key: "category", label: "category", values: function (row) { return row[CATS] ? row[CATS].split(",") : ["(none)"]; } },
    { key: "suite", label: "suite", values: function (row) { return [caseOf(row).suite]; } },
    { key: "slice", label: "slice", values: function (row) { return [caseOf(row).slice || "(none)"]; } },
    { key: "severity", label: "severity", values: function (row) { return [caseOf(row).severity || "(none)"]; } },
    { key: "layer", label: "layer failed", values: function (row) { return row[LAYERS] ? row[LAYERS].split(",") : ["(none)"]; } },
    { key: "trust", label: "trust", values: function (row) { return [row[TRUST]]; } }
  ];

  function runState(r, query) {
    if (!state[r]) {
      state[r] = { filters: {}, q: "", sort: null, desc: false, scroll: 0, view: null, search: null };
    }
    var s = state[r];
    if (query) {
      query.split("&").forEach(function (pair) {
        var kv = pair.split("=");
        var key = kv[0], value = kv.slice(1).join("=");
        if (key === "q") s.q = value;
        else if (key === "sort") s.sort = value;
        else if (key === "desc") s.desc = value === "1";
        else if (FILTERS.some(function (f) { return f.key === key; })) s.filters[key] = value;
      });
      s.view = null;
    }
    return s;
  }

  function filtered(r, s) {
    var rows = DATA.runs[r].rows;
    if (!s.search) {
      s.search = rows.map(function (row) { return (caseOf(row).id + " " + row[REASON]).toLowerCase(); });
    }
    var active = FILTERS.filter(function (f) { return s.filters[f.key]; });
    var q = s.q.toLowerCase();
    var out = [];
    for (var n = 0; n < rows.length; n++) {
      var row = rows[n];
      var keep = true;
      for (var i = 0; i < active.length && keep; i++) {
        keep = active[i].values(row).indexOf(s.filters[active[i].key]) >= 0;
      }
      if (keep && q && s.search[n].indexOf(q) < 0) keep = false;
      if (keep) out.push(n);
    }
    if (s.sort) {
      var column = COLUMNS.filter(function (c) { return c.key === s.sort; })[0];
      if (column) {
        var sign = s.desc ? -1 : 1;
        var keys = {};
        out.forEach(function (n) { keys[n] = column.get(rows[n]); });
        out.sort(function (x, y) {
          var a = keys[x], b = keys[y];
          if (a < b) return -sign;
          if (a > b) return sign;
          return x - y;
        });
      }
    }
    return out;
  }

  function queryOf(s) {
    var parts = [];
    FILTERS.forEach(function (f) { if (s.filters[f.key]) parts.push(f.key + "=" + s.filters[f.key]); });
    if (s.q) parts.push("q=" + s.q);
    if (s.sort) parts.push("sort=" + s.sort + (s.desc ? "&desc=1" : ""));
    return parts.join("&");
  }

  function runPage(r, query) {
    var run = DATA.runs[r];
    var s = runState(r, query);
    renderNav("run/" + r);
    title.textContent = "judgekit viewer: " + run.name;
    document.title = "judgekit viewer: " + run.name;
    clear(app);
    var counts = {};
    run.rows.forEach(function (row) { counts[row[VERDICT]] = (counts[row[VERDICT]] || 0) + 1; });
    app.appendChild(el("p", { cls: "summary", id: "run-summary" }, [
      run.file + " — " + run.rows.length + " trials: " +
      Object.keys(counts).sort().map(function (v) { return counts[v] + " " + v.replace(/_/g, " "); }).join(", ")
    ]));
    // judge verdicts on never-labelled criterion texts: the reports' own line, null without a judge layer
    if (run.unlabelled) app.appendChild(el("p", { cls: "summary", id: "run-unlabelled", text: run.unlabelled }));
    run.problems.forEach(function (p) { app.appendChild(el("p", { cls: "problem", text: "problem in the results file: " + p })); });
    var bar = el("div", { cls: "filters", id: "filters" });
    FILTERS.forEach(function (f) {
      var seen = {};
      run.rows.forEach(function (row) { f.values(row).forEach(function (v) { seen[v] = (seen[v] || 0) + 1; }); });
      var select = el("select", { id: "filter-" + f.key, "aria-label": f.label, onchange: function () {
        s.filters[f.key] = select.value; s.view = null; update(true);
      } }, [el("option", { value: "", text: f.label + ": any" })]);
      Object.keys(seen).sort().forEach(function (v) {
        select.appendChild(el("option", { value: v, text: f.label + ": " + v.replace(/_/g, " ") + " (" + seen[v] + ")" }));
      });
      select.value = s.filters[f.key] || "";
      bar.appendChild(select);
    });
    var search = el("input", { id: "search", type: "search", placeholder: "search case id or reason", value: s.q });
    var timer = null;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { s.q = search.value; s.view = null; update(true); }, 120);
    });
    bar.appendChild(search);
    bar.appendChild(el("button", { type: "button", id: "reset", text: "clear filters", onclick: function () {
      s.filters = {}; s.q = ""; s.sort = null; s.desc = false; s.view = null;
      location.hash = "#run/" + r;
    } }));
    app.appendChild(bar);
    var count = el("p", { id: "count", cls: "count", "aria-live": "polite" });
    app.appendChild(count);
    var header = el("div", { cls: "vrow vhead", role: "row" });
    COLUMNS.forEach(function (c) {
      var mark = s.sort === c.key ? (s.desc ? " ▼" : " ▲") : "";
      header.appendChild(el("button", { type: "button", cls: "cell c-" + c.key, "data-sort": c.key, text: c.label + mark, onclick: function () {
        if (s.sort === c.key) s.desc = !s.desc; else { s.sort = c.key; s.desc = false; }
        s.view = null; update(true);
        Array.prototype.forEach.call(header.children, function (b) {
          var k = b.getAttribute("data-sort");
          b.textContent = COLUMNS.filter(function (x) { return x.key === k; })[0].label + (s.sort === k ? (s.desc ? " ▼" : " ▲") : "");
        });
      } }));
    });
    app.appendChild(header);
    var viewport = el("div", { id: "rows", cls: "viewport", role: "table", tabindex: "0" });
    var spacer = el("div", { cls: "spacer" });
    viewport.appendChild(spacer);
    app.appendChild(viewport);
    var drawn = { first: -1, last: -1 };

    function draw() {
      var view = s.view;
      var top = viewport.scrollTop;
      var height = viewport.clientHeight || 600;
      var first = Math.max(0, Math.floor(top / ROW_HEIGHT) - 5);
      var last = Math.min(view.length, Math.ceil((top + height) / ROW_HEIGHT) + 5);
      if (first === drawn.first && last === drawn.last) return;
      drawn.first = first; drawn.last = last;
      while (spacer.firstChild) spacer.removeChild(spacer.firstChild);
      for (var i = first; i < last; i++) {
        var n = view[i];
        var row = run.rows[n];
        var link = el("a", { cls: "vrow v-row-" + row[VERDICT], href: "#trial/" + r + "/" + n, role: "row", "data-n": n, style: null });
        link.style.top = (i * ROW_HEIGHT) + "px";
        link.appendChild(el("span", { cls: "cell c-case", text: caseOf(row).id, title: caseOf(row).id }));
        link.appendChild(el("span", { cls: "cell c-trial", text: row[TRIAL] }));
        link.appendChild(el("span", { cls: "cell c-verdict" }, [verdictBadge(row[VERDICT])]));
        link.appendChild(el("span", { cls: "cell c-category", text: row[CATS].replace(/,/g, ", ") }));
        link.appendChild(el("span", { cls: "cell c-layer", text: row[LAYERS].replace(/,/g, ", ") }));
        link.appendChild(el("span", { cls: "cell c-trust t-" + row[TRUST], text: row[TRUST].replace(/_/g, " ") }));
        link.appendChild(el("span", { cls: "cell c-cost", text: costText(row[COST], row[COST_WHY]), title: row[COST_WHY] || "" }));
        link.appendChild(el("span", { cls: "cell c-reason", text: row[REASON], title: row[REASON] }));
        spacer.appendChild(link);
      }
    }

    function update(reset) {
      if (!s.view) s.view = filtered(r, s);
      spacer.style.height = (s.view.length * ROW_HEIGHT) + "px";
      count.textContent = "showing " + s.view.length + " of " + run.rows.length + " trials";
      if (reset) {
        viewport.scrollTop = 0;
        var q = queryOf(s);
        history.replaceState(null, "", "#run/" + r + (q ? "?" + q : ""));
      }
      drawn.first = -1;
      draw();
    }

    var scheduled = false;
    viewport.addEventListener("scroll", function () {
      s.scroll = viewport.scrollTop;
      if (scheduled) return;
      scheduled = true;
      requestAnimationFrame(function () { scheduled = false; draw(); });
    });
    update(false);
    viewport.scrollTop = s.scroll;
    draw();
  }

  // ------------------------------------------------------------------ trial page

  function loadChunk(r, k, done, failed) {
    var key = r + "/" + k;
    if (chunks[key]) return done(chunks[key]);
    if (pending[key]) { pending[key].push(done); return; }
    pending[key] = [done];
    var script = document.createElement("script");
    script.src = "data/run" + r + "/chunk-" + k + ".js";
    script.onerror = function () { delete pending[key]; failed(script.src); };
    document.head.appendChild(script);
  }

  function otherRunTrial(r, detail) {
    if (DATA.runs.length < 2) return null;
    var other = 1 - r;
    var rows = DATA.runs[other].rows;
    for (var n = 0; n < rows.length; n++) {
      if (DATA.cases[rows[n][CASE]].id === detail.case && rows[n][TRIAL] === detail.trial) return [other, n];
    }
    return null;
  }

  function trialPage(r, n) {
    var run = DATA.runs[r];
    renderNav("trial");
    clear(app);
    if (!run || !(n >= 0 && n < run.rows.length)) {
      app.appendChild(el("p", { cls: "problem", text: "no such trial: " + location.hash }));
      return;
    }
    app.appendChild(el("p", { id: "loading", text: "loading trial…" }));
    loadChunk(r, Math.floor(n / DATA.chunk_size), function (details) {
      if (location.hash !== "#trial/" + r + "/" + n) return;
      renderTrial(r, n, details[n % DATA.chunk_size]);
    }, function (src) {
      clear(app);
      app.appendChild(el("p", { cls: "problem", text: "could not load " + src + ": the viewer folder is incomplete; run judgekit view again" }));
    });
  }

  function field(label, value, id) {
    return el("div", { cls: "field", id: id || null }, [el("span", { cls: "label", text: label }), el("span", { cls: "value", text: value })]);
  }

  function renderTrial(r, n, d) {
    var run = DATA.runs[r];
    var row = run.rows[n];
    var info = caseOf(row);
    title.textContent = d.case + " trial " + d.trial;
    document.title = "judgekit viewer: " + d.case + " trial " + d.trial + " (" + run.name + ")";
    clear(app);
    var s = state[r];
    var back = "#run/" + r + (s ? (queryOf(s) ? "?" + queryOf(s) : "") : "");
    var links = [el("a", { href: back, id: "back", text: "← " + run.name })];
    if (s && s.view) {
      var at = s.view.indexOf(n);
      if (at > 0) links.push(el("a", { href: "#trial/" + r + "/" + s.view[at - 1], id: "prev", text: "previous" }));
      if (at >= 0 && at < s.view.length - 1) links.push(el("a", { href: "#trial/" + r + "/" + s.view[at + 1], id: "next", text: "next" }));
    }
    var other = otherRunTrial(r, d);
    if (other) links.push(el("a", { href: "#trial/" + other[0] + "/" + other[1], id: "other-run", text: "this trial in " + DATA.runs[other[0]].name }));
    app.appendChild(el("div", { cls: "links" }, links));
    var head = el("section", { cls: "trial-head", id: "trial-head" }, [
      el("h2", {}, [d.case + " (v" + d.case_version + ") trial " + d.trial + " ", verdictBadge(d.verdict)]),
      leadReason(d) ? el("p", { cls: "reason", id: "trial-reason", text: leadReason(d) }) : null,
      renderGates(d),
      field("run", run.name + " (" + d.run_id + ")"),
      field("suite", info.suite + (info.slice ? ", slice " + info.slice : "") + (info.severity ? ", severity " + info.severity : "") + (info.category ? ", category " + info.category : "")),
      field("failure categories", d.failure_categories.join(", ") || "none"),
      field("trust", d.trust.replace(/_/g, " ")),
      field("cost", costText(d.cost_usd, d.cost_unknown_reason), "trial-cost"),
      d.quality !== null ? field("quality", String(d.quality)) : null,
      d.judge ? field("judge", (d.judge.model || "") + " " + (d.judge.label || "") + " fingerprint " + (d.judge.fingerprint || "")) : null,
      d.run ? field("agent", [d.run.agent_model, d.run.app_version].filter(Boolean).join(", ") || "not recorded") : null,
      d.source ? field("transcript", d.source.file + ":" + d.source.line) : null
    ]);
    app.appendChild(head);
    if (info.info) {
      var details = el("details", { cls: "case-info", id: "case-info" }, [el("summary", { text: "the case (from --cases)" })]);
      info.info.forEach(function (pair) { details.appendChild(el("div", { cls: "field" }, [el("span", { cls: "label", text: pair[0] }), el("pre", { text: pair[1] })])); });
      app.appendChild(details);
    }
    var layout = el("div", { cls: "trial" });
    layout.appendChild(renderTranscript(d));
    layout.appendChild(renderChecks(d));
    app.appendChild(layout);
    var focus = d.highlight.calls.length ? document.getElementById("call-" + d.highlight.calls[0]) : (d.highlight.messages.length ? document.getElementById("msg-" + d.highlight.messages[0]) : null);
    if (focus && focus.scrollIntoView) focus.scrollIntoView({ block: "center" });
    window.scrollTo(0, 0);
  }

  // the reason above the gate list: the grading contract's when it explains an undecided trial; the whole
  // one-line reason only when no gate is listed (the list says the rest, gate by gate)
  function leadReason(d) {
    if (!d.gates || !d.gates.length) return d.reason;
    return d.verdict !== "fail" ? d.contract_reason : "";
  }

  // every gate that did not pass, each with its own evidence and whether it decided the verdict (the list
  // the reports show, computed by judgekit.verdict.failed_gates: the page only lays it out)
  function renderGates(d) {
    if (!d.gates || !d.gates.length) return null;
    var list = el("ol", { cls: "gates", id: "trial-gates" });
    d.gates.forEach(function (g) {
      var decided = g.decided ? "decided the verdict" : "did not decide" + (g.counted_as !== g.verdict ? " (untrusted judge, counted as " + g.counted_as.replace(/_/g, " ") + ")" : "");
      var item = el("li", { cls: "gate-finding" + (g.decided ? " decided" : "") }, [
        verdictBadge(g.verdict), " ", el("span", { cls: "check-id", text: g.check_id }), " ",
        el("span", { cls: "layer", text: g.layer }), " ", el("span", { cls: "gate-decided", text: decided }),
        g.reason ? el("div", { cls: "gate-reason", text: g.reason }) : null
      ]);
      g.evidence.forEach(function (line) { item.appendChild(el("div", { cls: "gate-evidence", text: line })); });
      list.appendChild(item);
    });
    return el("div", { cls: "gates-box" }, [el("span", { cls: "label", text: d.gates.length + " gate(s) that did not pass" }), list]);
  }

  function quoteMarks(d) {
    var marks = {};
    d.checks.forEach(function (check) {
      check.evidence.forEach(function (e) {
        if (e.quote_location) {
          var m = e.quote_location.message_index;
          (marks[m] = marks[m] || []).push(e.quote_location);
        }
      });
    });
    return marks;
  }

  function markedText(text, spans) {
    var pre = el("div", { cls: "content" });
    if (!spans || !spans.length) { pre.textContent = text; return pre; }
    spans = spans.slice().sort(function (a, b) { return a.start - b.start; });
    var at = 0;
    spans.forEach(function (span) {
      if (span.start < at) return;  // overlapping: the first wins
      pre.appendChild(document.createTextNode(text.slice(at, span.start)));
      pre.appendChild(el("mark", { cls: "quote", text: text.slice(span.start, span.end) }));
      at = span.end;
    });
    pre.appendChild(document.createTextNode(text.slice(at)));
    return pre;
  }

  function renderTranscript(d) {
    var box = el("section", { cls: "transcript", id: "transcript" }, [el("h3", { text: "transcript" })]);
    if (d.transcript_warning) box.appendChild(el("p", { cls: "problem", text: d.transcript_warning }));
    if (!d.messages) {
      box.appendChild(el("p", { cls: "problem", id: "transcript-unavailable", text: "transcript unavailable: " + d.transcript_unavailable }));
      return box;
    }
    var marks = quoteMarks(d);
    d.messages.forEach(function (m, i) {
      var hot = d.highlight.messages.indexOf(i) >= 0;
      var msg = el("div", { cls: "msg role-" + m.role + (hot ? " offending" : ""), id: "msg-" + i });
      var label = "#" + i + " " + m.role;
      if (m.result_of) label += " — result of call " + (m.result_of.index === null ? "?" : m.result_of.index) + (m.result_of.name ? " (" + m.result_of.name + ")" : "");
      msg.appendChild(el("div", { cls: "role", text: label }));
      if (m.content) msg.appendChild(markedText(m.content, marks[i]));
      m.calls.forEach(function (c) {
        var bad = d.highlight.calls.indexOf(c.index) >= 0;
        var call = el("div", { cls: "call" + (bad ? " offending" : ""), id: "call-" + c.index }, [
          el("div", { cls: "call-name", text: "call " + c.index + ": " + c.name + (bad ? "  ← offending call" : "") })
        ]);
        if (c.arguments !== null) call.appendChild(el("pre", { text: c.arguments }));
        if (c.arguments_error) call.appendChild(el("p", { cls: "problem", text: c.arguments_error }));
        if (c.raw_arguments) call.appendChild(el("pre", { text: c.raw_arguments }));
        msg.appendChild(call);
      });
      box.appendChild(msg);
    });
    return box;
  }

  function jump(id) {
    return function (event) {
      event.preventDefault();
      var target = document.getElementById(id);
      if (target) {
        target.scrollIntoView({ block: "center" });
        target.classList.add("flash");
        setTimeout(function () { target.classList.remove("flash"); }, 1200);
      }
    };
  }

  function renderEvidence(e) {
    var item = el("li", { cls: "evidence e-" + e.kind });
    item.appendChild(el("div", { cls: "e-line", text: e.kind + ": " + (e.line || e.summary || "") }));
    if (e.call_index !== null) {
      item.appendChild(el("div", { cls: "e-call" }, [
        "call index " + e.call_index + (e.tool ? " (" + e.tool + ")" : "") + " ",
        el("a", { href: "#", cls: "jump", text: "show in transcript", onclick: jump("call-" + e.call_index) })
      ]));
    } else if (e.message_index !== null && !e.quote) {
      item.appendChild(el("div", {}, ["message " + e.message_index + " ", el("a", { href: "#", cls: "jump", text: "show in transcript", onclick: jump("msg-" + e.message_index) })]));
    }
    if (e.arguments) item.appendChild(el("pre", { cls: "args", text: e.arguments }));
    if (e.quote) {
      var q = el("div", { cls: "e-quote" }, [el("q", { text: e.quote })]);
      if (e.quote_location) {
        q.appendChild(document.createTextNode(" — found in message " + e.quote_location.message_index + " "));
        q.appendChild(el("a", { href: "#", cls: "jump", text: "show", onclick: jump("msg-" + e.quote_location.message_index) }));
      } else {
        q.appendChild(el("span", { cls: "problem", text: " — quote not found in transcript" }));
      }
      item.appendChild(q);
    }
    if (e.diff_rows && e.diff_rows.length) {
      var table = el("table", { cls: "diff" }, [el("thead", {}, [el("tr", {}, ["table", "key", "field", "expected", "found", "row"].map(function (h) { return el("th", { text: h }); }))])]);
      var body = el("tbody");
      e.diff_rows.forEach(function (d) {
        body.appendChild(el("tr", { cls: "d-" + d.kind }, [d.table, d.key, d.field, d.expected, d.found, d.kind].map(function (v) { return el("td", { text: v }); })));
      });
      table.appendChild(body);
      item.appendChild(table);
    }
    if (e.route) item.appendChild(el("div", { cls: "route" }, [el("span", { cls: "label", text: "cascade route" }), el("pre", { text: e.route })]));
    if (e.data) item.appendChild(el("details", {}, [el("summary", { text: "data" }), el("pre", { text: e.data })]));
    return item;
  }

  function renderChecks(d) {
    var box = el("section", { cls: "checks", id: "checks" }, [el("h3", { text: "checks (" + d.checks.length + ")" })]);
    var order = d.checks.slice().sort(function (a, b) { return (a.verdict === "pass") - (b.verdict === "pass"); });
    order.forEach(function (c) {
      var card = el("div", { cls: "check c-" + c.verdict, id: "check-" + c.id });
      card.appendChild(el("div", { cls: "check-head" }, [
        el("span", { cls: "check-id", text: c.id }), " ", el("span", { cls: "layer", text: c.layer }), " ",
        verdictBadge(c.verdict), " ",
        el("span", { cls: "gate", text: c.gate ? "gate" : "score " + (c.score === null ? "none" : c.score) + " × weight " + c.weight })
      ]));
      if (c.reason) card.appendChild(el("p", { cls: "check-reason", text: c.reason }));
      if (c.category) card.appendChild(field("category", c.category.replace(/_/g, " ")));
      if (c.trust !== "not_required") card.appendChild(field("trust", c.trust + (c.trust_reason ? ": " + c.trust_reason : "")));
      if (c.judge) {
        var j = c.judge;
        card.appendChild(el("div", { cls: "judge" }, [
          field("criterion", j.criterion),
          field("judge verdict", c.verdict.replace(/_/g, " ") + (j.samples ? " (samples: " + j.samples.join(", ") + ")" : "")),
          field("model", j.model || "unknown"),
          field("fingerprint", j.fingerprint),
          field("judgment cost", judgmentCost(j))
        ]));
      }
      if (c.evidence.length) {
        var list = el("ul", { cls: "evidence-list" });
        c.evidence.forEach(function (e) { if (!(c.judge && e.kind === "note" && !e.data)) list.appendChild(renderEvidence(e)); });
        card.appendChild(list);
      }
      box.appendChild(card);
    });
    return box;
  }

  // ------------------------------------------------------------------ comparison page

  var compareFilter = "changed";

  function trialLinks(r, positions, change) {
    var span = el("span", { cls: "trial-links" });
    positions.forEach(function (n) {
      var row = DATA.runs[r].rows[n];
      var flip = change.trials_broken.indexOf(row[TRIAL]) >= 0 ? "broken" : (change.trials_fixed.indexOf(row[TRIAL]) >= 0 ? "fixed" : "");
      span.appendChild(el("a", { href: "#trial/" + r + "/" + n, cls: "tl v-" + row[VERDICT] + (flip ? " flip-" + flip : ""), title: row[VERDICT] + ": " + row[REASON] + (flip ? " (trial " + flip + ")" : ""), text: String(row[TRIAL]) }));
    });
    return span;
  }

  function flippedTrials(row) {
    // the trials compare_runs found fixed or broken in this task, whatever the task's own change
    var parts = [];
    if (row.trials_broken.length) parts.push("trial " + row.trials_broken.join(", ") + " broke");
    if (row.trials_fixed.length) parts.push("trial " + row.trials_fixed.join(", ") + " fixed");
    return parts.length ? "; " + parts.join("; ") : "";
  }

  function comparePage() {
    var c = DATA.compare;
    renderNav("compare");
    title.textContent = "comparison: " + c.a + " → " + c.b;
    document.title = "judgekit viewer: comparison " + c.a + " → " + c.b;
    clear(app);
    app.appendChild(el("p", { cls: "verdict-line", id: "compare-verdict", text: "Verdict: " + c.verdict + " (" + c.explanation + ")" }));
    app.appendChild(el("p", { id: "compare-trials", text: "paired trials: " + c.trials.pairs + " (" + c.trials.fixed + " fixed, " + c.trials.broken + " broken)" }));
    c.notes.forEach(function (note) { app.appendChild(el("p", { cls: "note", text: "note: " + note })); });
    var kinds = ["changed", "fixed", "broken", "still_pass", "still_fail", "undecided", "only_in_a", "only_in_b", "all"];
    var tally = {};
    c.rows.forEach(function (row) { row.filed_under.forEach(function (k) { tally[k] = (tally[k] || 0) + 1; }); });
    var bar = el("div", { cls: "filters" });
    var table = el("table", { cls: "compare", id: "compare-table" });
    kinds.forEach(function (k) {
      if (!tally[k] && k !== "changed" && k !== "all") return;
      bar.appendChild(el("button", { type: "button", id: "show-" + k, cls: compareFilter === k ? "active" : "", text: (c.change_words[k] || k) + " (" + (tally[k] || 0) + ")", onclick: function () { compareFilter = k; comparePage(); } }));
    });
    app.appendChild(bar);
    table.appendChild(el("thead", {}, [el("tr", {}, ["case", "change", c.a, c.b, "trials in " + c.a, "trials in " + c.b].map(function (h) { return el("th", { text: h }); }))]));
    var body = el("tbody");
    c.rows.forEach(function (row) {
      if (row.filed_under.indexOf(compareFilter) < 0) return;  // where compare_runs files the task and its trials
      var label = function (o) { return o ? o.outcome.replace(/_/g, " ") + " (" + o.passes + "/" + o.trials + ")" : "absent"; };
      body.appendChild(el("tr", { cls: "ch-" + row.change, "data-case": row.case }, [
        el("td", { text: row.case }),
        el("td", { text: c.change_words[row.change] + flippedTrials(row) + (row.regression_lost ? " — regression suite lost it" : "") }),
        el("td", { text: label(row.a) }),
        el("td", { text: label(row.b) }),
        el("td", {}, [trialLinks(0, row.trials_a, row)]),
        el("td", {}, [trialLinks(1, row.trials_b, row)])
      ]));
    });
    table.appendChild(body);
    app.appendChild(table);
  }

  if (!complete) {
    app.textContent = "data/index.js or a data/runR/rows-K.js file is missing: the viewer folder is " +
      "incomplete; run judgekit view again.";
    return;
  }
  window.addEventListener("hashchange", route);
  route();
  window.JK_READY = true;
})();
