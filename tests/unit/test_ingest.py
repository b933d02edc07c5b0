import json
from pathlib import Path

import pytest

from textbound.documents.ingest import chunk_document, ingest, iter_jsonl_documents, load_file
from textbound.text.units import chunk_units

MD = """# Chapter 1: Robots

Intro paragraph about robots. It has two sentences.

## Sensors

A LiDAR measures distance with laser pulses. An IMU measures acceleration.

```python
# not a heading
print("hi")
```

### Cameras

Cameras capture images.
"""


def make_pdf(path: Path, pages: list[str]) -> Path:
    """Write a minimal valid PDF with one line of text per page."""
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", None,
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for text in pages:
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objs.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode()}\nendstream")
        content = len(objs)
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                    f"/Resources << /Font << /F1 3 0 R >> >> /Contents {content} 0 R >>")
        kids.append(f"{len(objs)} 0 R")
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))
    return path


def test_markdown_chunks_follow_headings_with_exact_offsets(tmp_path):
    """Chunks carry their heading path, and text[start:end] is exactly the chunk."""
    f = tmp_path / "ch1.md"
    f.write_text(MD)
    doc = load_file(f, "book/ch1.md")
    chunks = chunk_document(doc)
    paths = [c.metadata["heading_path"] for c in chunks]
    assert ["Chapter 1: Robots", "Sensors"] in paths
    assert ["Chapter 1: Robots", "Sensors", "Cameras"] in paths
    assert not any("not a heading" in p[-1] for p in paths)  # code comments are not headings
    for c in chunks:
        assert doc.text[c.metadata["start"]:c.metadata["end"]] == c.text
        assert c.metadata["source"] == "book/ch1.md"


def test_headings_and_code_blocks_are_read_as_commonmark(tmp_path):
    """Headings and fences are CommonMark's (markdown-it-py): a fence closes only on its own kind
    of marker, inline code at a line's start opens no block, a `#` line in code is neither a
    heading nor the title, and a blank line inside a fence does not end a passage."""
    text = ("```bash\n# install it first\n```\n\n"
            "# Guide\n\n```x``` at a line's start is inline code.\n\n## Setup\n\n"
            "~~~\n```\n\n# still code\n~~~\n\n## Learning C#\n\nThe end.\n")
    f = tmp_path / "guide.md"
    f.write_text(text)
    doc = load_file(f, "guide.md")
    assert doc.title == "Guide"
    chunks = chunk_document(doc)
    assert [c.metadata["heading_path"] for c in chunks][1:] == [
        ["Guide"], ["Guide", "Setup"], ["Guide", "Learning C#"]]
    (setup,) = [c for c in chunks if c.metadata["heading_path"][-1] == "Setup"]
    assert setup.text == "~~~\n```\n\n# still code\n~~~"


def test_long_sections_are_split_below_the_chunk_limit(tmp_path):
    """A long section becomes several chunks, none longer than the limit."""
    f = tmp_path / "long.md"
    f.write_text("# T\n\n" + "\n\n".join(f"Paragraph {i} says something. " * 8 for i in range(30)))
    chunks = chunk_document(load_file(f, "long.md"))
    assert len(chunks) > 5 and max(len(c.text) for c in chunks) <= 1100


def test_a_passage_that_opens_inside_a_long_code_block_reads_it_as_code(tmp_path):
    """A listing longer than a passage is cut over passages; a passage that opens inside it is
    marked (`in_code`) and its lines up to the closing fence are one code unit, verbatim,
    not sentences of prose."""
    body = "\n".join(f"        mvprintw({n}, 0, \"row {n}\");  /* Draw row {n}. Then go on. */"
                     for n in range(40))
    f = tmp_path / "panels.md"
    f.write_text("# Panels\n\nThe whole program:\n\n```\n" + body
                 + "\n        doupdate();\n```\n\nIt draws forty rows.\n")
    chunks = chunk_document(load_file(f, "panels.md"))
    code = [c for c in chunks if "mvprintw" in c.text]
    assert len(code) >= 3 and all(len(c.text) <= 1100 for c in chunks)
    assert not code[0].metadata.get("in_code")
    later = code[1:]
    assert all(c.metadata.get("in_code") for c in later)
    units = [[u for u in chunk_units({"text": c.text, "metadata": c.metadata})
              if "mvprintw" in u.text or "doupdate" in u.text] for c in later]
    assert all(len(us) == 1 and us[0].kind == "code" for us in units)
    assert all(us[0].text == c.text.split("\n```")[0].strip("\n")
               for us, c in zip(units, later, strict=True))
    assert units[-1][0].text.endswith("\n        doupdate();")  # lines and indent kept


def test_chunk_ids_are_deterministic_and_content_derived(tmp_path):
    """The same source and content give the same ids; a change changes only affected ids."""
    f = tmp_path / "a.md"
    f.write_text(MD)
    ids1 = [c.chunk_id for c in chunk_document(load_file(f, "a.md"))]
    ids2 = [c.chunk_id for c in chunk_document(load_file(f, "a.md"))]
    assert ids1 == ids2 and len(set(ids1)) == len(ids1)
    f.write_text(MD.replace("Cameras capture images.", "Cameras capture colour images."))
    ids3 = [c.chunk_id for c in chunk_document(load_file(f, "a.md"))]
    assert ids3[:-1] == ids1[:-1] and ids3[-1] != ids1[-1]
    assert ids1 != [c.chunk_id for c in chunk_document(load_file(f, "b.md"))]


def test_html_headings_become_the_heading_path(tmp_path):
    """HTML h1-h6 structure the chunks; scripts are dropped."""
    f = tmp_path / "p.html"
    f.write_text("<html><head><title>Page</title><script>var x=1;</script></head><body>"
                 "<h1>Intro</h1><p>Robots sense the world.</p><h2>Actuators</h2>"
                 "<p>Motors move joints.</p></body></html>")
    chunks = chunk_document(load_file(f, "p.html"))
    assert any(c.metadata["heading_path"] == ["Intro", "Actuators"] for c in chunks)
    assert not any("var x" in c.text for c in chunks)


def test_a_page_whose_top_heading_is_its_title_does_not_repeat_it(tmp_path):
    """A DocBook page titled "5.11. Table Partitioning" whose first heading (an h2) says the
    same is cited "5.11. Table Partitioning > Overview", not with the title twice; a page whose
    top heading differs from its title keeps the title in front."""
    same = tmp_path / "same.html"
    same.write_text("<html><head><title>5.11. Table  Partitioning</title></head><body>"
                    "<h2>5.11. Table Partitioning</h2><p>Partitioning splits a table.</p>"
                    "<h3>Overview</h3><p>Each partition holds a range of rows.</p></body></html>")
    paths = [c.metadata["heading_path"] for c in chunk_document(load_file(same, "same.html"))]
    assert ["5.11. Table Partitioning", "Overview"] in paths
    assert not any(p[:2] == [p[0], p[0]] for p in paths if len(p) > 1)
    other = tmp_path / "other.html"
    other.write_text("<html><head><title>Chapter 5</title></head><body><h2>Partitions</h2>"
                     "<p>Partitioning splits a table.</p></body></html>")
    paths = [c.metadata["heading_path"] for c in chunk_document(load_file(other, "other.html"))]
    assert ["Chapter 5", "Partitions"] in paths


def test_pdf_pages_are_recorded(tmp_path):
    """PDF chunks carry their page number."""
    pdf = make_pdf(tmp_path / "doc.pdf", ["Page one talks about humanoid robots.",
                                          "Page two talks about simulation."])
    chunks = chunk_document(load_file(pdf, "doc.pdf"))
    text = " ".join(c.text for c in chunks)
    assert "humanoid robots" in text and "simulation" in text
    assert {c.metadata.get("page") for c in chunks} <= {1, 2}
    assert 1 in {c.metadata.get("page") for c in chunks}


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.md", b"", "empty file"),
        ("blank.txt", b"   \n\n  ", "only whitespace"),
        ("bin.txt", b"abc\x00\x01\x02def", "binary"),
        ("latin1.md", "caf\xe9 cr\xe8me".encode("latin-1"), "not valid UTF-8"),
        ("image.png", b"\x89PNG\r\n", "unsupported file type"),
        ("broken.pdf", b"%PDF-1.4 this is not a pdf", "PDF"),
    ],
)
def test_bad_files_are_skipped_with_a_reason(tmp_path, store, name, content, reason):
    """A bad file is reported and skipped; the good file beside it is still ingested."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "good.md").write_text(MD)
    (folder / name).write_bytes(content)
    summary = ingest(store, [folder])
    assert summary.files_changed == 1 and store.count() == summary.chunks_added > 0
    assert len(summary.skipped) == 1
    assert name in summary.skipped[0][0] and reason in summary.skipped[0][1]


def test_encrypted_pdf_is_skipped(tmp_path, store):
    """A password-protected PDF is skipped with a clear reason."""
    from pypdf import PdfReader, PdfWriter

    plain = make_pdf(tmp_path / "plain.pdf", ["Secret robot plans."])
    writer = PdfWriter()
    writer.append(PdfReader(str(plain)))
    writer.encrypt("hunter2")
    locked = tmp_path / "docs" / "locked.pdf"
    locked.parent.mkdir()
    with locked.open("wb") as fh:
        writer.write(fh)
    summary = ingest(store, [locked.parent])
    assert summary.skipped and "encrypted" in summary.skipped[0][1]
    assert store.count() == 0


def test_reingest_is_idempotent_and_replaces_changed_files(tmp_path, store):
    """Unchanged files are skipped; a changed file's stale chunks go; --prune drops gone files."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text(MD)
    (folder / "b.md").write_text("# B\n\nBipedal walking needs balance.\n")
    first = ingest(store, [folder])
    total = store.count()
    assert first.chunks_added == total > 0

    again = ingest(store, [folder])
    assert (again.chunks_added, again.chunks_removed, again.files_unchanged) == (0, 0, 2)
    assert store.count() == total

    (folder / "a.md").write_text(MD.replace("Cameras capture images.", "Cameras see."))
    changed = ingest(store, [folder])
    assert changed.chunks_added == 1 and changed.chunks_removed == 1 and store.count() == total

    (folder / "b.md").unlink()
    kept = ingest(store, [folder])
    assert store.count() == total and kept.chunks_removed == 0
    pruned = ingest(store, [folder], prune=True)
    assert pruned.chunks_removed == 1 and store.count() == total - 1
    assert {m["source"] for _, m in store.scroll()} == {"docs/a.md"}


def test_jsonl_corpus_and_malformed_lines(tmp_path, store):
    """Benchmark JSONL is ingested per doc_id; malformed lines are skipped with line numbers."""
    f = tmp_path / "corpus.jsonl"
    rows = [json.dumps({"doc_id": "A#0", "title": "A", "text": "Alpha text about robots."}),
            "{not json",
            json.dumps({"doc_id": "B#0", "title": "B"}),
            json.dumps(["a", "list"]),
            json.dumps({"doc_id": "C#0", "title": "C", "text": "Gamma text about sensors."})]
    f.write_text("\n".join(rows) + "\n")
    entries = list(iter_jsonl_documents(f))
    assert [e[0] for e in entries if isinstance(e, tuple)] == [
        "corpus.jsonl:2", "corpus.jsonl:3", "corpus.jsonl:4"]
    summary = ingest(store, jsonl=[f])
    assert summary.chunks_added == 2 and len(summary.skipped) == 3
    assert {m["source"] for _, m in store.scroll()} == {"A#0", "C#0"}


def test_missing_path_is_reported(tmp_path, store):
    """A path that does not exist is reported, not a crash."""
    summary = ingest(store, [tmp_path / "nope"])
    assert summary.skipped == [(str(tmp_path / "nope"), "no such file or folder")]


def test_prune_keeps_documents_ingested_from_other_paths(tmp_path, store):
    """--prune on one folder removes its vanished files only, not other folders' or a JSONL's."""
    course, mine = tmp_path / "course", tmp_path / "mine"
    course.mkdir()
    mine.mkdir()
    (course / "a.md").write_text("# A\n\nActuators move joints.\n")
    (course / "b.md").write_text("# B\n\nBipedal walking needs balance.\n")
    (mine / "own.md").write_text("# Own\n\nGliders change buoyancy.\n")
    rows = tmp_path / "bench.jsonl"
    rows.write_text(json.dumps({"doc_id": "Q#0", "title": "Q", "text": "Quaternions rotate."}))
    ingest(store, [course, mine], jsonl=[rows])
    (course / "b.md").unlink()
    (mine / "own.md").unlink()  # gone too, but not under the path being pruned

    pruned = ingest(store, [course], prune=True)

    assert pruned.pruned == [("course/b.md", 1)]
    assert {m["source"] for _, m in store.scroll()} == {"course/a.md", "mine/own.md", "Q#0"}
