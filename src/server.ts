/**
 * Wiring only: builds one connection's pieces over the runtime's stdin and
 * stdout and connects them. Where each part of the spec lives:
 *
 * - frames in: `transport/read-loop.ts` (framer, input bound, reading never paused);
 * - frames out: `transport/output.ts` (encoder, ordered writer, output bounds);
 * - envelope, method table, phase gate: `protocol/dispatcher.ts`,
 *   `protocol/methods.ts`, `protocol/phase-gate.ts`;
 * - `initialize`: `admission/initialize.ts`; `status`: `operations/status.ts`;
 * - `shutdown`, EOF and exit codes: `transport/closing.ts`;
 * - sessions, history, turns: `operations/ready-workers.ts`, which loads
 *   `operations/workers.ts` on the first request that needs it.
 *
 * @module
 */

import { Initializer } from "./admission/initialize.ts";
import type { McpServerSource } from "./admission/startup.ts";
import { Lifecycle } from "./admission/lifecycle.ts";
import type { Runtime } from "./host/runtime.ts";
import { ReadyWorkers } from "./operations/ready-workers.ts";
import { StatusView } from "./operations/status.ts";
import { Dispatcher, type ExtensionRequest, type Reject } from "./protocol/dispatcher.ts";
import { AgentInfoParamsSchema, type ClientToolResultParams, ClientToolResultParamsSchema } from "./protocol/schemas.ts";
import { type ExtensionRequestName, Negotiation } from "./protocol/negotiation.ts";
import { PhaseGate } from "./protocol/phase-gate.ts";
import { ErrorCode } from "./protocol/errors.ts";
import type { ApprovalAnswerParams } from "./protocol/schemas.ts";
import { ConnectionClose } from "./transport/closing.ts";
import { ProtocolOutput } from "./transport/output.ts";
import { readLoop } from "./transport/read-loop.ts";

/** A served connection. */
export interface Server {
  /** Serves until the connection closes; resolves with the process exit code. */
  serve(): Promise<number>;
}

/** What a server is built with besides its runtime. */
export interface ServerOptions {
  /** Which MCP servers startup starts (default: the enabled and approved ones). */
  readonly mcpServers?: McpServerSource;
}

/** Creates a server for `runtime`'s stdio. */
export function createServer(runtime: Runtime, options: ServerOptions = {}): Server {
  return { serve: () => serve(runtime, options) };
}

function serve(runtime: Runtime, options: ServerOptions): Promise<number> {
  // The output's fatal failure closes the connection, which is built next: the two refer to each other.
  const output = new ProtocolOutput(runtime, () => closing.close("transport"));
  const reject: Reject = (id, code) => output.error(id, code);
  const lifecycle = new Lifecycle();
  const negotiation = new Negotiation(reject);
  // An undeliverable run terminal is an output failure: it closes like one (exit 1). Workers that
  // cannot load fail the child as a failed startup would.
  const workers = new ReadyWorkers(runtime, output, () => closing.close("transport"), (code) => lifecycle.fail(code), (capability) => negotiation.negotiated(capability));
  const status = new StatusView(() => lifecycle.phase, () => workers.view, output);
  const initializer = new Initializer({
    runtime,
    lifecycle,
    replies: output,
    negotiation,
    start: (snapshot, clientTools) => workers.start(snapshot, clientTools),
    status: () => status.render(),
    ...(options.mcpServers === undefined ? {} : { mcpServers: options.mcpServers }),
  });
  const closing = new ConnectionClose(runtime, output, {
    // Startup first: while it is pending there are no workers yet.
    cancel: (answer) => [initializer.cancel(answer), workers.cancel(answer)],
    settled: () => workers.settled(),
  });
  const gate = new PhaseGate(() => lifecycle.phase, () => workers.runner, reject);
  // `client.tool.result` exists only for a client that negotiated `client.tools`: for any other it is no method.
  const clientToolResult = gate.ready<ClientToolResultParams>(({ clientTools }, id, params) => {
    if (clientTools === null) return reject(id, ErrorCode.staleToolCall);
    clientTools.result(id, params);
  });
  const answer = gate.ready(({ turns }, id, params: ApprovalAnswerParams) => turns.answer(id, params));
  // `agent.info` reads the admitted snapshot only: it is gated on a ready child without loading the workers.
  const info = new PhaseGate<ReadyWorkers>(() => lifecycle.phase, () => workers.view === null ? null : (handle) => handle(workers), reject).ready((ready: ReadyWorkers, id: string) => ready.info(id));
  const dispatcher = new Dispatcher({
    "initialize": (id, params) => initializer.initialize(id, params),
    "status": (id) => status.answer(id),
    "shutdown": (id) => closing.shutdown(id),
    "session.create": gate.ready(({ catalog }, id) => catalog.create(id)),
    "session.open": gate.ready(({ catalog }, id, params) => catalog.open(id, params)),
    "session.list": gate.ready(({ sessions }, id, params) => sessions.list(id, params)),
    "session.discover": gate.ready(negotiation.only("session.discover", ({ sessions }, id, params) => sessions.discover(id, params))),
    "history.page": gate.ready(({ sessions }, id, params) => sessions.page(id, params)),
    "turn.start": gate.ready(({ turns }, id, params) => turns.start(id, params)),
    "turn.cancel": gate.ready(({ turns }, id, params) => turns.cancel(id, params)),
    // `scope` is a field only a client that negotiated `approval.scope` knows; for any other it is unknown, as before.
    "approval.answer": (id, params) =>
      params.scope !== undefined && !negotiation.negotiated("approval.scope") ? reject(id, ErrorCode.invalidParams) : answer(id, params),
    "model.catalog": gate.ready(({ catalog }, id, params) => catalog.catalog(id, params)),
    "model.catalog.status": gate.ready(negotiation.only("model.catalog.status", ({ catalog }, id) => catalog.status(id))),
    "model.refresh": gate.ready(negotiation.only("model.refresh", ({ catalog }, id, params) => catalog.refresh(id, params))),
    "selection.set": gate.ready(({ catalog }, id, params) => catalog.select(id, params)),
    "operation.cancel": gate.ready(negotiation.only("operation.cancel", ({ operations }, id, params) => operations.cancel(id, params))),
    "session.rewind.preview": gate.ready(({ rewind }, id, params) => rewind.preview(id, params)),
    "session.rewind": gate.ready(({ rewind }, id, params) => rewind.apply(id, params)),
  }, reject, new Map<string, ExtensionRequest>(Object.entries({
    "agent.info": { params: AgentInfoParamsSchema, handle: (id) => info(id, {}) },
    "client.tool.result": { params: ClientToolResultParamsSchema, handle: (id, params) => clientToolResult(id, params as ClientToolResultParams) },
  } satisfies { readonly [R in ExtensionRequestName]: ExtensionRequest })), (method) => negotiation.routed(method));
  void readLoop(runtime.stdin, output, closing, (bytes) => dispatcher.frame(bytes));
  return closing.exitCode;
}
