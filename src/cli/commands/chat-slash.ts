import type { EventStore } from "../../log/index.js";
import { describeError } from "../../spec/index.js";
import { oneLine, truncate } from "../format.js";
import { suggestCommand } from "../suggest.js";
import { appendPin, MAX_PIN_CHARS, pinsInForce, removePin } from "./pins.js";

/** Where a slash command's answer goes: the chat renderer's quiet and error lines. */
export interface SlashOutput {
  info(line: string): void;
  error(line: string): void;
}

/** What a slash command runs against. */
export interface SlashContext {
  store: EventStore;
  continuity: string;
  /** Who pins and unpins. */
  actor: string;
  out: SlashOutput;
  /** Columns a line may take. */
  width: number;
}

/** The slash commands of `spool chat`, with what `/help` says of each. */
const COMMANDS: readonly (readonly [name: string, args: string, does: string])[] = [
  ["/pin", "<text>", "pin a fact into every later context (survives handoffs)"],
  ["/pin-rule", "<text>", "pin a rule the agent must follow"],
  ["/pins", "", "list what is pinned"],
  ["/unpin", "<id>", "remove a pin"],
  ["/help", "", "this list"],
];

/** The slash commands of `spool chat`, as `/help` lists them (then how to send a leading `/`). */
export const SLASH_HELP = [
  ...COMMANDS.map(([name, args, does]) => `${`${name} ${args}`.padEnd(19)}${does}`),
  "//text             send a turn that starts with /text (an unknown /command is not sent)",
];

const NAMES = COMMANDS.map(([name]) => name);

/**
 * What a line typed at the chat's prompt is: one of the slash commands, an unknown one (a word
 * such as `/frobnicate`, which is answered and never sent to the model), or a turn. A turn may
 * still start with `/`: a path (`/usr/bin is where?`, a second `/` in its first word) or `//`,
 * which escapes the slash (`//pin` sends the turn `/pin`).
 */
export type ChatLine =
  | { kind: "command"; name: string; argument: string }
  | { kind: "unknown"; name: string; nearest?: string }
  | { kind: "turn"; text: string };

/** Classifies one line typed at the chat's prompt (see `ChatLine`). Pure. */
export function classifyChatLine(line: string): ChatLine {
  const trimmed = line.trim();
  if (trimmed.startsWith("//")) return { kind: "turn", text: trimmed.slice(1) };
  const match = /^(\/[^\s/]+)(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (!match) return { kind: "turn", text: line };
  const name = match[1]!.toLowerCase();
  if (NAMES.includes(name)) return { kind: "command", name, argument: (match[2] ?? "").trim() };
  const nearest = suggestCommand(name, NAMES);
  return { kind: "unknown", name: match[1]!, ...(nearest ? { nearest } : {}) };
}

/**
 * Runs `line` when it is a slash command and resolves `{ handled: true }`: one of the chat's
 * (`/pin`, `/pin-rule`, `/pins`, `/unpin`, `/help`) runs; an unknown one (`/pnis`) is answered
 * with one error line naming the nearest known command, and is not a turn. Resolves
 * `{ handled: false, text }` for a turn, with the text to send (`//x` sends `/x`). Never throws:
 * a failure is one error line.
 */
export async function runSlashCommand(
  line: string,
  ctx: SlashContext,
): Promise<{ handled: true } | { handled: false; text: string }> {
  const parsed = classifyChatLine(line);
  if (parsed.kind === "turn") return { handled: false, text: parsed.text };
  if (parsed.kind === "unknown") {
    const name = oneLine(truncate(parsed.name, 40));
    ctx.out.error(
      `unknown command ${name}${parsed.nearest ? ` (did you mean ${parsed.nearest}?)` : ""}: not sent to the model; /help lists the commands, //text sends a turn starting with /`,
    );
    return { handled: true };
  }
  try {
    await run(parsed.name, parsed.argument, ctx);
  } catch (error) {
    ctx.out.error(`${parsed.name}: ${oneLine(describeError(error))}`);
  }
  return { handled: true };
}

async function run(name: string, argument: string, ctx: SlashContext): Promise<void> {
  const { store, continuity, out } = ctx;
  switch (name) {
    case "/pin":
    case "/pin-rule": {
      if (argument === "") return out.error(`${name} needs the text to pin: ${name} <text>`);
      if (Array.from(argument).length > MAX_PIN_CHARS) {
        return out.error(`${name}: the text is longer than ${MAX_PIN_CHARS} characters`);
      }
      const kind = name === "/pin-rule" ? "rule" : "fact";
      const pin = await appendPin(store, continuity, { text: argument, kind, actor: ctx.actor });
      return out.info(`pinned ${kind} ${pin.id} — /unpin ${pin.id} removes it`);
    }
    case "/unpin": {
      if (argument === "") return out.error("/unpin needs a pin id: /unpin <id> (see /pins)");
      const removed = await removePin(store, continuity, { id: argument, actor: ctx.actor });
      if (!removed.ok) return out.error(`no pin ${oneLine(argument)} is in force (see /pins)`);
      return out.info(`unpinned ${oneLine(argument)}`);
    }
    case "/pins": {
      const pins = await pinsInForce(store, continuity);
      if (pins.length === 0) return out.info("nothing is pinned");
      for (const pin of pins) {
        const head = `${pin.id}  ${pin.kind.padEnd(4)}  `;
        out.info(
          `${head}${truncate(oneLine(pin.text), Math.max(10, ctx.width - head.length - 1))}`,
        );
      }
      return;
    }
    default:
      for (const help of SLASH_HELP) out.info(help);
  }
}
