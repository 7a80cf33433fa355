import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { McpError } from "./mcp-error.js";

/**
 * What Spool keeps of one server's OAuth: its client registration, its tokens, what discovery
 * found and the loopback redirect it registered. Kept as the SDK hands it over (issuer stamps
 * included), since the SDK checks those stamps when it reads them back.
 */
export interface McpOAuthRecord {
  client_information?: Record<string, unknown>;
  tokens?: Record<string, unknown>;
  discovery_state?: Record<string, unknown>;
  /** The redirect URL registered with the authorization server (its loopback port stays). */
  redirect_url?: string;
}

const recordSchema = z.looseObject({
  client_information: z.looseObject({ client_id: z.string() }).optional(),
  tokens: z.looseObject({ access_token: z.string(), token_type: z.string() }).optional(),
  discovery_state: z.looseObject({ authorizationServerUrl: z.string() }).optional(),
  redirect_url: z.string().optional(),
});

/** One server's OAuth record in a 0600 file: read once, written through on every change. */
export interface McpOAuthStore {
  /** The file (for messages: it holds secrets, so its contents are never shown). */
  readonly path: string;
  read(): McpOAuthRecord;
  /** Merges `change` into the record and writes the file (0600, atomically). */
  update(change: Partial<McpOAuthRecord>): void;
  /** Drops the named parts and writes the file. */
  forget(parts: readonly (keyof McpOAuthRecord)[]): void;
}

/**
 * The OAuth record of server `name` at `url`, in `<dir>/<name>-<digest of url>.json`: a changed
 * URL starts afresh, and no other server's tokens are ever sent to it. The folder is made 0700
 * and the file written 0600 (atomically, through a temporary file).
 *
 * Throws `McpError` (`relic.mcp.unauthorized`) when the file is not valid JSON of this shape,
 * or (outside Windows) when others may read it, naming the file and how to fix it, never its
 * contents.
 */
export function openMcpOAuthStore(dir: string, name: string, url: string): McpOAuthStore {
  const digest = createHash("sha256").update(url).digest("hex").slice(0, 12);
  const path = join(dir, `${name}-${digest}.json`);
  let record = load(path, name);
  const write = () => {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  };
  return {
    path,
    read: () => record,
    update(change) {
      record = { ...record, ...change };
      write();
    },
    forget(parts) {
      const next = { ...record };
      for (const part of parts) delete next[part];
      record = next;
      write();
    },
  };
}

function load(path: string, name: string): McpOAuthRecord {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw unreadable(path, name, "cannot be read", "Check the file's owner and permissions", error);
  }
  if (process.platform !== "win32" && (statSync(path).mode & 0o077) !== 0) {
    throw unreadable(
      path,
      name,
      "may be read by other users, and it holds OAuth tokens",
      `Run chmod 600 "${path}" (and sign in again if others may have read it)`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // No cause: a JSON.parse message quotes the text, and the text holds tokens.
    throw unreadable(path, name, "is not valid JSON", "Delete it: Spool signs in again");
  }
  const parsed = recordSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw unreadable(
      path,
      name,
      `is not an OAuth record (${issue.path.join(".") || "the file"}: ${issue.message})`,
      "Delete it: Spool signs in again",
    );
  }
  return parsed.data as McpOAuthRecord;
}

function unreadable(
  path: string,
  name: string,
  problem: string,
  hint: string,
  cause?: unknown,
): McpError {
  return new McpError(
    "relic.mcp.unauthorized",
    `the OAuth credentials of MCP server "${name}" (${path}) ${problem}`,
    { hint, details: { server: name, file: path }, ...(cause ? { cause } : {}) },
  );
}
