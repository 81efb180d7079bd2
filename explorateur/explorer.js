// The attention explorer, browser side: controls that write the model, and a drawing of `view`.
// Every number shown comes from the kernel (view), already written the French way.

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  // JupyterLab's notebook shortcuts match the focused element itself (arrows, space, letters in
  // command mode): each control must say it keeps its keys.
  if (tag === "input") node.setAttribute("data-lm-suppress-shortcuts", "true");
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "style") node.style.cssText = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function save(model, name, value) {
  model.set(name, value);
  model.save_changes();
}

function tokenEditor(model) {
  // Built once per token count, then updated in place: an input never disappears under the cursor.
  const box = h("div", { class: "tx-tokens" }, h("div", { class: "tx-heading" }, "Les tokens et leurs vecteurs (modifiables)"));
  let rows = [];
  function build(count) {
    rows.forEach((r) => r.node.remove());
    rows = [];
    for (let i = 0; i < count; i++) {
      const name = h("input", { class: "tx-name", type: "text", onchange: (event) => {
        const next = [...model.get("names")]; next[i] = event.target.value; save(model, "names", next);
      } });
      const component = (c) => h("input", { type: "number", step: "0.5", min: "-10", max: "10", onchange: (event) => {
        const next = model.get("vectors").map((v) => [...v]);
        next[i][c] = Number(event.target.value);
        save(model, "vectors", next);
      } });
      const a = component(0);
      const b = component(1);
      const pad = h("input", { type: "checkbox", onchange: (event) => {
        const next = [...model.get("padding")]; next[i] = event.target.checked; save(model, "padding", next);
      } });
      const node = h("div", { class: "tx-token", "data-token": i }, name, h("span", {}, " ["), a, h("span", {}, " ; "), b,
        h("span", {}, "] "), h("label", { class: "tx-padcheck" }, pad, " <rempl>"));
      box.append(node);
      rows.push({ node, name, a, b, pad });
    }
  }
  function draw() {
    const names = model.get("names");
    const vectors = model.get("vectors");
    const padding = model.get("padding");
    if (rows.length !== names.length) build(names.length);
    rows.forEach((r, i) => {
      const isPad = !!padding[i];
      const set = (input, value) => { if (document.activeElement !== input) input.value = value; };
      set(r.name, names[i]);
      set(r.a, vectors[i][0]);
      set(r.b, vectors[i][1]);
      r.pad.checked = isPad;
      r.node.classList.toggle("tx-pad", isPad);
      for (const input of [r.name, r.a, r.b]) input.disabled = isPad;
      r.name.setAttribute("aria-label", `nom du token ${i + 1}`);
      r.a.setAttribute("aria-label", `${names[i]} composante 1`);
      r.b.setAttribute("aria-label", `${names[i]} composante 2`);
      r.pad.setAttribute("aria-label", `${names[i]} devient <rempl>`);
    });
  }
  for (const name of ["names", "vectors", "padding"]) model.on(`change:${name}`, draw);
  draw();
  return box;
}

function toggles(model) {
  const items = [
    ["places", "Vecteurs de place"],
    ["scale", "Division par √d"],
    ["mask", "Masque de remplissage"],
  ];
  const inputs = {};
  const box = h("div", { class: "tx-toggles" }, ...items.map(([name, label]) => {
    inputs[name] = h("input", { type: "checkbox", "data-toggle": name,
      onchange: (event) => save(model, name, event.target.checked) });
    return h("label", { class: "tx-toggle" }, inputs[name], " " + label);
  }));
  function draw() {
    for (const [name] of items) inputs[name].checked = !!model.get(name);
  }
  for (const [name] of items) model.on(`change:${name}`, draw);
  draw();
  return box;
}

function table(model, view) {
  const selected = model.get("selected");
  const labels = view.labels || [];
  return h("table", { class: "tx-table" },
    h("thead", {}, h("tr", {},
      h("th", {}, "token"), h("th", {}, "vecteur utilisé"),
      h("th", { class: "tx-scores-heading" }, view.scores_heading || "scores (" + labels.join(", ") + ")"),
      h("th", {}, "poids"), h("th", {}, "nouveau vecteur"))),
    h("tbody", {}, ...view.rows.map((row, i) =>
      h("tr", { class: "tx-row" + (i === selected ? " tx-selected" : ""), "data-row": i,
        title: "clique pour voir le calcul pas à pas", onclick: () => save(model, "selected", i) },
        h("td", { class: "tx-label" }, row.label),
        h("td", {}, row.input),
        h("td", { class: "tx-scores" }, row.scores.join(" ; ")),
        h("td", { class: "tx-weights" }, row.weights.join(" ; ")),
        h("td", { class: "tx-new" }, row.new)))));
}

function stepsPanel(view) {
  const steps = view.steps;
  if (!steps) {
    return h("div", { class: "tx-steps tx-empty" }, "Clique sur une ligne du tableau pour voir son calcul pas à pas.");
  }
  return h("div", { class: "tx-steps", "data-steps-for": steps.index },
    h("div", { class: "tx-heading" }, `Le calcul de « ${steps.token} », pas à pas`),
    ...steps.parts.map((part) => h("div", { class: "tx-step" },
      h("div", { class: "tx-step-title" }, part.title),
      h("ul", {}, ...part.lines.map((line) => h("li", {}, line))))),
    h("div", { class: "tx-result" }, `Nouveau vecteur de « ${steps.token} » : ${steps.result}`));
}

function heatmap(view) {
  const labels = view.labels || [];
  const cell = (w, text) => {
    // white → dark blue with the weight; dark text on light cells, white on dark ones
    const strength = Math.max(0, Math.min(1, w));
    const mix = (from, to) => Math.round(from + strength * (to - from));
    const color = `rgb(${mix(255, 30)}, ${mix(255, 64)}, ${mix(255, 175)})`;
    return h("td", { class: "tx-heat", style: `background:${color};color:${strength > 0.65 ? "#fff" : "#111"}` }, text);
  };
  return h("div", { class: "tx-heatmap" },
    h("div", { class: "tx-heading" }, "Carte des poids (ligne : le token qui lit ; colonne : le token lu)"),
    h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, ""), ...labels.map((l) => h("th", {}, l)))),
      h("tbody", {}, ...view.matrix.map((row, i) =>
        h("tr", { "data-heat-row": i }, h("th", {}, labels[i]),
          ...row.map((w, j) => cell(w, view.matrix_text[i][j])))))));
}

function rnnPanel(model) {
  // Built once: the slider must stay the same element while it is moved (focus, dragging).
  const value = h("span", { class: "tx-w-value" });
  const slider = h("input", { type: "range", min: "0", max: "1", step: "0.05", value: model.get("w"),
    class: "tx-w", "aria-label": "w",
    oninput: (event) => save(model, "w", Number(event.target.value)) });
  const phrase = h("div", { class: "tx-phrase" });
  const numbers = h("div", { class: "tx-rnn-numbers" });
  const box = h("div", { class: "tx-rnn" },
    h("div", { class: "tx-heading" }, "RNN ou attention : « Pas » est loin de « toux »"),
    phrase, h("label", { class: "tx-slider" }, "w = ", value, " ", slider), numbers);
  function draw(view) {
    if (document.activeElement !== slider) slider.value = model.get("w");
    const r = view.rnn;
    if (!r) {
      phrase.replaceChildren();
      numbers.replaceChildren(h("div", { class: "tx-error" }, view.rnn_error || "comparaison indisponible"));
      return;
    }
    value.textContent = r.w;
    phrase.textContent = `« ${r.phrase} » : « Pas » est à ${r.distance} mots de « toux ».`;
    numbers.replaceChildren(
      h("div", { class: "tx-compare" },
        h("div", { class: "tx-rnn-share" },
          h("strong", {}, "RNN"), ` : il reste w${superscript(r.distance)} = ${r.w}${superscript(r.distance)} = `,
          h("span", { class: "tx-share" }, r.share), (r.fraction ? ` (${r.fraction})` : "") + " de « Pas »"),
        h("div", { class: "tx-att-weight" },
          h("strong", {}, "Attention"), " : poids de « Pas » = ",
          h("span", { class: "tx-weight" }, r.weight), " — il ne dépend que de son score, pas de w ni de la distance")),
      h("table", { class: "tx-distances" },
        h("thead", {}, h("tr", {}, h("th", {}, "mots entre « Pas » et « toux »"),
          h("th", {}, "RNN : ce qui reste de « Pas »"), h("th", {}, "attention : poids de « Pas »"))),
        h("tbody", {}, ...r.rows.map((row) => h("tr", { "data-distance": row.distance },
          h("td", {}, String(row.distance)),
          h("td", {}, bar(row.rnn_value, row.rnn, "tx-bar-rnn")),
          h("td", {}, bar(row.attention_value, row.attention, "tx-bar-att")))))));
  }
  return { box, draw };
}

function bar(value, text, cls) {
  const width = Math.max(0, Math.min(1, value)) * 100;
  return h("div", { class: "tx-barcell " + cls },
    h("div", { class: "tx-bar" }, h("div", { class: "tx-fill", style: `width:${width}%` })),
    h("span", { class: "tx-barvalue" }, text));
}

function superscript(n) {
  const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹";
  return String(n).split("").map((c) => digits[Number(c)] ?? c).join("");
}

function render({ model, el }) {
  el.classList.add("trous-explorer");
  const main = h("div", { class: "tx-main" });
  const steps = h("div", { class: "tx-steps-box" });
  const rnn = rnnPanel(model);
  const error = h("div", { class: "tx-error", hidden: true });
  const source = h("div", { class: "tx-source" }, model.get("source"));
  model.on("change:source", () => { source.textContent = model.get("source"); });
  el.append(
    h("div", { class: "tx-intro" },
      "Édite les trois tokens, clique sur une ligne pour voir son calcul. ",
      "Active les vecteurs de place, la division par √d, puis le masque."),
    tokenEditor(model), toggles(model), error, main, steps, rnn.box, source);
  function draw() {
    const view = model.get("view") || {};
    error.hidden = !view.error;
    error.textContent = view.error || "";
    if (view.error || !view.rows) {
      main.replaceChildren();
      steps.replaceChildren();
      return;
    }
    main.replaceChildren(table(model, view), heatmap(view));
    steps.replaceChildren(stepsPanel(view));
    rnn.draw(view);
  }
  model.on("change:view", draw);
  model.on("change:selected", draw);
  draw();
}

export default { render };
