/**
 * The params half of the fuzz kit against the real server: every method's
 * invalid params get exactly their paired code and change nothing (no
 * byte on disk, no attachment, no selection), valid params are never
 * `invalid_params`, and admission follows the kit's order (params, then
 * phase, then negotiation) before `initialize`, while startup is pending,
 * once ready with any capability list, and after a failed startup.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import {
  admissionCode,
  effortDefects,
  EXTENSION_CAPABILITIES as KIT_EXTENSIONS,
  INVISIBLE_NON_SPACE,
  invalidCall,
  invalidParams,
  NEGOTIATED_METHODS,
  negotiationCall,
  type ParamsContext,
  paramsFrameBytes,
  validCall,
  validParams,
  WHITE_SPACE,
  WIRE_METHODS,
} from "../src/fuzz/mod.ts";
import { CAPABILITIES, EXTENSION_CAPABILITIES, NEGOTIATED } from "../src/protocol/negotiation.ts";
import { HOME, seedCache } from "./support/catalog.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { type Frame, type Run, startServer } from "./support/harness.ts";
import { callRaw, fsTree, LEDGER_ROOM } from "./support/params-child.ts";

const decoder = new TextDecoder();
/** An endpoint nothing listens on: a valid call that reached the network would fail at once, never hang or leave the machine. */
const NOWHERE = "http://127.0.0.1:9/v1";
const SETTINGS = { model: { provider: "ollama", model: "qwen" }, providers: { endpoints: { ollama: { base_url: NOWHERE } }, catalog: { enabled: ["ollama/qwen"] } } };

/** A child that negotiated `required`, with a `qwen` cache and the settings above; not initialized when `required` is null. */
async function child(required: readonly string[] | null, fs = new MemoryFileSystem()): Promise<Run> {
  fs.writeFile(`${HOME}/settings.jsonc`, JSON.stringify(SETTINGS), 0o600);
  await seedCache(fs, "ollama", "openai-chat", NOWHERE, [{ id: "qwen" }]);
  const run = startServer({ fs, env: { HOME: "/home/user", MC_HOME: HOME } });
  if (required !== null) {
    const init = await callRaw(run, "initialize", JSON.stringify({ required_capabilities: required }));
    assert.ok(init.result, `initialize succeeded: ${JSON.stringify(init.error)}`);
  }
  return run;
}

const codeOf = (frame: Frame): string => frame.error?.code ?? "a result";

async function result(run: Run, method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const frame = await callRaw(run, method, JSON.stringify(params));
  assert.ok(frame.result, `${method} succeeded: ${JSON.stringify(frame.error)}`);
  return frame.result;
}

/** A ready child holding a durable session with a saved selection, and the live ids a request needs to reach each operation. */
async function attached(): Promise<{ run: Run; fs: MemoryFileSystem; context: ParamsContext }> {
  const fs = new MemoryFileSystem();
  const run = await child(WIRE_METHODS, fs);
  const session = (await result(run, "session.create")).session_id as string;
  const catalog = (await result(run, "model.catalog")).revision as string;
  const selection = ((await result(run, "status")).selection as { revision: string }).revision;
  const base = { session_id: session, catalog_revision: catalog, provider: "ollama", model: "qwen" };
  const saved = await result(run, "selection.set", { ...base, selection_revision: selection, effort: { mode: "default" } });
  const revision = ((await result(run, "status")).selection as { revision: string }).revision;
  return { run, fs, context: { ...base, selection_revision: revision, revision: saved.history_revision as string, run_id: "r1", approval_id: "a1", id: "p1" } };
}

/** Runs `body` against `run`, then ends its input whatever happened, so a failed assertion never leaves a lease heartbeat running. */
async function served(run: Run, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } finally {
    run.runtime.input.end();
  }
  assert.equal(await run.exit, 0);
}

/**
 * Runs `total` property runs in chunks on fresh children, so no child's id
 * ledger (4,096) fills however high FUZZ_RUNS is; each run sends at most
 * `requests` requests.
 */
async function inChunks(total: number, requests: number, chunk: (runs: number) => Promise<void>): Promise<void> {
  const size = Math.floor(LEDGER_ROOM / requests);
  for (let done = 0; done < total; done += size) await chunk(Math.min(size, total - done));
}

describe("the params kit", () => {
  it("WIRE_METHODS, NEGOTIATED_METHODS and EXTENSION_CAPABILITIES are exactly the server's sixteen methods, four negotiated ones and its extension capabilities", () => {
    assert.deepEqual([...WIRE_METHODS].sort(), [...CAPABILITIES]);
    assert.deepEqual([...NEGOTIATED_METHODS].sort(), [...NEGOTIATED].sort());
    assert.deepEqual([...KIT_EXTENSIONS], [...EXTENSION_CAPABILITIES]);
  });

  it("validParams() reaches the boundaries: limits 1 and 100, 64-byte ids, 256-byte names, every effort form, omitted optionals", () => {
    const seen = new Set<string>();
    const note = (params: Record<string, unknown>) => {
      if ("limit" in params) seen.add(`limit ${params.limit}`);
      else seen.add("no limit");
      for (const [name, value] of Object.entries(params)) {
        if (typeof value === "string") seen.add(`${name} ${new TextEncoder().encode(value).length}`);
        if (value === null) seen.add(`${name} null`);
        if (name === "effort") seen.add(`effort ${JSON.stringify(value)}`);
      }
      if (params.provider !== undefined && !("effort" in params)) seen.add("effort omitted");
    };
    for (const method of ["session.list", "session.discover", "model.catalog", "history.page", "selection.set"] as const) {
      for (const params of fc.sample(validParams(method), { numRuns: 400, seed: 7 })) note(params);
    }
    for (const want of ["limit 1", "limit 100", "no limit", "session_id 64", "session_id 1", "revision 64", "cursor null", "provider 256", "model 256", "effort omitted"]) {
      assert.ok(seen.has(want), `${want} generated`);
    }
    for (const effort of ['{"mode":"keep"}', '{"mode":"default"}', '{"mode":"set","value":"low"}', '{"mode":"set","value":"max"}']) assert.ok(seen.has(`effort ${effort}`), effort);
  });

  it("before initialize every method's invalid params are invalid_params, valid ones get their phase code, and nothing is written", async () => {
    const valid = validCall().filter(({ method }) => method !== "initialize").map(({ method, params }) => ({ method, json: JSON.stringify(params), valid: true, label: "valid" }));
    const invalid = invalidCall().map((sample) => ({ ...sample, valid: false }));
    await inChunks(fuzzRuns(300, 4), 1, async (numRuns) => {
      const fs = new MemoryFileSystem();
      const run = startServer({ fs, env: { HOME: "/home/user", MC_HOME: HOME } });
      await served(run, async () => {
        const before = await fsTree(fs);
        await fc.assert(
          fc.asyncProperty(fc.oneof(valid, invalid), async (call) => {
            const frame = await callRaw(run, call.method, call.json);
            assert.equal(codeOf(frame), admissionCode(call.method, call.valid, { kind: "new" }) ?? "a result", call.label);
            assert.deepEqual(await fsTree(fs), before, `${call.method} ${call.label} wrote nothing`);
          }),
          { numRuns },
        );
        assert.equal(fs.exists(HOME), false);
      });
    });
  });

  it("a ready child answers every method's invalid params with invalid_params and changes nothing, with live ids in the other fields", async () => {
    await inChunks(fuzzRuns(400, 4), 3, async (numRuns) => {
      const { run, fs, context } = await attached();
      await served(run, async () => {
        await fc.assert(
          fc.asyncProperty(invalidCall(context), async (sample) => {
            const [tree, status] = [await fsTree(fs), await result(run, "status")];
            const frame = await callRaw(run, sample.method, sample.json);
            assert.equal(codeOf(frame), sample.code, sample.label);
            assert.deepEqual(await fsTree(fs), tree, `${sample.method} ${sample.label} wrote nothing`);
            assert.deepEqual(await result(run, "status"), status, `${sample.method} ${sample.label} changed no state`);
          }),
          { numRuns },
        );
      });
    });
  });

  it("every invalid effort request object of selection.set, sent with live revisions, is invalid_params and writes nothing", async () => {
    const { run, fs, context } = await attached();
    await served(run, async () => {
      const tree = await fsTree(fs);
      const base = JSON.stringify(fc.sample(validParams("selection.set", context), { numRuns: 1, seed: 1 })[0]!, (key, value) => (key === "effort" ? undefined : value));
      for (const defect of effortDefects()) {
        const frame = await callRaw(run, "selection.set", `${base.slice(0, -1)},"effort":${defect.json}}`);
        assert.equal(codeOf(frame), "invalid_params", defect.label);
      }
      assert.deepEqual(await fsTree(fs), tree);
    });
  });

  it("turn.start prompts are blank by Unicode White_Space: U+0085 alone is invalid_params, U+FEFF or U+200B alone is admitted", async () => {
    const { run, context } = await attached();
    await served(run, async () => {
      // Another session id: an admitted prompt is then stale_session, so no turn runs.
      assert.notEqual(context.session_id, "other");
      const send = (prompt: string) => callRaw(run, "turn.start", JSON.stringify({ session_id: "other", prompt })).then(codeOf);
      for (const space of [...WHITE_SPACE, WHITE_SPACE.join("")]) assert.equal(await send(space), "invalid_params", JSON.stringify(space));
      for (const text of [...INVISIBLE_NON_SPACE, "\u0085a"]) assert.equal(await send(text), "stale_session", JSON.stringify(text));
    });
  });

  it("valid params of every method are never invalid_params on a child that negotiated everything", async () => {
    await inChunks(fuzzRuns(300, 4), 1, async (numRuns) => {
      const run = await child(WIRE_METHODS);
      await served(run, async () => {
        await fc.assert(
          fc.asyncProperty(validCall(), async ({ method, params }) => {
            const frame = await callRaw(run, method, JSON.stringify(params));
            assert.ok(!["invalid_params", "unsupported_capability", "not_initialized"].includes(codeOf(frame)), `${method} ${JSON.stringify(params)}: ${codeOf(frame)}`);
          }),
          { numRuns },
        );
      });
    });
  });

  it("approval.answer's scope is valid only with approval.scope negotiated: without it the field is unknown, before initialize too", async () => {
    const scoped = fc.sample(validParams("approval.answer", {}, ["approval.scope"]), { numRuns: 200, seed: 3 });
    assert.ok(scoped.some((params) => params.scope === "session") && scoped.some((params) => !("scope" in params)));
    assert.ok(fc.sample(validParams("approval.answer"), { numRuns: 200, seed: 3 }).every((params) => !("scope" in params)));
    const unnegotiated = fc.sample(invalidParams("approval.answer"), { numRuns: 400, seed: 3 }).filter((bad) => bad.label === "scope without approval.scope");
    assert.ok(unnegotiated.length > 0);
    const early = await child(null);
    await served(early, async () => {
      for (const bad of unnegotiated.slice(0, 5)) assert.equal(codeOf(await callRaw(early, "approval.answer", bad.json)), "invalid_params", bad.label);
    });
    for (const required of [["approval.answer"], ["approval.answer", "approval.scope"]]) {
      const run = await child(required);
      await served(run, async () => {
        for (const params of scoped.filter((p) => "scope" in p).slice(0, 5)) {
          const code = codeOf(await callRaw(run, "approval.answer", JSON.stringify(params)));
          assert.equal(code, required.includes("approval.scope") ? "session_missing" : "invalid_params", JSON.stringify(params));
        }
      });
    }
  });

  it("agent.info is an unknown method, whatever its params, unless negotiated; negotiated, invalid params are invalid_params and {} is answered", async () => {
    const invalid = fc.sample(invalidParams("agent.info"), { numRuns: 20, seed: 5 });
    assert.ok(invalid.length > 0 && fc.sample(validParams("agent.info"), { numRuns: 5, seed: 5 }).every((params) => JSON.stringify(params) === "{}"));
    for (const required of [null, ["status"], ["status", "agent.info"]]) {
      const run = await child(required);
      await served(run, async () => {
        const negotiated = required?.includes("agent.info") ?? false;
        for (const bad of invalid.slice(0, 5)) assert.equal(codeOf(await callRaw(run, "agent.info", bad.json)), negotiated ? "invalid_params" : "unsupported_method", bad.label);
        const answer = await callRaw(run, "agent.info", "{}");
        if (negotiated) assert.ok(answer.result, JSON.stringify(answer.error));
        else assert.equal(codeOf(answer), "unsupported_method");
      });
    }
  });

  it("valid selection.set params with the live session, catalog and selection revision are applied or effort_unsupported, never invalid_params", async () => {
    await inChunks(fuzzRuns(40, 8), 2, async (numRuns) => {
      const { run, context } = await attached();
      await served(run, async () => {
        const { selection_revision: _, ...fixed } = context;
        await fc.assert(
          fc.asyncProperty(validParams("selection.set", fixed), async (params) => {
            const revision = ((await result(run, "status")).selection as { revision: string }).revision;
            const frame = await callRaw(run, "selection.set", JSON.stringify({ ...params, selection_revision: revision }));
            // qwen's effort policy is unknown: it permits only default, so an explicit set is refused, not normalised.
            const effort = params.effort as { mode: string } | undefined;
            assert.equal(codeOf(frame), effort?.mode === "set" ? "effort_unsupported" : "a result", JSON.stringify(params));
          }),
          { numRuns },
        );
      });
    });
  });

  it("negotiation: params first, then the phase, then unsupported_capability, for any capability list", async () => {
    await fc.assert(
      fc.asyncProperty(negotiationCall(), async (call) => {
        const run = await child(null);
        await served(run, async () => {
          assert.equal(codeOf(await callRaw(run, call.method, call.json)), call.before ?? "a result", `before initialize: ${call.label}`);
          const init = await callRaw(run, "initialize", JSON.stringify(call.initialize));
          assert.ok(init.result, JSON.stringify(init.error));
          const code = codeOf(await callRaw(run, call.method, call.json));
          if (call.code !== null) assert.equal(code, call.code, `${call.method} (${call.label}) with ${JSON.stringify(call.required)}`);
          else assert.ok(!["invalid_params", "unsupported_capability", "not_initialized"].includes(code), `${call.method}: ${code}`);
        });
      }),
      { numRuns: fuzzRuns(60, 20) },
    );
  });

  it("while startup is pending, gated methods are not_initialized unless their params are invalid", async () => {
    const calls = fc.oneof(
      validCall().filter(({ method }) => method !== "initialize" && method !== "status").map(({ method, params }) => ({ method, json: JSON.stringify(params), valid: true, label: "valid" })),
      invalidCall().map((sample) => ({ ...sample, valid: false })),
    );
    await fc.assert(
      fc.asyncProperty(calls, async (call) => {
        const run = startServer({ env: { HOME: "/home/user", MC_HOME: HOME } });
        // One read batch: the call is dispatched while the startup task has not finished.
        const init = decoder.decode(paramsFrameBytes("i", "initialize", JSON.stringify({ required_capabilities: WIRE_METHODS })));
        run.runtime.input.push(init + decoder.decode(paramsFrameBytes("c", call.method, call.json)));
        await served(run, async () => {
          const frames = await run.waitFrames(2);
          assert.equal(codeOf(frames.find((frame) => frame.id === "c")!), admissionCode(call.method, call.valid, { kind: "starting" }) ?? "a result", call.label);
        });
      }),
      { numRuns: fuzzRuns(40, 10) },
    );
  });

  it("after a failed startup, valid calls get the startup's code and invalid params still invalid_params", async () => {
    const phase = { kind: "failed", code: "configuration_invalid" } as const;
    const calls = fc.oneof(
      validCall().map(({ method, params }) => ({ method, json: JSON.stringify(params), valid: true, label: "valid" })),
      invalidCall().map((sample) => ({ ...sample, valid: false })),
    );
    await inChunks(fuzzRuns(150, 4), 1, async (numRuns) => {
      const fs = new MemoryFileSystem();
      fs.writeFile(`${HOME}/settings.jsonc`, "{ not settings", 0o600);
      const run = startServer({ fs, env: { HOME: "/home/user", MC_HOME: HOME } });
      await served(run, async () => {
        assert.equal(codeOf(await callRaw(run, "initialize", JSON.stringify({ required_capabilities: [] }))), "configuration_invalid");
        await fc.assert(
          fc.asyncProperty(calls, async (call) => {
            const frame = await callRaw(run, call.method, call.json);
            const expected = admissionCode(call.method, call.valid, phase);
            if (expected !== null) assert.equal(codeOf(frame), expected, `${call.method} ${call.label}`);
            else assert.deepEqual([call.method, (frame.result as { state?: unknown } | undefined)?.state], ["status", "failed"]);
          }),
          { numRuns },
        );
      });
    });
  });
});
