/**
 * The end-to-end client's cleanup (tests/support/wire-client.ts): after a
 * failed case, `abandon()` must end the child even when closing its pipes
 * does not, or the test file hangs until the runner's timeout. The children
 * here are small Node scripts standing in for a magi-code that stopped
 * listening; each says `ready` on stdout (a JSON line, as the client reads
 * frames) once its handlers are installed, so no signal can beat them.
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { guarded } from "./support/hang-guard.ts";
import { type Launcher, nodeBinary } from "./support/processes.ts";
import { WireClient } from "./support/wire-client.ts";

const READY = `process.stdout.write(JSON.stringify({ type: "event", event: "ready" }) + "\\n");`;

/** A launcher whose "entry" is `script` (magi-code's own arguments land in its argv, unread). */
function scripted(script: string): Launcher {
  return { name: "node", command: nodeBinary(), prefix: ["-e", script] };
}

/** Starts `script` under a {@link WireClient} and waits until it said it is ready. */
async function started(script: string): Promise<WireClient> {
  const client = new WireClient(scripted(`${script}\n${READY}`), process.cwd(), process.env);
  await client.waitFor((frame) => frame.event === "ready", "the child to be ready");
  return client;
}

/** Abandons `client` and resolves with its exit code and stderr; kills it if abandon() did not end it, so a failure cannot hang the file. */
async function abandoned(client: WireClient): Promise<{ code: number | null; stderr: string }> {
  client.abandon();
  try {
    return { code: await guarded(client.exited, "the abandoned child to exit"), stderr: await guarded(client.stderr, "its stderr") };
  } catch (error) {
    await client.kill("SIGKILL");
    throw error;
  }
}

const NOTE_SIGTERM = `process.on("SIGTERM", () => { process.stderr.write("SIGTERM\\n"); process.exit(7); });`;
const KEEP_RUNNING = "setInterval(() => {}, 1_000);";

describe("WireClient.abandon()", () => {
  it("abandon() leaves a child that exits at EOF to exit by itself, unsignalled", async () => {
    const client = await started(`${NOTE_SIGTERM}\nprocess.stdin.resume();\nprocess.stdin.on("end", () => process.exit(3));`);
    assert.deepEqual(await abandoned(client), { code: 3, stderr: "" });
  });

  it("abandon() sends SIGTERM to a child that keeps running after its pipes closed", async () => {
    const client = await started(`${NOTE_SIGTERM}\n${KEEP_RUNNING}`);
    assert.deepEqual(await abandoned(client), { code: 7, stderr: "SIGTERM\n" });
  });

  it("abandon() sends SIGKILL to a child that also ignores SIGTERM", async () => {
    const client = await started(`process.on("SIGTERM", () => {});\n${KEEP_RUNNING}`);
    assert.deepEqual(await abandoned(client), { code: null, stderr: "" });
  });
});
