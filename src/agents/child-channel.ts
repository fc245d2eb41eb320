/**
 * What a subagent's run shows on the delegating run's channel. The spec's
 * runner shows the client one conversation per run, so a child's text stays
 * off the wire (no `message.delta` or `message.reconcile`: the delegating
 * conversation shows its report as the `task` result) and so do its
 * diagnostics (the task's result says why it failed; its history keeps
 * them). Its tool activities and approval prompts go out as events of the
 * delegating run, in that run's scope, each activity's summary led by
 * `[<profile> <task activity id>] ` so the client can tell which subagent
 * ran it.
 *
 * @module
 */

import type { CriticalResult, StepChannel } from "../runner/event-channel.ts";
import type { CriticalEvent, RunScope } from "../runner/run-events.ts";
import { type SubagentIdentity, subagentLabel } from "../runner/delegation.ts";
import { boundSummary } from "../runner/tools/tool-text.ts";

const KEPT_OFF: CriticalResult = Object.freeze({ ok: true });

/** A step channel for the child `identity` over the delegating run's `parent` channel and `scope`. */
export function childChannel(parent: StepChannel, scope: RunScope, identity: SubagentIdentity, secrets: readonly string[]): StepChannel {
  return {
    delta: () => {},
    whenDeltaRoom: () => null,
    critical: (event: CriticalEvent, sent?: () => void): Promise<CriticalResult> => {
      if (event.event === "message.reconcile" || event.event === "diagnostic") return Promise.resolve(KEPT_OFF);
      if (event.event === "activity") {
        const summary = boundSummary(`${subagentLabel(identity, "", false)}${event.data.summary}`, secrets);
        return parent.critical({ event: "activity", data: { ...event.data, ...scope, summary } }, sent);
      }
      return parent.critical({ ...event, data: { ...event.data, ...scope } } as CriticalEvent, sent);
    },
  };
}
