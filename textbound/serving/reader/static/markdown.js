// A small Markdown renderer that remembers where every character came from.
//
// Citations point at character offsets in the document text, so every text node this renderer
// creates holds an exact, contiguous slice of the source; `segments` lists those nodes with the
// offset of their first character, in reading order. Markup characters (#, **, `, list markers)
// produce no text node, so they are never highlighted or sent as part of a selection.
//
// Only text nodes and a fixed set of elements are created (never innerHTML), so any HTML in the
// source is shown as text. Images are shown as their alt text: the page makes no outside requests.
//
// Supported: ATX headings, paragraphs, fenced code, unordered and ordered lists (nested by
// indentation), block quotes, horizontal rules, GitHub-style tables, inline code, bold, italic,
// links, backslash escapes.
//
// Tables: a row of cells, a separator row (`|---|:--:|`) with as many cells, then body rows, as
// ingestion writes HTML tables. Cells split on unescaped `|`; `\|` shows as `|` (in code spans
// too, as on GitHub) and only the `|` is a text node, so offsets stay exact. Ingestion writes a
// table whose first row is not header cells without a separator: two or more lines that each
// start and end with `|` and have as many cells are shown as such a table (rows, no header). One
// `|` line alone stays a paragraph.

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/d;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])( +|$)/;
const QUOTE = /^ {0,3}> ?/;
const ESCAPABLE = "\\`*_{}[]()#+-.!|>~<\"'";
const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$/;
// a row of a table without a header: it starts and ends with an unescaped `|`
const FULL_ROW = /^\s*\|.*(?<!\\)\|\s*$/;
const UNESCAPED_PIPE = /(?<!\\)\|/;

/** Split text into lines: {start, end (without the newline), text}. */
function splitLines(text) {
  const lines = [];
  let pos = 0;
  while (pos <= text.length) {
    let end = text.indexOf("\n", pos);
    if (end === -1) end = text.length;
    lines.push({ start: pos, end, text: text.slice(pos, end) });
    pos = end + 1;
  }
  return lines;
}

const isBlank = (line) => line.text.trim() === "";

function slugify(words, used) {
  let slug = words.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "") || "section";
  let candidate = slug;
  for (let n = 2; used.has(candidate); n += 1) candidate = `${slug}-${n}`;
  used.add(candidate);
  return candidate;
}

/** A column's alignment from its separator cell (`:--`, `:-:`, `--:`), or "". */
function alignment(cell) {
  const left = cell.startsWith(":");
  const right = cell.endsWith(":");
  if (left && right) return "center";
  return right ? "right" : "";
}

class Renderer {
  constructor(text) {
    this.text = text;
    this.segments = [];
    this.headings = [];
    this.usedIds = new Set();
    this.inCell = false; // inside a table cell, `\|` is a `|` even in a code span
  }

  /** Append a text node for text[start, end) and remember where it came from. */
  emit(parent, start, end) {
    if (end <= start) return;
    const node = document.createTextNode(this.text.slice(start, end));
    parent.appendChild(node);
    this.segments.push({ node, start, end });
  }

  /** Emit a code span's text; in a table cell, `\|` is shown (and highlighted) as `|`. */
  emitCode(parent, start, end) {
    let from = start;
    if (this.inCell) {
      for (let i = this.text.indexOf("\\|", start); i !== -1 && i + 1 < end;
        i = this.text.indexOf("\\|", i + 2)) {
        this.emit(parent, from, i);
        from = i + 1;
      }
    }
    this.emit(parent, from, end);
  }

  // --- inline --------------------------------------------------------------------------------

  /** Render text[start, end) as inline Markdown into parent. */
  inline(parent, start, end) {
    const t = this.text;
    let plain = start; // start of the pending plain-text run
    let i = start;
    const flush = (upTo) => { this.emit(parent, plain, upTo); };
    while (i < end) {
      const ch = t[i];
      if (ch === "\\" && i + 1 < end && ESCAPABLE.includes(t[i + 1])) {
        flush(i);
        this.emit(parent, i + 1, i + 2);
        i += 2;
        plain = i;
        continue;
      }
      if (ch === "`") {
        let run = 1;
        while (t[i + run] === "`") run += 1;
        const fence = "`".repeat(run);
        let close = t.indexOf(fence, i + run);
        while (close !== -1 && close < end && t[close + run] === "`") {
          close = t.indexOf(fence, close + run + 1);
        }
        if (close !== -1 && close + run <= end) {
          flush(i);
          let a = i + run;
          let b = close;
          if (b - a >= 2 && t[a] === " " && t[b - 1] === " " && t.slice(a, b).trim()) {
            a += 1;
            b -= 1;
          }
          const code = document.createElement("code");
          this.emitCode(code, a, b);
          parent.appendChild(code);
          i = close + run;
          plain = i;
          continue;
        }
        i += run;
        continue;
      }
      if (ch === "*" || ch === "_") {
        const double = t[i + 1] === ch && i + 1 < end;
        const width = double ? 2 : 1;
        const close = this.findCloser(ch, width, i, end);
        if (close !== -1) {
          flush(i);
          const el = document.createElement(double ? "strong" : "em");
          this.inline(el, i + width, close);
          parent.appendChild(el);
          i = close + width;
          plain = i;
          continue;
        }
        i += width;
        continue;
      }
      if (ch === "[" || (ch === "!" && t[i + 1] === "[")) {
        const link = this.findLink(ch === "!" ? i + 1 : i, end);
        if (link) {
          flush(i);
          if (ch === "!") {
            const alt = document.createElement("span");
            alt.className = "md-image";
            alt.title = "Image (not loaded)";
            this.inline(alt, link.textStart, link.textEnd);
            parent.appendChild(alt);
          } else {
            const a = document.createElement("a");
            const href = link.href.trim();
            if (/^(https?:|mailto:|#)/i.test(href)) {
              a.href = href;
              if (!href.startsWith("#")) {
                a.rel = "noopener noreferrer";
                a.target = "_blank";
              }
            }
            this.inline(a, link.textStart, link.textEnd);
            parent.appendChild(a);
          }
          i = link.after;
          plain = i;
          continue;
        }
      }
      i += 1;
    }
    flush(end);
  }

  /** Find the closing emphasis delimiter for one opening at i, or -1. */
  findCloser(ch, width, i, end) {
    const t = this.text;
    const opensAt = i + width;
    const before = i > 0 ? t[i - 1] : " ";
    if (opensAt >= end || /\s/.test(t[opensAt])) return -1;
    // underscores inside words (base_link) are not emphasis
    if (ch === "_" && /[\p{L}\p{N}]/u.test(before)) return -1;
    const marker = ch.repeat(width);
    let j = opensAt + 1;
    while (j <= end - width) {
      if (t[j] === "`") { // skip code spans
        const close = t.indexOf("`", j + 1);
        if (close === -1 || close >= end) return -1;
        j = close + 1;
        continue;
      }
      if (t.startsWith(marker, j) && !/\s/.test(t[j - 1])) {
        const after = j + width < t.length ? t[j + width] : " ";
        const tripleOk = width === 2 || t[j + 1] !== ch; // "*a**" is not a closer for "*"
        const wordOk = ch !== "_" || !/[\p{L}\p{N}]/u.test(after);
        if (tripleOk && wordOk && (width === 2 || t[j - 1] !== ch)) return j;
      }
      j += 1;
    }
    return -1;
  }

  /** Parse "[text](href)" starting at the "[" at i. */
  findLink(i, end) {
    const t = this.text;
    let depth = 0;
    for (let j = i; j < end; j += 1) {
      if (t[j] === "\\") { j += 1; continue; }
      if (t[j] === "[") depth += 1;
      if (t[j] === "]") {
        depth -= 1;
        if (depth === 0) {
          if (t[j + 1] !== "(") return null;
          const close = t.indexOf(")", j + 2);
          if (close === -1 || close >= end) return null;
          const inside = t.slice(j + 2, close).trim().split(/\s+/)[0] || "";
          return { textStart: i + 1, textEnd: j, href: inside.replace(/^<|>$/g, ""), after: close + 1 };
        }
      }
    }
    return null;
  }

  // --- blocks --------------------------------------------------------------------------------

  /** Render lines[from, to) as blocks into parent. */
  blocks(parent, lines, from, to) {
    let i = from;
    while (i < to) {
      const line = lines[i];
      if (isBlank(line)) { i += 1; continue; }
      const fence = FENCE.exec(line.text);
      if (fence) { i = this.codeBlock(parent, lines, i, to, fence); continue; }
      const heading = HEADING.exec(line.text);
      if (heading) { this.heading(parent, line, heading); i += 1; continue; }
      if (RULE.test(line.text)) { parent.appendChild(document.createElement("hr")); i += 1; continue; }
      if (QUOTE.test(line.text)) { i = this.quote(parent, lines, i, to); continue; }
      if (LIST_ITEM.test(line.text)) { i = this.list(parent, lines, i, to); continue; }
      const table = this.tableAt(lines, i, to);
      if (table) { i = this.table(parent, lines, i, table); continue; }
      i = this.paragraph(parent, lines, i, to);
    }
  }

  startsBlock(line) {
    return FENCE.test(line.text) || HEADING.test(line.text) || RULE.test(line.text)
      || QUOTE.test(line.text) || LIST_ITEM.test(line.text);
  }

  /** Whether lines[j] ends the paragraph above it: a block starts, or a table with a header. */
  interrupts(lines, j, to) {
    if (this.startsBlock(lines[j])) return true;
    const table = this.tableAt(lines, j, to);
    return Boolean(table && table.headed); // rows without a header never cut a paragraph
  }

  /** The cells of a table line: [start, end) of each, trimmed, outer pipes dropped. */
  cells(line) {
    const t = this.text;
    let a = line.start;
    let b = line.end;
    while (a < b && /\s/.test(t[a])) a += 1;
    while (b > a && /\s/.test(t[b - 1])) b -= 1;
    if (t[a] === "|") a += 1;
    if (b > a && t[b - 1] === "|" && t[b - 2] !== "\\") b -= 1;
    const out = [];
    const push = (from, upTo) => {
      while (from < upTo && /\s/.test(t[from])) from += 1;
      while (upTo > from && /\s/.test(t[upTo - 1])) upTo -= 1;
      out.push([from, upTo]);
    };
    let from = a;
    for (let i = a; i < b; i += 1) {
      if (t[i] === "\\") { i += 1; continue; }
      if (t[i] === "|") { push(from, i); from = i + 1; }
    }
    push(from, b);
    return out;
  }

  /** A table starting at lines[i]: {headed, end (the line after it)}, or null. */
  tableAt(lines, i, to) {
    const line = lines[i];
    if (!UNESCAPED_PIPE.test(line.text) || this.startsBlock(line)) return null;
    const sep = i + 1 < to ? lines[i + 1] : null;
    if (sep && sep.text.includes("|") && TABLE_SEPARATOR.test(sep.text)
        && this.cells(sep).length === this.cells(line).length) {
      // body rows go on while a line has a `|`: a paragraph right after the table (no blank
      // line between) stays a paragraph, where GitHub would make it one more row
      let j = i + 2;
      while (j < to && !isBlank(lines[j]) && UNESCAPED_PIPE.test(lines[j].text)
             && !this.startsBlock(lines[j])) j += 1;
      return { headed: true, end: j };
    }
    if (!FULL_ROW.test(line.text)) return null;
    const width = this.cells(line).length;
    let j = i + 1;
    while (j < to && FULL_ROW.test(lines[j].text) && this.cells(lines[j]).length === width) j += 1;
    return j - i >= 2 ? { headed: false, end: j } : null;
  }

  /** Render one row of cells (th or td) into a section of the table. */
  row(section, line, tag, align, width) {
    const tr = document.createElement("tr");
    const cells = this.cells(line);
    // a short row gets empty cells; a long one keeps its extra cells (GitHub drops them, but
    // here every character of the book stays on the page)
    for (let c = 0; c < Math.max(width, cells.length); c += 1) {
      const cell = document.createElement(tag);
      if (tag === "th") cell.scope = "col";
      if (align[c]) cell.className = `align-${align[c]}`;
      if (c < cells.length) {
        this.inCell = true;
        this.inline(cell, cells[c][0], cells[c][1]);
        this.inCell = false;
      }
      tr.appendChild(cell);
    }
    section.appendChild(tr);
  }

  table(parent, lines, i, found) {
    const wrap = document.createElement("div");
    wrap.className = "md-table";
    wrap.tabIndex = 0; // a wide table scrolls sideways: let the keyboard reach it
    const table = document.createElement("table");
    let first = i;
    let align = [];
    let width = this.cells(lines[i]).length;
    if (found.headed) {
      align = this.cells(lines[i + 1]).map(([a, b]) => alignment(this.text.slice(a, b)));
      const thead = document.createElement("thead");
      this.row(thead, lines[i], "th", align, width);
      table.appendChild(thead);
      first = i + 2;
    } else {
      width = 0; // rows without a header keep their own width
    }
    if (found.end > first) {
      const tbody = document.createElement("tbody");
      for (let j = first; j < found.end; j += 1) this.row(tbody, lines[j], "td", align, width);
      table.appendChild(tbody);
    }
    wrap.appendChild(table);
    parent.appendChild(wrap);
    return found.end;
  }

  codeBlock(parent, lines, i, to, fence) {
    const marker = fence[1];
    const pre = document.createElement("pre");
    const code = document.createElement("code");
    const lang = (fence[2] || "").replace(/[^\w+-]/g, "");
    if (lang) code.dataset.lang = lang;
    pre.tabIndex = 0; // wide code scrolls sideways: let the keyboard reach it
    let j = i + 1;
    while (j < to && !(lines[j].text.trimStart().startsWith(marker[0].repeat(marker.length))
                       && lines[j].text.trim().replace(new RegExp(`^\\${marker[0]}+`), "") === "")) {
      j += 1;
    }
    if (j > i + 1) this.emit(code, lines[i + 1].start, lines[Math.min(j, to) - 1].end);
    pre.appendChild(code);
    parent.appendChild(pre);
    return Math.min(j + 1, to);
  }

  heading(parent, line, match) {
    const level = match[1].length;
    const [a, b] = match.indices[2];
    const el = document.createElement(`h${level}`);
    this.inline(el, line.start + a, line.start + b);
    el.id = `h-${slugify(el.textContent, this.usedIds)}`;
    el.tabIndex = -1;
    parent.appendChild(el);
    this.headings.push({ level, text: el.textContent, id: el.id, start: line.start + a });
  }

  paragraph(parent, lines, i, to) {
    let j = i + 1;
    while (j < to && !isBlank(lines[j]) && !this.interrupts(lines, j, to)) j += 1;
    const p = document.createElement("p");
    const first = lines[i];
    const lead = first.text.length - first.text.trimStart().length;
    this.inline(p, first.start + lead, lines[j - 1].end);
    parent.appendChild(p);
    return j;
  }

  quote(parent, lines, i, to) {
    const box = document.createElement("blockquote");
    let j = i;
    const p = document.createElement("p");
    while (j < to && QUOTE.test(lines[j].text)) {
      const cut = QUOTE.exec(lines[j].text)[0].length;
      if (j > i) p.appendChild(document.createTextNode("\n"));
      this.inline(p, lines[j].start + cut, lines[j].end);
      j += 1;
    }
    box.appendChild(p);
    parent.appendChild(box);
    return j;
  }

  list(parent, lines, i, to) {
    const first = LIST_ITEM.exec(lines[i].text);
    const indent = first[1].length;
    const ordered = /\d/.test(first[2]);
    const el = document.createElement(ordered ? "ol" : "ul");
    if (ordered && parseInt(first[2], 10) !== 1) el.start = parseInt(first[2], 10);
    let j = i;
    while (j < to) {
      const m = LIST_ITEM.exec(lines[j].text);
      if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
      const li = document.createElement("li");
      const contentIndent = m[0].length;
      // the item's own text: this line and its lazy continuation lines
      let k = j + 1;
      while (k < to && !isBlank(lines[k]) && !this.interrupts(lines, k, to)) k += 1;
      const lineStart = lines[j].start + contentIndent;
      if (lineStart <= lines[k - 1].end) this.inline(li, lineStart, lines[k - 1].end);
      // nested blocks: following lines indented past the marker (blank lines allowed between)
      let n = k;
      while (n < to) {
        let probe = n;
        while (probe < to && isBlank(lines[probe])) probe += 1;
        if (probe >= to) break;
        const lead = lines[probe].text.length - lines[probe].text.trimStart().length;
        if (lead < contentIndent && !(lead > indent && LIST_ITEM.test(lines[probe].text))) break;
        let end = probe + 1;
        while (end < to) {
          const l = lines[end];
          const ld = l.text.length - l.text.trimStart().length;
          if (!isBlank(l) && ld <= indent) break;
          if (isBlank(l)) {
            let q = end;
            while (q < to && isBlank(lines[q])) q += 1;
            if (q >= to) break;
            const qd = lines[q].text.length - lines[q].text.trimStart().length;
            if (qd <= indent) break;
          }
          end += 1;
        }
        this.blocks(li, lines, probe, end);
        n = end;
      }
      el.appendChild(li);
      j = n;
      // a blank line between items keeps the list going
      let probe = j;
      while (probe < to && isBlank(lines[probe])) probe += 1;
      const next = probe < to ? LIST_ITEM.exec(lines[probe].text) : null;
      if (!next || next[1].length !== indent || /\d/.test(next[2]) !== ordered) break;
      j = probe;
    }
    parent.appendChild(el);
    return j;
  }
}

/**
 * Render Markdown text into the element `root` (emptied first).
 * Returns {segments: [{node, start, end}], headings: [{level, text, id, start}]} with offsets in
 * UTF-16 code units of `text`.
 */
export function renderMarkdown(text, root) {
  root.replaceChildren();
  const r = new Renderer(text);
  const lines = splitLines(text);
  r.blocks(root, lines, 0, lines.length);
  return { segments: r.segments, headings: r.headings };
}

/**
 * Return a function mapping code point offsets (Python's str indices, which the server sends)
 * to UTF-16 offsets (JavaScript's) in `text`; the identity when the text has no astral characters.
 */
export function codePointIndex(text) {
  if (!/[\uD800-\uDBFF]/.test(text)) return (n) => n;
  const units = [0];
  let unit = 0;
  for (const ch of text) {
    unit += ch.length;
    units.push(unit);
  }
  return (n) => units[Math.max(0, Math.min(n, units.length - 1))];
}
