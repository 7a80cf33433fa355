import DOMPurify from "dompurify";
import { marked } from "marked";
import { useMemo } from "react";

/**
 * Model output rendered as markdown (GitHub flavour, line breaks kept). The text is untrusted:
 * the HTML marked makes is sanitized by DOMPurify before it reaches the page, and links open in
 * a new tab without an opener.
 */
export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitized by DOMPurify just above
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}

/** Sanitized HTML of `text` as markdown. */
export function renderMarkdown(text: string): string {
  const raw = marked.parse(text, { async: false, gfm: true, breaks: true });
  return DOMPurify.sanitize(raw, { USE_PROFILES: { html: true } });
}

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});
