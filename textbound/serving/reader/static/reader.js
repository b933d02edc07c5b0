// The reader page: table of contents, the chapter, and a chat panel that asks the textbook.
//
// Questions go to the server's LangServe route: POST /chat/stream (server-sent events: `metadata`,
// then `data` chunks `{"progress": {"node", "step"}}` and finally the response contract, then
// `end`), falling back to POST /chat/invoke when streaming is not available.
//
// Each tab holds one conversation: a thread id kept in sessionStorage (a reload keeps it, a new
// tab starts its own) travels as `config.configurable.thread_id` with every question, and on load
// `GET /threads/{id}` brings back the turns shown so far. "New conversation" starts a fresh id;
// the old thread stays on the server. Each answer and refusal can be rated (`POST /feedback` with
// the response's `run_id`).

import { codePointIndex, renderMarkdown } from "./markdown.js";

const $ = (id) => document.getElementById(id);

const STEP_LABELS = {
  check_question: "Reading the question",
  contextualize: "Reading it with the conversation so far",
  retrieve: "Searching the textbook",
  score_gate: "Weighing the evidence",
  scope_classify: "Checking the question is in scope",
  select_passage: "Reading your selection",
  check_answerable: "Checking the passages answer the question",
  generate: "Drafting an answer from the passages",
  validate_grounding: "Checking every sentence against its citation",
  release_answer: "Answer checked",
  greet: "Replying",
  describe_coverage: "Listing what the textbook covers",
};

const CONFIDENCE_HELP = {
  high: "The cited passages match the question closely.",
  medium: "The cited passages match the question fairly well.",
  low: "The cited passages match the question only loosely; check them.",
};

// Python's clean_text drops these (Unicode category C) except tab and newline; doing the same
// here keeps the selection's offsets identical on both sides.
const INVISIBLE = /(?![\n\t])\p{C}/gu;

// The course the page is of: served at / (the server's default course) or at /c/<course>/, whose
// routes are the same under that prefix. Its thread and key are kept apart from other courses'.
const BASE = location.pathname.replace(/\/[^/]*$/, "");
const STORED = BASE ? `:${BASE}` : "";
const THREAD_KEY = `textbound-thread-id${STORED}`;
const API_KEY = `textbound-api-key${STORED}`;
// what the server accepts as a thread id (textbound.conversation.threads.validate_thread_id)
const THREAD_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

function newThreadId() {
  const uuid = crypto.randomUUID
    ? crypto.randomUUID()
    // randomUUID needs a secure context; a plain-http LAN address is not one
    : [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `reader-${uuid}`;
}

/** This tab's thread id: the one sessionStorage kept across reloads, else a new one. */
function tabThreadId() {
  const saved = sessionStorage.getItem(THREAD_KEY);
  if (saved && THREAD_ID.test(saved)) return saved;
  const id = newThreadId();
  sessionStorage.setItem(THREAD_KEY, id);
  return id;
}

const state = {
  // GET /api/reader replaces this; refusal_reasons maps each reason to its heading there, so the
  // page keeps no list of reasons of its own
  info: {
    course_title: "Textbook reader", suggestions_lead: "", refusal_reasons: {},
    question_placeholder: "Ask a question about the course",
  },
  chapters: [],
  chapter: null, // {source, title, text, segments, headings, toUnits}
  pendingSelection: null, // a selection in the chapter not yet pinned
  selection: null, // the pinned selection questions are limited to
  sessionId: (crypto.randomUUID && crypto.randomUUID()) || String(Date.now()),
  threadId: tabThreadId(),
  restored: Promise.resolve(), // the earlier turns of this tab's thread, shown once loaded
  keepsThreads: true, // false when GET /threads says the server keeps no conversations
  apiKey: sessionStorage.getItem(API_KEY) || "",
  busy: false,
  messageCount: 0,
  retry: null,
};

// --- requests ----------------------------------------------------------------------------------

class HttpError extends Error {
  constructor(status, detail) {
    super(detail || `HTTP ${status}`);
    this.status = status;
  }
}

function headers(extra = {}) {
  const h = { Accept: "application/json", ...extra };
  if (state.apiKey) h["X-API-Key"] = state.apiKey;
  return h;
}

async function errorDetail(response) {
  try {
    const body = await response.json();
    return typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail ?? body);
  } catch {
    return response.statusText;
  }
}

async function getJSON(url) {
  const response = await fetch(url, { headers: headers() });
  if (!response.ok) throw new HttpError(response.status, await errorDetail(response));
  return response.json();
}

function needKey(retry) {
  state.retry = retry;
  $("key-form").hidden = false;
  $("api-key").focus();
}

// --- table of contents and chapters -------------------------------------------------------------

function chapterUrl(source) {
  return `${BASE}/api/chapters/${source.split("/").map(encodeURIComponent).join("/")}`;
}

async function loadInfo() {
  try {
    state.info = await getJSON(`${BASE}/api/reader`);
    // a student sees none of the teacher's controls (the server refuses them anyway)
    $("add-document").hidden = state.info.role === "student";
    $("course-title").textContent = state.info.course_title;
    if (state.info.scope) $("course-title").title = state.info.scope;
    // the example comes from this course (its profile or its headings), never a fixed one
    if (!state.selection) $("question").placeholder = state.info.question_placeholder;
    document.title = `${state.info.course_title} · Textbook reader`;
  } catch (err) {
    if (err.status === 401) needKey(start);
  }
}

async function loadChapters() {
  const status = $("toc-status");
  try {
    const { chapters } = await getJSON(`${BASE}/api/chapters`);
    state.chapters = chapters;
  } catch (err) {
    status.textContent = err.status === 401
      ? "Enter the server's API key to see the chapters."
      : `The table of contents could not be loaded: ${err.message}`;
    if (err.status === 401) needKey(start);
    return;
  }
  const list = $("chapter-list");
  list.replaceChildren();
  for (const ch of state.chapters) {
    const li = document.createElement("li");
    const a = document.createElement("a");
    a.href = `#read=${encodeURIComponent(ch.source)}`;
    a.textContent = ch.title;
    a.dataset.source = ch.source;
    li.appendChild(a);
    const sub = document.createElement("ol");
    sub.className = "section-list";
    sub.hidden = true;
    li.appendChild(sub);
    list.appendChild(li);
  }
  status.textContent = state.chapters.length
    ? `${state.chapters.length} chapter${state.chapters.length === 1 ? "" : "s"}`
    : "No documents yet: run `textbound ingest`, then reload.";
  const wanted = new URLSearchParams(location.hash.slice(1)).get("read");
  const first = state.chapters.find((c) => c.source === wanted) || state.chapters[0];
  if (first) await openChapter(first.source, { focus: false });
}

function markCurrent() {
  for (const a of $("chapter-list").querySelectorAll("a[data-source]")) {
    const current = state.chapter && a.dataset.source === state.chapter.source;
    if (current) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    const sub = a.parentElement.querySelector(".section-list");
    sub.hidden = !current;
    if (current) {
      sub.replaceChildren();
      // a book whose chapters are its top headings (a PDF, say) lists them; else its sections
      const tops = state.chapter.headings.filter((x) => x.level === 1).length;
      const level = tops > 1 ? 1 : 2;
      for (const h of state.chapter.headings.filter((x) => x.level === level)) {
        const li = document.createElement("li");
        const link = document.createElement("a");
        link.href = `#${h.id}`;
        link.textContent = h.text;
        link.dataset.heading = h.id;
        li.appendChild(link);
        sub.appendChild(li);
      }
    }
  }
}

/** Show a chapter; returns false when it cannot be shown. */
async function openChapter(source, { focus = true } = {}) {
  if (state.chapter && state.chapter.source === source) {
    render(state.chapter);
    if (focus) $("chapter-body").focus({ preventScroll: true });
    return true;
  }
  const status = $("chapter-status");
  status.textContent = "Loading the chapter…";
  let data;
  try {
    data = await getJSON(chapterUrl(source));
  } catch (err) {
    if (err.status === 401) needKey(() => openChapter(source, { focus }));
    status.textContent = `This document can't be shown: ${err.message}`;
    return false;
  }
  state.chapter = { ...data, toUnits: codePointIndex(data.text) };
  render(state.chapter);
  status.textContent = data.stale
    ? "This file changed after it was ingested, so highlighted passages may be slightly off. Re-run `textbound ingest` to refresh."
    : "";
  history.replaceState(null, "", `#read=${encodeURIComponent(source)}`);
  markCurrent();
  $("reading").scrollTop = 0;
  if (focus) $("chapter-body").focus({ preventScroll: true });
  return true;
}

function render(chapter) {
  const body = $("chapter-body");
  const { segments, headings } = renderMarkdown(chapter.text, body);
  chapter.segments = segments;
  chapter.headings = headings;
  addPageMarkers(chapter);
  body.tabIndex = -1;
  $("chapter-heading").textContent = chapter.title;
}

/**
 * Show where each page of a PDF starts (`pages`: [page, code point offset, printed label or
 * null]), named by the page number the book prints there, else the file's page. A marker sits
 * outside every segment, so highlights, selections and their offsets never include it; a page
 * that starts mid-paragraph splits that segment in two at the page's first character.
 */
function addPageMarkers(chapter) {
  const segments = chapter.segments;
  for (const [page, start, label] of chapter.pages || []) {
    const at = chapter.toUnits(start);
    const i = segments.findIndex((seg) => seg.end > at);
    if (i === -1) continue;
    const seg = segments[i];
    const marker = el("span", "page-marker", `p. ${label || page}`);
    marker.dataset.page = String(page);
    marker.title = label && label !== String(page)
      ? `Page ${label} (page ${page} of the PDF file) starts here`
      : `Page ${page} of the PDF starts here`;
    if (at > seg.start) {
      const rest = seg.node.splitText(at - seg.start);
      segments.splice(i, 1, { node: seg.node, start: seg.start, end: at },
        { node: rest, start: at, end: seg.end });
      rest.before(marker);
      continue;
    }
    // a page that starts with a heading or paragraph is marked above it
    const block = seg.node.parentElement.closest("h1, h2, h3, h4, h5, h6, p, pre, blockquote, .md-table");
    if (block && segments.find((s) => block.contains(s.node)) === seg) {
      marker.classList.add("between");
      block.before(marker);
    } else {
      seg.node.before(marker);
    }
  }
}

/** Highlight chapter text [start, end) (UTF-16 offsets); returns the highlighted text. */
function highlight(start, end, label) {
  const chapter = state.chapter;
  render(chapter); // a fresh DOM: drops earlier highlights and keeps segments valid
  const marks = [];
  for (const seg of chapter.segments) {
    if (seg.end <= start || seg.start >= end) continue;
    let node = seg.node;
    const a = Math.max(start, seg.start) - seg.start;
    const b = Math.min(end, seg.end) - seg.start;
    if (b < node.data.length) node.splitText(b);
    if (a > 0) node = node.splitText(a);
    const mark = document.createElement("mark");
    mark.className = "cite-highlight";
    node.replaceWith(mark);
    mark.appendChild(node);
    marks.push(mark);
  }
  if (!marks.length) return "";
  marks[0].id = "cited-passage";
  marks[0].tabIndex = -1;
  marks[0].setAttribute("aria-label", label);
  closePanes();
  marks[0].scrollIntoView({ block: "center" });
  marks[0].focus({ preventScroll: true });
  return marks.map((m) => m.textContent).join("");
}

// --- selection ---------------------------------------------------------------------------------

/** What separates two blocks in a selection's text: cells of a row " | ", rows a line break. */
function blockGap(before, after) {
  const cell = "th, td";
  if (!before || !after || !before.matches(cell) || !after.matches(cell)) return "\n\n";
  if (before.parentElement === after.parentElement) return " | ";
  return before.closest("table") === after.closest("table") ? "\n" : "\n\n";
}

/** Describe the current DOM selection inside the chapter, or return null. */
function readSelection() {
  const sel = window.getSelection();
  const chapter = state.chapter;
  if (!chapter || !sel || sel.rangeCount === 0 || sel.isCollapsed) return null;
  const range = sel.getRangeAt(0);
  const body = $("chapter-body");
  if (!body.contains(range.commonAncestorContainer)) return null;
  let text = "";
  const pieces = []; // {at: offset in text, start: offset in chapter, length}
  let lastBlock = null;
  for (const seg of chapter.segments) {
    const node = seg.node;
    if (!node.isConnected || !range.intersectsNode(node)) continue;
    let a = 0;
    let b = node.data.length;
    if (node === range.startContainer) a = range.startOffset;
    if (node === range.endContainer) b = range.endOffset;
    if (a >= b) continue;
    const block = node.parentElement.closest("p, li, pre, h1, h2, h3, h4, h5, h6, blockquote, th, td");
    if (text && block !== lastBlock) text += blockGap(lastBlock, block);
    lastBlock = block;
    // drop invisible characters the server would drop, keeping offsets aligned
    const slice = node.data.slice(a, b);
    let from = 0;
    for (const m of slice.matchAll(INVISIBLE)) {
      if (m.index > from) {
        pieces.push({ at: text.length, start: seg.start + a + from, length: m.index - from });
        text += slice.slice(from, m.index);
      }
      from = m.index + m[0].length;
    }
    if (from < slice.length) {
      pieces.push({ at: text.length, start: seg.start + a + from, length: slice.length - from });
      text += slice.slice(from);
    }
  }
  if (!text.trim()) return null;
  const rect = range.getBoundingClientRect();
  return { source: chapter.source, title: chapter.title, text, pieces, rect };
}

/** Map [start, end) in a selection's text (code points) to chapter offsets (UTF-16). */
function selectionToChapter(sel, start, end) {
  const units = codePointIndex(sel.text);
  const s = units(start);
  const e = units(end);
  let from = null;
  let to = null;
  for (const p of sel.pieces) {
    if (from === null && s < p.at + p.length) from = p.start + Math.max(0, s - p.at);
    if (e > p.at) to = p.start + Math.min(p.length, e - p.at);
  }
  return from === null || to === null || to <= from ? null : { start: from, end: to };
}

function showSelectionPopup() {
  const popup = $("selection-popup");
  const sel = state.pendingSelection;
  if (!sel) { popup.hidden = true; return; }
  popup.hidden = false;
  const width = popup.offsetWidth;
  const left = Math.min(Math.max(8, sel.rect.left + sel.rect.width / 2 - width / 2),
    window.innerWidth - width - 8);
  const height = popup.offsetHeight;
  const below = sel.rect.bottom + 8;
  const above = sel.rect.top - height - 8;
  // under the selection, else above it, and always on screen (a long selection overflows both)
  const fits = (y) => y >= 8 && y + height <= window.innerHeight - 8;
  const top = fits(below) ? below : fits(above) ? above : window.innerHeight - height - 16;
  popup.style.left = `${left}px`;
  popup.style.top = `${top}px`;
}

let selectionTimer = 0;
function onSelectionChange() {
  clearTimeout(selectionTimer);
  selectionTimer = setTimeout(() => {
    state.pendingSelection = readSelection();
    $("ask-selection").disabled = !state.pendingSelection && !state.selection;
    showSelectionPopup();
  }, 120);
}

function pinSelection(sel) {
  state.selection = sel;
  const box = $("selection-box");
  if (sel) {
    const preview = sel.text.length > 140 ? `${sel.text.slice(0, 140).trimEnd()}…` : sel.text;
    $("selection-preview").textContent = preview;
    $("scope-name").textContent = `your selection from ${sel.title} (${sel.text.length} characters)`;
    $("question").placeholder = "Ask about the selected passage…";
  } else {
    $("scope-name").textContent = "the whole textbook";
    $("question").placeholder = state.info.question_placeholder;
  }
  box.hidden = !sel;
  $("scope-line").classList.toggle("limited", Boolean(sel));
  $("ask-selection").disabled = !state.pendingSelection && !sel;
}

/** "Ask about this selection": limit questions to it; ask now if a question is typed. */
function askAboutSelection() {
  const sel = state.pendingSelection || state.selection;
  if (!sel) return;
  pinSelection(sel);
  state.pendingSelection = null;
  $("selection-popup").hidden = true;
  openPane("chat");
  const q = $("question");
  if (q.value.trim()) ask(q.value.trim());
  else q.focus();
}

// --- the conversation --------------------------------------------------------------------------

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function addUserMessage(question, selection) {
  const box = el("div", "message user");
  box.appendChild(el("p", "message-text", question));
  if (selection) box.appendChild(el("p", "message-tag", `About your selection from ${selection.title}`));
  $("messages").appendChild(box);
  return box;
}

/** Show, under the student's question, the standalone question that was answered instead. */
function showUnderstoodAs(userBox, standalone) {
  const p = el("p", "understood-as");
  p.appendChild(el("span", "understood-label", "Understood as: "));
  p.appendChild(el("q", "", standalone));
  p.title = "Your question depends on the conversation; this standalone form is what the textbook was searched for.";
  userBox.appendChild(p);
}

function newAssistantMessage() {
  state.messageCount += 1;
  const box = el("div", "message assistant pending");
  box.dataset.message = String(state.messageCount);
  box.setAttribute("aria-busy", "true");
  const progress = el("ol", "progress");
  progress.setAttribute("aria-label", "Progress");
  box.appendChild(progress);
  $("messages").appendChild(box);
  box.scrollIntoView({ block: "end" });
  return box;
}

function addProgress(box, node) {
  const list = box.querySelector(".progress");
  const label = node.startsWith("refuse_") ? "Declining to answer" : (STEP_LABELS[node] || node);
  for (const li of list.querySelectorAll("li.current")) li.classList.remove("current");
  const li = el("li", "current", label);
  li.dataset.node = node;
  list.appendChild(li);
}

// A citation marker as release_answer writes it: after a space (or another marker) and before a
// space, another marker or the end; so `e[3]` or `x[1])` in quoted code is never taken for one.
const CITE_MARKER = /(?:\s+|(?<=\]))\[(\d+)\](?=\s|\[|$)/g;
// a word of prose: letters with light punctuation; not `-i`, `HEAD~5`, `$2`, `1:2`, `temp_lo`
const PROSE_WORD = /^[("'“‘]?\p{L}[\p{L}'’-]*[)"'”’]?[,;:.!?]*[)"'”’]?$/u;
const SHOUTED = /^\P{Ll}*\p{Lu}\P{Ll}*\p{Lu}\P{Ll}*$/u; // SELECT, FROM: keywords, not prose

/** Whether a line of a quoted block reads as a sentence rather than as code. */
function readsAsProse(line) {
  const words = line.trim().split(/\s+/);
  if (words.length < 3 || /[;{}\\]$/.test(line.trim())) return false;
  const prose = words.filter((w) => PROSE_WORD.test(w) && !SHOUTED.test(w)).length;
  return prose >= 0.75 * words.length;
}

/**
 * Split the sentence that quotes a code block into {lead, code, tail}. The first line is the
 * sentence that introduces the code ("..., use:"); the lines after it are the code, verbatim;
 * a last line that opens in lower case and reads as a sentence ("which plots ...") is prose
 * going on after the code. A block may come without either, so a first line that does not read
 * as a sentence (capitalised) and a last line that does not read as one stay code: shown
 * verbatim either way.
 */
function codeSentence(text) {
  const lines = text.split("\n");
  const lead = /^[("'“‘]?\p{Lu}/u.test(lines[0]) && readsAsProse(lines[0]) ? lines.shift() : "";
  const last = lines[lines.length - 1];
  const tail = lines.length > 1 && /^\p{Ll}/u.test(last) && readsAsProse(last)
    && (/[.!?]["')”’]?$/.test(last.trim()) || last.trim().split(/\s+/).length >= 6)
    ? lines.pop() : "";
  return { lead, code: lines.join("\n"), tail };
}

/**
 * Write answer text into parent, turning [n] markers into citation links. A cited sentence that
 * holds line breaks quotes a code block: its lead-in stays in the paragraph, its code goes into
 * a <pre><code> (text, verbatim) and its citation follows the block, or the prose line after it.
 * Other text is written as before: paragraphs split at blank lines, line breaks kept.
 */
function answerText(parent, text, box, response, selection) {
  const known = new Set(response.sources.map((s) => s.citation));
  let p = null; // the paragraph being written; the next text opens one
  let citeHolder = null; // where the last citation went: a marker right after it joins it
  const para = () => {
    if (!p) p = parent.appendChild(el("p", "answer-text"));
    return p;
  };
  const plain = (str) => {
    str.split(/\n{2,}/).forEach((piece, i) => {
      if (i > 0) p = null;
      // spaces alone open no paragraph (a code block may be what comes next)
      if (p || piece.trim()) para().appendChild(document.createTextNode(piece));
    });
  };
  const cite = (n) => {
    const a = el("a", "cite", `[${n}]`);
    const source = response.sources.find((s) => s.citation === n);
    a.href = `#cite-${box.dataset.message}-${n}`;
    a.setAttribute("aria-label", `Citation ${n}: ${source.section || source.source}`);
    a.addEventListener("click", (ev) => { ev.preventDefault(); followCitation(source, selection, n); });
    return a;
  };
  let last = 0;
  for (const m of text.matchAll(CITE_MARKER)) {
    const n = Number(m[1]);
    if (!known.has(n)) continue;
    const sentence = text.slice(last, m.index);
    const body = sentence.replace(/^\s+/, "");
    if (citeHolder && !sentence) { // "[1][2]"
      citeHolder.append(document.createTextNode(" "), cite(n));
    } else if (!body.includes("\n")) {
      plain(sentence);
      citeHolder = para();
      citeHolder.append(document.createTextNode(" "), cite(n));
    } else {
      plain(sentence.slice(0, sentence.length - body.length)); // the space or blank line before
      const { lead, code, tail } = codeSentence(body);
      if (lead) para().appendChild(document.createTextNode(lead));
      const block = parent.appendChild(el("div", "answer-code"));
      const pre = block.appendChild(el("pre"));
      pre.tabIndex = 0; // wide code scrolls sideways: let the keyboard reach it
      pre.appendChild(el("code", "", code));
      p = null;
      citeHolder = tail ? para() : block;
      if (tail) p.appendChild(document.createTextNode(tail));
      citeHolder.append(document.createTextNode(" "), cite(n));
    }
    last = m.index + m[0].length;
  }
  plain(text.slice(last));
  if (!parent.querySelector(".answer-text, .answer-code")) para(); // an empty answer
}

function chapterTitle(source) {
  const ch = state.chapters.find((c) => c.source === source);
  return ch ? ch.title : source;
}

async function followCitation(source, selection, n) {
  const label = `Cited passage [${n}]`;
  if (source.source === "selection") {
    if (!selection) return;
    const range = selectionToChapter(selection, source.start, source.end);
    if (!range || !(await openChapter(selection.source, { focus: false }))) return;
    highlight(range.start, range.end, label);
    return;
  }
  if (source.start == null || source.end == null) {
    await openChapter(source.source);
    return;
  }
  if (!(await openChapter(source.source, { focus: false }))) return;
  const units = state.chapter.toUnits;
  // the quoted sentences when the answer quotes them, else the whole cited chunk
  const spans = (source.highlights || []).filter((h) => h[0] >= source.start && h[1] <= source.end);
  const from = spans.length ? Math.min(...spans.map((h) => h[0])) : source.start;
  const to = spans.length ? Math.max(...spans.map((h) => h[1])) : source.end;
  highlight(units(from), units(to), label);
}

function sourcesList(box, response, selection) {
  const list = el("ol", "sources");
  list.setAttribute("aria-label", "Sources");
  for (const s of response.sources) {
    const li = el("li");
    li.value = s.citation;
    const a = el("a", "source-link");
    a.href = `#source-${box.dataset.message}-${s.citation}`;
    const where = s.source === "selection"
      ? `Your selection${selection ? ` (${selection.title})` : ""}`
      : s.section || chapterTitle(s.source);
    // the page as the book prints it, else the PDF file's page (older answers carry only that)
    const page = s.page_label || s.page;
    a.textContent = where.replaceAll(" > ", " › ") + (page ? `, page ${page}` : "");
    a.addEventListener("click", (ev) => { ev.preventDefault(); followCitation(s, selection, s.citation); });
    li.appendChild(a);
    if (typeof s.score === "number") {
      const score = el("span", "score", ` similarity ${s.score.toFixed(2)}`);
      score.title = "Raw cosine similarity between the question and this passage";
      li.appendChild(score);
    }
    list.appendChild(li);
  }
  return list;
}

function dropSuggestionsLead(answer, suggestions) {
  const lead = state.info.suggestions_lead;
  if (!lead || !suggestions.length) return answer;
  const paras = answer.split(/\n{2,}/);
  if (paras.length > 1 && paras[paras.length - 1].startsWith(lead)) paras.pop();
  return paras.join("\n\n");
}

function showResponse(box, response, selection, elapsedMs) {
  box.classList.remove("pending");
  box.removeAttribute("aria-busy");
  const progress = box.querySelector(".progress");
  const steps = progress.children.length;
  for (const li of progress.querySelectorAll("li.current")) li.classList.remove("current");
  const details = el("details", "checks");
  const took = elapsedMs < 1000 ? `${Math.round(elapsedMs)} ms` : `${(elapsedMs / 1000).toFixed(1)} s`;
  const summary = el("summary", "", `How this was checked (${steps} step${steps === 1 ? "" : "s"}, ${took})`);
  details.appendChild(summary);
  progress.replaceWith(details);
  details.appendChild(progress);
  showContract(box, response, selection);
  // a long answer is read from its start; a short one just comes into view
  box.scrollIntoView({ block: box.offsetHeight > $("messages").clientHeight ? "start" : "end" });
}

/** Write an answer or a refusal (the response contract, or a restored turn) into its box. */
function showContract(box, response, selection) {
  if (response.was_refusal) {
    box.classList.add("refusal");
    const reason = response.refusal_reason || "";
    const head = el("p", "refusal-reason");
    head.appendChild(el("strong", "", "Not answered: "));
    const label = (state.info.refusal_reasons || {})[reason] || reason.replaceAll("_", " ");
    head.appendChild(document.createTextNode(label));
    box.appendChild(head);
    const message = el("div", "refusal-message");
    for (const para of dropSuggestionsLead(response.answer, response.suggestions).split(/\n{2,}/)) {
      message.appendChild(el("p", "", para));
    }
    box.appendChild(message);
    box.appendChild(el("p", "reason-code", `Reason code: ${reason}`));
    if (response.suggestions.length) {
      box.appendChild(el("p", "suggestions-lead", "You could ask instead:"));
      const list = el("ul", "suggestions");
      for (const question of response.suggestions) {  // ready-to-send questions
        const li = el("li");
        const b = el("button", "suggestion", question);
        b.type = "button";
        b.addEventListener("click", () => { pinSelection(null); ask(question); });
        li.appendChild(b);
        list.appendChild(li);
      }
      box.appendChild(list);
    }
  } else {
    box.classList.add("answer");
    if (selection) {
      box.appendChild(el("p", "selection-notice",
        `This answer is limited to your selected passage from ${selection.title}.`));
    }
    answerText(box, response.answer, box, response, selection);
    const level = response.confidence_level;
    if (response.sources.length && level) { // a restored turn keeps no confidence
      const badge = el("p", `confidence confidence-${level}`);
      badge.appendChild(el("span", "confidence-label", "Confidence: "));
      badge.appendChild(el("strong", "", level));
      badge.title = CONFIDENCE_HELP[level] || "";
      box.appendChild(badge);
    }
    if (response.sources.length) box.appendChild(sourcesList(box, response, selection));
  }
  box.dataset.refusal = String(Boolean(response.was_refusal));
  if (response.run_id) {
    box.dataset.runId = response.run_id;
    box.appendChild(feedbackForm(response.run_id, response.was_refusal));
  }
}

function showError(box, message) {
  box.classList.remove("pending");
  box.removeAttribute("aria-busy");
  box.classList.add("error");
  box.appendChild(el("p", "error-text", message));
}

/** Parse a server-sent-events body; calls onEvent(event, data) for each event. */
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let cut;
    while ((cut = buffer.search(/\r?\n\r?\n/)) !== -1) {
      const raw = buffer.slice(0, cut);
      buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
      let event = "message";
      const data = [];
      for (const line of raw.split(/\r?\n/)) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      onEvent(event, data.join("\n"));
    }
    if (done) return;
  }
}

function isContract(x) {
  return x && typeof x === "object" && "answer" in x && "was_refusal" in x;
}

async function streamAnswer(request, box) {
  const response = await fetch(`${BASE}/chat/stream`, {
    method: "POST",
    headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
    body: JSON.stringify(request),
  });
  if (!response.ok) throw new HttpError(response.status, await errorDetail(response));
  let final = null;
  let failure = null;
  await readEvents(response, (event, data) => {
    if (event === "data") {
      const chunk = JSON.parse(data);
      if (chunk && chunk.progress) addProgress(box, chunk.progress.node);
      else if (isContract(chunk)) final = chunk;
    } else if (event === "error") {
      try { failure = JSON.parse(data).message; } catch { failure = data; }
    }
  });
  if (failure) throw new HttpError(500, failure);
  if (!final) throw new HttpError(0, "the stream ended without an answer");
  return final;
}

async function invokeAnswer(request) {
  const response = await fetch(`${BASE}/chat/invoke`, {
    method: "POST",
    headers: headers({ "Content-Type": "application/json" }),
    body: JSON.stringify(request),
  });
  if (!response.ok) throw new HttpError(response.status, await errorDetail(response));
  return (await response.json()).output;
}

function setBusy(busy) {
  state.busy = busy;
  $("send").disabled = busy;
  $("new-conversation").disabled = busy;
}

async function ask(question) {
  if (state.busy || !question) return;
  setBusy(true);
  await state.restored; // the earlier turns come first
  const selection = state.selection;
  const request = {
    input: { question, selected_text: selection ? selection.text : null, session_id: state.sessionId },
    config: { configurable: { thread_id: state.threadId } },
  };
  const userBox = addUserMessage(question, selection);
  $("question").value = "";
  // "continuing..." or "new..." has been read by now; "keeps no conversations" still holds
  if (state.keepsThreads) $("conversation-status").textContent = "";
  const box = newAssistantMessage();
  const t0 = performance.now();
  try {
    let response;
    try {
      response = await streamAnswer(request, box);
    } catch (err) {
      // no streaming route (or a proxy that buffers it away): ask once, without progress
      if (![404, 405, 0].includes(err.status)) throw err;
      response = await invokeAnswer(request);
    }
    const conversation = (response.diagnostics || {}).conversation;
    if (conversation && conversation.rewritten && conversation.standalone) {
      showUnderstoodAs(userBox, conversation.standalone);
    }
    showResponse(box, response, selection, performance.now() - t0);
  } catch (err) {
    if (err.status === 401) {
      showError(box, "The server needs an API key. Enter it below, then ask again.");
      $("question").value = question;
      needKey(null);
    } else {
      showError(box, `Something went wrong, so there is no answer: ${err.message}`);
    }
  } finally {
    setBusy(false);
  }
}

// --- this tab's conversation --------------------------------------------------------------------

/** Show one turn of the thread's history (textbound's Turn) as the page showed it then. */
function showTurn(turn) {
  const userBox = addUserMessage(turn.question);
  if (turn.standalone && turn.standalone !== turn.question) showUnderstoodAs(userBox, turn.standalone);
  state.messageCount += 1;
  const box = el("div", "message assistant restored");
  box.dataset.message = String(state.messageCount);
  $("messages").appendChild(box);
  showContract(box, {
    answer: turn.answer || "",
    was_refusal: Boolean(turn.was_refusal),
    refusal_reason: turn.refusal_reason,
    // a turn keeps each cited passage in citation order, without its offsets or score
    sources: (turn.sources || []).map((s, i) => ({ ...s, citation: s.citation ?? i + 1 })),
    suggestions: [],
    run_id: turn.run_id,
  }, null);
}

/** Bring back the turns of this tab's thread (after a reload); a server without threads has none. */
async function restoreConversation() {
  const id = state.threadId;
  let data;
  try {
    data = await getJSON(`${BASE}/threads/${encodeURIComponent(id)}`);
  } catch (err) {
    if (err.status === 401) return; // loadInfo already asked for the key; start() runs again
    $("conversation-status").textContent = err.status === 404
      // TEXTBOUND_CHECKPOINTER=off (or a server from before conversations)
      ? "This server keeps no conversations: each question is answered on its own."
      : `The earlier questions of this conversation could not be shown: ${err.message}`;
    if (err.status === 404) {
      state.keepsThreads = false;
      $("new-conversation").hidden = true;
    }
    return;
  }
  if (id !== state.threadId || $("messages").children.length) return; // started over meanwhile
  const turns = data.turns || [];
  const log = $("messages");
  log.setAttribute("aria-busy", "true"); // announced once, not turn by turn
  for (const turn of turns) showTurn(turn);
  log.removeAttribute("aria-busy");
  if (turns.length) {
    $("conversation-status").textContent = `Continuing this tab's conversation (${turns.length} earlier question${turns.length === 1 ? "" : "s"}).`;
    $("messages").lastElementChild.scrollIntoView({ block: "end" });
  }
}

/** Start a fresh thread; the old one stays on the server, but no later question refers to it. */
function newConversation() {
  if (state.busy) return;
  state.threadId = newThreadId();
  sessionStorage.setItem(THREAD_KEY, state.threadId);
  state.restored = Promise.resolve();
  $("messages").replaceChildren();
  $("conversation-status").textContent = "New conversation: follow-up questions no longer refer to the earlier ones.";
  $("question").focus();
}

// --- rating an answer or a refusal --------------------------------------------------------------

const RATINGS = [
  { rating: "up", text: "Yes" },
  { rating: "down", text: "No" },
];

/** A thumb drawn in SVG (system fonts may have no emoji); thumbs down is it turned over. */
function thumbIcon(rating) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("class", `rate-icon thumb-${rating}`);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", "M3 10h4v11H3zM7 10l4-8a2.5 2.5 0 0 1 3 3l-1 4h6a2 2 0 0 1 2 2.3l-1.4 7A2 2 0 0 1 17.6 21H7");
  svg.appendChild(path);
  return svg;
}

async function sendFeedback(runId, rating, comment) {
  const response = await fetch(`${BASE}/feedback`, {
    method: "POST",
    headers: headers({ "Content-Type": "application/json" }),
    body: JSON.stringify({ run_id: runId, rating, comment: comment || null }),
  });
  if (!response.ok) throw new HttpError(response.status, await errorDetail(response));
}

/**
 * Thumbs up or down, recorded at once (`POST /feedback` naming the response's run id); then an
 * optional comment, sent with the same rating. The server keeps the latest rating of a run, so
 * changing one's mind or adding a comment replaces the earlier rating. The status line says it
 * was recorded, or why not, in one line.
 */
function feedbackForm(runId, wasRefusal) {
  const n = state.messageCount;
  const what = wasRefusal ? "this refusal" : "this answer";
  const form = el("form", "feedback");
  const row = el("div", "feedback-row");
  row.setAttribute("role", "group");
  row.setAttribute("aria-labelledby", `feedback-q-${n}`);
  const prompt = el("span", "feedback-question", wasRefusal ? "Was it right not to answer?" : "Was this answer right?");
  prompt.id = `feedback-q-${n}`;
  row.appendChild(prompt);
  const buttons = RATINGS.map(({ rating, text }) => {
    const b = el("button", `rate rate-${rating}`);
    b.type = "button";
    b.dataset.rating = rating;
    b.setAttribute("aria-pressed", "false");
    b.append(thumbIcon(rating), el("span", "rate-text", text));
    row.appendChild(b);
    return b;
  });
  form.appendChild(row);

  const more = el("div", "feedback-comment");
  more.hidden = true;
  const label = el("label", "label", "Comment for your teacher (optional)");
  label.htmlFor = `feedback-comment-${n}`;
  const comment = el("textarea");
  comment.id = `feedback-comment-${n}`;
  comment.rows = 2;
  comment.maxLength = 1000; // the most the server keeps
  const send = el("button", "feedback-send", "Send comment");
  send.type = "submit";
  more.append(label, comment, send);
  form.appendChild(more);
  const status = el("p", "feedback-status");
  status.setAttribute("role", "status");
  form.appendChild(status);

  let chosen = null;
  const record = async (rating, withComment) => {
    status.classList.remove("feedback-error");
    status.textContent = "Sending…";
    send.disabled = true;
    try {
      await sendFeedback(runId, rating, withComment ? comment.value.trim() : "");
      chosen = rating;
      for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.rating === rating));
      more.hidden = false;
      const verdict = rating === "up" ? "right" : "wrong";
      status.textContent = withComment && comment.value.trim()
        ? `Recorded: ${what} rated ${verdict}, with your comment. Thank you.`
        : `Recorded: ${what} rated ${verdict}. Thank you.`;
    } catch (err) {
      status.classList.add("feedback-error");
      status.textContent = err.status === 401
        ? "Not recorded: the server needs an API key. Enter it below, then rate again."
        : `Not recorded: ${err.message}`;
      if (err.status === 401) needKey(null);
    } finally {
      send.disabled = false;
    }
  };
  for (const b of buttons) {
    // a comment already typed goes with a changed rating
    b.addEventListener("click", () => record(b.dataset.rating, true));
  }
  comment.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); form.requestSubmit(); }
  });
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (chosen) record(chosen, true);
  });
  return form;
}

// --- adding a document (the teacher, with the API key) -----------------------------------------

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

async function uploadDocument() {
  const file = $("upload-file").files[0];
  if (!file) return;
  const key = $("upload-key").value.trim();
  if (key) {
    state.apiKey = key;
    sessionStorage.setItem(API_KEY, key);
  }
  const status = $("upload-status");
  const say = (text, error = false) => {
    status.textContent = text;
    status.classList.toggle("upload-status-error", error);
  };
  $("upload-send").disabled = true;
  say(`Sending ${file.name}…`);
  try {
    const response = await fetch(`${BASE}/api/documents/${encodeURIComponent(file.name)}`, {
      method: "PUT",
      headers: headers({ "Content-Type": file.type || "application/octet-stream" }),
      body: file,
    });
    if (!response.ok) throw new HttpError(response.status, await errorDetail(response));
    let job = await response.json();
    while (job.status === "queued" || job.status === "running") {
      say(job.total
        ? `Adding ${file.name}: ${job.done} of ${job.total} passages embedded…`
        : `Reading ${file.name}…`);
      await sleep(500);
      job = await getJSON(job.status_url);
    }
    if (job.status !== "done") {
      say(`${file.name} was not added: ${job.reason || job.error}`, true);
      return;
    }
    const s = job.summary;
    say(`Added ${file.name}: ${s.chunks_added} passages added, ${s.chunks_unchanged} unchanged, ${s.chunks_removed} removed.`);
    $("upload-file").value = "";
    await loadInfo();
    await loadChapters();
  } catch (err) {
    say(err.status === 401
      ? "The API key is missing or wrong: enter the server's key and try again."
      : `${file.name} was not added: ${err.message}`, true);
  } finally {
    $("upload-send").disabled = false;
  }
}

// --- panes on narrow screens ----------------------------------------------------------------

function openPane(name) {
  $("selection-popup").hidden = true;
  const other = name === "chat" ? "toc" : "chat";
  document.body.classList.remove(`show-${other}`);
  document.body.classList.add(`show-${name}`);
  $(`${name}-toggle`).setAttribute("aria-expanded", "true");
  $(`${other}-toggle`).setAttribute("aria-expanded", "false");
}

function closePanes() {
  document.body.classList.remove("show-chat", "show-toc");
  $("chat-toggle").setAttribute("aria-expanded", "false");
  $("toc-toggle").setAttribute("aria-expanded", "false");
}

function togglePane(name) {
  if (document.body.classList.contains(`show-${name}`)) {
    closePanes();
    $(`${name}-toggle`).focus();
  } else {
    openPane(name);
    (name === "chat" ? $("question") : $("chapter-list").querySelector("a") || $("toc")).focus();
  }
}

// --- wiring ------------------------------------------------------------------------------------

function wire() {
  // overlays on narrow screens start below the top bar, whose height depends on the title
  const fitTopbar = () => document.documentElement.style.setProperty(
    "--topbar-height", `${document.querySelector(".topbar").offsetHeight}px`);
  window.addEventListener("resize", fitTopbar);
  new ResizeObserver(fitTopbar).observe(document.querySelector(".topbar"));
  $("ask-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    ask($("question").value.trim());
  });
  $("question").addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      ask($("question").value.trim());
    }
  });
  $("ask-selection").addEventListener("click", askAboutSelection);
  const popup = $("selection-popup");
  popup.addEventListener("mousedown", (ev) => ev.preventDefault()); // keep the selection
  popup.addEventListener("click", askAboutSelection);
  $("clear-selection").addEventListener("click", () => { pinSelection(null); $("question").focus(); });
  document.addEventListener("selectionchange", onSelectionChange);
  $("reading").addEventListener("scroll", () => { $("selection-popup").hidden = true; }, { passive: true });
  $("reading").addEventListener("click", () => {
    if (document.body.classList.contains("show-toc")) closePanes();
  });

  $("chapter-list").addEventListener("click", (ev) => {
    const a = ev.target.closest("a");
    if (!a) return;
    if (a.dataset.source) {
      ev.preventDefault();
      closePanes();
      openChapter(a.dataset.source);
    } else if (a.dataset.heading) {
      ev.preventDefault();
      closePanes();
      const h = document.getElementById(a.dataset.heading);
      if (h) { h.scrollIntoView({ block: "start" }); h.focus({ preventScroll: true }); }
    }
  });
  $("toc-toggle").addEventListener("click", () => togglePane("toc"));
  $("chat-toggle").addEventListener("click", () => togglePane("chat"));
  $("chat-close").addEventListener("click", () => { closePanes(); $("chat-toggle").focus(); });
  $("new-conversation").addEventListener("click", newConversation);
  document.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape") return;
    if (!$("selection-popup").hidden) { $("selection-popup").hidden = true; return; }
    for (const name of ["chat", "toc"]) {
      if (document.body.classList.contains(`show-${name}`)) {
        closePanes();
        $(`${name}-toggle`).focus();
      }
    }
  });
  $("upload-key").value = state.apiKey;
  $("upload-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    uploadDocument();
  });
  $("key-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    state.apiKey = $("api-key").value.trim();
    sessionStorage.setItem(API_KEY, state.apiKey);
    $("key-form").hidden = true;
    const retry = state.retry;
    state.retry = null;
    if (retry) retry(); else $("question").focus();
  });
  // the skip link lands in the chat panel, which is hidden behind "Ask" on narrow screens
  document.querySelector(".skip-link").addEventListener("click", (ev) => {
    ev.preventDefault();
    openPane("chat");
    $("question").focus();
  });
}

async function start() {
  // a question asked meanwhile waits for this, so the earlier turns are shown above it
  state.restored = (async () => {
    await loadInfo();
    await loadChapters();
    await restoreConversation();
  })();
  await state.restored;
}

wire();
start();
