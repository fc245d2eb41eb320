/**
 * What rewinding a history to the start of one turn drops: the turns, and
 * the side effects of their tool and subagent calls that the rewind leaves
 * in place (docs/features/local-agent-extensions.md, "session.rewind").
 *
 * @module
 */

import type { SessionRecord } from "../store/records.ts";

/** Calls of one tool among the dropped turns whose effects no rewind undoes. */
export interface Unrestorable {
  readonly tool: string;
  readonly calls: number;
}

/** The plan of one rewind. */
export interface RewindPlan {
  /** The turns dropped: the target's and every later one. */
  readonly turns: ReadonlySet<string>;
  /** The dropped calls, by tool name in ascending code-unit order. */
  readonly unrestorable: readonly Unrestorable[];
}

/**
 * The plan of rewinding `standing` (a history with its earlier rewinds
 * applied, `applyRewinds`) to the start of turn `fromTurn`, or null when no
 * such turn started. Every dropped tool or subagent call counts once,
 * whatever states it recorded: a shell command, an MCP call, Code Mode and
 * a subagent's own work are never undone; a file `write_file` or
 * `edit_file` changed can be put back from its checkpoint (`file-restore.ts`).
 */
export function planRewind(standing: readonly SessionRecord[], fromTurn: string): RewindPlan | null {
  const start = standing.findIndex((record) => record.type === "turn_started" && record.turn_id === fromTurn);
  if (start < 0) return null;
  const turns = new Set<string>();
  const calls = new Map<string, Set<string>>();
  for (const record of standing.slice(start)) {
    if (record.type === "turn_started") turns.add(record.turn_id);
    if (record.type !== "activity" || record.kind === "compaction") continue;
    const ids = calls.get(record.name) ?? new Set<string>();
    ids.add(JSON.stringify([record.turn_id, record.activity_id]));
    calls.set(record.name, ids);
  }
  const unrestorable = [...calls].map(([tool, ids]) => ({ tool, calls: ids.size })).sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
  return { turns, unrestorable };
}

/** How many messages of a snapshot's entries `messageId` and every later one make. */
export function messagesFrom(entries: readonly { readonly message_id: string }[], messageId: string): number {
  const first = entries.findIndex((entry) => entry.message_id === messageId);
  return first < 0 ? 0 : new Set(entries.slice(first).map((entry) => entry.message_id)).size;
}
