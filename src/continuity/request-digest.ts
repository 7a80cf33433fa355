import { createHash, type Hash } from "node:crypto";
import type { ProviderMessage, ProviderRequest } from "../providers/index.js";
import { canonicalJson } from "../spec/index.js";

/**
 * The canonical text of every part of a request encoded so far: a thread's history hands the
 * same message objects to every compile (and never changes one), so a step encodes only what is
 * new since the last one.
 */
const canonicalParts = new WeakMap<object, string>();

/**
 * Where a request's canonical JSON stood after its messages: the text before them (`head`, up to
 * `"messages":[`), the messages it hashed, and the hash state after the last of them.
 */
interface DigestPrefix {
  head: string;
  messages: readonly ProviderMessage[];
  hash: Hash;
}

/** Prefixes of recent digests, newest first: one per thread being compiled, a few at once. */
const prefixes: DigestPrefix[] = [];
const MAX_PREFIXES = 16;

const MESSAGES_KEY = '"messages":[';

/**
 * sha256 (hex) of a request's canonical JSON: what `context.compiled` records and replay compares.
 *
 * A thread's next request is its last one with a few messages more, so the digest goes on from
 * the hash state after the longest run of the same message objects a recent digest hashed (its
 * text before the messages, the system prompt and settings, must be the same too): a step hashes
 * what is new, not the whole thread again. The result is the sha256 of the whole canonical text
 * either way.
 */
export function requestDigest(request: ProviderRequest): string {
  const { messages } = request;
  // The request with no messages, in canonical form: `…"messages":[],…`. Keys sort, so the top
  // level's `"messages":[]` comes before any tool schema that might hold the same text, and a
  // string's quotes are escaped: its first occurrence is the request's own.
  const rest = restText(request);
  const at = rest.indexOf(`${MESSAGES_KEY}]`);
  if (at < 0) {
    return createHash("sha256").update(canonicalJson(request, canonicalParts)).digest("hex");
  }
  const head = rest.slice(0, at + MESSAGES_KEY.length);
  const from = longestPrefix(head, messages);
  const hash = from ? from.hash.copy() : createHash("sha256").update(head);
  for (let i = from?.messages.length ?? 0; i < messages.length; i++) {
    const text = canonicalJson(messages[i], canonicalParts);
    hash.update(i === 0 ? text : `,${text}`);
  }
  if (!from || from.messages.length < messages.length) {
    remember({ head, messages: messages.slice(), hash: hash.copy() });
  }
  return hash.update(rest.slice(at + MESSAGES_KEY.length)).digest("hex");
}

/** The last request digested and its canonical text with no messages. */
let lastRest: { request: ProviderRequest; text: string } | undefined;

/**
 * A request's canonical JSON with `"messages":[]`: the last one's text again while the rest of
 * the request (system prompt, tools, model, settings) is the same, value for value, as most of a
 * run's steps are. A long system prompt is then not encoded again every step.
 */
function restText(request: ProviderRequest): string {
  if (lastRest && sameBesideMessages(lastRest.request, request)) return lastRest.text;
  const text = canonicalJson({ ...request, messages: [] }, canonicalParts);
  lastRest = { request, text };
  return text;
}

/** `a` and `b` have the same fields other than `messages`, each the same value (or object). */
function sameBesideMessages(a: ProviderRequest, b: ProviderRequest): boolean {
  const before = a as unknown as Record<string, unknown>;
  const now = b as unknown as Record<string, unknown>;
  const keys = Object.keys(now);
  if (keys.length !== Object.keys(before).length) return false;
  return keys.every(
    (key) => key === "messages" || (Object.hasOwn(before, key) && before[key] === now[key]),
  );
}

/** The recent prefix with `head` whose messages are the longest leading run of `messages`. */
function longestPrefix(
  head: string,
  messages: readonly ProviderMessage[],
): DigestPrefix | undefined {
  let best: DigestPrefix | undefined;
  for (const prefix of prefixes) {
    const count = prefix.messages.length;
    if (count > messages.length || (best && count <= best.messages.length)) continue;
    if (prefix.head !== head) continue;
    let same = true;
    for (let i = count - 1; i >= 0 && same; i--) same = prefix.messages[i] === messages[i];
    if (same) best = prefix;
  }
  return best;
}

/** Keeps `prefix` as the newest, dropping one it extends and the oldest beyond the limit. */
function remember(prefix: DigestPrefix): void {
  const extended = prefixes.findIndex(
    (old) =>
      old.head === prefix.head &&
      old.messages.length <= prefix.messages.length &&
      (old.messages.length === 0 || old.messages[0] === prefix.messages[0]),
  );
  if (extended >= 0) prefixes.splice(extended, 1);
  prefixes.unshift(prefix);
  if (prefixes.length > MAX_PREFIXES) prefixes.length = MAX_PREFIXES;
}
