/**
 * The example client (`examples/agent.mjs`) end to end: it spawns the Node
 * bundle (`dist/magi-code.cjs serve --stdio`) in a temp workspace whose
 * `MC_HOME` points the keyless `ollama` provider at a loopback fake. The
 * example is a Node program; under Deno this test spawns `node` for it.
 */

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { ErrorCode } from "../src/protocol/errors.ts";
import { type FakeProvider, Gate, startFakeProvider } from "./support/fake-provider.ts";
import { collect, nodeBinary, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { guarded, type Workspace, workspace } from "./support/wire-client.ts";

const root = mkdtempSync(join(tmpdir(), "magi-example-agent-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** Runs `body` with a fake provider of its own (no script left over from another test can reach it), then closes it. */
async function withProvider<T>(body: (provider: FakeProvider) => Promise<T>): Promise<T> {
  const provider = await startFakeProvider();
  try {
    return await body(provider);
  } finally {
    await provider.close();
  }
}

const PROMPT = "Create notes/hello.txt saying hi";
const BEFORE_TOOL = "I'll write notes/hello.txt for you.";
const AFTER_TOOL = "Done: notes/hello.txt now says hi.";
const CONTENT = "hi\n";

interface AgentRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `node examples/agent.mjs <args>` with the workspace's environment;
 * `input` is what stdin carries before it closes (piped prompts for the
 * prompt loop), and `started` sees the process once spawned.
 */
async function agent(ws: Workspace, args: readonly string[], input = "", started: (child: ChildProcess) => void = () => {}): Promise<AgentRun> {
  const child = spawn(nodeBinary(), [join(repoRoot(), "examples", "agent.mjs"), ...args], {
    cwd: root,
    env: ws.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.end(input);
  started(child);
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const [code, stdout, stderr] = await guarded(Promise.all([exited, collect(child.stdout), collect(child.stderr)]), "examples/agent.mjs to exit");
  return { code, stdout, stderr };
}

/** Queues a write_file call (with text before it) and the answer after the tool. */
function scriptWrite(provider: FakeProvider): void {
  provider.enqueue(reply("openai-chat", {
    text: ["I'll write ", "notes/hello.txt ", "for you."],
    calls: [{ id: "call_1", name: "write_file", args: { path: "notes/hello.txt", content: CONTENT } }],
  }));
  provider.enqueue(reply("openai-chat", { text: ["Done: ", "notes/hello.txt ", "now says hi."] }));
}

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line !== "");
}

describe("examples/agent.mjs is a thin user of the client library", () => {
  it("imports magi-code/client's Node entry and keeps no wire tables of its own", () => {
    const source = readFileSync(join(repoRoot(), "examples", "agent.mjs"), "utf8");
    assert.match(source, /from "\.\.\/dist\/runtime\/node-client\.js"/);
    // No copied code table, event list or enum sets: the library fails closed on those from src/protocol.
    // (It names a few codes it has a hint for; a quoted code list would be a copy of the table.)
    // The three codes `magi-code config check` explains are asked for by name.
    const checked: string[] = [ErrorCode.configurationInvalid, ErrorCode.profileInvalid, ErrorCode.providerUnavailable];
    const copied = Object.values(ErrorCode).filter((code) => !checked.includes(code) && source.includes(`"${code}"`));
    assert.deepEqual(copied, []);
    assert.ok(!source.includes('"run.finished"') && !source.includes('"subagent"'));
    assert.ok(!source.includes("JSON.parse"), "no frame parsing of its own");
  });
});

/** The one-shot `--yes` run that writes the file and saves a session; returns the run and the saved id. */
async function oneShot(provider: FakeProvider, name: string): Promise<{ ws: Workspace; run: AgentRun; sessionId: string }> {
  const ws = workspace(root, name, provider);
  scriptWrite(provider);
  const run = await agent(ws, ["--yes", "--cwd", ws.cwd, PROMPT]);
  assert.equal(run.code, 0, `exit 0; stderr:\n${run.stderr}`);
  const saved = /^session (\S+) saved; resume with --session \1$/m.exec(run.stderr);
  assert.ok(saved, `a "session … saved" line on stderr:\n${run.stderr}`);
  return { ws, run, sessionId: saved[1]! };
}

describe("examples/agent.mjs against the real backend", () => {
  it("a one-shot turn with --yes: streams the answer, shows the activity, writes the file and exits 0", () => withProvider(async (provider) => {
    const { ws, run, sessionId } = await oneShot(provider, "agent");
    // Assistant text goes to stdout, both segments of the tool-separated answer.
    assert.ok(run.stdout.includes(BEFORE_TOOL), `stdout:\n${run.stdout}`);
    assert.ok(run.stdout.includes(AFTER_TOOL), `stdout:\n${run.stdout}`);
    assert.ok(run.stdout.indexOf(BEFORE_TOOL) < run.stdout.lastIndexOf(AFTER_TOOL));
    // Everything else goes to stderr.
    const notes = lines(run.stderr);
    assert.equal(notes[0], "ready: ollama / qwen");
    const started = notes.findIndex((line) => line.startsWith("[tool write_file started]"));
    const completed = notes.findIndex((line) => line.startsWith("[tool write_file completed]"));
    assert.ok(started !== -1 && completed > started, `tool activity on stderr:\n${run.stderr}`);
    assert.match(notes[started]!, /notes\/hello\.txt/);
    assert.ok(notes.indexOf("[allowed]") !== -1, "the approval was answered");
    assert.match(notes.at(-1)!, /^\[run completed; history durable at revision \S+\]$/);
    assert.ok(!run.stdout.includes("[tool") && !run.stdout.includes("session "), "no notes on stdout");

    assert.equal(readFileSync(join(ws.cwd, "notes", "hello.txt"), "utf8"), CONTENT);
    assert.ok(existsSync(join(ws.home, "sessions", `${sessionId}.jsonl`)));
    assert.deepEqual(readdirSync(join(ws.home, "sessions")).filter((name) => name.endsWith(".lease")), [], "the server exited and released its leases");
    assert.equal(provider.log.length, 2);
    const sent = provider.log[0]!.body as { messages: { role: string; content: string }[] };
    assert.equal(sent.messages.at(-1)!.content, PROMPT);
  }));

  it("--session resumes the saved session: the provider sees the earlier turn", () => withProvider(async (provider) => {
    // Its own saved session, from its own one-shot run: this test does not depend on another having run.
    const { ws, sessionId } = await oneShot(provider, "agent-resume");
    const before = provider.log.length;
    provider.enqueue(reply("openai-chat", { text: ["You asked me ", "to create notes/hello.txt."] }));
    const run = await agent(ws, ["--cwd", ws.cwd, "--session", sessionId, "What did I ask before?"]);
    assert.equal(run.code, 0, `exit 0; stderr:\n${run.stderr}`);
    assert.ok(run.stdout.includes("You asked me to create notes/hello.txt."), `stdout:\n${run.stdout}`);
    assert.ok(lines(run.stderr).includes(`session ${sessionId} opened`), `stderr:\n${run.stderr}`);
    assert.equal(provider.log.length, before + 1);
    const sent = (provider.log[before]!.body as { messages: { role: string; content: string }[] }).messages;
    assert.deepEqual(sent.map((message) => message.role), ["system", "user", "assistant", "user"]);
    assert.equal(sent[1]!.content, PROMPT);
    assert.ok(sent[2]!.content.includes(BEFORE_TOOL) && sent[2]!.content.includes(AFTER_TOOL));
    assert.equal(sent[3]!.content, "What did I ask before?");
  }));

  it("--no denies the write: the file is not written, the run still completes", () => withProvider(async (provider) => {
    const denied = workspace(root, "agent-no", provider);
    provider.enqueue(reply("openai-chat", {
      text: ["Writing it now."],
      calls: [{ id: "call_1", name: "write_file", args: { path: "denied.txt", content: "no\n" } }],
    }));
    provider.enqueue(reply("openai-chat", { text: ["Understood, I left it alone."] }));
    const run = await agent(denied, ["--no", "--cwd", denied.cwd, "Write denied.txt"]);
    assert.equal(run.code, 0, `exit 0; stderr:\n${run.stderr}`);
    const notes = lines(run.stderr);
    assert.ok(notes.includes("[denied]"), `stderr:\n${run.stderr}`);
    assert.ok(notes.some((line) => line.startsWith("[tool write_file failed]")), `stderr:\n${run.stderr}`);
    assert.ok(!notes.some((line) => line.startsWith("[tool write_file started]")));
    assert.equal(existsSync(join(denied.cwd, "denied.txt")), false);
    assert.ok(run.stdout.includes("Understood, I left it alone."));
    const toolResult = (provider.log.at(-1)!.body as { messages: { role: string; content: string }[] }).messages.at(-1)!;
    assert.equal(toolResult.role, "tool");
    assert.match(toolResult.content, /denied/);
  }));

  it("a settings typo names the file and the JSON path (from magi-code config check), not a generic hint", () => withProvider(async (provider) => {
    const broken = workspace(root, "agent-typo", provider, { model: { provdier: "ollama" } });
    const run = await agent(broken, ["--yes", "--cwd", broken.cwd, "hello"]);
    assert.equal(run.code, 1);
    assert.ok(lines(run.stderr).includes(`${broken.home}/settings.jsonc: $.model.provdier: unknown key`), `stderr:\n${run.stderr}`);
    assert.equal(provider.log.length, 0, "no provider request");
  }));

  it("a provider without its key names the exact variable (from magi-code config check), not examples", () => withProvider(async (provider) => {
    const keyless = workspace(root, "agent-key", provider, { model: { provider: "openai", model: "gpt-5" } });
    const run = await agent(keyless, ["--cwd", keyless.cwd, "hello"]);
    assert.equal(run.code, 1);
    const notes = lines(run.stderr);
    assert.ok(notes.includes("initialize: provider_unavailable"), `stderr:\n${run.stderr}`);
    assert.ok(notes.some((line) => line.includes("the openai provider needs OPENAI_API_KEY set")), `stderr:\n${run.stderr}`);
    assert.ok(!run.stderr.includes("ANTHROPIC_API_KEY"), "no example variable of another provider");
    assert.equal(provider.log.length, 0);
  }));

  it("a multi-turn transcript from the prompt loop prints each answer once", () => withProvider(async (provider) => {
    // Message ids are run-scoped (each run's first is a1): the second answer must not be compared with the first.
    const ws = workspace(root, "agent-turns", provider);
    const answers = ["The first answer.", "The second answer.", "The third answer."];
    for (const answer of answers) provider.enqueue(reply("openai-chat", { text: answer.split(/(?<= )/) }));
    const run = await agent(ws, ["--cwd", ws.cwd], "one\ntwo\nthree\n");
    assert.equal(run.code, 0, `exit 0 at the end of input; stderr:\n${run.stderr}`);
    assert.deepEqual(lines(run.stdout), answers, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
    assert.ok(!run.stderr.includes("differs from the stream"), `stderr:\n${run.stderr}`);
    assert.equal(lines(run.stderr).filter((line) => line.startsWith("[run completed")).length, 3);
  }));

  it("a one-shot turn cancelled with Ctrl-C exits 130, not 0", () => withProvider(async (provider) => {
    const ws = workspace(root, "agent-cancel", provider);
    const gate = new Gate();
    provider.enqueue({ chunks: [gate], end: "hang" });
    const run = await agent(ws, ["--cwd", ws.cwd, "take your time"], "", (child) => {
      // Ctrl-C once the provider has the request: the example turns it into turn.cancel. (process.kill, not
      // child.kill: Deno's ChildProcess then reports the signal it sent instead of the exit code.)
      void provider.until(() => provider.log.length > 0).then(() => process.kill(child.pid!, "SIGINT"));
    });
    gate.release();
    assert.equal(run.code, 130, `stderr:\n${run.stderr}`);
    assert.ok(lines(run.stderr).some((line) => line.startsWith("[run cancelled")), `stderr:\n${run.stderr}`);
  }));

  it("stdout carries each assistant message exactly once", () => withProvider(async (provider) => {
    // A script reading the one-shot answer from stdout should get the answer, not a streamed
    // prefix followed by the authoritative copy of the same text.
    const { run } = await oneShot(provider, "agent-once");
    assert.deepEqual(lines(run.stdout), [BEFORE_TOOL, AFTER_TOOL], `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  }));
});
