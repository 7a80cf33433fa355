import { ActorRosters } from "../../runtime/index.js";
import {
  type CommandContext,
  continuityNotFound,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  parseIdentifier,
  UsageError,
  withStore,
} from "../context.js";
import { defaultActor } from "./continuities.js";

/**
 * `spool turn add <continuity> <text…>`: appends `turn.added` (origin `cli`) to an existing
 * continuity and prints its seq. The text is the remaining arguments joined with spaces. An actor
 * the continuity's access list refuses is an `ActorAccessError`, and nothing is appended.
 */
export async function turnAdd(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "turn add";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    actor: { type: "string" },
  });
  const [continuity, ...words] = positionals;
  if (continuity === undefined) throw new UsageError(command, "missing <continuity>");
  if (words.join("").trim() === "") {
    throw new UsageError(command, "missing <text…>: what the turn says");
  }
  const actor =
    values.actor === undefined
      ? defaultActor(ctx)
      : parseIdentifier(command, "--actor", values.actor);
  const target = locateStore(ctx, values.db);
  if (!target.exists) throw continuityNotFound(target, continuity);
  const stored = await withStore(ctx, target, async (store) => {
    if (!(await store.continuity(continuity))) throw continuityNotFound(target, continuity);
    await new ActorRosters(store).check(continuity, actor);
    return store.append({
      continuity,
      type: "turn.added",
      actor,
      origin: "cli",
      data: { text: words.join(" ") },
    });
  });
  ctx.out(String(stored.seq));
  return 0;
}
