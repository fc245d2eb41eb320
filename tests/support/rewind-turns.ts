/**
 * A session a rewind test starts from: a client that required
 * `session.rewind` and its preview, one created session, and a turn per
 * prompt run to its end.
 *
 * @module
 */

import { TURN_CAPABILITIES } from "./turns.ts";
import type { WireClient } from "./wire-client.ts";

/** The capabilities a rewinding client requires. */
export const REWIND = [...TURN_CAPABILITIES, "session.rewind", "session.rewind.preview"];

/** Initializes `client` for rewind, creates a session and runs one turn per prompt: the session and the last run's revision. */
export async function rewindSession(client: WireClient, prompts: readonly string[]): Promise<{ sessionId: string; revision: string }> {
  await client.ok("initialize", { required_capabilities: REWIND });
  const sessionId = (await client.ok("session.create")).session_id as string;
  let revision = "";
  for (const prompt of prompts) {
    const runId = (await client.ok("turn.start", { session_id: sessionId, prompt })).run_id as string;
    revision = (await client.runEvents(runId)).find((frame) => frame.event === "run.finished")!.data!.revision as string;
  }
  return { sessionId, revision };
}
