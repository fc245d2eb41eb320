/**
 * A property over generated Code Mode programs, through the real entry
 * points against a loopback provider: programs call random tools (offered
 * and not) with valid and invalid arguments, and the user answers each
 * approval at random. Whatever the program, every nested call is its own
 * activity, in call order; invalid arguments fail validation before anyone
 * is asked; a tool Code Mode denies never starts (though the direct policy
 * allows it); an `ask` tool starts only after the user allowed it, with a
 * prompt that says it comes from Code Mode; a tool the program was not
 * offered makes no call at all.
 */

import assert from "node:assert/strict";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import fc from "fast-check";
import { startFakeProvider } from "./support/fake-provider.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";
import { launchers } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-code-prop-")));
after(() => rmSync(root, { recursive: true, force: true }));

/** Direct policies the opposite of the Code Mode ones, so a call under the wrong one would show. */
const SETTINGS = {
  tools: { read_file: "deny", list_directory: "allow", write_file: "allow", grep: "allow" },
  code_mode: { enabled: true, tools: { read_file: "allow", list_directory: "deny", write_file: "deny", grep: "ask" } },
};

type Expect = "ran" | "invalid" | "denied" | "asked" | "none";

/** One generated call: the JavaScript expression, and what must happen to it under {@link SETTINGS}. */
const call: fc.Arbitrary<{ js: string; expect: Expect }> = fc.oneof(
  fc.constantFrom("a.txt", "b.txt").map((path) => ({ js: `tools.read_file(${JSON.stringify({ path })})`, expect: "ran" as const })),
  fc.oneof(fc.integer(), fc.boolean(), fc.constant(null)).map((path) => ({ js: `tools.read_file(${JSON.stringify({ path })})`, expect: "invalid" as const })),
  fc.constant({ js: "tools.read_file({ path: 'a.txt', extra: 1 })", expect: "invalid" as const }),
  fc.anything({ maxDepth: 1 }).map((args) => ({ js: `tools.list_directory(${JSON.stringify(args) ?? "undefined"})`, expect: "denied" as const })),
  fc.string({ maxLength: 8 }).map((content) => ({ js: `tools.write_file(${JSON.stringify({ path: "w.txt", content })})`, expect: "denied" as const })),
  fc.constantFrom("A", "B").map((pattern) => ({ js: `tools.grep(${JSON.stringify({ pattern })})`, expect: "asked" as const })),
  fc.constant({ js: "tools.grep({ pattern: 7 })", expect: "invalid" as const }),
  fc.constantFrom("shell_x", "code", "nope").map((name) => ({ js: `tools[${JSON.stringify(name)}]({})`, expect: "none" as const })),
);

const program = fc.record({
  calls: fc.array(call, { minLength: 1, maxLength: 6 }),
  answers: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
});

for (const [index, launcher] of launchers().entries()) {
  describe(`${launcher.name}: Code Mode property`, () => {
    it("every nested call is validated and is its own activity, and none bypasses its Code Mode policy", async () => {
      const provider = await startFakeProvider();
      const ws = workspace(root, `ws${index}`, provider, SETTINGS);
      writeFileSync(join(ws.cwd, "a.txt"), "A\n");
      writeFileSync(join(ws.cwd, "b.txt"), "B\n");
      const client = new WireClient(launcher, ws.cwd, ws.env);
      try {
        await client.ok("initialize", { required_capabilities: TURN_CAPABILITIES });
        const session = (await client.ok("session.create")).session_id as string;
        await fc.assert(
          fc.asyncProperty(program, async ({ calls, answers }) => {
            const source = calls.map(({ js }) => `try { await ${js}; } catch (error) { console.log(String(error).slice(0, 60)); }`).join("\n");
            provider.enqueue(reply("openai-chat", { calls: [{ id: "c", name: "code", args: { source } }] }));
            provider.enqueue(reply("openai-chat", { text: ["ok"] }));
            const run = (await client.ok("turn.start", { session_id: session, prompt: "Run it" })).run_id as string;
            const allowed: boolean[] = [];
            const answered = new Set<unknown>();
            for (;;) {
              const frame = await client.waitFor(
                (f) => f.type === "event" && f.data?.run_id === run && (f.event === "run.finished" || f.event === "approval.requested" && !answered.has(f.data.approval_id)),
                "the next approval or the end of the run",
              );
              if (frame.event === "run.finished") break;
              answered.add(frame.data!.approval_id);
              assert.match(String(frame.data!.summary), /^Code Mode: /);
              const allow = answers[allowed.length % answers.length]!;
              allowed.push(allow);
              await client.ok("approval.answer", { session_id: session, run_id: run, approval_id: frame.data!.approval_id, allow });
            }
            const events = await client.runEvents(run);
            assert.equal(events.at(-1)!.data!.outcome, "completed");
            const activity = events.filter((frame) => frame.event === "activity").map((frame) => frame.data!);
            const code = activity[0]!.activity_id;
            assert.equal(activity[0]!.name, "code");
            assert.equal(activity.at(-1)!.activity_id, code);
            const nested = activity.slice(1, -1);
            const ids = [...new Set(nested.map((entry) => entry.activity_id))];
            const made = calls.filter(({ expect }) => expect !== "none");
            assert.equal(ids.length, made.length, "one activity per nested call");
            let asked = 0;
            made.forEach(({ expect }, position) => {
              const states = nested.filter((entry) => entry.activity_id === ids[position]).map((entry) => [String(entry.state), String(entry.summary)] as const);
              if (expect === "ran") assert.deepEqual(states.map(([state]) => state), ["started", "completed"]);
              if (expect === "invalid") assert.deepEqual(states.map(([state, summary]) => [state, summary.endsWith("invalid arguments")]), [["failed", true]]);
              if (expect === "denied") assert.deepEqual(states.map(([state, summary]) => [state, summary.endsWith("(denied by settings)")]), [["failed", true]]);
              if (expect === "asked") {
                const allow = allowed[asked++];
                assert.deepEqual(states.map(([state]) => state), allow ? ["started", "completed"] : ["failed"]);
              }
              for (const [, summary] of states) assert.match(summary, /^Code Mode: /);
            });
            assert.equal(asked, allowed.length, "an approval for each ask call and no other");
          }),
          { numRuns: fuzzRuns(6, 10) },
        );
        assert.equal((await client.shutdown()).code, 0);
      } finally {
        client.abandon();
        await provider.close();
      }
    });
  });
}
