import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { extname, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Context, MiddlewareHandler } from "hono";

/** Content types of the files a dashboard build holds. */
const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/** Hashed build output (`assets/index-<hash>.js`): its name changes whenever its bytes do. */
const IMMUTABLE = "public, max-age=31536000, immutable";
/** Everything else (index.html above all) is checked with the server on every load. */
const REVALIDATE = "no-cache";

/**
 * Where `npm run build` puts the dashboard: `dist/web/`, found from this file whether it runs
 * from `src/server/` (tsx) or from `dist/server/` (the installed package).
 */
export function defaultDashboardDir(): string {
  const candidates = [
    fileURLToPath(new URL("../web/", import.meta.url)),
    fileURLToPath(new URL("../../dist/web/", import.meta.url)),
  ];
  return candidates.find((dir) => existsSync(resolve(dir, "index.html"))) ?? candidates[1]!;
}

/** Options of `dashboardAssets`. */
export interface DashboardAssetsOptions {
  /** The built dashboard (`dist/web/`); `defaultDashboardDir()` when absent. */
  dir?: string;
  /** Paths left to the routes after it (the API's): default `/api`, `/v1` and `/healthz`. */
  passThrough?: readonly string[];
}

const API_PATHS = ["/api", "/v1", "/healthz"];

/**
 * Hono middleware for `GET`/`HEAD` that serves the built dashboard: a file of the build with its
 * content type (hashed `assets/` cached for a year as immutable, anything else revalidated), and
 * `index.html` for any other path without an extension (the dashboard's own routes, such as
 * `/c/main/threads`, so a reload or a shared link opens the right page). A missing asset is a JSON
 * 404; a path that climbs out of the build is a 404 too; a server whose dashboard was never built
 * answers 503 saying to run `npm run build`. The API's paths (`passThrough`) go on to the next
 * handler (the app's JSON not-found for an unknown API route), never to `index.html`.
 */
export function dashboardAssets(options: DashboardAssetsOptions = {}): MiddlewareHandler {
  const root = resolve(options.dir ?? defaultDashboardDir());
  const passThrough = options.passThrough ?? API_PATHS;
  return async (c, next) => {
    const raw = c.req.path;
    if (passThrough.some((prefix) => raw === prefix || raw.startsWith(`${prefix}/`))) {
      await next();
      return;
    }
    const path = decodePath(raw);
    if (path === undefined) return notFound(c, c.req.path);
    const file = resolve(root, `.${path}`);
    if (file !== root && !file.startsWith(root + sep)) return notFound(c, path);
    if (path !== "/" && (await isFile(file))) {
      const hashed = path.startsWith("/assets/");
      return send(c, file, hashed ? IMMUTABLE : REVALIDATE);
    }
    if (extname(path) !== "" && path !== "/") return notFound(c, path);
    const index = resolve(root, "index.html");
    if (!(await isFile(index))) {
      return c.json(
        {
          error: {
            code: "dashboard.not-built",
            message: `the dashboard is not built (no ${index}): run \`npm run build\``,
          },
        },
        503,
      );
    }
    return send(c, index, REVALIDATE);
  };
}

async function send(c: Context, file: string, cache: string): Promise<Response> {
  const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream";
  const headers = {
    "content-type": type,
    "cache-control": cache,
    "x-content-type-options": "nosniff",
  };
  if (c.req.method === "HEAD") return c.body(null, 200, headers);
  return c.body(new Uint8Array(await readFile(file)), 200, headers);
}

function notFound(c: Context, path: string): Response {
  return c.json(
    { error: { code: "http.not-found", message: `nothing at ${JSON.stringify(path)}` } },
    404,
  );
}

function decodePath(path: string): string | undefined {
  try {
    const decoded = decodeURIComponent(path);
    return decoded.includes("\0") ? undefined : decoded;
  } catch {
    return undefined;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
