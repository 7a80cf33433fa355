import { parseInputArgs } from "../../directives/index.js";
import type { EventStore } from "../../log/index.js";
import { ActorRosters } from "../../runtime/index.js";
import { resolveThreadsDir } from "../../transcript/index.js";
import { createChatInput, createChatRenderer } from "../chat/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  openStore,
  parseCommandArgs,
  parseIdentifier,
  UsageError,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import type { CliOutput } from "../format.js";
import type { CommandHelp } from "../usage.js";
import {
  ensureContinuity,
  foregroundDirective,
  openAgentSession,
  recordSessionMcp,
  sessionMcp,
} from "./agent-session.js";
import { CHAT_PREFIX, latestChat, newChatId } from "./chat-continuity.js";
import { ChatLead } from "./chat-lead.js";
import { runSlashCommand } from "./chat-slash.js";
import { defaultActor } from "./continuities.js";
import { cliLeaseOptions } from "./continuity-follower.js";
import { ConversationView } from "./conversation-view.js";
import { startOfRecentTurns } from "./tail.js";

/** Help of `spool chat`: for the integrator to register in `USAGE`. */
export const CHAT_USAGE: CommandHelp = {
  synopsis: "spool chat [--new] [--continuity ID] [--agent NAME] [--directive NAME] [--input k=v]…",
  text: `Usage: spool chat [--new] [--continuity ID] [--agent NAME] [--directive NAME] [--input k=v]…

An interactive chat with an agent on the continuity log: thoughts stream dimmed, each action
shows live with a spinner then ✓/✗ and its duration, responses stream with markdown rendered
(words wrap at the terminal's width),
and every step shows its tokens, spend and context pressure. The chat continues the same
continuity across restarts (the most recent chat in the store), and first finishes any run a
crash interrupted. On start it shows the last exchanges of the chat, as one conversation across
the threads it was handed off to, the way they showed live: your turns as "you › text" (a long
one folded), responses rendered as markdown. Ctrl-C cancels the running step; Ctrl-D (or a second Ctrl-C at
an empty prompt) exits.

While another process runs the same continuity (another chat, a run), this chat follows it
read-only and queues each of your turns for that process to answer. When that process ends, or
dies and its lease lapses (SPOOL_LEASE_TTL_MS), this chat says so and takes the continuity over
on its own, recovering a run it left unfinished. A turn another process queues for this chat
shows as "› who: text" above the prompt, and its answer streams there too.

Slash commands: /pin <text> pins a fact into every later context (it survives handoffs),
/pin-rule <text> a rule, /pins lists them, /unpin <id> removes one, /help lists these. Any
other /word is answered "unknown command" (with the nearest known one) and is not sent to the
model; start a turn with // to send it with a leading / (a path such as /usr/bin is sent as is).

The provider comes from the environment: ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENAI_BASE_URL
(Ollama, vLLM, llama.cpp), or SPOOL_PROVIDER/SPOOL_MODEL/SPOOL_API_KEY/SPOOL_BASE_URL. With none
set, Spool runs its built-in demo agent on the scripted provider, over real tools.

Options:
  --new                  Start a fresh chat continuity instead of continuing the last one
  --continuity <id>      Chat on this continuity (created when absent)
  --agent <name>         Run this agent manifest (.ai/agents/<name>.yaml; default: what the
                         continuity runs, else assistant)
  --directive <name>     Run this directive without a manifest
  --input <k=v>          A typed input of the directive, filling $k in its instructions (repeat
                         for several); a required input missing is refused, as by spool run
${DB_HELP_LINES}
`,
};

/** How many of the latest turns `spool chat` recaps when it continues a chat. */
export const CHAT_RECAP_TURNS = 2;

/**
 * `spool chat`: the main job. Reads turns from the terminal (or a pipe: one line per turn),
 * runs each on the agent and renders the run live; resumes interrupted work first.
 */
export async function chatCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "chat";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    new: { type: "boolean" },
    continuity: { type: "string" },
    agent: { type: "string" },
    directive: { type: "string" },
    input: { type: "string", multiple: true },
  });
  if (positionals.length > 0) {
    throw new UsageError(
      command,
      `unexpected ${JSON.stringify(positionals[0])}: chat reads turns from the terminal`,
    );
  }
  const inputs = parseInputArgs(values.input ?? []);
  const store = await openStore(ctx, locateStore(ctx, values.db));
  const terminal: NonNullable<CommandContext["io"]["terminal"]> = ctx.io.terminal ?? {
    input: process.stdin,
  };
  // Everything the chat shows goes through the input's output, which keeps the prompt below it:
  // a run of a turn queued by another process, or the run this chat follows, prints above it.
  const input = createChatInput({
    input: terminal.input,
    output: ctx.io.stdout,
    prompt: "you › ",
    ...(terminal.signals ? { signals: terminal.signals } : {}),
  });
  input.setBusy(true);
  const output = input.output;
  const renderer = createChatRenderer({ output, env: ctx.io.env });
  let session: ReturnType<typeof openAgentSession> | undefined;
  let lead: ChatLead | undefined;
  try {
    const continuity =
      values.continuity !== undefined
        ? parseIdentifier(command, "--continuity", values.continuity)
        : values.new
          ? newChatId()
          : ((await latestChat(store)) ?? CHAT_PREFIX);
    // A continuity goes on with the directive and agent it runs (as resume and replay take it up),
    // unless this chat names others: one started by `spool run <directive>` keeps its tools.
    const running =
      values.agent === undefined && values.directive === undefined
        ? await foregroundDirective(store, continuity)
        : undefined;
    const agent = values.agent ?? running?.agent;
    const directive = values.directive ?? running?.directive;
    const mcp = await sessionMcp(ctx, store, continuity, agent);
    session = openAgentSession(ctx, store, continuity, {
      mcp,
      observer: renderer.observe,
      ...(agent !== undefined ? { agent } : {}),
      ...(directive !== undefined ? { directive } : {}),
      inputs: values.input === undefined && running?.inputs ? running.inputs : inputs,
      lease: cliLeaseOptions(ctx),
      threadsDir: resolveThreadsDir({ cwd: ctx.io.cwd, env: ctx.io.env, db: values.db }),
    });
    const { assembled, runtime } = session;
    const created = await ensureContinuity(
      ctx,
      store,
      continuity,
      "Chat",
      "chat",
      assembled.options.agent.manifest,
    );
    // An actor the continuity refuses (read-only, removed, unknown) is told so before the prompt.
    if (!created) await new ActorRosters(store).check(continuity, defaultActor(ctx));
    if (assembled.demoReason) renderer.info(assembled.demoReason);
    for (const line of await recordSessionMcp(store, mcp)) renderer.info(line);
    const turns = created ? 0 : await countTurns(store, continuity);
    renderer.info(
      `${assembled.directive.name} · ${assembled.providerName} ${assembled.model} · ${
        created
          ? `new chat ${continuity}`
          : `chat ${continuity}, ${turns} turn${turns === 1 ? "" : "s"} so far`
      } · Ctrl-C cancels a step, Ctrl-D exits, /help for commands`,
    );
    if (turns > 0) await recap(ctx, store, continuity, output);
    input.onInterrupt(() => runtime.cancel(continuity, "cancelled with Ctrl-C"));
    // Runs the continuity here, or, while another process does, follows it read-only.
    lead = new ChatLead({
      ctx,
      store,
      continuity,
      runtime,
      write: (chunk) => void output.write(chunk),
      say: renderer,
    });
    await lead.lead();
    input.setBusy(false);
    const actor = defaultActor(ctx);
    for (let text = await input.next(); text !== undefined; text = await input.next()) {
      if (text.trim() === "") continue;
      if (!input.interactive) renderer.userEcho(text);
      const slash = { store, continuity, actor, out: renderer, width: ctx.width };
      const line = await runSlashCommand(text, slash);
      if (line.handled) continue;
      const turn = { text: line.text, actor, origin: "cli" };
      input.setBusy(true);
      try {
        if (lead.following && !(await lead.lead())) await lead.queue(turn);
        else await runtime.submit(continuity, turn);
      } finally {
        input.setBusy(false);
      }
    }
    return 0;
  } finally {
    await lead?.close();
    input.close();
    renderer.close();
    await session?.close();
    await store.close();
  }
}

/**
 * Shows the chat's last `CHAT_RECAP_TURNS` exchanges before the prompt: what was said (turns and
 * responses, not thoughts or actions), as one conversation across handoffs (`ConversationView`
 * in `messages` detail). Written whole, before the renderer draws anything live.
 */
async function recap(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  output: CliOutput,
): Promise<void> {
  const after = await startOfRecentTurns(store, continuity, CHAT_RECAP_TURNS);
  const view = new ConversationView({
    style: ctx.style,
    width: ctx.width,
    detail: "messages",
    you: defaultActor(ctx),
    write: (chunk) => void output.write(chunk),
  });
  for await (const event of store.read({ continuity, after })) view.push(event);
  view.finish();
}

async function countTurns(store: EventStore, continuity: string): Promise<number> {
  let count = 0;
  for await (const _event of store.read({ continuity, types: ["turn.added"] })) count += 1;
  return count;
}
