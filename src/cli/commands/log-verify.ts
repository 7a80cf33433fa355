import { verifyChain } from "../../log/index.js";
import {
  type CommandContext,
  continuityNotFound,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  storeNotFound,
  UsageError,
  withStore,
} from "../context.js";
import { oneLine, plural } from "../format.js";

/**
 * `spool log verify`: recomputes every hash chain (or one continuity's). Prints
 * `OK: N events in M continuities verified` and exits 0, or names the first mismatch and exits 1.
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
  const report = await withStore(ctx, target, async (store) => {
    if (continuity !== undefined && !(await store.continuity(continuity))) {
      throw continuityNotFound(target, continuity);
    }
    return verifyChain(store, continuity === undefined ? {} : { continuity });
  });
  if (values.json) {
    ctx.out(JSON.stringify({ location: target.display, ...report }));
    return report.ok ? 0 : 1;
  }
  const { style } = ctx;
  const { mismatch } = report;
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
