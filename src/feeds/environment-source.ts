import { z } from "zod";
import { checkEnvironmentName } from "./environment-policy.js";
import { unknownFields } from "./feed-issues.js";
import { defineInternalSource } from "./internal-source.js";

/**
 * `environment`: the values of allow-listed environment variables, as `{ NAME: value }` (an unset
 * variable is `null`). Params: `names`, a non-empty list. A name the engine's policy does not let
 * through (see `checkEnvironmentName`) is refused with `feed.env-not-allowed` when the feed is
 * added and on every read; its value is never read.
 */
export const environmentSource = defineInternalSource({
  name: "environment",
  description: "Allow-listed environment variables.",
  parameters: z.strictObject(
    {
      names: z
        .array(
          z
            .string({ error: "must be an environment variable name" })
            .regex(
              /^[A-Za-z_][A-Za-z0-9_]*$/,
              "must be an environment variable name (letters, digits, _)",
            ),
          { error: "must be a list of environment variable names" },
        )
        .min(1, "must name at least one variable"),
    },
    {
      error: (issue) =>
        unknownFields(
          issue.code === "unrecognized_keys" ? issue.keys : [],
          "environment takes names",
        ),
    },
  ),
  check(params, context) {
    for (const name of params.names)
      checkEnvironmentName(name, context.environment, context.feedId);
  },
  read(params, context) {
    const values: Record<string, string | null> = {};
    for (const name of params.names) {
      checkEnvironmentName(name, context.environment, context.feedId);
      values[name] = Object.hasOwn(context.env, name) ? (context.env[name] ?? null) : null;
    }
    return values;
  },
});
