// Practice mode for pages with a "Quick answer": keep the quick answer visible, hide every other
// section behind its own "Show" button, so a candidate can answer first and check after.
(() => {
  const content = document.querySelector(".md-content__inner");
  if (!content || !content.querySelector(":scope > h2#quick-answer")) return;
  const sections = [];
  let current = null;
  for (const element of [...content.children]) {
    if (element.tagName === "H2") {
      current = element.id === "quick-answer" ? null : { heading: element, body: [] };
      if (current) sections.push(current);
    } else if (current) {
      current.body.push(element);
    }
  }
  const toggle = document.createElement("button");
  toggle.type = "button";
  toggle.className = "md-button tfv-practice";
  content.querySelector(":scope > h2#quick-answer").before(toggle);
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
  const apply = (on) => {
    toggle.setAttribute("aria-pressed", String(on));
    toggle.textContent = on ? "Practice mode is on: show everything" : "Practice mode: hide all but the quick answer";
    for (const section of sections) {
      section.body.forEach((element) => { element.hidden = on; });
      section.show.hidden = !on;
    }
    localStorage.setItem("tfv-practice", on ? "1" : "");
  };
  toggle.addEventListener("click", () => apply(toggle.getAttribute("aria-pressed") !== "true"));
  apply(localStorage.getItem("tfv-practice") === "1");
})();
