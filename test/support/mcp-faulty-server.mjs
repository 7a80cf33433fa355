// A tiny stdio MCP server for the tests, built with the SDK's low-level Server class so that it
// can list a tool whose schema is invalid. Tools: `echo` ({text}) answers; `crash` exits the
// process mid-call without answering; `hang` never answers; `not-an-object` and `broken-ref`
// list unusable schemas; `elicit` ({params}) sends the client an `elicitation/create` request with
// `params` as given, however malformed, and answers with the client's result as JSON. Each start
// appends a line to the file named by MCP_FAULTY_STARTS.
import { appendFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

if (process.env.MCP_FAULTY_STARTS)
  appendFileSync(process.env.MCP_FAULTY_STARTS, `${process.pid}\n`);

const server = new Server({ name: "faulty", version: "1.0.0" }, { capabilities: { tools: {} } });
const text = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "echo",
      description: "Says the text back.",
      inputSchema: text,
      annotations: { readOnlyHint: true },
    },
    {
      name: "crash",
      description: "Exits mid-call.",
      inputSchema: { type: "object", properties: {} },
    },
    {
      name: "hang",
      description: "Never answers.",
      inputSchema: { type: "object", properties: {} },
    },
    {
      name: "elicit",
      description: "Asks the client for input with the elicitation params given.",
      inputSchema: { type: "object", properties: { params: {} }, required: ["params"] },
    },
    { name: "not-an-object", description: "A string schema.", inputSchema: { type: "string" } },
    {
      name: "broken-ref",
      description: "A schema with a reference to nowhere.",
      inputSchema: { type: "object", properties: { x: { $ref: "#/$defs/nowhere" } } },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  switch (request.params.name) {
    case "echo":
      return { content: [{ type: "text", text: `echo: ${request.params.arguments?.text}` }] };
    case "crash":
      process.exit(3);
      break;
    case "hang":
      return new Promise(() => {});
    case "elicit": {
      const result = await server.request(
        { method: "elicitation/create", params: request.params.arguments?.params },
        ElicitResultSchema,
      );
      return { content: [{ type: "text", text: JSON.stringify(result) }] };
    }
    default:
      return { content: [{ type: "text", text: "no such tool" }], isError: true };
  }
});
await server.connect(new StdioServerTransport());
