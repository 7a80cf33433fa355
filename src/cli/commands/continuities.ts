import { ulid } from "ulid";
import type { EventStore } from "../../log/index.js";
import { identifier, SpoolError } from "../../spec/index.js";
import {
  type CommandContext,
  DB_OPTION,
  dbFlag,
  locateStore,
  parseCommandArgs,
  parseIdentifier,
  UsageError,
  withStore,
} from "../context.js";
import { formatTime, oneLine, plural, renderTable, shortHash, truncate } from "../format.js";

/** `spool continuities [--json]`: a table (or JSON lines) of every continuity. */
export async function listContinuities(ctx: CommandContext, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs("continuities", args, {
    ...DB_OPTION,
    json: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(
      "continuities",
      `unknown subcommand ${JSON.stringify(positionals[0])} (did you mean \`spool continuities create\`?)`,
    );
  }
  const target = locateStore(ctx, values.db);
  const rows = target.exists
    ? await withStore(ctx, target, async (store) => {
        const heads = await store.continuities();
        const titled = [];
        for (const head of heads)
          titled.push({ ...head, title: await titleOf(store, head.continuity) });
        return titled;
      })
    : [];
  if (values.json) {
    for (const row of rows) ctx.out(JSON.stringify(row));
    return 0;
  }
  if (rows.length === 0) {
    ctx.err(`No continuities in ${target.display} yet.`);
    ctx.err(
      `Create one with: spool continuities create${dbFlag(target)} --title "My first continuity"`,
    );
    return 0;
  }
  ctx.io.stdout.write(
    renderTable(
      ["ID", "TITLE", "EVENTS", "LAST ACTIVITY", "HEAD"],
      rows.map((row) => [
        oneLine(row.continuity),
        row.title === null ? "-" : truncate(oneLine(row.title), 40),
        String(row.events),
        formatTime(row.lastAt),
        shortHash(row.headHash),
      ]),
      ctx.style,
      [2],
    ),
  );
  return 0;
}

/** The title from a continuity's `continuity.created` event, or `null` without one. */
async function titleOf(store: EventStore, continuity: string): Promise<string | null> {
  for await (const event of store.read({ continuity, types: ["continuity.created"], limit: 1 })) {
    const title = (event.data as { title?: unknown } | null)?.title;
    return typeof title === "string" ? title : null;
  }
  return null;
}

/** `spool continuities create`: appends `continuity.created` and prints the new id. */
export async function createContinuity(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "continuities create";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    id: { type: "string" },
    title: { type: "string" },
    actor: { type: "string" },
  });
  if (positionals.length > 0) {
    throw new UsageError(
      command,
      `unexpected argument ${JSON.stringify(positionals[0])} (give a title with --title)`,
    );
  }
  const id = values.id === undefined ? ulid() : parseIdentifier(command, "--id", values.id);
  const actor =
    values.actor === undefined
      ? defaultActor(ctx)
      : parseIdentifier(command, "--actor", values.actor);
  const target = locateStore(ctx, values.db);
  await withStore(ctx, target, async (store) => {
    const existing = await store.continuity(id);
    if (existing) {
      throw new SpoolError(
        "cli.exists",
        `continuity ${JSON.stringify(id)} already exists in ${target.display} (${plural(existing.events, "event")} since ${formatTime(existing.createdAt)})`,
        { hint: "Choose another --id, or leave --id out for a new one" },
      );
    }
    await store.append({
      continuity: id,
      type: "continuity.created",
      actor,
      origin: "cli",
      data: values.title === undefined ? {} : { title: values.title },
    });
  });
  ctx.out(id);
  return 0;
}

/**
 * Who the CLI acts as without `--actor`: `$USER` when it is a valid actor id (characters outside
 * the id alphabet become `-`), else `local`.
 */
export function defaultActor(ctx: CommandContext): string {
  const user = (ctx.io.env.USER ?? "")
    .replace(/[^A-Za-z0-9._:@-]/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "");
  return identifier.safeParse(user).success ? user : "local";
}
