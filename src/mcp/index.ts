/**
 * MCP: servers declared in `.ai/mcp.json` and `~/.ai/mcp.json` (Claude Desktop's, Cursor's and
 * VS Code's formats) as relics started on first use and restarted after a crash, their tools
 * offered to an agent as `mcp.<server>.<tool>` behind the same permissions as every tool, and
 * Spool itself as an MCP server (`spool mcp serve`). See `docs/mcp.md`.
 */
export {
  type AgentMcp,
  agentMcp,
  type HostCall,
  type PreparedMcp,
  type PrepareMcpOptions,
  prepareAgentMcp,
  recordMcpListings,
  selectMcpServers,
} from "./agent-mcp.js";
export {
  loadMcpConfig,
  MCP_SERVER_NAME,
  McpConfigError,
  type McpConfigOptions,
  type McpElicitationPolicy,
  type McpHttpServer,
  type McpOAuthConfig,
  type McpServerConfig,
  type McpStdioServer,
  mcpCredentialsDir,
} from "./mcp-config.js";
export {
  MCP_CLIENT_INFO,
  type McpConnection,
  type McpConnectOptions,
  openMcpConnection,
  withAuthorization,
} from "./mcp-connection.js";
export {
  answerElicitation,
  type ElicitationAnswer,
  type ElicitationDecline,
  type ElicitationValue,
  loggableContent,
} from "./mcp-elicitation.js";
export { McpError, type McpErrorCode } from "./mcp-error.js";
export {
  listServerTools,
  type McpListingOptions,
  type McpListings,
  resolveMcpListings,
} from "./mcp-listing.js";
export {
  createMcpOAuth,
  MCP_MAX_AUTHORIZATIONS,
  type McpOAuth,
  type McpOAuthOptions,
} from "./mcp-oauth.js";
export { type McpOAuthRecord, type McpOAuthStore, openMcpOAuthStore } from "./mcp-oauth-store.js";
export { createMcpRelic, type McpRelic, type McpToolInfo, mcpRelicName } from "./mcp-relic.js";
export { type McpCallResult, type McpContentPart, mcpCallResult } from "./mcp-result.js";
export {
  type McpRefusedTool,
  type McpRelicCall,
  type McpServerTools,
  mcpServerTools,
  mcpToolName,
} from "./mcp-tools.js";
export {
  type ConversationMessage,
  createSpoolMcpServer,
  type SpoolMcpServerOptions,
  type TurnAnswerText,
} from "./spool-mcp-server.js";
