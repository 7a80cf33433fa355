import type { Context } from "hono";
import { type ZodType, z } from "zod";
import { identifier } from "../spec/index.js";
import { ServerError } from "./server-error.js";

/** The most bytes a request body may have (1 MiB): bigger ones are refused with 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** A continuity id in a path: an identifier outside the reserved `spool:` names. */
export const continuityId = identifier.refine((id) => !id.startsWith("spool:"), {
  message: "names starting with spool: are reserved",
});

/**
 * The request's JSON body checked against `schema`: `request.bad-json` (400) for a body that is
 * not JSON, `request.invalid` (400) naming each field that is wrong and why.
 */
export async function jsonBody<T>(c: Context, schema: ZodType<T>): Promise<T> {
  let raw: unknown;
  try {
    const text = await c.req.text();
    raw = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    throw new ServerError(400, "request.bad-json", "the request body is not JSON", {
      hint: "Send a JSON object with Content-Type: application/json",
    });
  }
  return checked(schema, raw, "body");
}

/** The request's query string checked against `schema` (values are strings). */
export function queryOf<T>(c: Context, schema: ZodType<T>): T {
  return checked(schema, c.req.query(), "query");
}

/** A path parameter checked against `schema`. */
export function paramOf<T>(c: Context, name: string, schema: ZodType<T>): T {
  return checked(schema, c.req.param(name), `path parameter ${name}`);
}

function checked<T>(schema: ZodType<T>, value: unknown, where: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues
    .slice(0, 10)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join(".") : where}: ${issue.message}`)
    .join("; ");
  throw new ServerError(400, "request.invalid", `the ${where} is not valid: ${issues}`, {
    hint: "docs/http-api.md lists each route's fields",
  });
}

/** A non-negative whole number given as a query string value. */
export const seqParam = z
  .string()
  .regex(/^\d{1,15}$/, "must be a whole number")
  .transform(Number);

/** The query of a GET that takes none but the browser's `access_token`. */
export const readOnlyQuery = z.strictObject({ access_token: z.string().max(200).optional() });
