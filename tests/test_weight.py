"""tfv.site.weight: what it removes from a page, and what it must keep."""

from types import SimpleNamespace

from tfv.site import weight


def page(uri):
    return SimpleNamespace(file=SimpleNamespace(src_uri=uri))


def test_markdown_code_keeps_meaningful_colours_and_gets_the_practice_button():
    html = ('<pre><code><span class="k">def</span><span class="w"> </span><span class="nf">f</span>'
            '<span class="p">(</span><span class="n">x</span><span class="p">):</span></code></pre>'
            '<h2 id="quick-answer">Quick answer</h2>')
    out = weight.on_page_content(html, page("qa/a.md"), None, None)
    assert out == ('<pre><code><span class="k">def</span> <span class="nf">f</span>(x):</code></pre>'
                   + weight.practice_button("quick-answer") + '<h2 id="quick-answer">Quick answer</h2>'), out
    notebook = weight.on_page_content(html, page("qa/nb.ipynb"), None, None)  # keeps its own look
    assert notebook == html.replace('<h2 id="quick-answer">', weight.practice_button("quick-answer")
                                    + '<h2 id="quick-answer">'), notebook


def test_a_production_issue_gets_the_diagnosis_drill_above_its_symptom():
    html = '<p>intro</p><h2 class="x" id="symptom">Symptom</h2><h2 id="fix">Fix</h2>'
    out = weight.on_page_content(html, page("pi/a.md"), None, None)
    assert out == '<p>intro</p>' + weight.practice_button("symptom") + html[len('<p>intro</p>'):], out
    assert 'data-keep="symptom"' in out and "Diagnosis drill" in out
    assert weight.on_page_content('<h2 id="scenario">S</h2>', page("uc/a.md"), None, None) == '<h2 id="scenario">S</h2>'


def test_notebook_css_keeps_only_rules_that_can_match():
    css = (".jupyter-wrapper .jp-Cell{color:red}"              # used: kept
           ".jupyter-wrapper .jp-FileBrowser{color:blue}"      # JupyterLab's interface: dropped
           ".jupyter-wrapper :root{--jp-x:1}"                  # can never match: dropped
           ".jupyter-wrapper .jp-Cell:not(.jp-mod-x){margin:0}"  # a class under :not is not required: kept
           "@media print{.jupyter-wrapper .jp-Cell{color:black}.jp-Toolbar{color:gray}}"
           "@media screen{.jp-Toolbar{color:gray}}"             # empty once pruned: dropped
           "[data-md-color-scheme=slate] .jupyter-wrapper{--jp-y:var(--jp-z);--jp-unread:1}"  # no class needed: kept
           ".jupyter-wrapper{--jp-z:2px;--jp-unread-too:0}"
           ".jupyter-wrapper .jp-Cell{--jp-gone:1}")              # a rule left with no declaration goes
    html = (f'<style>{css}</style><div class="jupyter-wrapper"><div class="jp-Cell" style="padding: var(--jp-y)">'
            '</div></div>')
    out = weight.on_post_page(html, page("qa/nb.ipynb"), None)
    kept = out.split("<style>")[1].split("</style>")[0].split("\n")
    assert kept == [".jupyter-wrapper .jp-Cell{color:red}", ".jupyter-wrapper .jp-Cell:not(.jp-mod-x){margin:0}",
                    "@media print{.jupyter-wrapper .jp-Cell{color:black}}",
                    "[data-md-color-scheme=slate] .jupyter-wrapper{--jp-y:var(--jp-z)}",  # read by a style attribute
                    ".jupyter-wrapper{--jp-z:2px}"], kept                                 # read by --jp-y
    assert weight.on_post_page(html, page("qa/a.md"), None) == html


def test_every_page_starts_with_the_palette_switching_attribute():
    html = '<html><body dir="ltr" data-md-color-scheme="default"><p>body text</p></body></html>'
    for uri in ("qa/a.md", "qa/nb.ipynb"):
        out = weight.on_post_page(html, page(uri), None)
        assert out.count("<body data-md-color-switching ") == 1 and "body text" in out, out


NAV = """<body><nav class="md-nav md-nav--primary" aria-label="Navigation">
  <ul class="md-nav__list">
    <li class="md-nav__item"><a href="../.." class="md-nav__link"><span class="md-ellipsis">Home</span></a></li>
    <li class="md-nav__item md-nav__item--active md-nav__item--section md-nav__item--nested">
      <input class="md-nav__toggle md-toggle" type="checkbox" id="__nav_2" checked>
      <div class="md-nav__link md-nav__container"><a href="../" class="md-nav__link">
        <span class="md-ellipsis">Mine</span></a></div>
      <nav class="md-nav" data-md-level="1"><ul class="md-nav__list">
        <li class="md-nav__item"><a href="../a/" class="md-nav__link">A page of mine</a></li></ul></nav>
    </li>
    <li class="md-nav__item md-nav__item--section md-nav__item--nested">
      <input class="md-nav__toggle md-toggle" type="checkbox" id="__nav_3">
      <div class="md-nav__link md-nav__container"><a href="../../other/" class="md-nav__link">
        <span class="md-ellipsis">Other</span></a></div>
      <nav class="md-nav" data-md-level="1"><ul class="md-nav__list">
        <li class="md-nav__item"><a href="../../other/b/" class="md-nav__link">Not mine</a></li></ul></nav>
    </li>
    <li class="md-nav__item md-nav__item--section md-nav__item--nested">
      <label class="md-nav__link" for="__nav_4"><span class="md-ellipsis">No index</span></label>
      <nav class="md-nav" data-md-level="1"><ul class="md-nav__list">
        <li class="md-nav__item"><a href="../../loose/c/" class="md-nav__link">Only here</a></li></ul></nav>
    </li>
  </ul>
</nav>
<pre>  kept   as it is  </pre></body>"""


def test_the_navigation_lists_the_own_section_and_links_the_others():
    out = weight.own_section_nav(NAV)
    assert "A page of mine" in out and 'href="../a/"' in out          # the page's own section, whole
    assert "Not mine" not in out and "__nav_3" not in out             # another section: its pages go ...
    other = '<li class="md-nav__item"><a class="md-nav__link" href="../../other/"><span class="md-ellipsis">Other</span></a></li>'
    assert other in out                                               # ... and it becomes a link to its index
    assert "Only here" in out                                         # ... unless it has no index page to list them
    nav = out.split("\n<pre>")[0]
    assert "> <" not in nav and "\n" not in nav                        # no whitespace between the nav's tags
    assert out.endswith("<pre>  kept   as it is  </pre></body>")       # and nothing outside the nav changes
    assert weight.own_section_nav("<p>no nav</p>") == "<p>no nav</p>"


def test_a_notebook_page_loses_the_scripts_that_do_nothing_there():
    mathjax = ('<!-- Load mathjax -->\n<script src=""> </script>\n<!-- MathJax configuration -->\n'
               '<script type="text/x-mathjax-config">\n init_mathjax();\n </script>\n<!-- End of mathjax configuration -->')
    mermaid = ('<script type="module">\n  document.addEventListener("DOMContentLoaded", async () => {\n'
               '    const diagrams = document.querySelectorAll(".jp-Mermaid > pre.mermaid");\n  });\n</script>')
    html = f'<head>{mathjax}{mermaid}</head><body dir="ltr"><p>cell</p></body>'
    out = weight.on_post_page(html, page("qa/nb.ipynb"), None)
    assert out == '<head></head><body data-md-color-switching dir="ltr"><p>cell</p></body>', out
    diagram = html.replace("<p>cell</p>", '<div class="jp-Mermaid"><pre class="mermaid">graph</pre></div>')
    assert mermaid in weight.on_post_page(diagram, page("qa/nb.ipynb"), None)   # a page with a diagram keeps its loader
    assert weight.on_post_page(html, page("qa/a.md"), None).startswith(f"<head>{mathjax}{mermaid}")  # not a notebook
