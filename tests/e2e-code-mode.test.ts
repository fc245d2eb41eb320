/**
 * Code Mode through the real entry points (the Node bundle, the Deno entry
 * and, where built, the Node single executable) over real pipes, against a
 * loopback provider: a program that reads three files and writes one asks
 * exactly once, for the write, and each nested call is its own activity in
 * the events and in history; a denied nested call throws inside the
 * program; the direct and the Code Mode policies are independent both
 * ways; a nested call gets the same user hooks as a direct one; cancelling the turn while the program waits on a tool and while it
 * spins ends the turn cancelled and leaves no host process behind.
 */

import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type FakeProvider, startFakeProvider } from "./support/fake-provider.ts";
import { type Launcher, launchers } from "./support/processes.ts";
import { pagedHistory } from "./support/kill-turns.ts";
import { reply } from "./support/provider-scripts.ts";
import { TURN_CAPABILITIES } from "./support/turns.ts";
import { WireClient, type WireFrame, type Workspace, workspace } from "./support/wire-client.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "magi-e2e-code-")));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;

/** The parts of a started child a test drives. */
interface Child {
  readonly provider: FakeProvider;
  readonly ws: Workspace;
  readonly client: WireClient;
  readonly session: string;
}

/**
 * Runs `body` against a child started by `launcher` in a workspace with Code Mode on, `settings` added, three
 * small files and `approval.scope` negotiated, a session open; then shuts the child down (exit 0) and stops the provider.
 */
async function withChild(launcher: Launcher, settings: Record<string, unknown>, body: (child: Child) => Promise<void>): Promise<void> {
  const provider = await startFakeProvider();
  const { code_mode, ...rest } = settings as { code_mode?: Record<string, unknown> };
  const ws = workspace(root, `ws${counter++}`, provider, { ...rest, code_mode: { enabled: true, ...code_mode } });
  for (const name of ["a", "b", "c"]) writeFileSync(join(ws.cwd, `${name}.txt`), `${name.toUpperCase()}\n`);
  const client = new WireClient(launcher, ws.cwd, ws.env);
  try {
    await client.ok("initialize", { required_capabilities: [...TURN_CAPABILITIES, "approval.scope"] });
    const session = (await client.ok("session.create")).session_id as string;
    await body({ provider, ws, client, session });
    assert.equal((await client.shutdown()).code, 0);
  } finally {
    client.abandon();
    await provider.close();
  }
}

/** The provider asks for one `code` call with `source`, then answers `text`. */
function scriptProgram(provider: FakeProvider, source: string, text = "Done."): void {
  provider.enqueue(reply("openai-chat", { calls: [{ id: "c1", name: "code", args: { source } }] }));
  provider.enqueue(reply("openai-chat", { text: [text] }));
}

const activities = (events: WireFrame[]) =>
  events.filter((frame) => frame.event === "activity").map((frame) => [frame.data!.name, frame.data!.state, frame.data!.summary] as [string, string, string]);

/** What the second request carried back as the `code` call's result. */
function codeResult(provider: FakeProvider): string {
  const messages = (provider.log[1]!.body as { messages: { role: string; content: string | null }[] }).messages;
  return String(messages.find((message) => message.role === "tool")!.content);
}

const READ_THREE_WRITE_ONE = [
  "// gather and write",
  "const parts = [];",
  "for (const name of ['a.txt', 'b.txt', 'c.txt']) parts.push(await tools.read_file({ path: name }));",
  "console.log('read', parts.length);",
  "await tools.write_file({ path: 'out.txt', content: parts.map((part) => part.includes('A') ? 'A' : part.includes('B') ? 'B' : 'C').join('') });",
  "return { wrote: 'out.txt' };",
].join("\n");

for (const launcher of launchers()) {
  describe(`${launcher.name}: Code Mode end to end`, () => {
    it("a program that reads three files and writes one asks exactly once, for the write; every nested call is its own activity, in history too", async () => {
      await withChild(launcher, {}, async ({ provider, ws, client, session }) => {
        scriptProgram(provider, READ_THREE_WRITE_ONE);
        const run = (await client.ok("turn.start", { session_id: session, prompt: "Gather" })).run_id as string;
        const approval = (await client.event(run, "approval.requested")).data!;
        assert.match(String(approval.summary), /^Code Mode: /, "the prompt says the call comes from Code Mode");
        assert.match(String(approval.summary), /out\.txt/);
        await client.ok("approval.answer", { session_id: session, run_id: run, approval_id: approval.approval_id, allow: true });
        const events = await client.runEvents(run);
        assert.equal(events.at(-1)!.data!.outcome, "completed");
        assert.equal(events.filter((frame) => frame.event === "approval.requested").length, 1, "one approval: the write");
        const seen = activities(events);
        assert.deepEqual(seen.map(([name, state]) => `${name}:${state}`), [
          "code:started",
          ...["read_file", "read_file", "read_file", "write_file"].flatMap((name) => [`${name}:started`, `${name}:completed`]),
          "code:completed",
        ]);
        assert.match(seen[0]![2], /^code: \d+ bytes program, first line "\/\/ gather and write"/);
        assert.ok(seen.slice(1, -1).every(([, , summary]) => summary.startsWith("Code Mode: ")), "each nested activity says it comes from Code Mode");
        assert.equal(readFileSync(join(ws.cwd, "out.txt"), "utf8"), "ABC");
        assert.match(codeResult(provider), /console\.log output:\nread 3\n/);
        assert.match(codeResult(provider), /The program returned:\n\{"wrote":"out\.txt"\}/);
        const finished = events.at(-1)!.data!;
        const history = await pagedHistory(client, session, finished.revision as string);
        assert.equal(history.entries.filter(([kind]) => kind === "activity").length, 5, "history shows the code call and each of its four nested calls");
      });
    });

    it("a denied nested call throws inside the program, which can catch it; nothing is written", async () => {
      await withChild(launcher, {}, async ({ provider, ws, client, session }) => {
        scriptProgram(provider, "try { await tools.write_file({ path: 'x.txt', content: 'x' }); return 'wrote'; } catch (error) { return 'refused: ' + error.message; }");
        const run = (await client.ok("turn.start", { session_id: session, prompt: "Write" })).run_id as string;
        const approval = (await client.event(run, "approval.requested")).data!;
        await client.ok("approval.answer", { session_id: session, run_id: run, approval_id: approval.approval_id, allow: false });
        const events = await client.runEvents(run);
        assert.equal(events.at(-1)!.data!.outcome, "completed");
        assert.match(codeResult(provider), /The program returned:\nrefused: The user denied this tool call\./);
        assert.equal(existsSync(join(ws.cwd, "x.txt")), false);
      });
    });

    it("a program's nested calls get the same tool hooks: a PreToolUse hook denies one with its reason, a PostToolUse hook adds to another", async () => {
      const seen = join(root, `nested-${counter}`);
      const veto = join(root, `veto-${counter}.sh`);
      const post = join(root, `post-${counter}.sh`);
      writeFileSync(veto, `cat >> ${seen}\necho "no writes from programs" >&2\nexit 2\n`);
      writeFileSync(post, `cat >/dev/null\necho '{"additional_context":"read checked"}'\n`);
      const hooks = { PreToolUse: [{ matcher: "write_*", command: "sh", args: [veto] }], PostToolUse: [{ matcher: "read_file", command: "sh", args: [post] }] };
      await withChild(launcher, { hooks, code_mode: { tools: { write_file: "allow" } } }, async ({ provider, ws, client, session }) => {
        scriptProgram(provider, "const text = await tools.read_file({ path: 'a.txt' });\ntry { await tools.write_file({ path: './x.txt', content: 'x' }); return 'wrote'; } catch (error) { return text + ' | ' + error.message; }");
        const run = (await client.ok("turn.start", { session_id: session, prompt: "Write" })).run_id as string;
        const events = await client.runEvents(run);
        assert.equal(events.at(-1)!.data!.outcome, "completed");
        assert.equal(events.filter((frame) => frame.event === "approval.requested").length, 0);
        assert.match(codeResult(provider), /\[Hook feedback\]\nread checked[\s\S]*denied by the user's hook: no writes from programs/);
        assert.equal(existsSync(join(ws.cwd, "x.txt")), false);
        const input = JSON.parse(readFileSync(seen, "utf8")) as { event: string; tool: { name: string; arguments: { path: string } } };
        assert.deepEqual([input.event, input.tool.name, input.tool.arguments.path], ["PreToolUse", "write_file", "x.txt"]);
        assert.ok(activities(events).some(([name, state, summary]) => name === "write_file" && state === "failed" && /\(denied by a hook\)$/.test(summary)));
      });
    });

    it("permissions are independent both ways: a Code Mode deny blocks a directly allowed tool, a direct deny does not block a Code Mode allow", async () => {
      await withChild(launcher, { tools: { read_file: "allow", write_file: "deny" }, code_mode: { tools: { read_file: "deny", write_file: "allow" } } }, async ({ provider, ws, client, session }) => {
        scriptProgram(provider, [
          "let read; try { read = await tools.read_file({ path: 'a.txt' }); } catch (error) { read = 'refused: ' + error.message; }",
          "await tools.write_file({ path: 'w.txt', content: 'w' });",
          "return read;",
        ].join("\n"));
        const run = (await client.ok("turn.start", { session_id: session, prompt: "Both" })).run_id as string;
        const events = await client.runEvents(run);
        assert.equal(events.at(-1)!.data!.outcome, "completed");
        assert.equal(events.filter((frame) => frame.event === "approval.requested").length, 0);
        assert.deepEqual(activities(events).map(([name, state]) => `${name}:${state}`), [
          "code:started",
          "read_file:failed",
          "write_file:started",
          "write_file:completed",
          "code:completed",
        ]);
        assert.match(codeResult(provider), /refused: The tool call was denied by the user's settings/);
        assert.equal(readFileSync(join(ws.cwd, "w.txt"), "utf8"), "w");
      });
    });

    it("approval.scope: a session grant covers only calls from where it was given, a program's or the model's own", async () => {
      await withChild(launcher, {}, async ({ provider, ws, client, session }) => {
        /** One turn writing `path` directly or from a program; answers an approval with a session grant; says whether one was asked. */
        const write = async (from: "direct" | "program", path: string): Promise<string | null> => {
          const args = { path, content: `${from}\n` };
          const call = from === "direct" ? { id: "w", name: "write_file", args } : { id: "c", name: "code", args: { source: `await tools.write_file(${JSON.stringify(args)});` } };
          provider.enqueue(reply("openai-chat", { calls: [call] }));
          provider.enqueue(reply("openai-chat", { text: ["Done."] }));
          const run = (await client.ok("turn.start", { session_id: session, prompt: "Write" })).run_id as string;
          const asked = await client.waitFor((f) => f.data?.run_id === run && (f.event === "approval.requested" || f.event === "run.finished"), "an approval or the end");
          if (asked.event === "approval.requested") {
            await client.ok("approval.answer", { session_id: session, run_id: run, approval_id: asked.data!.approval_id, allow: true, scope: "session" });
          }
          const events = await client.runEvents(run);
          assert.equal(events.at(-1)!.data!.outcome, "completed");
          assert.equal(readFileSync(join(ws.cwd, path), "utf8"), `${from}\n`);
          return asked.event === "approval.requested" ? String(asked.data!.scope_key) : null;
        };
        assert.equal(await write("program", "a.txt"), 'Code Mode: write_file "a.txt"');
        assert.equal(await write("direct", "a.txt"), 'write_file "a.txt"', "a program's grant does not cover the model's own call");
        assert.equal(await write("program", "a.txt"), null);
        assert.equal(await write("direct", "a.txt"), null);
        assert.equal(await write("direct", "b.txt"), 'write_file "b.txt"');
        assert.equal(await write("program", "b.txt"), 'Code Mode: write_file "b.txt"', "the model's grant does not cover a program's call");
      });
    });

    for (const [what, source] of [
      ["waits on a tool's approval", "await tools.write_file({ path: 'never.txt', content: 'x' }); return 1;"],
      ["spins", "await tools.read_file({ path: 'a.txt' }); while (true) {}"],
    ] as const) {
      it(`cancelling the turn while the program ${what} ends it cancelled, with nothing written`, async () => {
        await withChild(launcher, {}, async ({ provider, ws, client, session }) => {
          scriptProgram(provider, source);
          const run = (await client.ok("turn.start", { session_id: session, prompt: "Go" })).run_id as string;
          if (what.startsWith("waits")) await client.event(run, "approval.requested");
          else await client.waitFor((frame) => frame.event === "activity" && frame.data?.name === "read_file" && frame.data?.state === "completed", "the read");
          await client.ok("turn.cancel", { session_id: session, run_id: run });
          const events = await client.runEvents(run);
          assert.equal(events.at(-1)!.data!.outcome, "cancelled");
          assert.equal(activities(events).at(-1)![0], "code");
          assert.equal(activities(events).at(-1)![1], "failed");
          assert.equal(existsSync(join(ws.cwd, "never.txt")), false);
        });
      });
    }
  });
}
