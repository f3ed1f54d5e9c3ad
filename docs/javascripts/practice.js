// Practice mode for pages with a "Quick answer": keep the quick answer visible, hide every other
// section behind its own "Show" button, so a candidate can answer first and check after.
// The toggle is in the HTML, hidden (hooks/weight.py); with practice mode off, this script only
// reveals it, so a page load inserts nothing and costs no extra style recalculation.
(() => {
  const toggle = document.querySelector(".md-content__inner button.tfv-practice");
  if (!toggle) return;
  let sections = null;
  const blocks = () => {  // the page's blocks in reading order; a notebook's Markdown cells are opened up
    const notebook = document.querySelector(".md-content__inner .jp-Notebook");
    if (!notebook) return [...toggle.parentElement.children];
    return [...notebook.children].flatMap((cell) => {
      const markdown = cell.querySelector(".jp-RenderedMarkdown");
      return markdown ? [...markdown.children] : [cell];
    });
  };
  const collect = () => {  // the sections after the quick answer, each with a "Show" button
    sections = [];
    let current = null;
    for (const element of blocks()) {
      if (element.tagName === "H2") {
        current = element.id === "quick-answer" ? null : { heading: element, body: [] };
        if (current) sections.push(current);
      } else if (current) {
        current.body.push(element);
      }
    }
    for (const section of sections) {
      section.show = document.createElement("button");
      section.show.type = "button";
      section.show.className = "md-button tfv-show";
      section.show.textContent = "Show this section";
      section.show.addEventListener("click", () => {
        section.body.forEach((element) => { element.hidden = false; });
        section.show.hidden = true;
      });
      section.heading.after(section.show);
    }
  };
  const apply = (on) => {
    toggle.setAttribute("aria-pressed", String(on));
    toggle.textContent = on ? "Practice mode is on: show everything" : "Practice mode: hide all but the quick answer";
    if (on && !sections) collect();
    for (const section of sections || []) {
      section.body.forEach((element) => { element.hidden = on; });
      section.show.hidden = !on;
    }
    localStorage.setItem("tfv-practice", on ? "1" : "");
  };
  toggle.addEventListener("click", () => apply(toggle.getAttribute("aria-pressed") !== "true"));
  apply(localStorage.getItem("tfv-practice") === "1");
  toggle.hidden = false;
})();
