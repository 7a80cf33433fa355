import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { z } from "zod";
import { displayPath } from "../directives/index.js";
import { expandEnvString } from "../feeds/index.js";
import { ConfigError } from "../spec/index.js";

/** Server names: what follows `mcp.` in tool names. Letters, digits, `_` and `-`. */
export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]{1,40}$/;

/** One server launched as a child process that speaks MCP on its stdin and stdout. */
export interface McpStdioServer {
  transport: "stdio";
  command: string;
  args: string[];
  /** Added to the child's environment (values already expanded: secrets, never logged). */
  env: Record<string, string>;
  cwd?: string;
}

/**
 * How Spool authorizes with an HTTP server that answers 401 (OAuth 2.1, as MCP specifies it).
 * Secrets (`clientSecret`, `privateKey`) are already expanded and never logged.
 */
export interface McpOAuthConfig {
  /**
   * `authorization_code` (default): a person (or an authorization server that approves by
   * itself) signs in, with PKCE; `client_credentials`: a machine client with `clientId` and
   * `clientSecret` or `privateKey`.
   */
  grantType: "authorization_code" | "client_credentials";
  /** A pre-registered client; without one, Spool registers itself (dynamic registration). */
  clientId?: string;
  clientSecret?: string;
  /** A PKCS#8 PEM key: the client authenticates with a signed JWT (`private_key_jwt`). */
  privateKey?: string;
  /** The JWT's algorithm with `privateKey` (default `RS256`). */
  signingAlgorithm?: string;
  /** Scopes to ask for when the server names none. */
  scope?: string;
  /** An https URL of Spool's client metadata document, used where the server supports it. */
  clientMetadataUrl?: string;
  /** The loopback port the authorization redirect returns to (default: one chosen once). */
  callbackPort?: number;
}

/** One server reached over HTTP: Streamable HTTP, falling back to SSE (or SSE only). */
export interface McpHttpServer {
  transport: "http" | "sse";
  url: string;
  /** Sent with every request (values already expanded: secrets, never logged). */
  headers: Record<string, string>;
  /** OAuth when the server asks for it; absent with `"oauth": false` or an `Authorization` header. */
  oauth?: McpOAuthConfig;
  /**
   * The folder where OAuth clients and tokens persist, one 0600 file per server (default
   * `<spool config dir>/mcp-oauth`: `$SPOOL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/spool`, else
   * `~/.config/spool`).
   */
  credentialsDir?: string;
}

/**
 * How a server's `elicitation/create` requests are answered, as no person is asked: `defaults`
 * accepts with the requested schema's defaults when every required field has one, and declines
 * otherwise; `decline` declines every request.
 */
export type McpElicitationPolicy = "defaults" | "decline";

/** A configured MCP server: its name, where it was declared, and how to reach it. */
export type McpServerConfig = (McpStdioServer | McpHttpServer) & {
  name: string;
  /** The file that declared it, as messages show it (`.ai/mcp.json`, `~/.ai/mcp.json`). */
  file: string;
  /** Seconds one request may take before it fails with `relic.mcp.timeout` (default 60). */
  timeoutSeconds: number;
  /** How its elicitation requests are answered (default `defaults`). */
  elicitation?: McpElicitationPolicy;
  /**
   * A digest of the settings that change what the server offers (command, args, url; never
   * env or headers values): a tool list recorded under another fingerprint is not reused.
   */
  fingerprint: string;
};

/** Where `loadMcpConfig` looks and what it expands with. */
export interface McpConfigOptions {
  /** The workspace: the project tier is `<workspace>/.ai/mcp.json`. */
  workspace: string;
  /** The home directory: the user tier is `<home>/.ai/mcp.json` (default `os.homedir()`). */
  home?: string;
  /** What `${env:NAME}` and `${NAME}` read. */
  env: Readonly<Record<string, string | undefined>>;
}

/** A problem in an `mcp.json`: the file, the server, the field, and what to do. */
export class McpConfigError extends ConfigError {}

const DEFAULT_TIMEOUT_SECONDS = 60;

const stringMap = z.record(z.string(), z.string());
const oauthSchema = z.strictObject({
  grantType: z.enum(["authorization_code", "client_credentials"]).optional(),
  clientId: z.string().min(1, "must not be empty").optional(),
  clientSecret: z.string().min(1, "must not be empty").optional(),
  privateKey: z.string().min(1, "must not be empty").optional(),
  signingAlgorithm: z
    .enum(["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"])
    .optional(),
  scope: z.string().optional(),
  clientMetadataUrl: z.url({ protocol: /^https$/, error: "must be an https:// URL" }).optional(),
  callbackPort: z.number().int().min(1).max(65535).optional(),
});
const entrySchema = z.looseObject({
  type: z.enum(["stdio", "http", "sse", "streamable-http", "streamableHttp"]).optional(),
  command: z.string().min(1, "must name the program to run").optional(),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  cwd: z.string().optional(),
  url: z.url("must be an http:// or https:// URL").optional(),
  headers: stringMap.optional(),
  disabled: z.boolean().optional(),
  timeout: z.number().positive("must be a positive number of seconds").optional(),
  elicitation: z.enum(["defaults", "decline"]).optional(),
  /** `false`, or settings read by `oauthSchema` (so a mistake names its own field). */
  oauth: z.unknown().optional(),
});
const fileSchema = z.looseObject({
  mcpServers: z.record(z.string(), z.unknown()).optional(),
  servers: z.record(z.string(), z.unknown()).optional(),
});

/**
 * The MCP servers declared in `<workspace>/.ai/mcp.json` and `<home>/.ai/mcp.json`, the project's
 * over the user's by name, sorted by name. Both shapes people already have are read: Claude
 * Desktop's and Cursor's `{"mcpServers": {name: {command, args, env} | {url, headers}}}` and VS
 * Code's `{"servers": {name: {type: "stdio" | "http" | "sse", …}}}`. Strings expand `${env:NAME}`,
 * `${NAME}`, `${NAME:-default}`, `${workspaceFolder}` and `${userHome}`; `disabled: true` leaves
 * a server out. A missing file is no servers.
 *
 * Throws `McpConfigError` (`config.mcp`) naming the file, the server and the field for JSON that
 * does not parse, an entry that is neither a command nor a URL, a bad name or an unset variable.
 * Error messages never contain a value of `env` or `headers`.
 */
export function loadMcpConfig(options: McpConfigOptions): McpServerConfig[] {
  const workspace = resolve(options.workspace);
  const home = resolve(options.home ?? homedir());
  const files = [join(home, ".ai", "mcp.json"), join(workspace, ".ai", "mcp.json")];
  const byName = new Map<string, McpServerConfig>();
  for (const path of [...new Set(files)]) {
    const file = displayPath(path, workspace, home);
    for (const server of readFile(path, file, { ...options, workspace, home })) {
      byName.set(server.name, server);
    }
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

function readFile(
  path: string,
  file: string,
  options: Required<Pick<McpConfigOptions, "workspace" | "home">> & McpConfigOptions,
): McpServerConfig[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new McpConfigError("config.mcp", `${file} cannot be read`, {
      cause: error,
      hint: "Check the file's permissions",
      details: { file },
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(
      "config.mcp",
      `${file} is not valid JSON: ${(error as Error).message}`,
      {
        hint: 'Write {"mcpServers": {"name": {"command": "…", "args": […]}}}',
        details: { file },
      },
    );
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success || (!parsed.data.mcpServers && !parsed.data.servers)) {
    throw new McpConfigError("config.mcp", `${file} has no "mcpServers" (or "servers") object`, {
      hint: 'Write {"mcpServers": {"name": {"command": "…", "args": […]}}} (Claude Desktop, Cursor) or {"servers": {…}} (VS Code)',
      details: { file },
    });
  }
  const entries = { ...parsed.data.servers, ...parsed.data.mcpServers };
  const servers: McpServerConfig[] = [];
  for (const [name, raw] of Object.entries(entries)) {
    const server = readEntry(name, raw, file, options);
    if (server) servers.push(server);
  }
  return servers;
}

function readEntry(
  name: string,
  raw: unknown,
  file: string,
  options: Required<Pick<McpConfigOptions, "workspace" | "home">> & McpConfigOptions,
): McpServerConfig | undefined {
  const fail = (field: string | undefined, message: string, hint: string) =>
    new McpConfigError(
      "config.mcp",
      `${file}: server "${name}"${field ? `, field "${field}"` : ""}: ${message}`,
      { hint, details: { file, server: name, ...(field ? { field } : {}) } },
    );
  if (!MCP_SERVER_NAME.test(name)) {
    throw fail(
      undefined,
      "the name must be 1 to 40 letters, digits, _ or -",
      "Rename it: the name becomes part of tool names (mcp.<server>.<tool>)",
    );
  }
  const parsed = entrySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw fail(
      issue.path.join(".") || undefined,
      issue.message,
      "An entry is {command, args, env} or {url, headers}",
    );
  }
  const entry = parsed.data;
  if (entry.disabled) return undefined;
  const expand = (value: string, field: string): string => {
    const vscode = value
      .replace(/\$\{workspaceFolder\}/g, options.workspace)
      .replace(/\$\{userHome\}/g, options.home)
      // biome-ignore lint/suspicious/noTemplateCurlyInString: rewrites ${env:X} to ${X}
      .replace(/\$\{env:([^}]*)\}/g, "${$1}");
    const result = expandEnvString(vscode, options.env);
    if (result.missing.length > 0) {
      throw fail(
        field,
        `\${env:${result.missing[0]}} is not set`,
        `Set ${result.missing[0]} in the environment, or write \${${result.missing[0]}:-default}`,
      );
    }
    if (result.invalid.length > 0) {
      throw fail(
        field,
        `${result.invalid[0]} is not an environment reference`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the message shows the syntax
        "Write ${env:NAME} or ${NAME:-default}; VS Code's ${input:…} prompts are not supported",
      );
    }
    return result.value;
  };
  const expandMap = (map: Record<string, string> | undefined, field: string) =>
    Object.fromEntries(
      Object.entries(map ?? {}).map(([key, value]) => [key, expand(value, `${field}.${key}`)]),
    );
  const common = {
    name,
    file,
    timeoutSeconds: entry.timeout ?? DEFAULT_TIMEOUT_SECONDS,
    elicitation: entry.elicitation ?? "defaults",
  };
  const wantsHttp = entry.type !== undefined && entry.type !== "stdio";
  if (entry.command !== undefined && !wantsHttp) {
    const args = (entry.args ?? []).map((arg, index) => expand(arg, `args.${index}`));
    const command = expand(entry.command, "command");
    const cwd =
      entry.cwd !== undefined ? resolve(options.workspace, expand(entry.cwd, "cwd")) : undefined;
    return {
      ...common,
      transport: "stdio",
      command,
      args,
      env: expandMap(entry.env, "env"),
      ...(cwd !== undefined ? { cwd } : {}),
      fingerprint: fingerprint(["stdio", command, ...args, cwd ?? ""]),
    };
  }
  if (entry.url !== undefined && entry.type !== "stdio") {
    const url = expand(entry.url, "url");
    if (!/^https?:\/\//i.test(url)) {
      throw fail("url", "must be an http:// or https:// URL", "Give the server's MCP endpoint");
    }
    const transport = entry.type === "sse" ? "sse" : "http";
    const headers = expandMap(entry.headers, "headers");
    const hasAuthorization = Object.keys(headers).some((key) => /^authorization$/i.test(key));
    const oauth =
      entry.oauth === false || (entry.oauth === undefined && hasAuthorization)
        ? undefined
        : readOAuth(parseOAuth(entry.oauth ?? {}, fail), expand, fail);
    return {
      ...common,
      transport,
      url,
      headers,
      ...(oauth ? { oauth, credentialsDir: mcpCredentialsDir(options.env, options.home) } : {}),
      fingerprint: fingerprint([transport, url]),
    };
  }
  throw fail(
    entry.type === "stdio" || entry.command !== undefined ? "command" : "url",
    entry.type === "stdio" || entry.command !== undefined
      ? "a stdio server needs a command"
      : "has neither a command (stdio) nor a url (HTTP)",
    'Give "command" (and "args") to launch it, or "url" to reach it over HTTP',
  );
}

function parseOAuth(
  raw: unknown,
  fail: (field: string | undefined, message: string, hint: string) => McpConfigError,
): z.output<typeof oauthSchema> {
  const parsed = oauthSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw fail(
    ["oauth", ...issue.path].join("."),
    issue.message,
    '"oauth" is false, or {grantType, clientId, clientSecret, privateKey, signingAlgorithm, scope, clientMetadataUrl, callbackPort}',
  );
}

function readOAuth(
  raw: z.output<typeof oauthSchema>,
  expand: (value: string, field: string) => string,
  fail: (field: string | undefined, message: string, hint: string) => McpConfigError,
): McpOAuthConfig {
  const text = (key: "clientId" | "clientSecret" | "privateKey" | "scope" | "clientMetadataUrl") =>
    raw[key] !== undefined ? { [key]: expand(raw[key], `oauth.${key}`) } : {};
  const oauth: McpOAuthConfig = {
    grantType: raw.grantType ?? "authorization_code",
    ...text("clientId"),
    ...text("clientSecret"),
    ...text("privateKey"),
    ...text("scope"),
    ...text("clientMetadataUrl"),
    ...(raw.signingAlgorithm ? { signingAlgorithm: raw.signingAlgorithm } : {}),
    ...(raw.callbackPort !== undefined ? { callbackPort: raw.callbackPort } : {}),
  };
  if ((oauth.clientSecret || oauth.privateKey) && !oauth.clientId) {
    throw fail(
      "oauth.clientId",
      "a client secret or private key needs the client id it belongs to",
      'Give "clientId" of the client registered with the authorization server',
    );
  }
  if (oauth.clientSecret && oauth.privateKey) {
    throw fail(
      "oauth.privateKey",
      "give either a client secret or a private key, not both",
      'Keep "clientSecret" for client_secret_basic/post, or "privateKey" for private_key_jwt',
    );
  }
  if (oauth.grantType === "client_credentials" && !oauth.clientSecret && !oauth.privateKey) {
    throw fail(
      "oauth.grantType",
      "client_credentials needs a clientId with a clientSecret or a privateKey",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the hint shows mcp.json's syntax
      'Add "clientId" and "clientSecret": "${env:NAME}" (or "privateKey"), or use authorization_code',
    );
  }
  return oauth;
}

/**
 * Where MCP OAuth credentials persist: `mcp-oauth/` in the user's Spool config folder
 * (`$SPOOL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/spool`, else `<home>/.config/spool`).
 */
export function mcpCredentialsDir(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: string = homedir(),
): string {
  const base =
    env.SPOOL_CONFIG_DIR ||
    (env.XDG_CONFIG_HOME ? join(env.XDG_CONFIG_HOME, "spool") : join(home, ".config", "spool"));
  return join(resolve(base), "mcp-oauth");
}

/** A short, stable digest of `parts` (the first 16 hex digits of their sha256). */
function fingerprint(parts: readonly string[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 16);
}
