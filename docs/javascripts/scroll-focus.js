// Every region that scrolls sideways can be reached, and so scrolled, from the keyboard.
// Code blocks mount lazily (content.lazy in mkdocs.yml): Material makes a block keyboard-focusable when it
// scrolls sideways only once the block comes into view, so a wide block further down could not be reached
// until then. This does it for every block at once, with Material's own rule (wider content than box, on a
// device with hover). Material wraps each table in a scroll wrapper at run time and never makes it
// focusable: this does, on every device, once the wrapper exists, and names the region after the table's
// first header cells, so a screen reader announces what it holds.
(() => {
  const content = document.querySelector(".md-content");
  if (!content) return;
  const wide = (element) => element.scrollWidth > element.clientWidth && !element.hasAttribute("tabindex");
  let pending = false;
  const mark = () => {
    pending = false;
    const blocks = matchMedia("(hover)").matches ? [...content.querySelectorAll("pre > code")] : [];
    const tables = [...content.querySelectorAll(".md-typeset__scrollwrap")];
    const focusable = [...blocks.filter(wide), ...tables.filter(wide)];  // all reads, then all writes
    for (const element of focusable) {
      element.setAttribute("tabindex", "0");
      if (element.matches(".md-typeset__scrollwrap")) {
        const heads = [...element.querySelectorAll("thead th")].slice(0, 3).map((th) => th.textContent.trim());
        element.setAttribute("role", "region");
        element.setAttribute("aria-label", `Table: ${heads.filter(Boolean).join(", ") || "scrolls sideways"}`);
      }
    }
  };
  const schedule = () => {
    if (!pending) {
      pending = true;
      requestAnimationFrame(mark);
    }
  };
  new MutationObserver(schedule).observe(content, { childList: true, subtree: true });  // wrappers, lazy blocks
  addEventListener("resize", schedule);
  schedule();
})();
