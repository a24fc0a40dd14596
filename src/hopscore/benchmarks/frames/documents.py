"""The oracle setting's articles: a user's file of the linked Wikipedia pages
(``hopscore run frames --documents FILE``), matched to each question's ``wiki_links``.

FRAMES ships only the links; the texts are the user's to fetch. The file is JSON Lines, one page
per line, ``{"url" | "link" | "id" | "title": ..., "text": ...}`` (``contents`` / ``content``
also name the text; ``title`` is shown when given), or one JSON object ``{link or title: text}``.
A page is found by its link, compared without scheme, ``www.``/``m.`` mobile host, fragment,
trailing slash or percent-encoding (``https://en.wikipedia.org/wiki/Bill_Gates`` and
``en.m.wikipedia.org/wiki/Bill%20Gates`` are one page), or by its title (the link's last path
part with underscores as spaces). A question whose page is not in the file is an error naming
the question, the link and the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

from hopscore.errors import HopscoreError, InputError
from hopscore.files.fields import Fields, json_type
from hopscore.files.io import iter_jsonl, load_json, sniff_json_kind

KEY_FIELDS = ("url", "link", "id", "title")
TEXT_FIELDS = ("text", "contents", "content")


@dataclass(frozen=True, slots=True)
class Page:
    title: str
    text: str


def link_key(link: str) -> str:
    """A link as pages are matched: host without ``www.``/``m.``, path unquoted, underscores as
    spaces, lower case, no scheme, query, fragment or trailing slash."""
    text = unquote(link.strip())
    parts = urlsplit(text if "://" in text else "//" + text)
    host = parts.netloc.lower().replace(".m.", ".")
    host = host.removeprefix("www.").removeprefix("m.")
    return f"{host}{parts.path.rstrip('/')}".replace("_", " ").lower()


def title_key(link_or_title: str) -> str:
    """A page title as pages are matched: the last path part of a link (or the title itself),
    unquoted, underscores as spaces, lower case."""
    text = unquote(link_or_title.strip()).split("#", 1)[0].rstrip("/")
    if "/wiki/" in text:
        text = text.rsplit("/wiki/", 1)[1]
    return " ".join(text.replace("_", " ").split()).lower()


@dataclass(frozen=True, slots=True)
class Pages:
    """The pages of one documents file, by link and by title."""

    path: str
    by_key: dict[str, Page]

    def find(self, link: str) -> Page | None:
        return self.by_key.get(link_key(link)) or self.by_key.get(title_key(link))

    def for_example(self, example_id: str, links: tuple[str, ...]) -> list[Page]:
        """The pages of one question's links, in link order; a missing one is an error."""
        if not links:
            raise HopscoreError(f"question {example_id!r} has no wiki_links: the oracle setting "
                                "(--documents) needs the gold's links")
        pages = []
        for link in links:
            page = self.find(link)
            if page is None:
                raise HopscoreError(
                    f"{self.path}: no page for {link!r}, linked from question {example_id!r}: "
                    "the oracle setting (--documents) needs every linked article (add a line "
                    '{"url": "<link>", "text": "<article text>"})')
            pages.append(page)
        return pages


def _add(by_key: dict[str, Page], key: str, page: Page) -> None:
    for found in (link_key(key), title_key(key)):
        by_key.setdefault(found, page)


@lru_cache(maxsize=4)
def _read(path: str, mtime_ns: int, size: int) -> Pages:
    by_key: dict[str, Page] = {}
    if not path.endswith(".jsonl") and sniff_json_kind(path) == "json":
        data = load_json(path)
        if not isinstance(data, dict):
            raise InputError(path, "expected JSON Lines of {url, text} pages or one JSON object "
                             f"{{link: text}}, got a JSON {json_type(data)}")
        for key, text in data.items():
            if not isinstance(text, str):
                raise InputError(path, f"expected the page text as a string, got "
                                 f"{json_type(text)}", field=key)
            _add(by_key, key, Page(title_key(key), text))
    else:
        for where, value in iter_jsonl(path):
            record = Fields(value, where)
            keys = [record.str(f) for f in KEY_FIELDS if record.has(f)]
            if not keys:
                raise record.error("url", "missing (a page needs url, link, id or title)")
            text_field = next((f for f in TEXT_FIELDS if record.has(f)), "text")
            page = Page(str(record.str("title", "") or title_key(keys[0])),
                        record.str(text_field))
            for key in keys:
                _add(by_key, key, page)
    if not by_key:
        raise InputError(path, "the documents file holds no pages")
    return Pages(path, by_key)


def read_pages(path: Path) -> Pages:
    """The pages of ``path``, read once per run (kept while the file is unchanged)."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise InputError(path, f"cannot read the documents file: {exc.strerror}") from None
    return _read(str(path), stat.st_mtime_ns, stat.st_size)
