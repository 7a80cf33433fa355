import { RelicError } from "../relics/index.js";

/** The codes of `McpError`. */
export type McpErrorCode =
  /** The server could not be started or reached, or the handshake failed. */
  | "relic.mcp.connect-failed"
  /** The server went away (its process exited, the connection closed): it is restarted. */
  | "relic.mcp.crashed"
  /** A request got no answer within the server's `timeout`. */
  | "relic.mcp.timeout"
  /** The call was cancelled (the action's timeout or a cancellation). */
  | "relic.mcp.cancelled"
  /** The tool ran and reported an error (`isError` in its result). */
  | "relic.mcp.tool-error"
  /** The server answered the request with a JSON-RPC error. */
  | "relic.mcp.request-failed"
  /**
   * OAuth with the server failed: its authorization server refused, the sign-in needs a person
   * (`spool mcp login`), or the stored credentials cannot be read.
   */
  | "relic.mcp.unauthorized";

/**
 * A failure of an MCP server or one of its tools, as a relic error: `relic.mcp.crashed` is
 * `fatal` (its relic host stops the server and starts it again on the next call); the others
 * fail the one call. Messages name the server and never hold `env` or `headers` values.
 */
export class McpError extends RelicError {}
