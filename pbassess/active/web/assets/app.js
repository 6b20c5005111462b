// The labeling page: one key per class, skip / not sure / undo, the posterior panel after each label.
// No framework and nothing fetched from the internet: the server renders the page, this script talks JSON.
"use strict";
(function () {
  const config = JSON.parse(document.body.dataset.config);
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(window.location.search);
  const nameBox = $("annotator");
  nameBox.value = params.get("annotator") || window.localStorage.getItem("pbassess-annotator") || "annotator";
  nameBox.addEventListener("change", () => {
    window.localStorage.setItem("pbassess-annotator", nameBox.value.trim());
    loadNext();
  });
  const hide = $("hide-prediction");
  hide.checked = window.localStorage.getItem("pbassess-hide-prediction") === "1";
  hide.addEventListener("change", () => {
    window.localStorage.setItem("pbassess-hide-prediction", hide.checked ? "1" : "0");
    showPrediction();
  });

  let current = null;
  let busy = false;
  const keyToClass = {};
  config.classes.forEach((cls, i) => {
    const key = config.keys[i];
    if (key) keyToClass[key] = cls;
    const b = document.createElement("button");
    b.type = "button";
    b.className = "class-button";
    b.dataset.cls = cls;
    b.innerHTML = "";
    b.append(document.createTextNode(cls + " "));
    if (key) { const k = document.createElement("kbd"); k.textContent = key; b.append(k); }
    b.addEventListener("click", () => send("label", cls));
    $("buttons").append(b);
  });
  $("skip").addEventListener("click", () => send("skip"));
  $("unsure").addEventListener("click", () => send("unsure"));
  $("undo").addEventListener("click", undo);

  function requestId() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
  }

  async function post(path, data) {
    const response = await fetch(path, {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-Pbassess-CSRF": config.csrf},
      body: JSON.stringify(Object.assign({annotator: nameBox.value.trim()}, data || {})),
    });
    const body = await response.json().catch(() => ({error: "the server sent no JSON (status " + response.status + ")"}));
    if (!response.ok) throw new Error(body.error || ("status " + response.status));
    return body;
  }

  function message(text, ok) {
    $("message").textContent = text;
    $("message").className = ok ? "ok" : "";
  }

  function showPrediction() {
    $("prediction").classList.toggle("hidden", hide.checked || !current);
  }

  function show(item) {
    current = item;
    document.body.dataset.item = item ? item.item_id : "";
    for (const b of document.querySelectorAll("#item-card button.class-button, #skip, #unsure")) b.disabled = !item;
    const img = $("item-image"), text = $("item-text"), attrs = $("item-attributes");
    if (!item) {
      $("item-id").textContent = "No item left to label for you: every item is labeled, held by another annotator or skipped.";
      img.hidden = true; text.hidden = true; attrs.hidden = true;
      $("prediction").textContent = ""; $("second-opinion").hidden = true;
      return;
    }
    $("item-id").textContent = "item " + item.item_id;
    img.hidden = !item.image;
    if (item.image) img.src = item.image;
    text.hidden = item.text === null || item.text === undefined;
    text.textContent = item.text || "";
    attrs.replaceChildren();
    const names = Object.keys(item.attributes || {});
    attrs.hidden = names.length === 0;
    for (const name of names) {
      const row = attrs.insertRow();
      row.insertCell().textContent = name;
      row.insertCell().textContent = item.attributes[name];
    }
    $("prediction").textContent = "model: " + item.predicted + " (confidence " + item.confidence.toFixed(3) + ")";
    $("second-opinion").hidden = !item.second_opinion;
    showPrediction();
  }

  async function guarded(work) {
    if (busy) return;
    busy = true;
    document.body.dataset.busy = "1";
    try { await work(); } catch (err) { message(err.message, false); }
    finally { busy = false; document.body.dataset.busy = ""; }
  }

  function loadNext() {
    return guarded(async () => { show((await post("api/next")).next); refreshPanel(); });
  }

  function send(kind, label) {
    if (!current) return;
    const item = current.item_id;
    return guarded(async () => {
      const done = await post("api/label", {item_id: item, kind: kind, label: label || null, request_id: requestId()});
      message(kind === "label" ? ("saved " + item + " = " + label) : (kind === "skip" ? "skipped " : "not sure: ") + item, true);
      show(done.next);
      refreshPanel();
    });
  }

  function undo() {
    return guarded(async () => {
      const done = await post("api/undo");
      message(done.undone ? ("undid " + done.undone.kind + " of " + done.undone.item_id) : "nothing to undo", !!done.undone);
      show(done.next);
      refreshPanel();
    });
  }

  const answerWords = {"least-accurate": "P(least accurate)", "most-accurate": "P(most accurate)",
                       "most-miscalibrated": "P(most miscalibrated)", "highest-cost": "P(highest cost)",
                       "estimation": "P(answer)"};
  let panelRequest = 0;
  async function refreshPanel() {
    const ticket = ++panelRequest;
    let s;
    try {
      const response = await fetch("api/status", {credentials: "same-origin"});
      s = await response.json();
      if (!response.ok) throw new Error(s.error);
    } catch (err) { message("panel: " + err.message, false); return; }
    if (ticket !== panelRequest) return;
    $("sentence").textContent = s.sentence;
    $("rule").textContent = s.rule;
    $("rule").className = s.can_stop ? "stop" : "";
    const per = Object.entries(s.store.annotators).map(([a, n]) => a + " " + n).join(", ");
    $("counts").textContent = s.labeled + " of " + s.pool_items + " items labeled" + (per ? " (" + per + ")" : "") +
      "; " + s.store.skip + " skipped, " + s.store.unsure + " not sure.";
    $("figure").src = "figure/accuracy.png?v=" + s.revision;
    const table = $("classes");
    table.replaceChildren();
    const head = table.createTHead().insertRow();
    const pct = Math.round(100 * s.ci_prob);
    for (const h of ["class", "pool", "labeled", "correct", "accuracy", pct + "% HDI", answerWords[s.target] || "P(answer)"]) {
      const th = document.createElement("th"); th.textContent = h; head.append(th);
    }
    const body = table.createTBody();
    for (const c of s.classes) {
      const row = body.insertRow();
      if (s.answer.includes(c.class)) row.className = "answer";
      row.insertCell().textContent = c.class;
      row.insertCell().textContent = c.pool;
      row.insertCell().textContent = c.labeled;
      row.insertCell().textContent = c.correct;
      row.insertCell().textContent = c.accuracy_mean.toFixed(3);
      row.insertCell().textContent = c.accuracy_hdi[0].toFixed(2) + " - " + c.accuracy_hdi[1].toFixed(2);
      const p = row.insertCell();
      if (c.p_answer !== null) {
        const bar = document.createElement("span");
        bar.className = "bar"; bar.style.width = Math.round(60 * c.p_answer) + "px";
        p.append(bar, document.createTextNode(" " + c.p_answer.toFixed(2)));
      }
    }
    const a = s.agreement;
    $("agreement").textContent = a.items ? ("Agreement on " + a.items + " items labeled twice: " + a.agree + " agree (" +
      (100 * a.rate).toFixed(0) + "%)" + (a.kappa === null ? "" : ", Cohen's kappa " + a.kappa.toFixed(2)) + ".")
      : "No item labeled by two annotators yet.";
    document.body.dataset.labeled = String(s.labeled);
    document.body.dataset.revision = String(s.revision);
  }

  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.type !== "checkbox") return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key.toLowerCase();
    if (key in keyToClass) { event.preventDefault(); send("label", keyToClass[key]); }
    else if (key === "s") { event.preventDefault(); send("skip"); }
    else if (key === "n") { event.preventDefault(); send("unsure"); }
    else if (key === "u" || key === "backspace") { event.preventDefault(); undo(); }
    else if (key === "h") { event.preventDefault(); hide.checked = !hide.checked; hide.dispatchEvent(new Event("change")); }
  });

  loadNext();
})();
