// Code blocks mount lazily (content.lazy in mkdocs.yml): Material adds a block's copy button, and makes
// it keyboard-focusable when it scrolls sideways, only once the block comes into view. Until then a
// keyboard could not reach, and so not scroll, a wide block further down. This does the focus part for
// every block at once, with Material's own rule (wider content than box, on a device with hover), in
// one pass of reads after the first layout and one pass of writes.
if (matchMedia("(hover)").matches) {
  requestAnimationFrame(() => {
    const blocks = [...document.querySelectorAll(".md-content pre > code")];
    blocks.filter((code) => code.scrollWidth > code.offsetWidth).forEach((code) => code.setAttribute("tabindex", "0"));
  });
}
