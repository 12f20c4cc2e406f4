"""The project's marking guidelines as the labelling screen shows them: Markdown, sanitised.

A lead writes the guidelines in the project's settings; anyone with a lead's role could put
HTML in them, so the rendered Markdown goes through nh3 (an allow-list HTML sanitiser) before
it reaches an analyst's page. Headings move down two levels (the page has its own h1 and h2);
images are dropped (the Content-Security-Policy would refuse another site's pictures anyway).
"""

import markdown
import nh3

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "dl", "dt", "em", "h3", "h4",
    "h5", "h6", "hr", "i", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "strong", "sub",
    "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"scope"}, "abbr": {"title"}}


def guidelines_html(text: str) -> str:
    """`text` (Markdown) as safe HTML: nothing that runs script, styles or loads anything."""
    if not text.strip():
        return ""
    html = markdown.markdown(text, extensions=["sane_lists", "tables"], output_format="html")
    for level in range(6, 0, -1):  # h1 → h3 … h4+ → h6
        html = html.replace(f"<h{level}", f"<h{min(level + 2, 6)}")
        html = html.replace(f"</h{level}>", f"</h{min(level + 2, 6)}>")
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
