import type { EventStore } from "../../log/index.js";
import { describeError } from "../../spec/index.js";
import { oneLine, truncate } from "../format.js";
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

/** The slash commands of `spool chat`, as `/help` lists them. */
export const SLASH_HELP = [
  "/pin <text>        pin a fact into every later context (survives handoffs)",
  "/pin-rule <text>   pin a rule the agent must follow",
  "/pins              list what is pinned",
  "/unpin <id>        remove a pin",
  "/help              this list",
];

const NAMES = new Set(["/pin", "/pin-rule", "/pins", "/unpin", "/help"]);

/**
 * Runs `line` when it is one of the chat's slash commands (`/pin`, `/pin-rule`, `/pins`,
 * `/unpin`, `/help`) and resolves `true`; resolves `false`, doing nothing, for anything else
 * (which is then a turn: other text starting with `/` is not taken from the user). Never
 * throws: a failure is one error line.
 */
export async function runSlashCommand(line: string, ctx: SlashContext): Promise<boolean> {
  const trimmed = line.trim();
  const match = /^(\/[a-z-]+)(?:\s+([\s\S]*))?$/.exec(trimmed);
  if (!match || !NAMES.has(match[1]!)) return false;
  const [, name, rest = ""] = match;
  const argument = rest.trim();
  try {
    await run(name!, argument, ctx);
  } catch (error) {
    ctx.out.error(`${name}: ${oneLine(describeError(error))}`);
  }
  return true;
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
