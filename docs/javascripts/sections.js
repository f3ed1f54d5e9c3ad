// Section index pages: filter the page tables (src/tfv/site/sections.py) by words, by difficulty and by whether the reader
// marked the page as practised (progress.js), in the browser, and fill the "Practised" column with the marks. A topic
// whose rows are all filtered out hides with its heading; the count says what is shown.
(() => {
  const pages = document.querySelector(".md-content .tfv-pages");
  if (!pages) return;
  const rows = [...pages.querySelectorAll("tbody tr")];
  const form = pages.querySelector("form.tfv-filter");  // in the HTML (sections.py), as is the Practised column
  const progress = window.tfvProgress;
  const marked = (row) => progress ? progress.id(row.querySelector("a").href) in progress.load() : false;
  const paint = () => {
    for (const row of rows) {
      const cell = row.cells[3];
      cell.textContent = marked(row) ? "✓" : "";
      cell.setAttribute("aria-label", marked(row) ? "practised" : "not yet");
    }
  };
  let level = "all", mark = "any";
  const apply = () => {
    const words = form.words.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const row of rows) {
      const text = row.textContent.toLowerCase();
      const ok = words.every((word) => text.includes(word)) &&
        (level === "all" || row.cells[1].textContent.trim() === level) &&
        (mark === "any" || marked(row) === (mark === "practised"));
      row.hidden = !ok;
      shown += ok;
    }
    for (const table of pages.querySelectorAll("table")) {  // Material wraps each table; its h2 comes before
      const wrapper = table.closest(".md-typeset__scrollwrap") || table;
      const empty = [...table.tBodies[0].rows].every((row) => row.hidden);
      wrapper.hidden = empty;
      const heading = wrapper.previousElementSibling;
      if (heading?.tagName === "H2") heading.hidden = empty;
    }
    form.querySelector("output").textContent = `${shown} of ${rows.length} pages`;
  };
  form.addEventListener("input", apply);
  form.addEventListener("submit", (event) => event.preventDefault());
  form.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-level], button[data-mark]");
    if (!button) return;
    const kind = button.dataset.level ? "level" : "mark";
    if (kind === "level") level = button.dataset.level;
    else mark = button.dataset.mark;
    form.querySelectorAll(`button[data-${kind}]`).forEach((b) => b.setAttribute("aria-pressed", b === button));
    apply();
  });
  addEventListener("storage", () => { paint(); apply(); });  // marks changed in another tab
  paint();
  apply();
})();
