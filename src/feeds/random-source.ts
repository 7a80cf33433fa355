import { z } from "zod";
import { unknownFields } from "./feed-issues.js";
import { defineInternalSource } from "./internal-source.js";

/**
 * A random number in `[min, max)`, or with `integer` a whole number in `[min, max]` (both ends
 * included), from `random` (a number in [0, 1)).
 */
export function randomNumber(random: () => number, min: number, max: number, integer: boolean) {
  const r = random();
  if (!integer) return min + r * (max - min);
  return Math.min(max, min + Math.floor(r * (max - min + 1)));
}

/** A version 4 UUID whose 122 random bits are 16 bytes of `floor(random() * 256)`. */
export function randomUuid(random: () => number): string {
  const bytes = Array.from({ length: 16 }, () => Math.floor(random() * 256) & 0xff);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.map((byte) => byte.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const NUMBER = "must be a finite number";

/**
 * `random`: a number from the engine's random source. Params: `kind` `number` (default) or
 * `uuid`; for numbers `min` (default 0), `max` (default 1; required with `integer`) and `integer`
 * (default false). Floats fall in `[min, max)`, integers in `[min, max]`.
 */
export const randomSource = defineInternalSource({
  name: "random",
  description: "A random number in a range, or a random UUID.",
  parameters: z
    .strictObject(
      {
        kind: z.enum(["number", "uuid"], { error: 'must be "number" or "uuid"' }).default("number"),
        min: z.number({ error: NUMBER }).optional(),
        max: z.number({ error: NUMBER }).optional(),
        integer: z.boolean({ error: "must be true or false" }).default(false),
      },
      {
        error: (issue) =>
          unknownFields(
            issue.code === "unrecognized_keys" ? issue.keys : [],
            "random takes kind, min, max, integer",
          ),
      },
    )
    .superRefine((params, context) => {
      if (params.kind === "uuid") {
        for (const field of ["min", "max"] as const) {
          if (params[field] !== undefined)
            context.addIssue({
              code: "custom",
              path: [field],
              message: "does not apply to kind uuid",
            });
        }
        if (params.integer)
          context.addIssue({
            code: "custom",
            path: ["integer"],
            message: "does not apply to kind uuid",
          });
        return;
      }
      if (params.integer) {
        if (params.max === undefined)
          context.addIssue({
            code: "custom",
            path: ["max"],
            message: "is required with integer: true (the largest value, included)",
          });
        for (const field of ["min", "max"] as const) {
          const value = params[field];
          if (value !== undefined && !Number.isSafeInteger(value))
            context.addIssue({
              code: "custom",
              path: [field],
              message: "must be a whole number with integer: true",
            });
        }
      }
      const min = params.min ?? 0;
      const max = params.max ?? 1;
      if (min > max)
        context.addIssue({
          code: "custom",
          path: ["min"],
          message: `must not be greater than max (${max})`,
        });
    }),
  read(params, context) {
    if (params.kind === "uuid") return randomUuid(() => context.random());
    return randomNumber(() => context.random(), params.min ?? 0, params.max ?? 1, params.integer);
  },
});
