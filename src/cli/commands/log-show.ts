import { EVENT_CATALOG } from "../../spec/index.js";
import {
  type CommandContext,
  continuityNotFound,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  parseInteger,
  UsageError,
  withStore,
} from "../context.js";
import { formatEventLine } from "../format.js";

/**
 * `spool log show <continuity>`: one continuity's events in seq order, one line each (or the
 * stored events as JSON lines with `--json`), optionally after a seq, limited and by type.
 */
export async function logShow(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "log show";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    after: { type: "string" },
    limit: { type: "string" },
    type: { type: "string", multiple: true },
    json: { type: "boolean" },
  });
  const [continuity, ...extra] = positionals;
  if (continuity === undefined) throw new UsageError(command, "missing <continuity>");
  if (extra.length > 0)
    throw new UsageError(command, `unexpected argument ${JSON.stringify(extra[0])}`);
  const after = parseInteger(command, "--after", values.after, 0);
  const limit = parseInteger(command, "--limit", values.limit, 1);
  const types = values.type?.flatMap((type) => type.split(",")).filter((type) => type !== "");
  for (const type of types ?? []) checkType(command, type);
  const target = locateStore(ctx, values.db);
  if (!target.exists) throw continuityNotFound(target, continuity);
  await withStore(ctx, target, async (store) => {
    if (!(await store.continuity(continuity))) throw continuityNotFound(target, continuity);
    const events = store.read({
      continuity,
      ...(after !== undefined ? { after } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(types && types.length > 0 ? { types } : {}),
    });
    for await (const event of events) {
      ctx.out(
        values.json
          ? JSON.stringify(event)
          : formatEventLine(event, { style: ctx.style, width: ctx.width }),
      );
    }
  });
  return 0;
}

function checkType(command: string, type: string): void {
  if (Object.hasOwn(EVENT_CATALOG, type)) return;
  const known = Object.keys(EVENT_CATALOG);
  const family = known.filter((name) => name.startsWith(`${type.split(".")[0]}.`));
  throw new UsageError(
    command,
    `--type ${JSON.stringify(type)} is not an event type; ${
      family.length > 0
        ? `did you mean ${family.join(" or ")}?`
        : `known types: ${known.join(", ")}`
    }`,
  );
}
