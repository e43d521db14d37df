// Text rendering: a tiny, safe Markdown subset (paragraphs, lists, headings, code, **bold**, `code`)

import { el } from "./dom.js";

export function inline(text) {
  const out = [];
  const re = /(`[^`\n]+`|\*\*[^*\n]+\*\*)/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const token = m[0];
    out.push(token.startsWith("`") ? el("code", { text: token.slice(1, -1) }) : el("strong", { text: token.slice(2, -2) }));
    last = m.index + token.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

export function renderMarkdown(target, source) {
  const nodes = [];
  const lines = source.split("\n");
  let para = [];
  let list = null;
  const flushPara = () => {
    if (para.length) nodes.push(el("p", {}, ...para.flatMap((l, i) => (i ? [el("br"), ...inline(l)] : inline(l)))));
    para = [];
  };
  const flushList = () => { if (list) nodes.push(list); list = null; };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      flushPara(); flushList();
      const body = [];
      while (++i < lines.length && !lines[i].startsWith("```")) body.push(lines[i]);
      nodes.push(el("pre", { class: "code" }, el("code", { text: body.join("\n") })));
      continue;
    }
    const bullet = line.match(/^\s*(?:[-*•]|(\d+)[.)])\s+(.*)$/);
    const heading = line.match(/^(#{1,4})\s+(.*)$/);
    if (bullet) {
      flushPara();
      const tag = bullet[1] ? "ol" : "ul";
      if (!list || list.tagName.toLowerCase() !== tag) { flushList(); list = el(tag); }
      list.append(el("li", {}, ...inline(bullet[2])));
    } else if (heading) {
      flushPara(); flushList();
      nodes.push(el(`h${Math.min(6, heading[1].length + 3)}`, {}, ...inline(heading[2])));
    } else if (line.trim() === "") {
      flushPara(); flushList();
    } else {
      flushList();
      para.push(line);
    }
  }
  flushPara(); flushList();
  target.replaceChildren(...nodes);
}
