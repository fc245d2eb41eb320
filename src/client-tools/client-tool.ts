/**
 * One registered client tool as the runner sees it (`ExternalTool`): offered
 * as `client__<name>` with the client's description and input schema, its
 * policy from `client_tools.<name>` (default `ask`), arguments checked
 * against the registered schema before anyone is asked or anything is sent
 * (invalid ones, and ones holding a credential, never reach the client), and an approval prompt that names
 * the tool and shows the arguments exactly as they will be sent. The
 * activity summary names the tool and how the call ended, never the
 * arguments or the output.
 *
 * @module
 */

import { argumentProblems } from "../protocol/json-subset.ts";
import { redactSecrets } from "../util/redaction.ts";
import type { JsonObject } from "../protocol/json-value.ts";
import { type ClientToolSpec, modelName, timeoutOf } from "../protocol/client-tool-registry.ts";
import type { ApprovalPolicy } from "../policy/tool-policies.ts";
import type { ExternalTool } from "../runner/tools/external.ts";
import { finishResult, showExactly, showJsonExactly } from "../runner/tools/tool-text.ts";
import type { PreparedCall, ToolContext, ToolResult } from "../runner/tools/tool.ts";
import type { CallEnding, ClientToolCalls } from "./calls.ts";

/** Why a call whose arguments are too long to show was refused, for the model. */
const ARGUMENTS_TOO_LONG = "The arguments are too long to show whole in the approval prompt (1,024 bytes), so the call " +
  "was not offered for approval. Call the tool with shorter arguments.";

/** Why a call whose arguments hold a credential was refused, for the model. */
const HOLDS_CREDENTIAL = "The arguments hold a credential (a known secret or a token-shaped value), which is never sent to the client. " +
  "Call the tool without it.";

/** `spec` as an external tool under `policy`, whose calls go through `calls`. */
export function clientTool(spec: ClientToolSpec, policy: ApprovalPolicy, calls: ClientToolCalls): ExternalTool {
  return {
    name: modelName(spec.name),
    description: spec.description,
    parameters: spec.input_schema as JsonObject,
    policy,
    prepare: (args, context) => Promise.resolve(prepare(spec, calls, args, context)),
  };
}

function prepare(spec: ClientToolSpec, calls: ClientToolCalls, args: unknown, context: ToolContext): PreparedCall | ToolResult {
  const shown = modelName(spec.name);
  const problems = argumentProblems(spec.input_schema, args);
  if (problems.length > 0) {
    return finishResult(false, `Invalid arguments for ${shown}: ${problems.join("; ")}.`, `${shown}: invalid arguments`, context.secrets);
  }
  // The arguments leave on stdout as they are: a credential in them is refused whatever the policy, as an approval prompt would refuse it.
  const sent = JSON.stringify(args);
  if (redactSecrets(sent, context.secrets) !== sent) return finishResult(false, HOLDS_CREDENTIAL, `${shown}: refused, arguments hold a credential`, context.secrets);
  const label = `Client tool ${showExactly(spec.name)}`;
  return {
    action: `Call client tool ${showExactly(spec.name)} with arguments ${showJsonExactly(args)}`,
    activity: label,
    tooLongToShow: ARGUMENTS_TOO_LONG,
    mustAsk: false,
    run: async () => {
      // Only a run's step has events; a call from anywhere else has no client to reach.
      if (context.events === undefined) return finishResult(false, "The client cannot be reached from here.", `${label}: not sent`, context.secrets);
      const request = { name: spec.name, arguments: args as JsonObject, timeoutMs: timeoutOf(spec) };
      return toolResult(await calls.call(request, context.events, context.signal), request.timeoutMs, label, context.secrets);
    },
  };
}

function toolResult(ending: CallEnding, timeoutMs: number, label: string, secrets: readonly string[]): ToolResult {
  switch (ending.kind) {
    case "result":
      return finishResult(ending.ok, ending.output, `${label}: ${ending.ok ? "done" : "failed"}`, secrets);
    case "timeout":
      return finishResult(false, `The client did not answer the tool call within ${timeoutMs} ms.`, `${label}: timed out`, secrets);
    case "cancelled":
      return finishResult(false, "The tool call was cancelled.", `${label}: cancelled`, secrets);
    case "undelivered":
      return finishResult(false, "The tool call could not be sent to the client.", `${label}: not sent`, secrets);
  }
}
