/**
 * A minimal lease holder for the cross-process lease tests: takes the writer
 * lease of `<sessionsDir>/<id>`, prints one line (`acquired`, `busy`, or
 * `failed` for `persistence_failed`), keeps the lease with heartbeats until
 * its stdin reaches EOF, then releases it and exits.
 *
 *     node dist/tests/support/lease-holder.js <sessionsDir> <id>
 *     deno run -A tests/support/lease-holder.ts <sessionsDir> <id>
 *
 * @module
 */

import { createNodeRuntime } from "../../runtime/node-runtime.ts";
import { ErrorCode } from "../../src/protocol/errors.ts";
import type { Runtime } from "../../src/host/runtime.ts";
import { Lease, leasePath } from "../../src/store/leases.ts";

// A computed specifier keeps tsc (which builds the Node side) away from the Deno-only adapter.
const denoAdapter = "../../runtime/deno-runtime.ts";
const runtime: Runtime = "Deno" in globalThis
  ? (await import(denoAdapter) as { createDenoRuntime(): Runtime }).createDenoRuntime()
  : createNodeRuntime();

const [sessionsDir, sessionId] = runtime.args;
if (sessionsDir === undefined || sessionId === undefined) {
  await runtime.stderr.write(new TextEncoder().encode("usage: lease-holder <sessionsDir> <id>\n"));
  runtime.exit(2);
}
const acquired = await Lease.acquire(runtime, leasePath(sessionsDir!, sessionId!, "writer"), {
  instanceId: runtime.randomUUID(),
});
const verdict = acquired.ok ? "acquired" : acquired.code === ErrorCode.sessionBusy ? "busy" : "failed";
await runtime.stdout.write(new TextEncoder().encode(`${verdict}\n`));
if (acquired.ok) acquired.lease.startHeartbeat();
while ((await runtime.stdin.read()) !== null) {
  // Only EOF matters: the test ends the holder by closing its stdin.
}
if (acquired.ok) await acquired.lease.release();
runtime.exit(0);
