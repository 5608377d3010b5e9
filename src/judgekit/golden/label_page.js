(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("jk-data").textContent);
  var ITEMS = DATA.items, N = ITEMS.length;
  var STORE = "judgekit-label-page:" + DATA.page_id;
  var $ = function (id) { return document.getElementById(id); };
  function keyOf(it) { return it.item_id + "\u0000" + it.criterion; }
  function load() {
    try {
      var s = JSON.parse(window.localStorage.getItem(STORE) || "null");
      if (s && typeof s.pos === "number" && s.answers && typeof s.answers === "object") { return s; }
    } catch (e) { /* no storage, or not ours: start empty */ }
    return { pos: 0, answers: {} };
  }
  var state = load();
  if (state.pos < 0 || state.pos >= N) { state.pos = 0; }
  function save() {
    try { window.localStorage.setItem(STORE, JSON.stringify(state)); }
    catch (e) { $("status").textContent = "this browser does not keep answers: download before closing"; }
  }
  function answer(it) { return state.answers[keyOf(it)] || { label: "", notes: "" }; }
  function answeredCount() {
    return ITEMS.filter(function (it) { return answer(it).label; }).length;
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function render() {
    var it = ITEMS[state.pos], a = answer(it), trial = DATA.trials[it.item_id];
    $("progress").textContent = "Item " + (state.pos + 1) + " of " + N;
    $("answered").textContent = answeredCount() + " of " + N + " answered";
    $("criterion-id").textContent = it.criterion;
    $("criterion-text").textContent = it.criterion_text;
    $("trial").textContent = "case " + it.case_id + ", trial " + it.trial;
    $("facts").textContent = trial.facts === null ? "(the case set was not given when this page was made)" : trial.facts;
    var box = $("judge-box");
    box.hidden = !(DATA.show_judge && it.judge);
    if (DATA.show_judge && it.judge) {
      $("judge-verdict").textContent = it.judge.verdict;
      $("judge-reason").textContent = it.judge.reason;
      var ql = $("judge-quotes");
      ql.textContent = "";
      it.judge.quotes.forEach(function (q) { ql.appendChild(el("li", "", q)); });
    }
    var tr = $("transcript");
    tr.textContent = "";
    trial.messages.forEach(function (m) {
      var d = el("div", "msg " + m.role);
      var head = m.index + ". " + m.role + (m.call_id ? " (result of " + m.call_id + ")" : "");
      d.appendChild(el("strong", "", head));
      if (m.content) { d.appendChild(el("pre", "", m.content)); }
      m.calls.forEach(function (c) {
        d.appendChild(el("div", "call", "-> call " + c.name + " " + c.arguments + " (" + c.id + ")"));
      });
      tr.appendChild(d);
    });
    document.querySelectorAll("input[name=answer]").forEach(function (r) { r.checked = r.value === a.label; });
    $("notes").value = a.notes;
    $("back").disabled = state.pos === 0;
    $("next").disabled = state.pos === N - 1;
  }
  function setAnswer(label, notes) {
    var it = ITEMS[state.pos], a = answer(it);
    var next = { label: label === null ? a.label : label, notes: notes === null ? a.notes : notes };
    if (!next.label && !next.notes) { delete state.answers[keyOf(it)]; } else { state.answers[keyOf(it)] = next; }
    save();
    $("answered").textContent = answeredCount() + " of " + N + " answered";
  }
  function go(pos) {
    if (pos < 0 || pos >= N) { return; }
    state.pos = pos; save(); render(); window.scrollTo(0, 0);
  }
  function nextUnanswered() {
    for (var k = 1; k <= N; k++) {
      var p = (state.pos + k) % N;
      if (!answer(ITEMS[p]).label) { go(p); return; }
    }
    $("status").textContent = "every item is answered";
  }
  function q(s) { return '"' + String(s).replace(/"/g, '""') + '"'; }
  function download() {
    var rows = ["item_id,criterion,rater,label,case_id,notes,saw_judge"], n = 0;
    ITEMS.forEach(function (it) {
      var a = answer(it);
      if (!a.label) { return; }
      n++;
      rows.push([q(it.item_id), q(it.criterion), q(DATA.expert), q(a.label), q(it.case_id), q(a.notes),
                 q(DATA.show_judge ? "yes" : "no")].join(","));
    });
    if (!n) { $("status").textContent = "nothing answered yet: nothing to download"; return; }
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([rows.join("\n") + "\n"], { type: "text/csv" }));
    link.download = "labels-" + DATA.expert.replace(/[^A-Za-z0-9._-]+/g, "_") + "-" + DATA.page_id.slice(0, 12) + ".csv";
    document.body.appendChild(link); link.click(); link.remove();
    $("status").textContent = "downloaded " + n + " label(s); " + (N - n) + " item(s) unanswered";
  }
  document.querySelectorAll("input[name=answer]").forEach(function (r) {
    r.addEventListener("change", function () { setAnswer(r.value, null); });
  });
  $("notes").addEventListener("input", function () { setAnswer(null, $("notes").value); });
  $("back").addEventListener("click", function () { go(state.pos - 1); });
  $("next").addEventListener("click", function () { go(state.pos + 1); });
  $("download").addEventListener("click", download);
  var KEYS = { p: "pass", f: "fail", i: "insufficient_information" };
  document.addEventListener("keydown", function (ev) {
    if (ev.target && ev.target.id === "notes") {
      if (ev.key === "Escape") { ev.target.blur(); }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    var k = ev.key;
    if (KEYS[k]) { setAnswer(KEYS[k], null); render(); }
    else if (k === "n" || k === "ArrowRight") { go(state.pos + 1); }
    else if (k === "b" || k === "ArrowLeft") { go(state.pos - 1); }
    else if (k === "u") { nextUnanswered(); }
    else if (k === "e") { $("notes").focus(); }
    else { return; }
    ev.preventDefault();
  });
  render();
}());
