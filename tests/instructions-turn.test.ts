/**
 * The instructions chain through a real turn (docs/features/runner.md,
 * "Instructions"): a server on the in-memory runtime whose workspace is a
 * package of a git repository, talking to a loopback provider in its real
 * wire format. The provider request's system prompt carries the chain in
 * order, and the turn's `turn_started` record names each file with the
 * SHA-256 of what was used, the skills the prompt listed (found under the
 * same project root), and the digest of the prompt sent.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MemoryFileSystem } from "../runtime/memory-fs.ts";
import { sha256Hex } from "../src/util/digest.ts";
import { reply } from "./support/provider-scripts.ts";
import { CWD, HOME, runEvents, startTurn, startTurnServer, stopTurnServer, type TurnServer } from "./support/turns.ts";

const API = "openai-chat";
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const digest = async (text: string) => await sha256Hex(encoder.encode(text));

/** The repository root above the workspace: `/work/project` is a package of the `/work` repository. */
const ROOT = "/work";

/** Each file of the chain and its text, in the order the prompt must carry them. */
const CHAIN: readonly (readonly [string, string])[] = [
  [`${HOME}/AGENTS.md`, "Rule 1 (global): answer in English."],
  [`${ROOT}/AGENTS.md`, "Rule 2 (repository root): use pnpm."],
  [`${CWD}/AGENTS.md`, "Rule 3 (package): this package uses npm after all."],
  ["/dotfiles/style.md", "Rule 4 (global path): no emoji."],
  ["/home/user/notes.md", "Rule 5 (~/ path): cite files by path."],
  [`${CWD}/docs/agents-extra.md`, "Rule 6 (project path): run the linter."],
];

function storedRecords(server: TurnServer, sessionId: string): Record<string, unknown>[] {
  const bytes = server.runtime.fs.contents(`${HOME}/sessions/${sessionId}.jsonl`);
  assert.ok(bytes, "the session file exists");
  return decoder.decode(bytes).trim().split("\n").map((line) => JSON.parse(line));
}

describe("the instructions chain in a turn", () => {
  it("the request's system prompt carries global, root → cwd and instructions.paths in order, and turn_started records their digests", async () => {
    const fs = new MemoryFileSystem();
    void fs.mkdir(`${ROOT}/.git`, 0o755);
    // A directory between the root and the workspace without AGENTS.md, and one beside it that is not on the chain.
    fs.writeFile(`${ROOT}/other/AGENTS.md`, "Not on the chain.");
    for (const [path, text] of CHAIN) fs.writeFile(path, text);
    fs.writeFile(`${CWD}/.magi-code/settings.jsonc`, JSON.stringify({ instructions: { paths: ["docs/agents-extra.md"] } }));
    fs.writeFile(`${ROOT}/.agents/skills/lint-fix/SKILL.md`, "---\nname: lint-fix\ndescription: Fix what the linter reports.\n---\nRun the linter, then fix.\n");
    const server = await startTurnServer(API, { fs, settings: { instructions: { paths: ["/dotfiles/style.md", "~/notes.md"] } } });
    server.provider.enqueue(reply(API, { text: ["Noted."] }));
    server.provider.enqueue(reply(API, { text: ["Still noted."] }));
    const first = await startTurn(server, "Which rules apply?");
    await runEvents(server, first.runId);
    const second = await startTurn(server, "And now?", first.sessionId);
    await runEvents(server, second.runId);

    const messages = (server.provider.log[0]!.body as { messages: { role: string; content: string }[] }).messages;
    assert.equal(messages[0]!.role, "system");
    const system = messages[0]!.content;
    const positions = CHAIN.map(([, text]) => system.indexOf(text));
    assert.ok(positions.every((position) => position > 0), `every file is in the prompt: ${positions.join(", ")}`);
    assert.deepEqual([...positions].sort((a, b) => a - b), positions, "in chain order, the nearest last");
    assert.ok(!system.includes("Not on the chain."));
    // The prompt names where each project file came from.
    assert.match(system, new RegExp(`Project instructions \\(${ROOT}/AGENTS\\.md\\):\\n\\nRule 2`));

    const started = storedRecords(server, first.sessionId).filter((record) => record.type === "turn_started");
    assert.equal(started.length, 2);
    assert.match(system, /- lint-fix: Fix what the linter reports\./);
    const expected = {
      system_sha256: await digest(system),
      instructions: await Promise.all(CHAIN.map(async ([path, text]) => ({ path, sha256: await digest(text), bytes: encoder.encode(text).length }))),
      skills: [{ name: "lint-fix", path: `${ROOT}/.agents/skills/lint-fix/SKILL.md` }],
      profile: { name: "build" },
    };
    // Every turn records what it used; a child's snapshot is read once, so both turns used the same.
    assert.deepEqual(started[0]!.context, expected);
    assert.deepEqual(started[1]!.context, expected);
    assert.equal((server.provider.log[1]!.body as { messages: { content: string }[] }).messages[0]!.content, system);
    assert.equal(await stopTurnServer(server), 0);
  });
});
