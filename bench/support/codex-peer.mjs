// The Codex app-server as a peer in the cold-start bench (issue 19 compares
// our ready time with it side by side, in the same pass). Not part of
// magi-code: the binary comes from `npm install @openai/codex` in a folder
// outside the tree, and `--codex PATH` names it (the native binary under
// node_modules/@openai/codex-linux-x64/vendor/<target>/bin/codex, not the
// npm wrapper script, so no Node start is counted against it).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processCpuMs, procMemory, readLines, spawnChild, within } from "../lib.mjs";

// The app-server's JSON-RPC `initialize` (its own framing: one JSON object per line, no "jsonrpc").
const INITIALIZE = `${JSON.stringify({ id: 0, method: "initialize", params: { clientInfo: { name: "magi-bench", title: null, version: "0.0.0" } } })}\n`;

/**
 * A Codex home that the warm-up runs make warm (Codex creates its SQLite
 * state on the first start), as the "ready with a warm home" asks;
 * each run still gets a fresh, empty cwd, as magi-code's runs do.
 */
export function codexPeer(binary, env) {
  const base = mkdtempSync(join(tmpdir(), "magi-codex-peer-"));
  const home = join(base, "home");
  mkdirSync(home);
  const launcher = { name: "codex", command: binary, prefix: [], env: { CODEX_HOME: home } };
  return {
    run: () => codexStartOnce(launcher, env),
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
}

async function codexStartOnce(launcher, env, TIMEOUT_MS = 15_000) {
  const work = mkdtempSync(join(tmpdir(), "magi-codex-work-"));
  const t0 = performance.now();
  const { child, exited, closed, stderr } = spawnChild(launcher, ["app-server"], { cwd: work, env });
  child.stdin.write(INITIALIZE);
  let timer;
  try {
    const first = await new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`codex: no initialize response within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      readLines(child.stdout, (line, now) => resolve({ line, now }));
      exited.then((status) => reject(new Error(`codex exited (${status.code ?? status.signal}) before answering: ${stderr().trim()}`)));
    });
    const mem = procMemory(child.pid);
    const cpuMs = processCpuMs(child.pid);
    const response = JSON.parse(first.line);
    // The app-server has no shutdown request: closing stdin is how a client ends it.
    const tShutdown = performance.now();
    child.stdin.end();
    const status = await within(exited, TIMEOUT_MS);
    if (status === null) child.kill("SIGKILL");
    const tExit = performance.now();
    await within(closed, 1000);
    return {
      ms: first.now - t0,
      hwmKiB: mem.hwmKiB,
      cpuMs,
      exitMs: tExit - tShutdown,
      exitCode: status?.code ?? null,
      readiness: response.result !== undefined ? "answered" : `error:${response.error?.code ?? "?"}`,
      stderr: stderr(),
    };
  } finally {
    clearTimeout(timer);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(work, { recursive: true, force: true });
  }
}
