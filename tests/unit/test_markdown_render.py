"""Markdown is read as rendered: comments, link targets and definitions are not text; code is."""

from pathlib import Path

from textbound.documents.ingest.loaders import load_file
from textbound.documents.ingest.markdown import rendered_markdown

PAGE = """# File system

<!--introduced_in=v0.10.0-->
<a id="unsafe-rust"></a>

## `fs.open(path)`

<!-- YAML
added: v0.0.2
-->

Opens a file. See [`fs.close()`][] and [the guide](guide.md#start "Guide") for more,
or [Chapter 19][ch19], the [RFC 8439] text and <https://example.org/fs>.
A reference with no definition, like [1] or [sic], is not a link.

![A crab waving](img/ferris.svg)

```xml
<!-- a comment in a listing is printed -->
<a href="x">[link](kept)</a>
```

Inline code keeps its brackets: `a[i](j)` and `[x][]`.

[`fs.close()`]: #fsclosefd
[ch19]: ch19-00-advanced.html
[RFC 8439]: https://www.rfc-editor.org/rfc/rfc8439
"""


def test_what_a_rendered_page_hides_is_not_text() -> None:
    text = rendered_markdown(PAGE)
    for hidden in ("<!--introduced_in", "added: v0.0.2", '<a id="unsafe-rust">', "guide.md",
                   "ch19-00-advanced.html", "rfc-editor.org", "#fsclosefd", "img/ferris.svg"):
        assert hidden not in text, hidden
    assert "See `fs.close()` and the guide for more,\nor Chapter 19, the RFC 8439 text and " \
           "https://example.org/fs." in text
    assert "like [1] or [sic], is not a link." in text
    assert "A crab waving" in text


def test_code_is_kept_exactly() -> None:
    text = rendered_markdown(PAGE)
    assert ("```xml\n<!-- a comment in a listing is printed -->\n<a href=\"x\">[link](kept)</a>\n"
            "```\n") in text
    assert "Inline code keeps its brackets: `a[i](j)` and `[x][]`." in text
    assert text.startswith("# File system\n\n")
    assert "\n\n\n" not in text


def test_a_footnote_is_text() -> None:
    """A GFM footnote's definition holds text; it is not a link definition."""
    page = "The gate is calibrated[^1].\n\n[^1]: On SQuAD 2.0 and ClapNQ.\n"
    assert rendered_markdown(page) == page


def test_a_file_without_markup_to_hide_is_unchanged() -> None:
    plain = "# Notes\n\nA paragraph with [brackets] and a `code span`.\n\n```\n[a]: b\n```\n"
    assert rendered_markdown(plain) == plain


def test_a_markdown_file_is_loaded_as_rendered(tmp_path: Path) -> None:
    page = tmp_path / "fs.md"
    page.write_text(PAGE, encoding="utf-8")
    doc = load_file(page, "fs.md")
    assert doc.title == "File system"
    assert "<!--introduced_in" not in doc.text and "Chapter 19, the RFC 8439 text" in doc.text
    assert "<!-- a comment in a listing is printed -->" in doc.text


MYST = """(installing)=
# Installing

Work in a {ref}`virtual environment <venv-setup>` and check {mod}`ensurepip` first.

```{note}
:class: dropdown
The zip application is experimental.
```

:::{warning}
Never run it as root.
:::

```{versionadded} 21.2
The `--root-user-action` option.
```

```{code-block} python
:linenos:
import ensurepip
ensurepip.bootstrap()
```

```{toctree}
:hidden:
getting-started
cli/index
```

```{pip-cli}
$ python -m pip install requests
```
"""


def test_myst_directives_and_roles_are_read_as_rendered() -> None:
    text = rendered_markdown(MYST)
    assert text.startswith("# Installing\n")
    assert "Work in a virtual environment and check `ensurepip` first." in text
    assert "\nThe zip application is experimental.\n" in text and "{note}" not in text
    assert "\nNever run it as root.\n" in text and ":::" not in text
    assert "New in version 21.2.\n\nThe `--root-user-action` option." in text
    assert "```python\nimport ensurepip\nensurepip.bootstrap()\n```" in text
    for hidden in (":class:", ":linenos:", "getting-started", "cli/index", "(installing)="):
        assert hidden not in text, hidden
    assert "```{pip-cli}\n$ python -m pip install requests\n```" in text  # other code as it is


NODE_OS = """### Signal constants

The following signal constants are exported by `os.constants.signals`.

<table>
  <tr>
    <th>Constant</th>
    <th>Description</th>
  </tr>
  <tr>
    <td><code>SIGHUP</code></td>
    <td>Sent to indicate when a controlling terminal is closed or a parent
    process exits.</td>
  </tr>
  <tr>
    <td><code>SIGINT</code></td>
    <td>Sent to indicate when a user wishes to interrupt a process.</td>
  </tr>
</table>

<pre>
$ node --version
v18.19.0
</pre>

```html
<table><tr><td>an example of HTML stays as written</td></tr></table>
```
"""


def test_an_html_block_in_markdown_reads_as_an_html_page_does() -> None:
    """Node.js's API pages write their constants tables as HTML into the Markdown: a reader sees
    a table, so each row is read with its header cells; `<pre>` is code; HTML inside a fenced
    block is code and stays exactly as written."""
    text = rendered_markdown(NODE_OS)
    assert ("| Constant | Description |\n|---|---|\n| SIGHUP | Sent to indicate when a "
            "controlling terminal is closed or a parent process exits. |\n| SIGINT | Sent to "
            "indicate when a user wishes to interrupt a process. |") in text
    assert "```\n$ node --version\nv18.19.0\n```" in text
    assert "```html\n<table><tr><td>an example of HTML stays as written</td></tr></table>\n```" \
        in text
    assert "<th>" not in text and "<pre>" not in text
    assert text.startswith("### Signal constants\n\nThe following signal constants are exported")


def test_inline_html_reads_as_its_words() -> None:
    """mdBook sources caption a listing with `<span class="caption">`; a rendered page shows the
    words, never the tags. A code span keeps its tags, and a placeholder is no tag."""
    text = rendered_markdown(
        '<span class="caption">Listing 19-1: Creating raw pointers from references</span>\n\n'
        "Press <kbd>Ctrl</kbd>+<kbd>C</kbd>, call <code>x[1]</code>, see "
        '<img src="ferris.svg" alt="a crab">, keep `<span>` and run git branch -D <branch>.\n')
    assert text == ("Listing 19-1: Creating raw pointers from references\n\n"
                    "Press Ctrl+C, call `x[1]`, see a crab, keep `<span>` and run "
                    "git branch -D <branch>.\n")


def test_an_mdbook_include_reads_the_listing_it_names(tmp_path: Path) -> None:
    """The Rust book's chapters write their listings as `{{#rustdoc_include ../listings/...}}`:
    the rendered book shows the listing (the anchored part, without rustdoc's hidden `# `
    lines), so a "how do I" answer can quote the code. An include that names no readable
    listing inside the book (missing, a settings file, outside it) shows nothing."""
    book = tmp_path / "book"
    (book / "src").mkdir(parents=True)
    (book / "listings").mkdir()
    (book / "listings" / "main.rs").write_text(
        "fn main() {\n    // ANCHOR: here\n    let r1 = &num as *const i32;\n"
        "    // ANCHOR_END: here\n#   let hidden = 1;\n}\n")
    (book / "listings" / "secret.env").write_text("TOKEN=abc\n")
    (tmp_path / "outside.rs").write_text("fn outside() {}\n")
    page = book / "src" / "ch19.md"
    page.write_text(
        "# Unsafe Rust\n\n```rust\n{{#rustdoc_include ../listings/main.rs:here}}\n```\n\n"
        "```rust\n{{#include ../listings/main.rs:1:1}}\n```\n\n"
        "```\n{{#include ../listings/secret.env}}\n{{#include ../../outside.rs}}\n"
        "{{#include ../listings/missing.rs}}\n```\n")
    text = load_file(page, "ch19.md").text
    assert "```rust\n    let r1 = &num as *const i32;\n```" in text
    assert "```rust\nfn main() {\n```" in text
    assert "TOKEN" not in text and "outside" not in text and "{{#" not in text
    assert "hidden" not in text and "ANCHOR" not in text


def test_an_uploaded_page_includes_nothing_from_another_collections_uploads(
        tmp_path: Path) -> None:
    uploads = tmp_path / "data" / "uploads"
    (uploads / "physics").mkdir(parents=True)
    (uploads / "other").mkdir()
    (uploads / "other" / "notes.txt").write_text("another course's notes\n")
    (uploads / "physics" / "listing.py").write_text("print('kept')\n")
    page = uploads / "physics" / "page.md"
    page.write_text("# Page\n\n```\n{{#include ../other/notes.txt}}\n"
                    "{{#include listing.py}}\n```\n")
    text = load_file(page, "page.md").text
    assert "another course" not in text and "print('kept')" in text


def test_a_quarto_or_r_markdown_book_reads_as_markdown(tmp_path: Path) -> None:
    """R Markdown and Quarto books (.Rmd, .qmd): their {r} chunks are code, kept exactly (a
    `:::` inside one too), and Pandoc's fenced divs lose their fence lines, not their text."""
    page = tmp_path / "models.qmd"
    page.write_text("# Models\n\n::: {.callout-note}\nA linear model is the simplest model.\n"
                    ":::\n\n```{r}\nfit <- lm(y ~ x, data = df)\n:::\n```\n")
    doc = load_file(page, "models.qmd")
    assert doc.kind == "markdown" and doc.title == "Models"
    assert doc.text == ("# Models\n\nA linear model is the simplest model.\n\n"
                        "```{r}\nfit <- lm(y ~ x, data = df)\n:::\n```\n")
    (tmp_path / "intro.Rmd").write_text("# Intro\n\nText.\n")
    assert load_file(tmp_path / "intro.Rmd", "intro.Rmd").kind == "markdown"
