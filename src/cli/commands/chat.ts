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
import type { CommandHelp } from "../usage.js";
import { ensureContinuity, openAgentSession } from "./agent-session.js";
import { defaultActor } from "./continuities.js";

/** Help of `spool chat`: for the integrator to register in `USAGE`. */
export const CHAT_USAGE: CommandHelp = {
  synopsis: "spool chat [--new] [--continuity ID] [--agent NAME] [--directive NAME]",
  text: `Usage: spool chat [--new] [--continuity ID] [--agent NAME] [--directive NAME]

An interactive chat with an agent on the continuity log: thoughts stream dimmed, each action
shows live with a spinner then ✓/✗ and its duration, responses stream with markdown rendered,
and every step shows its tokens, spend and context pressure. The chat continues the same
continuity across restarts (the most recent chat in the store), and first finishes any run a
crash interrupted. Ctrl-C cancels the running step; Ctrl-D (or a second Ctrl-C at an empty
prompt) exits.

The provider comes from the environment: ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENAI_BASE_URL
(Ollama, vLLM, llama.cpp), or SPOOL_PROVIDER/SPOOL_MODEL/SPOOL_API_KEY/SPOOL_BASE_URL. With none
set, Spool runs its built-in demo agent on the scripted provider, over real tools.

Options:
  --new                  Start a fresh chat continuity instead of continuing the last one
  --continuity <id>      Chat on this continuity (created when absent)
  --agent <name>         Run this agent manifest (.ai/agents/<name>.yaml; default: assistant)
  --directive <name>     Run this directive without a manifest
  --db <dir | file.db | postgres://…>
                         Where the log lives (default: $SPOOL_DB, then ./.spool/)
  -h, --help             Show this help
`,
};

const CHAT_PREFIX = "chat";

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
  });
  if (positionals.length > 0) {
    throw new UsageError(
      command,
      `unexpected ${JSON.stringify(positionals[0])}: chat reads turns from the terminal`,
    );
  }
  const store = await openStore(ctx, locateStore(ctx, values.db));
  const renderer = createChatRenderer({ output: ctx.io.stdout, env: ctx.io.env });
  const terminal: NonNullable<CommandContext["io"]["terminal"]> = ctx.io.terminal ?? {
    input: process.stdin,
  };
  let session: ReturnType<typeof openAgentSession> | undefined;
  let input: ReturnType<typeof createChatInput> | undefined;
  try {
    const continuity =
      values.continuity !== undefined
        ? parseIdentifier(command, "--continuity", values.continuity)
        : values.new
          ? newChatId()
          : ((await latestChat(store)) ?? CHAT_PREFIX);
    session = openAgentSession(ctx, store, continuity, {
      observer: renderer.observe,
      ...(values.agent !== undefined ? { agent: values.agent } : {}),
      ...(values.directive !== undefined ? { directive: values.directive } : {}),
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
    if (assembled.demoReason) renderer.info(assembled.demoReason);
    const turns = created ? 0 : await countTurns(store, continuity);
    renderer.info(
      `${assembled.directive.name} · ${assembled.providerName} ${assembled.model} · ${
        created
          ? `new chat ${continuity}`
          : `chat ${continuity}, ${turns} turn${turns === 1 ? "" : "s"} so far`
      } · Ctrl-C cancels a step, Ctrl-D exits`,
    );
    input = createChatInput({
      input: terminal.input,
      output: ctx.io.stdout,
      prompt: "you › ",
      ...(terminal.signals ? { signals: terminal.signals } : {}),
    });
    input.onInterrupt(() => runtime.cancel(continuity, "cancelled with Ctrl-C"));
    input.setBusy(true);
    await runtime.resume(continuity);
    input.setBusy(false);
    const actor = defaultActor(ctx);
    for (let text = await input.next(); text !== undefined; text = await input.next()) {
      if (text.trim() === "") continue;
      if (!input.interactive) renderer.userEcho(text);
      input.setBusy(true);
      try {
        await runtime.submit(continuity, { text, actor, origin: "cli" });
      } finally {
        input.setBusy(false);
      }
    }
    return 0;
  } finally {
    input?.close();
    renderer.close();
    await session?.close();
    await store.close();
  }
}

/** A new chat's continuity id: `chat-` and the time, which sorts and reads well. */
function newChatId(): string {
  return `${CHAT_PREFIX}-${new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "")}`;
}

/** The most recently active chat continuity of the store. */
async function latestChat(store: Parameters<typeof countTurns>[0]): Promise<string | undefined> {
  const heads = await store.continuities();
  const chats = heads.filter(
    (head) => head.continuity === CHAT_PREFIX || head.continuity.startsWith(`${CHAT_PREFIX}-`),
  );
  chats.sort((a, b) => a.lastSeq - b.lastSeq);
  return chats.at(-1)?.continuity;
}

async function countTurns(
  store: import("../../log/index.js").EventStore,
  continuity: string,
): Promise<number> {
  let count = 0;
  for await (const _event of store.read({ continuity, types: ["turn.added"] })) count += 1;
  return count;
}
