/** Small helpers the browser test apps share: a page shell, form bodies, cookies. */
import type { IncomingMessage, ServerResponse } from "node:http";

/** A whole HTML document with `title` and `body`. */
export function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;
}

/** Sends `html` with `status`. */
export function send(
  res: ServerResponse,
  html: string,
  status = 200,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers });
  res.end(html);
}

/** Redirects to `location` (303, so a form POST becomes a GET). */
export function redirect(
  res: ServerResponse,
  location: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(303, { location, ...headers });
  res.end();
}

/** The request body (a form or JSON), parsed. */
export async function body(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if ((req.headers["content-type"] ?? "").includes("json")) return JSON.parse(text || "{}");
  return Object.fromEntries(new URLSearchParams(text));
}

/** The request's cookies. */
export function cookies(req: IncomingMessage): Record<string, string> {
  return Object.fromEntries(
    (req.headers.cookie ?? "")
      .split(";")
      .map((part) => part.trim().split("="))
      .filter((pair) => pair.length === 2) as [string, string][],
  );
}

/** Escapes text for HTML. */
export function esc(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] as string,
  );
}
