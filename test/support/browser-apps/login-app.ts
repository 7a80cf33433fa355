/**
 * A sign-in with a session cookie: `/login` takes a user name and password, sets `session` and
 * sends the browser to `/account`, which without the cookie sends it back to `/login`. The
 * passwords it received are kept, so tests can check what was really typed.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { body, cookies, esc, page, redirect, send } from "./html.js";

/** The login app's state and its request handler (for paths under `/login` and `/account`). */
export function loginApp(password: string) {
  const sessions = new Map<string, string>();
  const attempts: { user: string; ok: boolean }[] = [];
  let next = 1;
  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (path === "/login" && req.method === "GET") {
      send(
        res,
        page(
          "Sign in",
          `<main><h1>Sign in</h1><form method="post" action="/login">
        <label for="user">User name</label><input id="user" name="user">
        <label for="password">Password</label><input id="password" name="password" type="password">
        <button>Sign in</button></form></main>`,
        ),
      );
      return true;
    }
    if (path === "/login" && req.method === "POST") {
      const form = await body(req);
      const ok = form.password === password;
      attempts.push({ user: form.user ?? "", ok });
      if (!ok) {
        send(
          res,
          page(
            "Sign in",
            `<main><h1>Sign in</h1><p role="alert">Wrong user name or password.</p></main>`,
          ),
          401,
        );
        return true;
      }
      const id = `s${next++}`;
      sessions.set(id, form.user ?? "");
      redirect(res, "/account", { "set-cookie": `session=${id}; Path=/; HttpOnly; Max-Age=3600` });
      return true;
    }
    if (path === "/account") {
      const user = sessions.get(cookies(req).session ?? "");
      if (user === undefined) {
        redirect(res, "/login");
        return true;
      }
      send(res, page("Account", `<main><h1>Account</h1><p>Signed in as ${esc(user)}</p></main>`));
      return true;
    }
    return false;
  }
  return { handle, attempts };
}
