// Progress without an account: the pages a reader marked as practised, kept in this browser's localStorage
// ("tfv-practised": {"<page path from the site root>": "<date marked>"}) and nowhere else. A page's own button
// (src/tfv/site/path.py puts it under the stamp, hidden) marks and unmarks it; the home page counts the marks on the
// prep path and in all, and saves them to a file or loads them from one; sections.js shows them on the indexes.
(() => {
  const KEY = "tfv-practised";
  const config = JSON.parse(document.getElementById("__config")?.textContent || "{}");
  const root = new URL(config.base || ".", location.href).pathname;  // the site root, wherever it is served
  const id = (href) => {  // "interview-questions/tensors/" for a link to that page, null for another site
    const url = new URL(href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(root)) return null;
    return url.pathname.slice(root.length).replace(/index\.html$/, "");
  };
  const valid = (marks) => marks && typeof marks === "object" && !Array.isArray(marks) &&
    Object.entries(marks).every(([page, date]) => typeof page === "string" && typeof date === "string");
  const load = () => {
    try {
      const marks = JSON.parse(localStorage.getItem(KEY) || "{}");
      return valid(marks) ? marks : {};
    } catch {
      return {};  // unreadable storage counts as no marks
    }
  };
  const save = (marks) => {
    localStorage.setItem(KEY, JSON.stringify(marks));
    document.dispatchEvent(new CustomEvent("tfv-progress"));
  };
  window.tfvProgress = { load, id };

  const button = document.querySelector(".md-content__inner button.tfv-mark");
  if (button) {
    const page = id(location.href);
    const render = () => {
      const done = page in load();
      button.setAttribute("aria-pressed", String(done));
      button.textContent = done ? "✓ Practised (click to unmark)" : "Mark as practised";
    };
    button.addEventListener("click", () => {
      const marks = load();
      if (page in marks) delete marks[page];
      else marks[page] = new Date().toISOString().slice(0, 10);
      save(marks);
      render();
    });
    render();
    button.hidden = false;
  }

  const panel = document.querySelector(".md-content__inner .tfv-progress");
  if (!panel) return;
  let list = document.getElementById("interview-prep")?.nextElementSibling;  // the path: the section's list
  while (list && !["OL", "H2"].includes(list.tagName)) list = list.nextElementSibling;
  const steps = list?.tagName === "OL" ? [...list.querySelectorAll(":scope > li > a:first-child")] : [];
  panel.innerHTML = `
    <p aria-live="polite"></p>
    <button type="button" class="md-button" data-do="export">Save marks to a file</button>
    <label class="md-button">Load marks from a file <input type="file" accept=".json,application/json"></label>
    <p role="status"></p>`;
  const [count, status] = panel.querySelectorAll("p");
  const render = () => {
    const marks = load();
    let done = 0;
    for (const link of steps) {
      const practised = id(link.href) in marks;
      done += practised;
      link.parentElement.classList.toggle("tfv-practised", practised);
      link.title = practised ? `practised on ${marks[id(link.href)]}` : "";
    }
    count.textContent = `Practised: ${done} of ${steps.length} steps of the path · ` +
      `${Object.keys(marks).length} of ${panel.dataset.pages} pages in all`;
  };
  panel.querySelector("[data-do=export]").addEventListener("click", () => {
    const file = new Blob([JSON.stringify({ site: "TensorFlow Verified", practised: load() }, null, 1)],
      { type: "application/json" });
    const link = Object.assign(document.createElement("a"),
      { href: URL.createObjectURL(file), download: "tensorflow-verified-practised.json" });
    link.click();
    URL.revokeObjectURL(link.href);
    status.textContent = `Saved ${Object.keys(load()).length} marks.`;
  });
  panel.querySelector("input[type=file]").addEventListener("change", async (event) => {
    const [file] = event.target.files;
    if (!file) return;
    try {
      const marks = JSON.parse(await file.text()).practised;
      if (!valid(marks)) throw new Error("it has no \"practised\" marks");
      save({ ...load(), ...marks });
      status.textContent = `Loaded ${Object.keys(marks).length} marks from ${file.name}.`;
    } catch (error) {
      status.textContent = `${file.name} is not a file of marks saved here: ${error.message}`;
    }
    event.target.value = "";
  });
  document.addEventListener("tfv-progress", render);
  addEventListener("storage", (event) => { if (event.key === KEY || event.key === null) render(); });
  render();
  panel.hidden = false;
})();
