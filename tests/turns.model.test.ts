/**
 * A model-based test (fc.commands) of one child's session and turn workers
 * as a client drives them: create and open sessions, start turns whose
 * provider stream is held at a gate, let them finish, cancel them (also too
 * late), ask for status and pages. The model predicts every answer code;
 * after every command the child's output must still hold exactly one
 * `run.finished` per finished run and nothing of a run after it.
 */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { type FakeProvider, Gate, startFakeProvider } from "./support/fake-provider.ts";
import type { Frame } from "./support/harness.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { reply } from "./support/provider-scripts.ts";
import { request, runEvents, startTurnServer, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";

interface Model {
  /** The attached session, and whether it has a file. */
  attached: { id: string; durable: boolean } | null;
  /** Sessions with a file, openable by id. */
  durable: string[];
  /** The active run, whose stream waits at its gate. */
  active: { runId: string; cancelled: boolean } | null;
  /** Runs that finished, for stale_run. */
  finished: string[];
}

interface Real {
  server: TurnServer;
  gates: Map<string, Gate>;
  next: number;
}

type Command = fc.AsyncCommand<Model, Real>;

const id = (real: Real) => `q${++real.next}`;

function errorOf(frame: Frame): string | null {
  return frame.error?.code ?? null;
}

class CreateSession implements Command {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const answer = await request(real.server, id(real), "session.create");
    if (model.active !== null) return assert.equal(errorOf(answer), "busy");
    const result = answer.result as { session_id: string; durable: boolean };
    assert.equal(result.durable, false);
    model.attached = { id: result.session_id, durable: false };
  }
  toString = () => "create";
}

class OpenSession implements Command {
  constructor(readonly pick: number, readonly unknown: boolean) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const choices = [...model.durable, ...(model.attached === null ? [] : [model.attached.id])];
    const target = this.unknown || choices.length === 0 ? "never-created" : choices[this.pick % choices.length]!;
    const answer = await request(real.server, id(real), "session.open", { session_id: target });
    if (model.active !== null) return assert.equal(errorOf(answer), "busy");
    if (target === "never-created") return assert.equal(errorOf(answer), "session_missing");
    const durable = model.durable.includes(target);
    assert.equal((answer.result as { durable: boolean }).durable, durable);
    model.attached = { id: target, durable };
  }
  toString = () => `open(${this.unknown ? "unknown" : this.pick})`;
}

class StartTurn implements Command {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const gate = new Gate();
    const admitted = model.attached !== null && model.active === null;
    // Only a run that will be admitted makes a provider request to take its script.
    if (admitted) real.server.provider.enqueue(reply(API, { text: ["held answer"], gates: new Map([[0, gate]]) }));
    const session = model.attached?.id ?? "no-session";
    const answer = await request(real.server, id(real), "turn.start", { session_id: session, prompt: "go" });
    if (model.attached === null) return assert.equal(errorOf(answer), "session_missing");
    if (model.active !== null) return assert.equal(errorOf(answer), "busy");
    const runId = (answer.result as { run_id: string; accepted: boolean }).run_id;
    real.gates.set(runId, gate);
    model.active = { runId, cancelled: false };
    await gate.whenReached();
  }
  toString = () => "turn.start";
}

/** Waits for the active run's terminal event and checks it against the model. */
async function settle(model: Model, real: Real): Promise<void> {
  const active = model.active!;
  const events = await runEvents(real.server, active.runId);
    const terminal = events.at(-1)!.data as { outcome: string; persistence: string };
    assert.equal(terminal.outcome, active.cancelled ? "cancelled" : "completed");
    assert.equal(terminal.persistence, "durable");
    model.finished.push(active.runId);
    model.active = null;
  const attached = model.attached!;
  if (!attached.durable) {
    attached.durable = true;
    model.durable.push(attached.id);
  }
}

class FinishTurn implements Command {
  check = (model: Readonly<Model>) => model.active !== null;
  async run(model: Model, real: Real): Promise<void> {
    real.gates.get(model.active!.runId)!.release();
    await settle(model, real);
  }
  toString = () => "finish";
}

class CancelTurn implements Command {
  constructor(readonly late: boolean) {}
  check = (model: Readonly<Model>) => (this.late ? model.finished.length > 0 : model.active !== null) && model.attached !== null;
  async run(model: Model, real: Real): Promise<void> {
    const runId = this.late ? model.finished.at(-1)! : model.active!.runId;
    const answer = await request(real.server, id(real), "turn.cancel", { session_id: model.attached!.id, run_id: runId });
    if (this.late) return assert.equal(errorOf(answer), "stale_run");
    assert.deepEqual(answer.result, { cancellation_requested: true });
    model.active!.cancelled = true;
    // The run ends on its own after a cancel; waiting keeps the model's "active" exact.
    await settle(model, real);
  }
  toString = () => (this.late ? "cancel(finished run)" : "cancel");
}

class Status implements Command {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const status = (await request(real.server, id(real), "status")).result as { state: string; session_id: string | null; run_id: string | null };
    assert.equal(status.session_id, model.attached?.id ?? null);
    if (model.active === null) assert.deepEqual([status.state, status.run_id], ["idle", null]);
    else assert.deepEqual([status.state, status.run_id], ["running", model.active.runId]);
  }
  toString = () => "status";
}

class PageStale implements Command {
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const session = model.attached?.id ?? "no-session";
    const answer = await request(real.server, id(real), "history.page", { session_id: session, revision: "r0-0000000000000000000000000000000000000000" });
    const expected = model.active !== null ? "busy" : model.attached === null ? "session_missing" : "stale_revision";
    assert.equal(errorOf(answer), expected);
  }
  toString = () => "history.page(stale revision)";
}

/** Every frame of a run after its single `run.finished` would be a contract break. */
function assertTerminals(server: TurnServer, finished: readonly string[]): void {
  const frames = server.frames();
  for (const runId of finished) {
    const ofRun = frames.filter((frame) => frame.type === "event" && (frame.data as { run_id?: string }).run_id === runId);
    const terminals = ofRun.filter((frame) => frame.event === "run.finished");
    assert.equal(terminals.length, 1, `one terminal for ${runId}`);
    assert.equal(ofRun.at(-1), terminals[0], "nothing of the run after its terminal");
  }
}

describe("turn and session workers (model-based)", () => {
  let provider: FakeProvider;
  before(async () => {
    provider = await startFakeProvider();
  });
  after(async () => {
    await provider.close();
  });

  it("fc.commands over create, open, turn.start, finish, cancel, status and history.page match the model", async () => {
    // fc.commands picks uniformly among these, so repeats weight the commands that move a run along.
    const commands = fc.commands(
      [
        fc.constant(new CreateSession()),
        fc.constant(new CreateSession()),
        fc.tuple(fc.nat(), fc.boolean()).map(([pick, unknown]) => new OpenSession(pick, unknown)),
        fc.constant(new StartTurn()),
        fc.constant(new StartTurn()),
        fc.constant(new StartTurn()),
        fc.constant(new FinishTurn()),
        fc.constant(new FinishTurn()),
        fc.boolean().map((late) => new CancelTurn(late)),
        fc.constant(new Status()),
        fc.constant(new PageStale()),
      ],
      { maxCommands: 24, size: "max" },
    );
    await fc.assert(
      fc.asyncProperty(commands, async (cmds) => {
        provider.handler = null;
        const real: Real = { server: await startTurnServer(API, { provider }), gates: new Map(), next: 0 };
        const model: Model = { attached: null, durable: [], active: null, finished: [] };
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          if (model.active !== null) await new FinishTurn().run(model, real);
          assertTerminals(real.server, model.finished);
        } finally {
          for (const gate of real.gates.values()) gate.release();
          real.server.runtime.input.end();
          assert.equal(await real.server.exit, 0);
        }
      }),
      { numRuns: fuzzRuns(25) },
    );
  });
});
