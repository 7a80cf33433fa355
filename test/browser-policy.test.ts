/**
 * The browser's rules without a browser: the manifest section's validation, which addresses count
 * as private, which URLs the agent may open, the policy proxy's answers (a refused host never
 * sees a connection; an allowed one is forwarded), the flags Chromium is started with, the page
 * event backlog's bound, and the snapshot diff.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkBrowserUrl,
  chromiumArgs,
  diffLines,
  isPrivateAddress,
  PAGE_EVENT_BACKLOG,
  PageEventHub,
  parseBrowserOptions,
  startPolicyProxy,
} from "../src/browser/index.js";
import { ConfigError } from "../src/spec/index.js";

describe("the browser section", () => {
  it("takes true, {} and false, and defaults every option", () => {
    expect(parseBrowserOptions(undefined)).toBeUndefined();
    expect(parseBrowserOptions(false)).toBeUndefined();
    expect(parseBrowserOptions(true)).toEqual(parseBrowserOptions({}));
    expect(parseBrowserOptions({})).toMatchObject({
      allowHosts: [],
      allowFile: false,
      headless: true,
      dialogs: "dismiss",
      secrets: [],
      events: true,
      screenshotsInContext: 1,
    });
    expect(parseBrowserOptions({ screenshots_in_context: 0 })!.screenshotsInContext).toBe(0);
    expect(parseBrowserOptions({ screenshots_in_context: 10 })!.screenshotsInContext).toBe(10);
  });

  it("takes screenshots_in_context as a whole number from 0 to 10", () => {
    for (const bad of [11, -1, 1.5, "2"]) {
      expect(() => parseBrowserOptions({ screenshots_in_context: bad })).toThrow(
        /browser\.screenshots_in_context: screenshots_in_context must be a whole number from 0 to 10, e\.g\. screenshots_in_context: 1/,
      );
    }
  });

  it("names every bad field and how to fix it", () => {
    let caught: unknown;
    try {
      parseBrowserOptions({ allow_hosts: ["http://x/"], headles: true, secrets: ["not a name"] });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const issues = (caught as ConfigError).details.issues as { path: string; message: string }[];
    expect(issues.map((issue) => issue.path)).toEqual(["browser.secrets.0", "browser"]);
    expect(issues[1]!.message).toContain('unknown field "headles"');
    expect(() => parseBrowserOptions({ allow_hosts: ["http://x/"] })).toThrow(
      /browser\.allow_hosts: browser\.allow_hosts has a malformed entry "http:\/\/x\/"/,
    );
  });
});

describe("the host policy", () => {
  it("counts loopback, private, link-local and mapped addresses as private", () => {
    for (const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.20.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "[::1]",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "example.com"]) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it("lets the agent open public hosts, listed private ones, and file: only when allowed", () => {
    const policy = {
      allowHosts: parseBrowserOptions({ allow_hosts: ["127.0.0.1:8080"] })!.allowHosts,
      allowFile: false,
    };
    expect(checkBrowserUrl(policy, "https://example.com/a").href).toBe("https://example.com/a");
    expect(checkBrowserUrl(policy, "http://127.0.0.1:8080/").host).toBe("127.0.0.1:8080");
    expect(checkBrowserUrl(policy, "about:blank").href).toBe("about:blank");
    for (const [url, code] of [
      ["http://127.0.0.1:8081/", "relic.browser.host-not-allowed"],
      ["http://localhost:8080/", "relic.browser.host-not-allowed"],
      ["http://app.localhost/", "relic.browser.host-not-allowed"],
      ["http://[::1]:8080/", "relic.browser.host-not-allowed"],
      ["http://169.254.169.254/latest/meta-data", "relic.browser.host-not-allowed"],
      ["file:///etc/passwd", "relic.browser.host-not-allowed"],
      ["javascript:alert(1)", "relic.browser.bad-url"],
      ["not a url", "relic.browser.bad-url"],
    ]) {
      expect(() => checkBrowserUrl(policy, url as string), url).toThrow(
        expect.objectContaining({ code }),
      );
    }
    expect(checkBrowserUrl({ ...policy, allowFile: true }, "file:///tmp/x.html").protocol).toBe(
      "file:",
    );
  });

  it("starts Chromium without the flags that weaken it, and proxies loopback", async () => {
    const args = await chromiumArgs("http://127.0.0.1:1");
    for (const dropped of [
      "--single-process",
      "--disable-web-security",
      "--allow-running-insecure-content",
      "--in-process-gpu",
    ]) {
      expect(args).not.toContain(dropped);
    }
    expect(args.some((arg) => arg.includes("site-per-process"))).toBe(false);
    expect(args).toEqual(
      expect.arrayContaining([
        "--no-sandbox",
        "--proxy-server=http://127.0.0.1:1",
        "--proxy-bypass-list=<-loopback>",
      ]),
    );
  });
});

describe("the policy proxy", () => {
  let allowed: Server;
  let refused: Server;
  let refusedHits = 0;
  const port = (server: Server) => (server.address() as AddressInfo).port;

  beforeAll(async () => {
    allowed = createServer((_req, res) => res.end("allowed answer"));
    refused = createServer((_req, res) => {
      refusedHits += 1;
      res.end("should never be seen");
    });
    await new Promise<void>((resolve) => allowed.listen(0, "127.0.0.1", resolve));
    await new Promise<void>((resolve) => refused.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => allowed.close(resolve));
    await new Promise((resolve) => refused.close(resolve));
  });

  const through = (proxyUrl: string, target: string) =>
    new Promise<{ status: number; refused?: string; body: string }>((resolve, reject) => {
      const proxy = new URL(proxyUrl);
      const req = request(
        {
          host: proxy.hostname,
          port: proxy.port,
          path: target,
          headers: { host: new URL(target).host },
        },
        (res) => {
          let body = "";
          res.on("data", (chunk) => {
            body += chunk;
          });
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              refused: res.headers["x-spool-refused"] as string | undefined,
              body,
            }),
          );
        },
      );
      req.on("error", reject);
      req.end();
    });

  it("forwards allowed hosts and refuses private ones, plain and tunnelled, before connecting", async () => {
    const refusals: string[] = [];
    const rules = parseBrowserOptions({ allow_hosts: [`127.0.0.1:${port(allowed)}`] })!.allowHosts;
    const proxy = await startPolicyProxy({ allowHosts: rules, allowFile: false }, (refusal) =>
      refusals.push(`${refusal.host}:${refusal.port}`),
    );
    try {
      expect(await through(proxy.url, `http://127.0.0.1:${port(allowed)}/x`)).toEqual({
        status: 200,
        body: "allowed answer",
      });
      const blocked = await through(proxy.url, `http://127.0.0.1:${port(refused)}/admin`);
      expect(blocked).toMatchObject({ status: 403, refused: "host-not-allowed" });
      const named = await through(proxy.url, `http://localhost:${port(refused)}/admin`);
      expect(named.status).toBe(403);
      const tunnel = await new Promise<string>((resolve) => {
        const socket = connect(Number(new URL(proxy.url).port), "127.0.0.1", () => {
          socket.write(
            `CONNECT 127.0.0.1:${port(refused)} HTTP/1.1\r\nhost: 127.0.0.1:${port(refused)}\r\n\r\n`,
          );
        });
        let answer = "";
        socket.on("data", (chunk) => {
          answer += chunk;
        });
        socket.on("close", () => resolve(answer));
      });
      expect(tunnel).toMatch(/^HTTP\/1\.1 403 Forbidden/);
      expect(refusedHits).toBe(0);
      expect(refusals).toEqual([
        `127.0.0.1:${port(refused)}`,
        `localhost:${port(refused)}`,
        `127.0.0.1:${port(refused)}`,
      ]);
    } finally {
      await proxy.close();
    }
  });
});

describe("page events and diffs", () => {
  it("keeps a bounded backlog and says how many events it dropped", () => {
    const hub = new PageEventHub();
    for (let i = 0; i < PAGE_EVENT_BACKLOG + 500; i++)
      hub.push(`[t1] dialog alert "again" dismissed ${i}`);
    const lines = hub.take(10_000);
    expect(lines).toHaveLength(PAGE_EVENT_BACKLOG + 1);
    expect(lines[0]).toBe(
      "(500 page events dropped: the page produced them faster than they were read)",
    );
    expect(lines[1]).toBe('[t1] dialog alert "again" dismissed 500');
    hub.push(`x ${"y".repeat(5_000)}`);
    expect(hub.take(1)[0]).toHaveLength(1_000);
  });

  it("diffs snapshots line by line, repeated lines counted", () => {
    expect(diffLines(["a", "b", "b", "c"], ["a", "b", "d", "c", "e"])).toEqual([
      "- b",
      "+ d",
      "+ e",
    ]);
    expect(diffLines(["a"], ["a"])).toEqual([]);
  });
});
