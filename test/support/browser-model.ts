/**
 * Pieces for the browser tests' model stand-ins: protocol tool actions, and reading refs and the
 * last user message out of the requests they are sent.
 */
import type { ProviderRequest } from "../../src/providers/index.js";

/** A synchronous tool action in the protocol. */
export const tool = (id: string, name: string, parameters: object) =>
  `<action type="tool" mode="sync" id="${id}">${JSON.stringify({ name, parameters })}</action>`;

/** Text as the model reads it, with the JSON escaping of quotes undone. */
export const plain = (text: string) => text.replaceAll('\\"', '"');

/** The ref of the element of `role` named `name` in the last snapshot `text` shows. */
export function refOf(text: string, role: string, name: string): string | undefined {
  const pattern = new RegExp(`${role} "${name}" \\[(e\\d+)\\]`, "g");
  return [...plain(text).matchAll(pattern)].at(-1)?.[1];
}

/** The text of the request's last user message (its parts as JSON when it has parts). */
export function lastUser(request: ProviderRequest): string {
  const message = request.messages.findLast((item) => item.role === "user");
  if (message?.role !== "user") return "";
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
}
