/**
 * The runner's delegation port (`runner/delegation.ts`) for a child whose
 * settings leave at least one profile to delegate to: the `task` tool's
 * spec, the bound on task calls running at once, and the call itself, whose
 * code (`task-call.ts`, the child run) loads only with the first task call.
 *
 * @module
 */

import type { Delegation, DelegatingStep } from "../runner/delegation.ts";
import type { ModelToolCall, ToolResultMessage } from "../runner/providers/conversation.ts";
import type { SubagentSetup } from "./setup.ts";
import { Slots } from "./slots.ts";
import { taskSpec } from "./task-spec.ts";

export type { SubagentSetup } from "./setup.ts";

/** Task calls of one step that run at once; the others wait for a slot, in call order. */
export const MAX_CONCURRENT_TASKS = 3;

type TaskCallModule = typeof import("./task-call.ts");

/** The delegation port over `setup`, or null when no profile may be delegated to. */
export function createDelegation(setup: SubagentSetup): Delegation | null {
  if (setup.profiles.length === 0) return null;
  let module: Promise<TaskCallModule> | null = null;
  return {
    spec: taskSpec(setup.profiles),
    forStep(step: DelegatingStep) {
      const slots = new Slots(MAX_CONCURRENT_TASKS);
      return (call: ModelToolCall, index: number): Promise<ToolResultMessage> => {
        // Taken now, so the activity ids of a step's calls follow their order whatever runs first.
        const activityId = step.nextActivityId();
        module ??= import("./task-call.ts");
        return module.then((loaded) => loaded.runTaskCall(setup, step, slots, call, index, activityId));
      };
    },
  };
}
