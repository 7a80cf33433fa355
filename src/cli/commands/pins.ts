import { appendPin, MAX_PIN_CHARS, type PinRow, pinsInForce, removePin } from "../../app/index.js";
import type { EventStore } from "../../log/index.js";
import {
  type CommandContext,
  DB_OPTION,
  dbFlag,
  locateStore,
  NotFoundError,
  parseCommandArgs,
  parseIdentifier,
  type StoreTarget,
  UsageError,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import { formatTime, oneLine, renderTable, truncate } from "../format.js";
import type { CommandHelp } from "../usage.js";
import { type ContinuityFallback, withActiveContinuity } from "./active-continuity.js";
import { latestChat } from "./chat-continuity.js";
import { defaultActor } from "./continuities.js";

export { appendPin, MAX_PIN_CHARS, type PinRow, pinsInForce, removePin };

const CONTINUITY_OPTION = `  --continuity <id>      The continuity (default: the one \`spool chat\` continues)`;
/** Help of `spool pin`. */
export const PIN_USAGE: CommandHelp = {
  synopsis: "spool pin <text…> [--rule] [--continuity ID]",
  text: `Usage: spool pin <text…> [--rule] [--continuity ID]

Pins a fact (or with --rule, a rule) into every later context of a continuity: the model sees
it on every step, after every handoff to a new thread, until it is unpinned. Appends
context.pinned (by "user") and prints the pin's id, which is derived from the text: pinning the
same text again is the same pin. The words of <text…> are joined with spaces; put text that
starts with "-" after "--".

Options:
  --rule                 Pin it as a rule to follow (default: a fact to know)
${CONTINUITY_OPTION}
${DB_HELP_LINES}

Examples:
  spool pin "The staging database is read-only"
  spool pin --rule "Answer in French"
  spool pin --continuity home -- -v means verbose here
`,
};

/** Help of `spool unpin`. */
export const UNPIN_USAGE: CommandHelp = {
  synopsis: "spool unpin <id> [--continuity ID]",
  text: `Usage: spool unpin <id> [--continuity ID]

Removes a pinned rule or fact (appends context.unpinned): later contexts leave it out. Exit
code 1 when no pin with that id is in force; \`spool pins\` lists them.

Options:
${CONTINUITY_OPTION}
${DB_HELP_LINES}

Examples:
  spool unpin pin-3f2a9c0d1e4b5a6c
`,
};

/** Help of `spool pins`. */
export const PINS_USAGE: CommandHelp = {
  synopsis: "spool pins [--continuity ID] [--json]",
  text: `Usage: spool pins [--continuity ID] [--json]

Lists the rules and facts pinned in a continuity and still in force, in the order they were
pinned: id, kind, who pinned it (user, or the thread whose model did), when, and the text.

Options:
${CONTINUITY_OPTION}
  --json                 Print one JSON object per pin (the whole text)
${DB_HELP_LINES}

Examples:
  spool pins
  spool pins --continuity home --json
`,
};

/**
 * `spool pin <text…> [--rule] [--continuity ID]`: appends `context.pinned` (`by: "user"`, on the
 * continuity stream, actor the CLI's user, origin `cli`) and prints the pin id. Never creates a
 * store or a continuity: a missing one is a `NotFoundError` (exit 1).
 */
export async function pinCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "pin";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    rule: { type: "boolean" },
    continuity: { type: "string" },
  });
  const text = positionals.join(" ").trim();
  if (text === "") throw new UsageError(command, "missing <text…>: the fact or rule to pin");
  if (Array.from(text).length > MAX_PIN_CHARS) {
    throw new UsageError(command, `the text is longer than ${MAX_PIN_CHARS} characters`);
  }
  const given = optionalContinuity(command, values.continuity);
  const target = locateStore(ctx, values.db);
  const pin = await withPinContinuity(ctx, target, given, (store, continuity) =>
    appendPin(store, continuity, {
      text,
      kind: values.rule ? "rule" : "fact",
      actor: defaultActor(ctx),
    }),
  );
  ctx.out(pin.id);
  return 0;
}

/**
 * `spool unpin <id> [--continuity ID]`: appends `context.unpinned` (`by: "user"`) for a pin in
 * force. A pin not in force is a `NotFoundError` (exit 1), and nothing is appended.
 */
export async function unpinCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "unpin";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    continuity: { type: "string" },
  });
  const [id, ...extra] = positionals;
  if (id === undefined) throw new UsageError(command, "missing <id>: see `spool pins`");
  if (extra.length > 0) {
    throw new UsageError(command, `unexpected argument ${JSON.stringify(extra[0])}`);
  }
  const given = optionalContinuity(command, values.continuity);
  const target = locateStore(ctx, values.db);
  const removed = await withPinContinuity(ctx, target, given, (store, continuity) =>
    removePin(store, continuity, { id, actor: defaultActor(ctx) }),
  );
  if (!removed.ok) {
    throw new NotFoundError(
      `no pin ${JSON.stringify(id)} is in force in ${JSON.stringify(removed.continuity)}`,
      `List them with \`spool pins --continuity ${removed.continuity}${dbFlag(target)}\``,
    );
  }
  ctx.err(ctx.errStyle.dim(`Unpinned ${oneLine(id)} from ${oneLine(removed.continuity)}.`));
  return 0;
}

/** `spool pins [--continuity ID] [--json]`: the pins in force, as a table or JSON lines. */
export async function pinsCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "pins";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    continuity: { type: "string" },
    json: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(command, `unexpected argument ${JSON.stringify(positionals[0])}`);
  }
  const given = optionalContinuity(command, values.continuity);
  const target = locateStore(ctx, values.db);
  const { continuity, pins } = await withPinContinuity(ctx, target, given, async (store, id) => ({
    continuity: id,
    pins: await pinsInForce(store, id),
  }));
  if (values.json) {
    for (const pin of pins) ctx.out(JSON.stringify(pin));
    return 0;
  }
  if (pins.length === 0) {
    ctx.err(`Nothing is pinned in ${JSON.stringify(continuity)}.`);
    return 0;
  }
  if (given === undefined) ctx.err(ctx.errStyle.dim(`Pins of ${oneLine(continuity)}:`));
  const room = Math.max(20, ctx.width - 72);
  ctx.io.stdout.write(
    renderTable(
      ["ID", "KIND", "BY", "PINNED", "TEXT"],
      pins.map((pin) => [
        oneLine(pin.id),
        pin.kind,
        truncate(oneLine(pin.by), 16),
        formatTime(pin.ts),
        truncate(oneLine(pin.text), room),
      ]),
      ctx.style,
    ),
  );
  return 0;
}

function optionalContinuity(command: string, value: string | undefined): string | undefined {
  return value === undefined ? undefined : parseIdentifier(command, "--continuity", value);
}

/** Pins apply to the chat `spool chat` continues when no continuity is named. */
const CHAT_CONTINUITY: ContinuityFallback = {
  find: (store) => latestChat(store),
  none: (target) =>
    new NotFoundError(
      `there is no chat in ${target.display} yet`,
      `Start one with \`spool chat${dbFlag(target)}\`, or name a continuity with --continuity`,
    ),
};

/**
 * Opens the store and runs `body` with the continuity pins apply to: `given`, else the chat
 * `spool chat` continues. Never creates a store or a continuity (`NotFoundError`, exit 1).
 */
function withPinContinuity<T>(
  ctx: CommandContext,
  target: StoreTarget,
  given: string | undefined,
  body: (store: EventStore, continuity: string) => Promise<T>,
): Promise<T> {
  return withActiveContinuity(ctx, target, given, body, CHAT_CONTINUITY);
}
