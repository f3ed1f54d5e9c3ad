"""tfv.site.links on samples: the copy-link buttons and the follow-ups' stable ids."""

from types import SimpleNamespace

from tfv.site import links

PAGE = SimpleNamespace(file=SimpleNamespace(src_uri="qa/a.md"))


def test_every_h2_gets_a_copy_link_named_after_it():
    html = ('<h2 class="tfv-answers" id="quick-answer">Quick <code>tf</code> answer'
            '<a class="headerlink" href="#quick-answer">¶</a></h2>')
    out = links.on_page_content(html, PAGE, None, None)
    assert out == html.replace("</h2>", links.button("quick-answer", "Quick tf answer") + "</h2>"), out
    assert 'aria-label="Copy link to: Quick tf answer"' in out and 'data-anchor="quick-answer"' in out


def test_follow_ups_get_stable_distinct_ids_and_a_button_beside_the_summary():
    one = ('<details class="question">\n<summary>Follow-up: where does the <code>list</code> append go?</summary>\n'
           '<p>x</p></details>')
    html = one + one + '<details class="success">\n<summary>Answer</summary></details>'
    out = links.on_page_content(html, PAGE, None, None)
    assert out.count('id="fu-where-does-the-list-append-go"') == 1, out
    assert out.count('id="fu-where-does-the-list-append-go-2"') == 1, out   # the same question twice on a page
    assert out.count('class="tfv-link"') == 2 and "<summary>Answer</summary>" in out, out
    first = out.index('data-anchor="fu-where-does-the-list-append-go"')
    assert first < out.index("<details") and "<summary>Follow-up: where does the <code>list</code> append go?</summary>" in out


def test_an_id_already_on_the_page_is_not_reused():
    html = '<p id="fu-why"></p><details class="question" open><summary>Follow-up: why?</summary></details>'
    out = links.on_page_content(html, PAGE, None, None)
    assert '<details class="question" id="fu-why-2" open>' in out, out
