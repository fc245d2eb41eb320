/**
 * Several sources of external tools as one (`external.ts`): the connected
 * MCP servers and the client's registered tools. Their names cannot clash
 * (`mcp__…` and `client__…`), so a name is looked up in each source in turn.
 *
 * @module
 */

import type { ExternalTools } from "./external.ts";

/** `sources` without the absent ones, as one port; null when none is left. */
export function joinExternalTools(...sources: readonly (ExternalTools | null)[]): ExternalTools | null {
  const present = sources.filter((source): source is ExternalTools => source !== null);
  if (present.length <= 1) return present[0] ?? null;
  return {
    refresh: async (signal) => {
      for (const source of present) await source.refresh(signal);
    },
    offered: () => present.flatMap((source) => source.offered()),
    find: (name) => present.map((source) => source.find(name)).find((tool) => tool !== undefined),
    takeNotices: () => present.flatMap((source) => source.takeNotices()),
  };
}
