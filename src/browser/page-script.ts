/**
 * The script `browser.snapshot` runs in the page (a string, so no compiler helper ever reaches the
 * page). It marks every interactive element with `data-spool-ref="e<n>"` once (a mark kept for
 * the document's life, so a ref stays the same element across snapshots), numbering from
 * `start` or the document's own counter, whichever is higher, and returns an accessibility-tree
 * like outline: one line per heading, interactive element, alert, image and text run, indented by
 * its landmark and list nesting. The walk stops at `maxChars` characters or `maxNodes` nodes
 * (`truncated`), so a page of any size gives a bounded answer.
 *
 * Arguments: `{ start, maxChars, maxNodes, scopeRef?, scopeSelector? }`. Result:
 * `{ doc, next, lines, frames, truncated, missing }`; `missing` when the scope is not in the page.
 * Each visible iframe is one line, `iframe "<title>":`, marked `data-spool-frame="f<n>"`; `frames`
 * lists them (`{ mark, line, depth }`) for the caller to fill in with the frame's own snapshot.
 */
export const SNAPSHOT_SCRIPT = String.raw`(args) => {
  const w = window;
  if (!w.__spoolDoc) w.__spoolDoc = Math.random().toString(36).slice(2) + Date.now().toString(36);
  let next = Math.max(w.__spoolNext || 1, args.start);
  let root = document.body || document.documentElement;
  if (args.scopeRef) root = document.querySelector('[data-spool-ref="' + args.scopeRef + '"]');
  else if (args.scopeSelector) root = document.querySelector(args.scopeSelector);
  if (!root) return { doc: w.__spoolDoc, next, lines: [], frames: [], truncated: false, missing: true };
  const INTERACTIVE_ROLES = new Set(["button","link","checkbox","radio","tab","menuitem","option","switch","textbox","combobox","searchbox","slider","spinbutton","file"]);
  const GROUPS = new Set(["FORM","NAV","MAIN","HEADER","FOOTER","ASIDE","DIALOG","UL","OL","TABLE","FIELDSET","SECTION"]);
  const SKIP = new Set(["SCRIPT","STYLE","NOSCRIPT","TEMPLATE","SVG","HEAD","META","LINK"]);
  const clean = (text, max) => { const t = (text || "").replace(/\s+/g, " ").trim(); return t.length > max ? t.slice(0, max - 1) + "…" : t; };
  const quote = (text) => JSON.stringify(text);
  const lines = [];
  const frames = [];
  let chars = 0, nodes = 0, truncated = false;
  const push = (depth, line) => {
    const text = "  ".repeat(depth) + line;
    if (chars + text.length + 1 > args.maxChars) { truncated = true; return false; }
    lines.push(text); chars += text.length + 1; return true;
  };
  const visible = (el) => {
    if (el.getAttribute("aria-hidden") === "true" || el.hidden) return false;
    return typeof el.checkVisibility === "function" ? el.checkVisibility({ checkVisibilityCSS: true }) : true;
  };
  const roleOf = (el) => {
    const role = el.getAttribute("role");
    if (role) return role;
    const tag = el.tagName;
    if (tag === "A" && el.hasAttribute("href")) return "link";
    if (tag === "BUTTON" || tag === "SUMMARY") return "button";
    if (tag === "SELECT") return el.multiple ? "listbox" : "combobox";
    if (tag === "TEXTAREA") return "textbox";
    if (tag === "INPUT") {
      const type = (el.getAttribute("type") || "text").toLowerCase();
      if (type === "hidden") return undefined;
      if (["button","submit","reset","image"].includes(type)) return "button";
      if (type === "checkbox" || type === "radio" || type === "file") return type;
      if (type === "range") return "slider";
      if (type === "number") return "spinbutton";
      if (type === "search") return "searchbox";
      return "textbox";
    }
    if (el.isContentEditable && el.parentElement && !el.parentElement.isContentEditable) return "textbox";
    return undefined;
  };
  // The text a user reads: hidden parts (aria-hidden icons, scripts) left out, images by their alt.
  const textOf = (node) => {
    if (node.nodeType === 3) return node.textContent;
    if (node.nodeType !== 1) return "";
    if (SKIP.has(node.tagName.toUpperCase()) || node.hidden || node.getAttribute("aria-hidden") === "true") return "";
    if (node.tagName === "IMG") return " " + (node.getAttribute("alt") || "") + " ";
    let out = "";
    for (const child of node.childNodes) { out += textOf(child); if (out.length > 600) break; }
    return out;
  };
  const nameOf = (el) => {
    const label = el.getAttribute("aria-label");
    if (label) return clean(label, 120);
    const by = el.getAttribute("aria-labelledby");
    if (by) { const text = by.split(/\s+/).map((id) => document.getElementById(id)?.textContent || "").join(" "); if (clean(text, 120)) return clean(text, 120); }
    if (el.labels && el.labels.length > 0) return clean(Array.from(el.labels).map((l) => textOf(l)).join(" "), 120);
    if (el.tagName === "INPUT" && ["button","submit","reset"].includes(el.type)) return clean(el.value, 120);
    if (el.tagName === "IMG") return clean(el.getAttribute("alt"), 120);
    const text = el.tagName === "INPUT" || el.tagName === "SELECT" || el.tagName === "TEXTAREA" ? "" : clean(textOf(el), 120);
    return text || clean(el.getAttribute("placeholder") || el.getAttribute("title") || el.getAttribute("name"), 120);
  };
  const hiddenValue = (el) => el.type === "password" || el.hasAttribute("data-spool-secret");
  const describe = (el, role, ref) => {
    let line = role + " " + quote(nameOf(el)) + " [" + ref + "]";
    if (role === "link") line += " -> " + clean(el.getAttribute("href"), 200);
    if (role === "checkbox" || role === "radio" || role === "switch") line += el.checked || el.getAttribute("aria-checked") === "true" ? " checked" : " unchecked";
    if (el.tagName === "SELECT") {
      const chosen = Array.from(el.selectedOptions).map((o) => clean(o.textContent, 60));
      const options = Array.from(el.options).slice(0, 25).map((o) => clean(o.textContent, 60));
      line += " value=" + quote(chosen.join(", ")) + " options=" + quote(options.join(" | ") + (el.options.length > 25 ? " | …" : ""));
    } else if ((el.tagName === "INPUT" || el.tagName === "TEXTAREA") && role !== "button" && role !== "checkbox" && role !== "radio") {
      line += hiddenValue(el) ? (el.value ? " value=[hidden]" : " value=\"\"") : " value=" + quote(clean(el.value, 200));
      const hint = el.getAttribute("placeholder");
      if (hint) line += " placeholder=" + quote(clean(hint, 60));
    }
    if (el.disabled || el.getAttribute("aria-disabled") === "true") line += " disabled";
    if (el.required) line += " required";
    if (el.getAttribute("aria-invalid") === "true") line += " invalid";
    return line;
  };
  const refOf = (el) => {
    let ref = el.getAttribute("data-spool-ref");
    if (!ref) { ref = "e" + next; next += 1; el.setAttribute("data-spool-ref", ref); }
    return ref;
  };
  const walk = (node, depth) => {
    if (truncated) return;
    nodes += 1;
    if (nodes > args.maxNodes) { truncated = true; return; }
    if (node.nodeType === 3) {
      const text = clean(node.textContent, 300);
      if (text) push(depth, quote(text));
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node;
    if (SKIP.has(el.tagName.toUpperCase()) || !visible(el)) return;
    const role = roleOf(el);
    if (role && (INTERACTIVE_ROLES.has(role) || el.tagName === "SELECT")) { push(depth, describe(el, role, refOf(el))); return; }
    const heading = /^H([1-6])$/.exec(el.tagName);
    if (heading || role === "heading") { push(depth, "heading[" + (heading ? heading[1] : el.getAttribute("aria-level") || "2") + "] " + quote(clean(textOf(el), 200))); return; }
    if (role === "alert" || role === "status") { const text = clean(el.textContent, 300); if (text) push(depth, role + " " + quote(text)); return; }
    if (el.tagName === "IMG") { const alt = clean(el.getAttribute("alt"), 120); if (alt) push(depth, "img " + quote(alt)); return; }
    if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
      // A placeholder the caller fills with the frame's own snapshot (its document is not this one).
      let mark = el.getAttribute("data-spool-frame");
      if (!mark) { w.__spoolFrame = (w.__spoolFrame || 0) + 1; mark = "f" + w.__spoolFrame; el.setAttribute("data-spool-frame", mark); }
      const label = clean(el.getAttribute("title") || el.getAttribute("name") || el.getAttribute("src") || "", 80);
      if (push(depth, "iframe " + quote(label) + ":")) frames.push({ mark, line: lines.length - 1, depth: depth + 1 });
      return;
    }
    let inner = depth;
    if (GROUPS.has(el.tagName) || role === "dialog" || role === "navigation" || role === "form" || role === "list") {
      const label = el.getAttribute("aria-label");
      if (!push(depth, (role || el.tagName.toLowerCase()) + (label ? " " + quote(clean(label, 80)) : "") + ":")) return;
      inner = depth + 1;
    }
    for (const child of el.childNodes) { walk(child, inner); if (truncated) return; }
    if (el.shadowRoot) for (const child of el.shadowRoot.childNodes) { walk(child, inner); if (truncated) return; }
  };
  walk(root, 0);
  w.__spoolNext = next;
  return { doc: w.__spoolDoc, next, lines, frames, truncated, missing: false };
}`;

/** The script that reads the current document's identity (undefined before its first snapshot). */
export const DOCUMENT_ID_SCRIPT = "window.__spoolDoc";
