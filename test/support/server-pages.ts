/**
 * The browser test pages of `test/support/web/` (the AI SDK's `useChat` page, the native
 * `EventSource` page), bundled with esbuild's build API into a test's own folder as a static
 * site the Spool server serves in place of the dashboard (`/chat.html`, `/events.html`), so the
 * pages and the API share one origin.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const WEB = fileURLToPath(new URL("./web/", import.meta.url));

const html = (script: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${script}</title></head>` +
  `<body>${body}<script type="module" src="/${script}.js"></script></body></html>\n`;

/** Builds the pages into `scratch/pages` and returns that folder. */
export async function buildServerPages(scratch: string): Promise<string> {
  const outdir = join(scratch, "pages");
  mkdirSync(outdir, { recursive: true });
  const { build } = await import("esbuild");
  await build({
    entryPoints: [join(WEB, "chat-page.tsx"), join(WEB, "events-page.ts")],
    outdir,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "error",
  });
  writeFileSync(join(outdir, "chat.html"), html("chat-page", '<div id="root"></div>'));
  writeFileSync(join(outdir, "events.html"), html("events-page", '<p id="seen"></p>'));
  // The server answers index.html for any path without an extension.
  writeFileSync(join(outdir, "index.html"), html("events-page", '<p id="seen"></p>'));
  return outdir;
}
