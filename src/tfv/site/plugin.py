"""The MkDocs plugin (entry point `tfv` in pyproject.toml; listed last in mkdocs.yml `plugins:`, so its events
run after the other plugins' at equal priority). Each event hands the page to the modules that own a concern,
in this order; a module's own `event_priority` places it among the other plugins (e.g. notebook front matter
before the tags plugin, the census after everything)."""

from mkdocs.plugins import BasePlugin, CombinedEvent

from tfv.site import cards, census, export, gate, links, notebooks, path, search, sections, sources, stamp, weight
from tfv.site.config import GateConfig


def _events(*functions):
    """Module functions as one event of this plugin, each keeping its own priority."""
    return CombinedEvent(*map(staticmethod, functions))


class VerifiedPlugin(BasePlugin[GateConfig]):
    on_files = _events(gate.on_files, notebooks.on_files)  # gate first: it sees the sources (priority 100 > 90)
    on_nav = _events(path.on_nav)
    on_page_markdown = _events(notebooks.on_page_markdown, sections.on_page_markdown, stamp.on_page_markdown,
                               path.on_page_markdown)
    on_page_content = _events(notebooks.on_page_content, export.on_page_content, sources.on_page_content,
                              stamp.on_page_content, weight.on_page_content, links.on_page_content)
    on_page_context = _events(notebooks.on_page_context)
    on_post_page = _events(path.on_post_page, weight.on_post_page, cards.on_post_page, census.on_post_page)
    on_post_build = _events(census.on_post_build, export.on_post_build, search.on_post_build)
