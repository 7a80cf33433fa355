import { type ChainReport, damageOf, verifyChain } from "../../log/index.js";
import {
  type CommandContext,
  continuityNotFound,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  type StoreTarget,
  storeNotFound,
  UsageError,
  withStore,
} from "../context.js";
import { oneLine, plural } from "../format.js";

/**
 * `spool log verify`: recomputes every hash chain (or one continuity's). Prints
 * `OK: N events in M continuities verified` and exits 0, or names the first mismatch and exits 1.
 * On a damaged file, prints `DAMAGED:` with how many events checked out before the damage, and
 * exits 1.
 */
export async function logVerify(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "log verify";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    continuity: { type: "string" },
    json: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(
      command,
      `unexpected argument ${JSON.stringify(positionals[0])} (use --continuity to pick one)`,
    );
  }
  const { continuity } = values;
  const target = locateStore(ctx, values.db);
  if (!target.exists) throw storeNotFound(target);
  const report = await verifyStore(ctx, target, continuity);
  if (values.json) {
    ctx.out(JSON.stringify({ location: target.display, ...report }));
    return report.ok ? 0 : 1;
  }
  const { style } = ctx;
  const { mismatch, damage } = report;
  if (damage) {
    const through = damage.afterSeq > 0 ? ` (through seq ${damage.afterSeq})` : "";
    ctx.out(
      `${style.red("DAMAGED")}: ${plural(report.events, "event")} in ${plural(report.continuities, "continuity", "continuities")} check out${through}; the log cannot be read past ${damage.afterSeq > 0 ? "them" : "its start"}`,
    );
    ctx.out(`  reason: ${oneLine(damage.reason)}`);
    ctx.out(
      "  Keep this file; restore the store from a backup, or copy the events that check out with `spool log show`",
    );
    return 1;
  }
  if (!mismatch) {
    ctx.out(
      `${style.green("OK")}: ${plural(report.events, "event")} in ${plural(report.continuities, "continuity", "continuities")} verified`,
    );
    return 0;
  }
  const where =
    mismatch.seq === undefined
      ? `at the head record of continuity ${JSON.stringify(mismatch.continuity)}`
      : `at seq ${mismatch.seq} (id ${mismatch.id}) in continuity ${JSON.stringify(mismatch.continuity)}`;
  ctx.out(`${style.red("FAILED")}: the hash chain breaks ${oneLine(where)}`);
  ctx.out(`  reason:        ${mismatch.reason}`);
  ctx.out(`  expected hash: ${mismatch.expected}`);
  ctx.out(`  actual hash:   ${mismatch.actual}`);
  ctx.out(`  checked ${plural(report.events, "event")}; verification stops at the first mismatch`);
  return 1;
}

/**
 * Verifies the store at `target`. A store too damaged to open or to look `continuity` up in is a
 * report of damage with nothing checked, not a thrown error: this is the command that says how
 * much of a damaged log checks out.
 */
async function verifyStore(
  ctx: CommandContext,
  target: StoreTarget,
  continuity: string | undefined,
): Promise<ChainReport> {
  try {
    return await withStore(ctx, target, async (store) => {
      if (continuity !== undefined && !(await store.continuity(continuity))) {
        throw continuityNotFound(target, continuity);
      }
      return verifyChain(store, continuity === undefined ? {} : { continuity });
    });
  } catch (error) {
    return { ok: false, continuities: 0, events: 0, damage: damageOf(error, 0) };
  }
}
