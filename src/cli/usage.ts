import { CHAT_USAGE } from "./commands/chat.js";
import { CONTEXT_USAGE } from "./commands/context-command.js";
import { FRAMES_USAGE } from "./commands/frames.js";
import { ITEMS_USAGE } from "./commands/items.js";
import { KEYS_INIT_USAGE, KEYS_USAGE } from "./commands/keys-init.js";
import { MCP_USAGE } from "./commands/mcp-command.js";
import {
  MEMORY_REINDEX_USAGE,
  MEMORY_SEARCH_USAGE,
  MEMORY_USAGE,
} from "./commands/memory-command.js";
import { PIN_USAGE, PINS_USAGE, UNPIN_USAGE } from "./commands/pins.js";
import { POSTGRES_USAGE } from "./commands/postgres-command.js";
import { REPLAY_USAGE, RESUME_USAGE } from "./commands/resume-replay.js";
import { RUN_USAGE } from "./commands/run.js";
import { SERVE_USAGE, TOKENS_USAGE } from "./commands/serve.js";
import { SIGN_USAGE } from "./commands/sign.js";
import { SOURCES_USAGE } from "./commands/sources.js";
import { TAIL_USAGE } from "./commands/tail.js";
import { THREADS_USAGE } from "./commands/threads.js";
import { TRACE_USAGE } from "./commands/trace.js";
import { TRANSCRIPT_USAGE } from "./commands/transcript.js";
import { VERIFY_USAGE } from "./commands/verify.js";
import { WATCH_USAGE } from "./commands/watch.js";
import { DB_HELP, HELP_HELP } from "./db-help.js";

/** The help of one command: its one-line synopsis and the full text `--help` prints. */
export interface CommandHelp {
  synopsis: string;
  text: string;
}

const DB = DB_HELP;
const HELP = HELP_HELP;

function help(
  synopsis: string,
  summary: string,
  options: string[],
  examples: string[],
): CommandHelp {
  return {
    synopsis,
    text: [
      `Usage: ${synopsis}`,
      "",
      summary,
      "",
      "Options:",
      ...options,
      DB,
      HELP,
      "",
      "Examples:",
      ...examples.map((example) => `  ${example}`),
      "",
    ].join("\n"),
  };
}

const TOP = `Usage: spool <command> [options]

Spool: a runtime for long-lived agents. One chat forever, every step in an append-only,
hash-chained event log that survives crashes and replays exactly.

Commands:
  chat                          Chat with an agent (the main job; a demo without a provider key)
  run <directive>               Run a directive once and exit with its status
  resume [continuity]           Continue runs a crash interrupted
  replay <continuity>           Re-derive a continuity from its log; exit 1 on a difference
  tail [continuity]             Follow a continuity live as a conversation
  threads [continuity]          List a continuity's threads: status, runs, tokens, handoffs
  watch                         Run an agent on its sources (logs, feeds) and show it live
  sources [continuity]          List a continuity's sources: kind, target, cursor, lag, chunks
  mcp list | serve | login      MCP servers, their status and tools; Spool as an MCP server; OAuth sign-in
  context [continuity]          Show what a model call was given: tokens per part, summaries, pins
  trace <continuity>            Export a continuity's runs as OpenTelemetry spans (--otlp, --json)
  frames [continuity]           Show a stream watch: latest frame, recent scores, rolling notes
  pin <text…>                   Pin a fact (--rule: a rule) into every later context
  unpin <id>                    Remove a pin
  pins                          List the pins in force
  memory search <query…>        Search the summaries and facts of every continuity
  memory reindex                Rebuild the memory index from the log
  items                         List directives, agents and configs, and where each resolves from
  sign <file>                   Sign an item file (directive, agent, config)
  continuities                  List continuities
  continuities create           Start a new continuity
  turn add <continuity> <text…> Add a turn to a continuity
  actors <continuity>           List who may add turns; actors add|remove change it
  log show <continuity>         Show a continuity's events
  log tail                      Show the newest events; --follow keeps watching
  log verify                    Check every hash chain for tampering
  protocol parse [FILE]         Parse model output into protocol events (JSON lines)
  providers decode [FILE]       Decode a recorded provider stream through its SDK
  transcript <thread>           Rebuild a thread's transcript.jsonl from the log
  keys init                     Create the Ed25519 key that signs checkpoints
  postgres start|stop|status    Run the bundled PostgreSQL as a local server for --db
  verify <target>               Verify a continuity, thread or transcript.jsonl and its signatures
  serve                         Run the HTTP + SSE API (docs/http-api.md)
  tokens create|list|revoke     Manage the API's bearer tokens

Options:
${DB}
  -h, --help             Show help (also after any command: spool log tail --help)
  -V, --version          Print the version

Exit codes: 0 ok, 1 not found or verification failed, 2 usage or configuration error,
3 store error (unreachable, not a Spool store, written by a newer Spool).
Set SPOOL_DEBUG=1 to print stack traces; set NO_COLOR=1 to turn colour off.

Examples:
  spool chat
  spool run demo
  spool replay chat
  spool continuities create --title "Home"
  spool turn add 01JC3V7Q8ZK2N5W4X6Y8A0B1C2 "remind me to water the plants"
  spool log tail --follow --db postgres://spool@localhost/spool
`;

/** Help texts by command (`""` is `spool` itself; groups such as `log` list their subcommands). */
export const USAGE: Record<string, CommandHelp> = {
  "": { synopsis: "spool <command> [options]", text: TOP },
  continuities: help(
    "spool continuities [--json] | spool continuities create [options]",
    "Lists every continuity: id, title, number of events, last activity and the head of its hash\nchain. `spool continuities create --help` shows how to start one.",
    ["  --json                 Print one JSON object per continuity"],
    ["spool continuities", "spool continuities --json --db ./work/.spool"],
  ),
  "continuities create": help(
    "spool continuities create [--id ID] [--title TITLE] [--actor ACTOR]",
    "Starts a continuity (appends continuity.created) and prints its id. Refuses an id that\nalready has events.",
    [
      "  --id <id>              Its id (default: a new ULID); letters, digits and . _ : @ -",
      "  --title <title>        A title, up to 200 characters",
      "  --actor <actor>        Who creates it (default: $USER, else local)",
    ],
    [
      'spool continuities create --title "Home"',
      "spool continuities create --id work --actor alice",
    ],
  ),
  turn: {
    synopsis: "spool turn add <continuity> <text…> [options]",
    text: `Usage: spool turn add <continuity> <text…> [options]

Commands:
  turn add <continuity> <text…>  Add a turn to a continuity

Run \`spool turn add --help\` for its options.
`,
  },
  "turn add": help(
    "spool turn add <continuity> <text…> [--actor ACTOR]",
    'Appends a turn (turn.added, origin cli) to an existing continuity and prints its seq.\nThe words of <text…> are joined with spaces; put text that starts with "-" after "--".',
    ["  --actor <actor>        Who says it (default: $USER, else local)"],
    [
      'spool turn add home "remind me to water the plants"',
      "spool turn add home -- -v is not an option here",
    ],
  ),
  actors: help(
    "spool actors <continuity> [--json] | spool actors <add | remove> <continuity> <actor>",
    "Lists who may add turns to a continuity: its creator (an owner) and the actors added, with\ntheir access (owner, write, read) or removed. A continuity is open to any actor until one is\nadded; from then on only its creator and actors with owner or write access add turns.\n`spool actors add --help` and `spool actors remove --help` change the list.",
    ["  --json                 Print one JSON object per actor"],
    ["spool actors home", "spool actors add home alice --access read"],
  ),
  "actors add": help(
    "spool actors add <continuity> <actor> [--access A] [--kind K] [--name NAME]",
    "Adds an actor to the continuity's access list (actor.added) and prints its seq. Run it as an\nowner: the continuity's creator or an actor added with owner access ($USER, else local).",
    [
      "  --access <access>      owner, write (default) or read: read may not add turns",
      "  --kind <kind>          person (default), bot, source or agent",
      "  --name <name>          A display name, up to 200 characters",
    ],
    ["spool actors add home alice", "spool actors add home viewer --access read --kind bot"],
  ),
  "actors remove": help(
    "spool actors remove <continuity> <actor> [--reason TEXT]",
    "Removes an actor from the continuity's access list (actor.removed) and prints its seq: it\nmay add no more turns. Run it as an owner ($USER, else local).",
    ["  --reason <text>        Why, up to 1000 characters"],
    ['spool actors remove home alice --reason "left the team"'],
  ),
  log: {
    synopsis: "spool log <show | tail | verify> [options]",
    text: `Usage: spool log <command> [options]

Commands:
  log show <continuity>  Show a continuity's events
  log tail               Show the newest events; --follow keeps watching
  log verify             Check every hash chain for tampering

Run \`spool log <command> --help\` for its options.
`,
  },
  "log show": help(
    "spool log show <continuity> [--after SEQ] [--limit N] [--type TYPE …] [--json]",
    "Prints a continuity's events, one per line: seq, time (UTC), type, stream and a summary.",
    [
      "  --after <seq>          Only events after this seq",
      "  --limit <n>            At most n events",
      "  --type <type>          Only this event type (repeat for several)",
      "  --json                 Print the stored events as JSON lines",
    ],
    ["spool log show home", "spool log show home --type turn.added --after 120 --limit 10 --json"],
  ),
  "log tail": help(
    "spool log tail [--continuity ID] [--lines N | --after SEQ] [--follow] [--json]",
    "Prints the last events of the whole log or of one continuity. With --follow it keeps printing\nnew events as they are appended until interrupted (Ctrl-C).",
    [
      "  --continuity <id>      Only this continuity",
      "  -n, --lines <n>        How many of the last events to print (default 20)",
      "  --after <seq>          Instead, every event after this seq",
      "  -f, --follow           Keep printing events as they arrive",
      "  --json                 Print the stored events as JSON lines",
    ],
    ["spool log tail -n 50", "spool log tail --continuity home --follow --json"],
  ),
  "log verify": help(
    "spool log verify [--continuity ID] [--json]",
    "Recomputes every hash chain from its first event and compares it with what is stored.\nExits 0 when everything checks out, 1 naming the first event that does not.",
    [
      "  --continuity <id>      Only this continuity",
      "  --json                 Print the report as JSON",
    ],
    ["spool log verify", "spool log verify --continuity home --json"],
  ),
  protocol: {
    synopsis: "spool protocol parse [options] [FILE | -]",
    text: `Usage: spool protocol parse [options] [FILE | -]

Commands:
  protocol parse [FILE]  Parse model output into protocol events (JSON lines)

Run \`spool protocol parse --help\` for its options.
`,
  },
  transcript: TRANSCRIPT_USAGE,
  keys: KEYS_USAGE,
  "keys init": KEYS_INIT_USAGE,
  postgres: POSTGRES_USAGE,
  "postgres start": POSTGRES_USAGE,
  "postgres stop": POSTGRES_USAGE,
  "postgres status": POSTGRES_USAGE,
  verify: VERIFY_USAGE,
  chat: CHAT_USAGE,
  run: RUN_USAGE,
  resume: RESUME_USAGE,
  replay: REPLAY_USAGE,
  items: ITEMS_USAGE,
  sign: SIGN_USAGE,
  tail: TAIL_USAGE,
  threads: THREADS_USAGE,
  sources: SOURCES_USAGE,
  mcp: MCP_USAGE,
  "mcp list": MCP_USAGE,
  "mcp serve": MCP_USAGE,
  "mcp login": MCP_USAGE,
  watch: WATCH_USAGE,
  context: CONTEXT_USAGE,
  trace: TRACE_USAGE,
  pin: PIN_USAGE,
  unpin: UNPIN_USAGE,
  pins: PINS_USAGE,
  frames: FRAMES_USAGE,
  memory: MEMORY_USAGE,
  "memory search": MEMORY_SEARCH_USAGE,
  "memory reindex": MEMORY_REINDEX_USAGE,
  providers: {
    synopsis: "spool providers decode [options] [FILE | -]",
    text: `Usage: spool providers decode [options] [FILE | -]

Commands:
  providers decode [FILE]  Decode a recorded provider stream through its SDK

Run \`spool providers decode --help\` for its options.
`,
  },
  "providers decode": {
    synopsis: "spool providers decode [--format F] [--flavour NAME] [--parts [--raw]] [FILE | -]",
    text: `Usage: spool providers decode [--format F] [--flavour NAME] [--parts [--raw]] [FILE | -]

Decodes a recorded provider stream (the HTTP response body exactly as the server sent it) through
the provider's official SDK and prints the assembled message as JSON: content blocks, tool calls
with their input parsed, usage, stop reason and response id. Reads FILE, or standard input for -
or no FILE. Makes no network call and needs no key or store. Exits 1 when the stream ends with an
error (the message then holds what arrived before it).

Options:
  --format <f>           anthropic | openai-chat | openai-responses (default: recognised from the bytes)
  --flavour <name>       OpenAI-compatible flavour for openai-chat (ollama, vllm, deepseek, groq, …)
  --parts                Print every stream part as a JSON line instead of the message
  --raw                  With --parts, also print each SDK event as a raw part
  --chunk-bytes <n>      Feed the SDK n bytes at a time (checks framing across chunk boundaries)
  -h, --help             Show this help

Examples:
  spool providers decode recorded.sse
  curl -sN … | spool providers decode --format openai-chat --flavour deepseek --parts -
`,
  },
  "protocol parse": {
    synopsis: "spool protocol parse [--chunk N | --random-chunks SEED] [--coalesce] [FILE | -]",
    text: `Usage: spool protocol parse [--chunk N | --random-chunks SEED] [--coalesce] [FILE | -]

Runs the streaming protocol parser (<thought>, <action>, <response>, <context_feed>) over a model
output and prints its events as JSON lines: block-start, block-delta, block-end, action, error.
Reads FILE, or standard input for - or no FILE (as it arrives). Needs no store.
See docs/protocol.md for the syntax and every event and error.

Options:
  --chunk <n>            Push the input in pieces of n characters (UTF-16 units)
  --random-chunks <seed> Push it in pieces of 1–16 characters, cut by a seeded generator
  --coalesce             Merge adjacent deltas of one block: every chunking prints the same lines
  -h, --help             Show this help

Examples:
  spool protocol parse output.txt
  spool protocol parse --chunk 1 --coalesce output.txt
  my-model | spool protocol parse -
`,
  },
  serve: SERVE_USAGE,
  tokens: TOKENS_USAGE,
  "tokens create": TOKENS_USAGE,
  "tokens revoke": TOKENS_USAGE,
};

/** Every command name, for "did you mean" suggestions. */
export const COMMAND_NAMES = Object.keys(USAGE).filter((name) => name !== "");
