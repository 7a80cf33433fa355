/**
 * A to-do list driven by page script: adding, checking and deleting items call a small JSON API,
 * and the list re-renders from the answer. The server's list is what tests check.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { body, page, send } from "./html.js";

/** One to-do. */
export interface Todo {
  id: number;
  text: string;
  done: boolean;
}

const SCRIPT = `
const list = document.getElementById("list");
async function call(method, path, data) {
  const res = await fetch(path, { method, headers: { "content-type": "application/json" }, body: data ? JSON.stringify(data) : undefined });
  render(await res.json());
}
function render(todos) {
  list.innerHTML = "";
  for (const todo of todos) {
    const li = document.createElement("li");
    const box = document.createElement("input");
    box.type = "checkbox"; box.checked = todo.done; box.setAttribute("aria-label", "Done: " + todo.text);
    box.onchange = () => call("POST", "/todo/api/" + todo.id + "/toggle");
    const del = document.createElement("button");
    del.textContent = "Delete " + todo.text;
    del.onclick = () => call("DELETE", "/todo/api/" + todo.id);
    li.append(box, " " + todo.text + " ", del);
    list.append(li);
  }
  document.getElementById("count").textContent = todos.filter((t) => !t.done).length + " left";
}
document.getElementById("add").onsubmit = (event) => {
  event.preventDefault();
  const input = document.getElementById("new");
  call("POST", "/todo/api", { text: input.value }).then(() => { input.value = ""; });
};
call("GET", "/todo/api");
`;

/** The to-do app's state and its request handler (for paths under `/todo`). */
export function todoApp() {
  const todos: Todo[] = [];
  let next = 1;
  const json = (res: ServerResponse): true => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(todos));
    return true;
  };
  async function handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (path === "/todo") {
      send(
        res,
        page(
          "To-do",
          `<main><h1>To-do</h1><form id="add"><input id="new" aria-label="New to-do" placeholder="What needs doing?"><button>Add</button></form><ul id="list"></ul><p id="count"></p></main><script>${SCRIPT}</script>`,
        ),
      );
      return true;
    }
    if (path === "/todo/api" && req.method === "GET") return json(res);
    if (path === "/todo/api" && req.method === "POST") {
      const { text } = await body(req);
      if (text) todos.push({ id: next++, text, done: false });
      return json(res);
    }
    const toggle = /^\/todo\/api\/(\d+)\/toggle$/.exec(path);
    if (toggle && req.method === "POST") {
      const todo = todos.find((item) => item.id === Number(toggle[1]));
      if (todo) todo.done = !todo.done;
      return json(res);
    }
    const remove = /^\/todo\/api\/(\d+)$/.exec(path);
    if (remove && req.method === "DELETE") {
      const index = todos.findIndex((item) => item.id === Number(remove[1]));
      if (index >= 0) todos.splice(index, 1);
      return json(res);
    }
    return false;
  }
  return { handle, todos };
}
