import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardAssets } from "../src/server/dashboard-assets.js";

let scratch: string;
let built: string;
let app: Hono;

/** A build as Vite lays it out: index.html naming hashed files under assets/. */
function fakeBuild(dir: string): string {
  mkdirSync(join(dir, "assets"), { recursive: true });
  writeFileSync(
    join(dir, "index.html"),
    '<!doctype html><script type="module" src="/assets/index-Ab12Cd34.js"></script><link rel="stylesheet" href="/assets/index-Ef56Gh78.css"><div id="root"></div>',
  );
  writeFileSync(
    join(dir, "assets", "index-Ab12Cd34.js"),
    `console.log(${JSON.stringify("x".repeat(2000))});`,
  );
  writeFileSync(join(dir, "assets", "index-Ef56Gh78.css"), "body { margin: 0 }");
  return dir;
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "spool-dashboard-assets-"));
  built = fakeBuild(join(scratch, "web"));
  app = new Hono();
  app.get("/v1/ping", (c) => c.json({ ok: true }));
  app.on(["GET", "HEAD"], "*", dashboardAssets({ dir: built }));
  app.notFound((c) => c.json({ error: { code: "route.not-found", message: "no route" } }, 404));
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the dashboard's files", () => {
  it("serves index.html at / and at every client route, revalidated on each load", async () => {
    for (const path of ["/", "/c/main", "/c/main/threads", "/c/a%20b/context/t1:0"]) {
      const response = await app.request(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      expect(await response.text()).toContain('<div id="root"></div>');
    }
  });

  it("serves the hashed bundle with its content type, cached as immutable", async () => {
    const html = await (await app.request("/")).text();
    const script = html.match(/src="(\/assets\/[^"]+\.js)"/)?.[1];
    const style = html.match(/href="(\/assets\/[^"]+\.css)"/)?.[1];
    expect(script).toBeDefined();
    expect(style).toBeDefined();
    const js = await app.request(script!);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await app.request(style!);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    const head = await app.request(script!, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("leaves the API's routes to the API, an unknown one included", async () => {
    expect(await (await app.request("/v1/ping")).json()).toEqual({ ok: true });
    for (const path of ["/api/nothing-here", "/v1/nothing", "/healthz"]) {
      const response = await app.request(path);
      expect(response.status, path).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        "route.not-found",
      );
    }
  });

  it("answers a missing asset, or a path out of the build, with a JSON 404", async () => {
    for (const path of [
      "/assets/missing-123.js",
      "/%2e%2e/%2e%2e/package.json",
      "/..%2fsecret.txt",
    ]) {
      const response = await app.request(path);
      expect(response.status, path).toBe(404);
      const body = (await response.json()) as { error: { code: string } };
      expect(body.error.code).toBe("http.not-found");
    }
  });

  it("says to build the dashboard when it was never built", async () => {
    const empty = join(scratch, "empty");
    mkdirSync(empty);
    writeFileSync(join(empty, "robots.txt"), "User-agent: *\n");
    const bare = new Hono();
    bare.get("*", dashboardAssets({ dir: empty }));
    expect((await bare.request("/robots.txt")).status).toBe(200);
    const response = await bare.request("/c/main");
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("dashboard.not-built");
    expect(body.error.message).toContain("npm run build");
  });
});
