// Practice mode: a question page keeps its quick answer visible, a production issue its symptom (a diagnosis
// drill); every other H2 section hides behind its own toggle, so a candidate answers first and checks after.
// A link or table-of-contents click into a hidden section reveals it and moves focus there; a link to a
// collapsed follow-up opens it, practice mode or not. A "your prediction" table gets a choice per row,
// checked against the page's asserted answers table. The toggle is in the HTML, hidden (src/tfv/site/weight.py);
// with practice mode off, a page load only reveals it. Printed with practice mode on, a page is a study sheet: the
// questions and what stays visible first, then, after a page break, a copy of every hidden section (site.css).
(() => {
  const toggle = document.querySelector(".md-content__inner button.tfv-practice");
  const keep = toggle?.dataset.keep;  // the id of the section that stays visible
  let sections = null;
  const name = (heading) => [...heading.childNodes].filter((n) => !n.classList?.contains("headerlink")
    && !n.classList?.contains("tfv-link")).map((n) => n.textContent).join("").trim();
  const blocks = () => {  // the page's blocks in reading order; a notebook's Markdown cells are opened up
    const notebook = document.querySelector(".md-content__inner .jp-Notebook");
    if (!notebook) return [...toggle.parentElement.children];
    return [...notebook.children].flatMap((cell) => {
      const markdown = cell.querySelector(".jp-RenderedMarkdown");
      return markdown ? [...markdown.children] : [cell];
    });
  };
  const show = (section, open, focus) => {
    section.body.forEach((element) => element.classList.toggle("tfv-hidden", !open));
    section.button.setAttribute("aria-expanded", String(open));
    section.button.textContent = `${open ? "Hide" : "Show"}: ${section.name}`;
    if (open && focus && section.body[0]) {
      section.body[0].tabIndex = -1;
      section.body[0].focus({ preventScroll: true });
    }
  };
  const collect = () => {  // every section but the kept one (and, on a multi-question page, that one too)
    sections = [];
    const hideKept = document.getElementById(keep)?.classList.contains("tfv-answers");
    let current = null;
    for (const element of blocks()) {
      if (element.tagName === "H2") {
        current = element.id === keep && !hideKept ? null : { heading: element, body: [], name: name(element) };
        if (current) sections.push(current);
      } else if (current && (element.matches("[data-tfv-question]") || element.querySelector("[data-tfv-question]"))) {
        current.question = true;  // its heading prints with the questions
      } else if (current && element !== toggle) {
        current.body.push(element);
      }
    }
    sections.forEach((section, index) => {
      section.body.forEach((element, k) => { element.id ||= `tfv-${section.heading.id || index}-${k}`; });
      section.button = document.createElement("button");
      section.button.type = "button";
      section.button.className = "md-button tfv-show";
      section.button.setAttribute("aria-controls", section.body.map((element) => element.id).join(" "));
      section.button.addEventListener("click", () => {
        show(section, section.button.getAttribute("aria-expanded") !== "true", true);
      });
      section.heading.after(section.button);
      const asked = section.question || hideKept;  // on a page of several questions, each heading is one
      for (const element of [...section.body, ...(asked ? [] : [section.heading])]) {
        element.classList.add("tfv-in-section");  // printed with practice mode on: under "Answers", not here
      }
    });
  };
  const printAnswers = (on) => {  // practice mode's study sheet: a copy of every hidden section, printed last
    document.querySelector(".tfv-print-answers")?.remove();
    if (!on) return;
    const answers = document.createElement("section");
    answers.className = "tfv-print-answers";
    answers.setAttribute("aria-hidden", "true");  // a print-only copy (never displayed on a screen)
    answers.append(Object.assign(document.createElement("h2"), { textContent: "Answers" }));
    for (const section of sections) answers.append(section.heading.cloneNode(true), ...section.body.map((b) => b.cloneNode(true)));
    answers.querySelectorAll("[id]").forEach((element) => element.removeAttribute("id"));
    answers.querySelectorAll(".tfv-hidden, .tfv-in-section").forEach((element) => element.classList.remove("tfv-hidden", "tfv-in-section"));
    answers.querySelectorAll("details").forEach((details) => { details.open = true; });
    document.querySelector(".md-content__inner").append(answers);
  };
  const apply = (on) => {
    toggle.setAttribute("aria-pressed", String(on));
    toggle.textContent = on ? toggle.dataset.on : toggle.dataset.off;
    if (on && !sections) collect();
    for (const section of sections || []) {
      show(section, !on, false);
      section.button.hidden = !on;
    }
    document.body.classList.toggle("tfv-practising", on);
    printAnswers(on);
    localStorage.setItem("tfv-practice", on ? "1" : "");
  };
  const reveal = (hash) => {  // a fragment's target: its section shown, its collapsed block opened, focus on it
    const target = hash && document.getElementById(decodeURIComponent(hash.slice(1)));
    if (!target) return;
    const section = (sections || []).find((s) => s.heading === target || s.body.some((b) => b.contains(target)));
    if (section && toggle.getAttribute("aria-pressed") === "true") show(section, true, false);
    for (let node = target; node; node = node.parentElement?.closest("details")) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    target.tabIndex = target.tabIndex < 0 ? -1 : target.tabIndex;
    target.scrollIntoView();
    target.focus({ preventScroll: true });
  };
  const topLevel = (element) => {  // the block of the page (or of a notebook's Markdown cell) holding element
    while (element.parentElement && !element.parentElement.matches(".md-content__inner, .jp-RenderedMarkdown")) {
      element = element.parentElement;
    }
    return element;
  };
  const predictions = () => {  // each "your prediction" cell becomes a choice, checked against the answers
    for (const table of document.querySelectorAll(".md-typeset table")) {
      const column = [...table.querySelectorAll("thead th")].findIndex((th) => /your prediction/i.test(th.textContent));
      if (column < 0) continue;
      let answers = null;
      for (let next = topLevel(table).nextElementSibling; next && next.tagName !== "H2" && !answers;
        next = next.nextElementSibling) answers = next.matches("details") ? next.querySelector("table") : null;
      if (!answers) continue;
      // practice mode leaves the question in view. An attribute on the table, not a class: Material styles and
      // wraps only `table:not([class])` (and may wrap it after this runs), so a class took the table's styles away
      // after the first paint (a layout shift of 0.95 on a phone).
      table.setAttribute("data-tfv-question", "");
      const truth = [...answers.querySelectorAll("tbody tr")].map((tr) => tr.lastElementChild.textContent.trim());
      [...table.querySelectorAll("tbody tr")].forEach((row, index) => {
        const select = document.createElement("select"), verdict = document.createElement("span");
        select.setAttribute("aria-label", `Your prediction for row ${index + 1}`);
        select.append(new Option("choose", ""), ...[...new Set(truth)].map((choice) => new Option(choice, choice)));
        verdict.className = "tfv-verdict";
        verdict.setAttribute("aria-live", "polite");
        select.addEventListener("change", () => {
          verdict.dataset.right = String(select.value === truth[index]);
          verdict.textContent = !select.value ? "" : select.value === truth[index] ? " ✓ right" : ` ✗ it is: ${truth[index]}`;
        });
        row.children[column].replaceChildren(select, verdict);
      });
    }
  };
  predictions();
  if (toggle) {
    toggle.addEventListener("click", () => apply(toggle.getAttribute("aria-pressed") !== "true"));
    apply(localStorage.getItem("tfv-practice") === "1");
    toggle.hidden = false;
  }
  addEventListener("hashchange", () => reveal(location.hash));
  document.addEventListener("click", (event) => {  // a click on the current fragment fires no hashchange
    const link = event.target.closest?.("a[href^='#']");
    if (link && link.hash === location.hash) setTimeout(() => reveal(link.hash));
  });
  reveal(location.hash);
})();
