/**
 * The small web apps the browser tests drive with a real Chromium, served on loopback by one
 * `node:http` server: a checkout (`/shop`), a to-do list (`/todo`), a sign-in (`/login`,
 * `/account`), and hostile pages: one that never answers (`/never`), an endless `alert()` loop
 * (`/alerts`), a 50 MB page (`/huge`), a redirect to another address (`/redirect?to=`), a page
 * that opens a second tab (`/opener`) and one whose image comes from elsewhere (`/embed?src=`);
 * a download and upload page (`/files`), a long page (`/long`), and a page with two iframes
 * (`/frames`), one of them from another site (the same server as `localhost`).
 */
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { checkoutApp } from "./checkout-app.js";
import { esc, page, send } from "./html.js";
import { loginApp } from "./login-app.js";
import { todoApp } from "./todo-app.js";

export type { Order } from "./checkout-app.js";
export type { Todo } from "./todo-app.js";

/** The password the sign-in app accepts. */
export const LOGIN_PASSWORD = "correct horse battery staple";

/** The running apps. */
export interface BrowserApps {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** `127.0.0.1:<port>`, for `allow_hosts`. */
  host: string;
  checkout: ReturnType<typeof checkoutApp>;
  todo: ReturnType<typeof todoApp>;
  login: ReturnType<typeof loginApp>;
  /** Requests of each path, counted (e.g. how often `/private-hit` was reached). */
  hits: Map<string, number>;
  close(): Promise<void>;
}

const HUGE_BYTES = 50 * 1024 * 1024;

/** A download link, and a file input whose page shows the chosen file's name and text. */
const FILES = `<h1>Files</h1><a href="/files/report.csv">Download report</a>
<label for="up">Attachment</label><input id="up" type="file"><p id="chosen"></p>
<script>document.getElementById("up").onchange = (event) => {
  const file = event.target.files[0];
  file.text().then((text) => { document.getElementById("chosen").textContent = "Chose " + file.name + ": " + text.trim(); });
};</script>`;

function hugePage(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.write("<!doctype html><title>Huge</title><h1>Huge</h1><button>First button</button>");
  const row = `<p>${"lorem ipsum dolor sit amet ".repeat(36)}</p>\n`;
  let sent = 0;
  const more = () => {
    while (sent < HUGE_BYTES) {
      sent += row.length;
      if (!res.write(row)) return void res.once("drain", more);
    }
    res.end("<button>Last button</button>");
  };
  more();
}

/** Starts the apps on a free loopback port. */
export async function startBrowserApps(): Promise<BrowserApps> {
  const checkout = checkoutApp();
  const todo = todoApp();
  const login = loginApp(LOGIN_PASSWORD);
  const hits = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    void (async () => {
      for (const app of [checkout, todo, login]) if (await app.handle(req, res, path)) return;
      if (path === "/never") return void hanging.add(res);
      if (path === "/alerts")
        return send(res, page("Alerts", "<p>Loop</p><script>for (;;) alert('again')</script>"));
      if (path === "/huge") return hugePage(res);
      if (path === "/redirect") {
        res.writeHead(302, { location: url.searchParams.get("to") ?? "/" });
        return void res.end();
      }
      if (path === "/opener")
        return send(
          res,
          page(
            "Opener",
            `<a href="/todo" target="_blank">Open to-do in a new tab</a>
             <button onclick="window.open('/shop')"><span aria-hidden="true">↗</span> Open shop</button>`,
          ),
        );
      if (path === "/embed")
        return send(
          res,
          page(
            "Embed",
            `<h1>Embed</h1><img alt="remote" src="${esc(url.searchParams.get("src") ?? "")}">`,
          ),
        );
      if (path === "/frames") {
        // The same app under another name is another site: its frame runs out of process.
        const other = `http://localhost:${(server.address() as AddressInfo).port}`;
        return send(
          res,
          page(
            "Frames",
            `<h1>Frames</h1><iframe title="Newsletter" src="/frames/signup"></iframe>
             <iframe title="Payment widget" src="${other}/frames/pay"></iframe>`,
          ),
        );
      }
      if (path === "/frames/signup")
        return send(
          res,
          page(
            "Signup",
            `<label for="email">Email</label><input id="email">
             <button onclick="document.getElementById('done').textContent = 'Subscribed ' + document.getElementById('email').value">Subscribe</button>
             <p id="done"></p>`,
          ),
        );
      if (path === "/frames/pay")
        return send(
          res,
          page(
            "Pay",
            `<button onclick="this.textContent = 'Paid'; fetch('/frames/paid', { method: 'POST' })">Pay 5 EUR</button>`,
          ),
        );
      if (path === "/frames/paid") return send(res, "ok");
      if (path === "/files") return send(res, page("Files", FILES));
      if (path === "/files/report.csv") {
        res.writeHead(200, {
          "content-type": "text/csv",
          "content-disposition": 'attachment; filename="report.csv"',
        });
        return void res.end("month,total\njanuary,12\n");
      }
      if (path === "/long") {
        const rows = Array.from({ length: 200 }, (_, i) => `<p>Row ${i + 1}</p>`).join("");
        return send(res, page("Long", `<h1>Long</h1>${rows}<button>Bottom</button>`));
      }
      if (path === "/console")
        return send(
          res,
          page(
            "Console",
            "<h1>Console</h1><script>console.error('boom from the page'); fetch('/missing')</script>",
          ),
        );
      send(res, page("Not found", "<h1>Not found</h1>"), 404);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    checkout,
    todo,
    login,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
