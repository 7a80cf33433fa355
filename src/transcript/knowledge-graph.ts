import type { SpoolEvent } from "../spec/index.js";
import { cell, code, formatDuration } from "./knowledge-text.js";

/** A node's state in the status table. */
type NodeStatus = "pending" | "running" | "succeeded" | "failed" | "skipped" | "error";

const ICONS: Record<NodeStatus, string> = {
  pending: "⏳ pending",
  running: "🔄 running",
  succeeded: "✅ succeeded",
  failed: "❌ failed",
  skipped: "⏭️ skipped",
  error: "❌ error",
};

interface NodeState {
  node: string;
  name: string;
  status: NodeStatus;
  durationMs?: number;
}

interface GraphState {
  id: string;
  name: string;
  nodes: Map<string, NodeState>;
  foreach: { node: string; items: number; succeeded: number; failed: number; durationMs: number }[];
  status: string;
}

/**
 * The workflow graphs of a thread, folded from `graph.*`, `foreach.completed` and graph-kind
 * `step.*` events, rendered as a node status table per graph. Pure.
 */
export class GraphFold {
  readonly #graphs = new Map<string, GraphState>();

  /** True once any graph event was folded. */
  get any(): boolean {
    return this.#graphs.size > 0;
  }

  /** Folds one event; ignores events that are not about graphs. */
  push(event: SpoolEvent): void {
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case "graph.started": {
        const graph = this.#graph(String(data.graph));
        graph.name = String(data.name);
        for (const node of data.nodes as { node: string; name?: string }[]) {
          this.#node(graph, node.node).name = node.name ?? "";
        }
        return;
      }
      case "step.started":
        if (data.kind === "graph")
          this.#node(this.#graph(String(data.graph)), String(data.node)).status = "running";
        return;
      case "step.completed":
        if (data.kind === "graph") {
          const node = this.#node(this.#graph(String(data.graph)), String(data.node));
          node.status = data.status as NodeStatus;
          node.durationMs = data.duration_ms as number;
        }
        return;
      case "foreach.completed":
        this.#graph(String(data.graph)).foreach.push({
          node: String(data.node),
          items: data.items as number,
          succeeded: data.succeeded as number,
          failed: data.failed as number,
          durationMs: data.duration_ms as number,
        });
        return;
      case "graph.completed":
        this.#graph(String(data.graph)).status =
          `✅ completed in ${formatDuration(data.duration_ms as number)}`;
        return;
      case "graph.error": {
        const graph = this.#graph(String(data.graph));
        const error = data.error as { code: string; message: string };
        if (typeof data.node === "string") this.#node(graph, data.node).status = "error";
        const at = typeof data.node === "string" ? ` at ${code(data.node)}` : "";
        graph.status = `❌ error${at}: ${cell(error.message)} (${cell(error.code)})`;
        return;
      }
      case "graph.cancelled":
        this.#graph(String(data.graph)).status = `⏹️ cancelled: ${cell(String(data.reason))}`;
        return;
    }
  }

  /** One section per graph, in order of first appearance. */
  render(): string[] {
    const out: string[] = [];
    for (const graph of this.#graphs.values()) {
      out.push(`## Workflow ${graph.name ? `${cell(graph.name)} ` : ""}(${code(graph.id)})`, "");
      out.push("| Node | Name | Status | Duration |", "| --- | --- | --- | --- |");
      for (const node of graph.nodes.values()) {
        const duration = node.durationMs === undefined ? "" : formatDuration(node.durationMs);
        out.push(
          `| ${code(node.node)} | ${cell(node.name)} | ${ICONS[node.status]} | ${duration} |`,
        );
      }
      out.push("");
      for (const run of graph.foreach) {
        out.push(
          `- Foreach ${code(run.node)}: ${run.items} items, ${run.succeeded} succeeded, ${run.failed} failed (${formatDuration(run.durationMs)})`,
        );
      }
      if (graph.foreach.length > 0) out.push("");
      out.push(`**Status:** ${graph.status}`, "");
    }
    return out;
  }

  #graph(id: string): GraphState {
    let graph = this.#graphs.get(id);
    if (!graph) {
      graph = { id, name: "", nodes: new Map(), foreach: [], status: "🔄 running" };
      this.#graphs.set(id, graph);
    }
    return graph;
  }

  #node(graph: GraphState, id: string): NodeState {
    let node = graph.nodes.get(id);
    if (!node) {
      node = { node: id, name: "", status: "pending" };
      graph.nodes.set(id, node);
    }
    return node;
  }
}
