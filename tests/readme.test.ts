/**
 * Every code block of README.md and docs/schema/README.md runs as written
 * against a real child: shell blocks in a clean copy of this checkout
 * (tests/support/packed.ts builds it and packs it), JavaScript blocks as
 * modules of an app that installed the packed tarball, each with a loopback
 * provider where the block needs a model (the keyless `ollama` provider, or
 * `openai` redirected to loopback with a placeholder key), so none needs a
 * key or the network. The one exception is `npm ci && npm test`, the suite
 * this test belongs to: it is checked to be what .ci/run runs.
 *
 * The MCP block runs in a terminal (util-linux `script`) so that `mcp
 * approve` asks and gets its `y`, and its `npx -y
 * @modelcontextprotocol/server-everything` is the real npx, offline: the
 * workspace is the clone, whose devDependencies hold the package. Its
 * settings line runs as written; the loopback provider is then added to the
 * file, as the README tells a user with settings to merge.
 *
 * {@link RUNNERS} holds one runner per block, found by what the block
 * contains; a block no runner claims, or claimed twice, fails, so a new
 * README block needs a runner here.
 *
 * Under Deno this file drives the same Node, npm and Deno as children: the
 * blocks are what a user types, and they name Node and npm.
 */

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { openAiList } from "./support/catalog.ts";
import { withFakeProvider } from "./support/fake-provider.ts";
import { type CodeBlock, codeBlocks } from "./support/markdown.ts";
import { must, type Packed, packAndInstall } from "./support/packed.ts";
import { collect, nodeBinary, repoRoot } from "./support/processes.ts";
import { reply } from "./support/provider-scripts.ts";
import { WireClient, workspace } from "./support/wire-client.ts";

const root = repoRoot();
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "magi-readme-")));
after(() => rmSync(scratch, { recursive: true, force: true }));

let packed: Packed;
before(() => {
  packed = packAndInstall(scratch, ["ajv"]);
});

/** What a finished block printed. */
interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `env` with the clone's node_modules/.bin (deno) and this Node first on PATH. */
function withPath(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const node = nodeBinary();
  const dirs = [join(packed.clone, "node_modules", ".bin"), ...(isAbsolute(node) ? [dirname(node)] : [])];
  return { ...env, PATH: [...dirs, env.PATH ?? ""].join(":") };
}

/** Runs `command` and collects its output; not spawnSync, since the fake provider answers from this event loop. */
async function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  const child = spawn(command, args, { cwd, env: withPath(env), stdio: ["ignore", "pipe", "pipe"] });
  const status = new Promise<number | null>((resolve) => child.once("close", resolve));
  const [code, stdout, stderr] = await Promise.all([status, collect(child.stdout), collect(child.stderr)]);
  return { code, stdout, stderr };
}

/** Runs a shell block with `sh -e` (a failing line fails the block) in the clean copy. */
async function shell(code: string, env: NodeJS.ProcessEnv, cwd = packed.clone): Promise<Ran> {
  const ran = await run("sh", ["-ec", code], cwd, env);
  assert.equal(ran.code, 0, `${code}\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

/** Runs a JavaScript block as a module of the app that installed the tarball, in `cwd`. */
async function module(name: string, code: string, cwd: string, env: NodeJS.ProcessEnv, args: readonly string[] = []): Promise<Ran> {
  const file = join(packed.app, `${name}.mjs`);
  writeFileSync(file, code);
  const ran = await run(nodeBinary(), [file, ...args], cwd, env);
  assert.equal(ran.code, 0, `${name}:\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

/** Seeds a stored session `id` of `turns` turns for workspace `cwd` under `home`, with the clone's script. */
function seed(home: string, cwd: string, id: string, turns: number): void {
  must(nodeBinary(), [join(packed.clone, "scripts", "seed-session.mjs"), "--home", home, "--cwd", cwd, "--id", id, "--turns", String(turns)], packed.clone);
}

/** One block's runner: the blocks it claims and how it runs one. */
interface Runner {
  readonly claims: (block: CodeBlock) => boolean;
  readonly run: (block: CodeBlock) => Promise<void> | void;
}

const RUNNERS: readonly Runner[] = [
  {
    claims: (block) => block.code.trim() === "npm ci && npm test",
    run: () => {
      // The suite that runs this test: checked to be CI's own commands, not run again inside itself.
      const commands = readFileSync(join(root, ".ci", "run"), "utf8").split("\n").map((line) => line.trim());
      assert.ok(commands.indexOf("npm ci") !== -1 && commands.indexOf("npm test") === commands.indexOf("npm ci") + 1, ".ci/run runs npm ci, then npm test");
    },
  },
  {
    claims: (block) => block.code.includes("node examples/agent.mjs") && !block.code.includes("mcp approve"),
    run: (block) =>
      withFakeProvider(async (provider) => {
        const ws = workspace(scratch, "agent", provider);
        provider.enqueue(reply("openai-chat", { text: ["Only README.md ", "and friends."] }));
        const ran = await shell(block.code, ws.env);
        assert.match(ran.stdout, /Only README\.md and friends\./);
        assert.equal(provider.log.length, 1);
      }),
  },
  {
    claims: (block) => block.code.includes("mcp approve everything"),
    run: (block) =>
      withFakeProvider(async (provider) => {
        const [settingsLine, ...rest] = block.code.trimEnd().split("\n");
        const home = join(scratch, "mcp-home");
        mkdirSync(home);
        // npm offline: the block's `npx -y @modelcontextprotocol/server-everything` is not rewritten. The server's
        // working directory is the workspace, the clone, whose devDependencies hold that package, so the real npx
        // runs it from there; offline it fails rather than download anything.
        writeFileSync(join(home, ".npmrc"), "offline=true\n");
        const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost" };
        delete env.MC_HOME;
        delete env.OPENAI_API_KEY;
        delete env.ANTHROPIC_API_KEY;
        await shell(`${settingsLine}\n`, env);
        const settings = join(home, ".magi-code", "settings.jsonc");
        const written = JSON.parse(readFileSync(settings, "utf8"));
        assert.deepEqual(written, { mcp: { servers: { everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] } } } });
        // The README says to add the `mcp` key to an existing file; this user's file also selects a model: the loopback provider.
        writeFileSync(settings, JSON.stringify({ ...written, model: { provider: "ollama", model: "qwen" }, providers: { endpoints: { ollama: { base_url: `${provider.url}/v1` } } } }));
        provider.enqueue(reply("openai-chat", { calls: [{ id: "call_1", name: "mcp__everything__get-sum", args: { a: 2, b: 3 } }] }));
        provider.enqueue(reply("openai-chat", { text: ["2 + 3 = 5, says the server."] }));
        // The rest in a terminal (util-linux `script`), where `mcp approve` asks and the user types y.
        assert.equal(spawnSync("script", ["--version"]).status, 0, "the MCP block needs util-linux script for a terminal");
        const lines = join(scratch, "mcp-block.sh");
        writeFileSync(lines, `${rest.join("\n")}\n`);
        const child = spawn("script", ["-qec", `sh -e '${lines}'`, "/dev/null"], { cwd: packed.clone, env: withPath(env), stdio: ["pipe", "pipe", "pipe"] });
        child.stdin.end("y\n");
        const [code, out] = await Promise.all([new Promise<number | null>((resolve) => child.once("close", resolve)), collect(child.stdout), collect(child.stderr)]);
        const screen = out.replaceAll("\r\n", "\n");
        assert.equal(code, 0, screen);
        assert.match(screen, /\n {2}command +"\/[^"]*\/npx"\n {2}args +\["-y","@modelcontextprotocol\/server-everything"\]\n/);
        assert.match(screen, /^Approve everything\? It will run as you, with your files and network\. \[y\/N\]/m);
        assert.match(screen, /^Approved everything; it starts with the next child\.$/m);
        assert.match(screen, /^everything: connects, 13 tools$/m);
        assert.match(screen, /2 \+ 3 = 5, says the server\./);
        const sent = provider.log[1]!.body as { messages: { role: string; content: string }[] };
        assert.equal(sent.messages.find((message) => message.role === "tool")!.content, "The sum of 2 and 3 is 5.");
      }),
  },
  {
    claims: (block) => block.code.includes("export OPENAI_API_KEY="),
    run: async (block) => {
      // The block writes ~/.magi-code/settings.jsonc; a child spawned from the same shell then reports openai ready.
      const home = join(scratch, "settings-home");
      mkdirSync(join(home, "work"), { recursive: true });
      const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
      delete env.MC_HOME;
      delete env.OPENAI_API_KEY;
      delete env.ANTHROPIC_API_KEY;
      const probe = join(packed.app, "settings-probe.mjs");
      writeFileSync(probe, `import { spawnAgent } from "magi-code/client";
const agent = spawnAgent();
const { status } = await agent.initialize(["status", "shutdown"]);
console.log(JSON.stringify({ provider: status.provider, model: status.model, readiness: status.readiness }));
process.exitCode = await agent.shutdown();
`);
      const ran = await shell(`${block.code}node "${probe}"\n`, env, join(home, "work"));
      assert.deepEqual(JSON.parse(ran.stdout.trim().split("\n").at(-1)!), { provider: "openai", model: "gpt-5-mini", readiness: "ready" });
    },
  },
  {
    // The spawn line may lead with the environment runtime/deno-launch.ts documents.
    claims: (block) => /^(?:DENO_NO_UPDATE_CHECK=1 )?deno run /.test(block.code),
    run: (block) =>
      withFakeProvider(async (provider) => {
        const ws = workspace(scratch, "deno", provider);
        // The spawn line as a client runs it, with pipes; its cwd is the directory that holds runtime/deno.ts.
        const client = new WireClient({ name: "deno", command: "sh", prefix: ["-c", block.code.trim()] }, packed.clone, withPath(ws.env));
        try {
          const result = await client.ok("initialize", { required_capabilities: ["status", "shutdown"] });
          assert.deepEqual([(result.status as { readiness: string }).readiness, (result.status as { provider: string }).provider], ["ready", "ollama"]);
          assert.equal((await client.shutdown()).code, 0);
        } finally {
          client.abandon();
        }
      }),
  },
  {
    claims: (block) => block.code.includes("scripts/seed-session.mjs"),
    run: async (block) => {
      const temp = join(scratch, "mktemp");
      mkdirSync(temp);
      const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: temp };
      delete env.MC_HOME;
      const ran = await shell(block.code, env);
      assert.match(ran.stdout, /^opened demo at revision \S+/m);
      assert.match(ran.stdout, /^\d+ messages, complete: true$/m);
    },
  },
  {
    claims: (block) => block.lang === "js" && block.code.includes(`"session.list"`),
    run: (block) =>
      withFakeProvider(async (provider) => {
        const ws = workspace(scratch, "listing", provider);
        seed(ws.home, ws.cwd, "listed-a", 2);
        seed(ws.home, ws.cwd, "listed-b", 1);
        const ran = await module("listing", block.code, ws.cwd, ws.env);
        const listed = ran.stdout.split("\n").filter((line) => line.startsWith("listed-"));
        assert.deepEqual(listed.map((line) => [line.split(" ")[0], line.split(" ").at(-1)]), [["listed-a", "available"], ["listed-b", "available"]]);
        assert.match(ran.stdout, /^user: /m);
        assert.match(ran.stdout, /^assistant: /m);
      }),
  },
  {
    claims: (block) => block.lang === "js" && block.code.includes(`"selection.set"`),
    run: (block) =>
      withFakeProvider(async (provider) => {
        const ws = workspace(scratch, "picker", provider, {
          providers: {
            endpoints: { ollama: { base_url: `${provider.url}/v1` }, openai: { base_url: `${provider.url}/v1` } },
            catalog: { enabled: ["openai/gpt-5", "ollama/qwen2.5-coder:7b"] },
          },
        });
        provider.enqueue(openAiList([{ id: "gpt-5" }, { id: "gpt-5-mini" }]));
        provider.enqueue(reply("openai-responses", { text: ["Hello from ", "gpt-5."] }));
        const ran = await module("picker", block.code, ws.cwd, { ...ws.env, OPENAI_API_KEY: "sk-readme-placeholder-0123456789" });
        assert.match(ran.stdout, /provider: 'openai',\s+model: 'gpt-5',\s+requested_effort: 'high'/);
        assert.match(ran.stdout, /^completed Hello from gpt-5\.$/m);
        const turn = provider.log.at(-1)!.body as { model: string; reasoning?: { effort?: string } };
        assert.deepEqual([turn.model, turn.reasoning?.effort], ["gpt-5", "high"]);
      }),
  },
  {
    claims: (block) => block.lang === "js" && block.code.includes("startTurn(session_id, process.argv[2]"),
    run: (block) =>
      withFakeProvider(async (provider) => {
        const ws = workspace(scratch, "client", provider);
        provider.enqueue(reply("openai-chat", { text: ["Nothing ", "here."] }));
        const ran = await module("client", block.code, ws.cwd, ws.env, ["Which files are here?"]);
        assert.ok(ran.stdout.endsWith("--- completed; reconciled answer:\nNothing here.\n"), ran.stdout);
      }),
  },
  {
    claims: (block) => block.lang === "js" && block.code.includes(`from "ajv"`),
    run: async (block) => {
      const ran = await module("ajv", block.code, packed.app, process.env);
      assert.equal(ran.stdout, "true\n");
    },
  },
];

for (const document of ["README.md", join("docs", "schema", "README.md")]) {
  describe(`${document}'s code blocks`, () => {
    const blocks = codeBlocks(readFileSync(join(root, document), "utf8"));
    for (const block of blocks) {
      it(`the block at line ${block.line} (${block.code.split("\n")[0]!.slice(0, 60)}) runs`, async () => {
        const runners = RUNNERS.filter((runner) => runner.claims(block));
        assert.equal(runners.length, 1, `one runner in tests/readme.test.ts claims the block at ${document}:${block.line}`);
        await runners[0]!.run(block);
      });
    }
  });
}

it("every runner claims a block (a README block it ran was not removed)", () => {
  const blocks = ["README.md", join("docs", "schema", "README.md")].flatMap((document) => codeBlocks(readFileSync(join(root, document), "utf8")));
  for (const [index, runner] of RUNNERS.entries()) assert.ok(blocks.some((block) => runner.claims(block)), `runner ${index} claims a block`);
});
