// Copy link (src/tfv/site/links.py puts a button on every H2 and follow-up): copies the page's canonical URL with
// the section's fragment, never the address bar (no ?h= search terms), and says so on the button and to
// screen readers. A button inside a follow-up's summary must not also open or close the follow-up.
(() => {
  let status = null;
  document.addEventListener("click", async (event) => {
    const link = event.target.closest?.("button.tfv-link");
    if (!link) return;
    event.preventDefault();
    event.stopPropagation();
    const canonical = document.querySelector("link[rel=canonical]")?.href || location.href.split(/[?#]/)[0];
    const url = `${canonical.split("#")[0]}#${link.dataset.anchor}`;
    await navigator.clipboard.writeText(url);
    if (!status) {
      status = document.createElement("div");
      status.className = "tfv-status";
      status.setAttribute("role", "status");
      document.body.append(status);
    }
    status.textContent = `Link copied: ${url}`;
    link.dataset.copied = "";
    setTimeout(() => { delete link.dataset.copied; status.textContent = ""; }, 2500);
  });
})();
