/**
 * Spec sentences of "Read-only session discovery", `operation.cancel` and
 * negotiation that only a whole child can show: the check order of a
 * negotiated method (params, phase, negotiation), `operation.cancel`'s exact
 * params and its `stale_operation` cases, a listing that leaves the
 * attachment and its history snapshot alone, the published `discovery_*`
 * bounds, shutdown during a listing, and `busy` while a turn runs.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import type { ReadHandle } from "../src/host/runtime.ts";
import { Gate } from "./support/fake-provider.ts";
import { type Frame, frameFor, line, type Run, startServer, unlessBusy } from "./support/harness.ts";
import { reply } from "./support/provider-scripts.ts";
import { writeSession } from "./support/listing.ts";
import { request, runEvents, startTurnServer, stopTurnServer, TURN_CAPABILITIES } from "./support/turns.ts";


async function call(run: Run, id: string, method: string, params: Record<string, unknown> = {}): Promise<Frame> {
  run.runtime.input.push(line(id, method, params));
  return await frameFor(run, id);
}

async function started(capabilities: string[], arrange: (run: Run) => void = () => {}): Promise<Run> {
  const run = startServer();
  arrange(run);
  assert.ok((await call(run, "init", "initialize", { required_capabilities: capabilities })).result, "initialize succeeded");
  return run;
}

async function stop(run: Run): Promise<void> {
  run.runtime.input.end();
  await run.exit;
}

const BASE = ["session.list", "session.open", "session.create", "history.page", "status", "shutdown"];

describe("negotiated session.discover and operation.cancel: params, then phase, then negotiation", () => {
  it("session.discover is invalid_params, then not_initialized, then unsupported_capability unless negotiated", async () => {
    const early = startServer();
    assert.equal((await call(early, "d0", "session.discover", { limit: 0 })).error?.code, "invalid_params");
    assert.equal((await call(early, "d1", "session.discover")).error?.code, "not_initialized");
    await stop(early);
    const base = await started(BASE);
    assert.equal((await call(base, "d2", "session.discover", { limit: 101 })).error?.code, "invalid_params");
    assert.equal((await call(base, "d3", "session.discover")).error?.code, "unsupported_capability");
    assert.ok((await call(base, "l1", "session.list")).result, "the connection stays usable");
    await stop(base);
    const negotiated = await started([...BASE, "session.discover"]);
    assert.equal((await call(negotiated, "d4", "session.discover")).result?.phase, "walk");
    await stop(negotiated);
  });

  it("a preflight-rejected initialize negotiates nothing: the corrected one's list decides", async () => {
    const run = startServer();
    const rejected = await call(run, "init0", "initialize", { required_capabilities: [...BASE, "session.discover", "operation.cancel", "no.such"] });
    assert.equal(rejected.error?.code, "unsupported_capability");
    assert.ok((await call(run, "init1", "initialize", { required_capabilities: BASE })).result);
    assert.equal((await call(run, "d1", "session.discover")).error?.code, "unsupported_capability");
    assert.equal((await call(run, "c1", "operation.cancel", { id: "d1" })).error?.code, "unsupported_capability");
    await stop(run);
  });

  it("after a failed startup, session.list, session.discover and operation.cancel answer the failed startup's code", async () => {
    const run = startServer();
    run.runtime.fs.writeFile("/home/user/.magi-code/settings.jsonc", '{ "model": { "provider": 7 } }');
    assert.equal((await call(run, "init", "initialize", { required_capabilities: [...BASE, "session.discover"] })).error?.code, "configuration_invalid");
    assert.equal((await call(run, "l1", "session.list")).error?.code, "configuration_invalid");
    assert.equal((await call(run, "d1", "session.discover")).error?.code, "configuration_invalid");
    assert.equal((await call(run, "c1", "operation.cancel", { id: "l1" })).error?.code, "configuration_invalid");
    await stop(run);
  });
});

describe("operation.cancel", () => {
  it("params are exactly { id: string } in the request-id grammar", async () => {
    const run = await started([...BASE, "operation.cancel"]);
    const bad: Record<string, unknown>[] = [{ id: "x", extra: 1 }, { id: 7 }, { id: null }, { id: "" }, { id: "x".repeat(65) }, { id: "a b" }, { ids: "x" }];
    for (const [n, params] of bad.entries()) assert.equal((await call(run, `c${n}`, "operation.cancel", params)).error?.code, "invalid_params", JSON.stringify(params));
    assert.equal((await call(run, "c-ok", "operation.cancel", { id: "x".repeat(64) })).error?.code, "stale_operation");
    // Duplicate keys, literal or escaped, inside params of each operation.
    const raw = (id: string, method: string, params: string) => `{"protocol":"magi-code.local-agent","version":1,"id":"${id}","method":"${method}","params":${params}}\n`;
    run.runtime.input.push(
      raw("dup1", "operation.cancel", '{"id":"a","id":"b"}') + raw("dup2", "session.list", '{"limit":1,"\\u006cimit":2}') +
        raw("dup3", "session.discover", '{"revision":null,"revision":null}'),
    );
    for (const id of ["dup1", "dup2", "dup3"]) assert.equal((await frameFor(run, id)).error?.code, "invalid_params", id);
    await stop(run);
  });

  it("initialize's id, an operation already cancelled and this very request are stale_operation", async () => {
    const run = await started([...BASE, "operation.cancel"]);
    assert.equal((await call(run, "c0", "operation.cancel", { id: "init" })).error?.code, "stale_operation");
    run.runtime.input.push(line("l1", "session.list") + line("c1", "operation.cancel", { id: "l1" }) + line("c2", "operation.cancel", { id: "l1" }));
    assert.equal((await frameFor(run, "l1")).error?.code, "operation_cancelled");
    assert.deepEqual((await frameFor(run, "c1")).result, { cancellation_requested: true });
    assert.equal((await frameFor(run, "c2")).error?.code, "stale_operation");
    assert.equal(run.frames().filter((frame) => frame.id === "l1").length, 1, "the listing is answered once");
    await stop(run);
  });

  it("cancels a running session.discover page: operation_cancelled first, then cancellation_requested", async () => {
    const run = await started([...BASE, "session.discover", "operation.cancel"], (run) => writeSession(run.runtime, "one"));
    run.runtime.input.push(line("d1", "session.discover") + line("c1", "operation.cancel", { id: "d1" }));
    const cancelled = await frameFor(run, "d1");
    const result = await frameFor(run, "c1");
    assert.equal(cancelled.error?.code, "operation_cancelled");
    assert.deepEqual(result.result, { cancellation_requested: true });
    assert.ok(cancelled.seq < result.seq);
    await stop(run);
  });
});

describe("a listing leaves the attachment and its history snapshot alone", () => {
  it("history.page still pages the open's revision after session.list and session.discover; a lazy handle is not listed", async () => {
    const run = await started([...BASE, "session.discover"], (run) => writeSession(run.runtime, "stored"));
    const opened = await call(run, "o1", "session.open", { session_id: "stored" });
    const revision = opened.result!.revision as string;
    const list = await call(run, "l1", "session.list");
    assert.deepEqual((list.result!.sessions as { session_id: string; eligibility: string }[]).map((entry) => [entry.session_id, entry.eligibility]), [["stored", "available"]]);
    assert.ok((await call(run, "d1", "session.discover")).result);
    const page = await call(run, "h1", "history.page", { session_id: "stored", revision, cursor: null });
    assert.ok(page.result, `history.page: ${page.error?.code}`);
    assert.equal((await call(run, "s1", "status")).result!.session_id, "stored");
    const created = await call(run, "n1", "session.create");
    const listed = await call(run, "l2", "session.list");
    assert.deepEqual((listed.result!.sessions as { session_id: string }[]).map((entry) => entry.session_id), ["stored"]);
    assert.equal((await call(run, "s2", "status")).result!.session_id, created.result!.session_id);
    await stop(run);
  });
});

describe("published discovery bounds", () => {
  it("initialize publishes the ten discovery_* bounds with the spec's version-1 values", async () => {
    const run = startServer();
    const init = await call(run, "init", "initialize", { required_capabilities: ["session.list"] });
    const limits = init.result!.limits as Record<string, number>;
    const discovery = Object.fromEntries(Object.entries(limits).filter(([name]) => name.startsWith("discovery_")));
    assert.deepEqual(discovery, {
      discovery_page_bytes: 32768,
      discovery_page_entries: 100,
      discovery_directory_entries: 4096,
      discovery_sessions: 256,
      discovery_session_bytes: 8388608,
      discovery_session_lines: 10000,
      discovery_scan_bytes: 67108864,
      discovery_scan_lines: 100000,
      discovery_scan_ms: 2000,
      discovery_title_bytes: 256,
    });
    await stop(run);
  });
});

describe("shutdown and turns around a listing", () => {
  it("shutdown during a listing answers it operation_cancelled and stops", async () => {
    const run = await started(BASE, (run) => writeSession(run.runtime, "one"));
    run.runtime.input.push(line("l1", "session.list") + line("bye", "shutdown"));
    assert.deepEqual((await frameFor(run, "bye")).result, { state: "stopping" });
    assert.equal((await frameFor(run, "l1")).error?.code, "operation_cancelled");
    assert.equal(await run.exit, 0);
  });

  it("session.list and session.discover while a turn runs are busy, and work again after it", async () => {
    const server = await startTurnServer("openai-chat", { capabilities: [...TURN_CAPABILITIES, "session.list", "session.discover"] });
    const created = await request(server, "c1", "session.create");
    const sessionId = (created.result as { session_id: string }).session_id;
    const gate = new Gate();
    server.provider.enqueue(reply("openai-chat", { text: ["a"], gates: new Map([[0, gate]]) }));
    const turn = await request(server, "t1", "turn.start", { session_id: sessionId, prompt: "hi" });
    const runId = (turn.result as { run_id: string }).run_id;
    assert.deepEqual((await request(server, "l1", "session.list")).error, { code: "busy" });
    assert.deepEqual((await request(server, "d1", "session.discover")).error, { code: "busy" });
    gate.release();
    await runEvents(server, runId);
    const listed = await request(server, "l2", "session.list");
    assert.deepEqual((listed.result as { sessions: { session_id: string; eligibility: string }[] }).sessions.map((entry) => [entry.session_id, entry.eligibility]), [[sessionId, "available"]]);
    assert.equal(await stopTurnServer(server), 0);
  });
});

/** A memory filesystem whose opens of histories wait for `gate` once it is set: an OS call the scan cannot interrupt. */
class HeldOpens extends MemoryFileSystem {
  gate: Gate | null = null;
  held = (path: string) => path.endsWith(".jsonl");
  override async openRead(path: string): Promise<ReadHandle> {
    const gate = this.gate;
    if (gate !== null && this.held(path)) {
      gate.markReached();
      await gate.released;
    }
    return await super.openRead(path);
  }
}

describe("a listing held inside a filesystem call", () => {
  for (const method of ["session.list", "session.discover"]) {
    it(`${method}: status is answered, operation.cancel answers it at once, the worker stays busy until the call returns`, async () => {
      const fs = new HeldOpens();
      const run = startServer({ fs });
      writeSession(run.runtime, "one");
      assert.ok((await call(run, "init", "initialize", { required_capabilities: [...BASE, "session.discover", "operation.cancel"] })).result);
      const gate = fs.gate = new Gate();
      run.runtime.input.push(line("l1", method));
      await gate.whenReached();
      assert.equal((await call(run, "s1", "status")).result!.state, "idle");
      assert.equal(run.frames().some((frame) => frame.id === "l1"), false, "the listing is still held");
      assert.deepEqual((await call(run, "c1", "operation.cancel", { id: "l1" })).result, { cancellation_requested: true });
      assert.equal((await frameFor(run, "l1")).error?.code, "operation_cancelled");
      assert.equal((await call(run, "l2", "session.list")).error?.code, "busy", "the cancelled scan has not stopped yet");
      fs.gate = null;
      gate.release();
      const retry = await unlessBusy((n) => call(run, `l3-${n}`, "session.list"), "the released listing to free the worker");
      assert.ok(retry.result, `after the call returned: ${retry.error?.code}`);
      assert.deepEqual((await call(run, "bye", "shutdown")).result, { state: "stopping" });
      assert.equal(await run.exit, 0);
    });
  }

  it("EOF during a held listing answers it operation_cancelled, and the child exits 0 once the call returns", async () => {
    const fs = new HeldOpens();
    const run = startServer({ fs });
    writeSession(run.runtime, "one");
    assert.ok((await call(run, "init", "initialize", { required_capabilities: BASE })).result);
    const gate = fs.gate = new Gate();
    run.runtime.input.push(line("l1", "session.list"));
    await gate.whenReached();
    run.runtime.input.end();
    assert.equal((await frameFor(run, "l1")).error?.code, "operation_cancelled");
    gate.release();
    assert.equal(await run.exit, 0);
  });
});

describe("operation.cancel of the catalog reads", () => {
  for (const method of ["model.catalog", "model.catalog.status"]) {
    it(`cancels a ${method} held inside a cache read: operation_cancelled first, then cancellation_requested`, async () => {
      const fs = new HeldOpens();
      fs.held = (path) => path.includes("/catalog/");
      const run = startServer({ fs });
      fs.writeFile("/home/user/.magi-code/catalog/ollama.json", "{}", 0o600);
      const capabilities = ["model.catalog", "model.catalog.status", "operation.cancel", "status", "shutdown"];
      assert.ok((await call(run, "init", "initialize", { required_capabilities: capabilities })).result);
      const gate = fs.gate = new Gate();
      run.runtime.input.push(line("m1", method));
      await gate.whenReached();
      const result = await call(run, "c1", "operation.cancel", { id: "m1" });
      const cancelled = await frameFor(run, "m1");
      assert.equal(cancelled.error?.code, "operation_cancelled");
      assert.deepEqual(result.result, { cancellation_requested: true });
      assert.ok(cancelled.seq < result.seq);
      fs.gate = null;
      gate.release();
      await stop(run);
    });
  }
});
