/**
 * Session leases (`docs/storage.md`, "Leases"): exclusive lease files that
 * make a session's owner visible to other children and to discovery. This
 * file takes, renews and releases them; the file format and the staleness
 * rule live in `lease-file.ts`.
 *
 * Nothing here throws: every outcome is data carrying a wire code, and no
 * result ever names a path.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import { type Disposable, isRuntimeError, type Runtime } from "../host/runtime.ts";
import { joinPath } from "../util/paths.ts";
import {
  createFresh,
  encodeLeaseBody,
  inspectLease,
  INSTANCE_ID_PATTERN,
  isLeaseStale,
  LEASE_HEARTBEAT_MS,
  type LeaseBody,
  type LeaseHolder,
  leaseHost,
  LEASE_IDENTITY_SETTLE_MS,
  leaseIdentity,
  leaseTimestamp,
  publishLease,
  removeLeaseIf,
} from "./lease-file.ts";

export { isLeaseStale, LEASE_HEARTBEAT_MS, LEASE_STALE_MS, type LeaseBody, type LeaseHolder } from "./lease-file.ts";

/** Which lease: `writer` (attachment), `active` (a running turn) or `append` (one write + fsync). */
export type LeaseKind = "writer" | "active" | "append";

/** The wire codes a lease operation can end with. */
export type LeaseFailureCode = typeof ErrorCode.sessionBusy | typeof ErrorCode.persistenceFailed;

/** The outcome of {@link Lease.acquire}. */
export type LeaseAcquisition =
  | { readonly ok: true; readonly lease: Lease }
  | { readonly ok: false; readonly code: LeaseFailureCode };

/** The outcome of {@link Lease.verify}, {@link Lease.heartbeat} and {@link Lease.release}. */
export type LeaseOutcome = { readonly ok: true } | { readonly ok: false; readonly code: LeaseFailureCode };

/** `held` until released, or `lost` once the file was found to name someone else (or nobody). */
export type LeaseState = "held" | "lost" | "released";

/** Options of {@link Lease.acquire}. */
export interface LeaseOptions {
  /** This child's instance id (`[A-Za-z0-9_-]{1,64}`, typically a UUID). */
  readonly instanceId: string;
  /** Wall-clock milliseconds for timestamps and staleness (default `runtime.wallNow`). */
  readonly now?: () => number;
}

/** `<sessionsDir>/<sessionId>.<kind>.lease`; `sessionId` must already match the session id grammar. */
export function leasePath(sessionsDir: string, sessionId: string, kind: LeaseKind): string {
  return joinPath(sessionsDir, `${sessionId}.${kind}.lease`);
}

const BUSY = Object.freeze({ ok: false, code: ErrorCode.sessionBusy } as const);
const FAILED = Object.freeze({ ok: false, code: ErrorCode.persistenceFailed } as const);
const OK = Object.freeze({ ok: true } as const);

/**
 * The one {@link Lease} object per runtime that holds each file: a second
 * acquire by the same instance gets it back instead of a twin, whose release
 * would delete the file the first still believes it holds.
 */
const HELD = new WeakMap<Runtime, Map<string, Lease>>();

/**
 * One held lease file. Operations on one lease run one at a time, in call
 * order. Ownership of a file is this one object (see {@link Lease.acquire}).
 */
export class Lease {
  /** The lease file. */
  readonly path: string;
  /** The instance id the file carries. */
  readonly instanceId: string;
  readonly #runtime: Runtime;
  readonly #now: () => number;
  readonly #acquiredAt: string;
  #state: LeaseState = "held";
  /** The identity (`leaseIdentity`) of the file the last read found carrying our instance id; null until one did. */
  #known: string | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #heartbeat: Disposable | null = null;

  private constructor(runtime: Runtime, path: string, instanceId: string, now: () => number, acquiredAt: string) {
    this.#runtime = runtime;
    this.path = path;
    this.instanceId = instanceId;
    this.#now = now;
    this.#acquiredAt = acquiredAt;
  }

  /**
   * Takes the lease at `path`: publishes it whole (a temporary file, then a
   * link that never replaces anything, so a crash or a full disk leaves no
   * lease or a complete one, never an empty file that reads as held), or, if
   * it exists, treats it as ours when it carries our instance id (returning
   * the object that already holds it, when there is one), or removes it and
   * retries once when it is stale. Anything else is `session_busy`; a
   * failing filesystem is `persistence_failed`.
   */
  static async acquire(runtime: Runtime, path: string, options: LeaseOptions): Promise<LeaseAcquisition> {
    const { instanceId } = options;
    const now = options.now ?? (() => runtime.wallNow());
    // Our own file must parse as ours later, and the id is part of the heartbeat's temporary name.
    if (!INSTANCE_ID_PATTERN.test(instanceId)) return FAILED;
    for (let attempt = 0; attempt < 2; attempt++) {
      const at = leaseTimestamp(now());
      const body: LeaseBody = {
        v: 1,
        pid: runtime.pid,
        instance_id: instanceId,
        host: leaseHost(runtime),
        acquired_at: at,
        heartbeat_at: at,
      };
      const published = await publishLease(runtime.fs, path, `${path}.${instanceId}.new`, encodeLeaseBody(body));
      if (published === "failed") return FAILED;
      if (published === "created") return { ok: true, lease: Lease.#hold(new Lease(runtime, path, instanceId, now, at)) };
      const found = await inspectLease(runtime.fs, path);
      if (found.state === "failed") return FAILED;
      if (found.state === "missing") continue; // Released between our create and our read.
      const holder = found.holder;
      if (holder.state === "parsed" && holder.body.instance_id === instanceId) {
        const held = HELD.get(runtime)?.get(path);
        if (held !== undefined && held.state === "held") return { ok: true, lease: held };
        return { ok: true, lease: Lease.#hold(new Lease(runtime, path, instanceId, now, holder.body.acquired_at)) };
      }
      const stale = isLeaseStale(holder, now(), (pid) => runtime.isProcessAlive(pid), leaseHost(runtime));
      if (attempt > 0 || !stale) return BUSY;
      if ((await removeLeaseIf(runtime.fs, path, found.fingerprint)) === "failed") return FAILED;
    }
    return BUSY;
  }

  static #hold(lease: Lease): Lease {
    let table = HELD.get(lease.#runtime);
    if (table === undefined) HELD.set(lease.#runtime, table = new Map());
    table.set(lease.path, lease);
    return lease;
  }

  /** Whether the lease is still held, was lost to someone else, or was released. */
  get state(): LeaseState {
    return this.#state;
  }

  /**
   * Checks that the file still carries our instance id, as the writer must
   * before each append. A file naming someone else, or gone, marks the lease
   * `lost` (`session_busy`); a read failure leaves it held (`persistence_failed`).
   */
  verify(): Promise<LeaseOutcome> {
    return this.#serial(() => this.#verify());
  }

  /**
   * Renews `heartbeat_at`: verifies the file is still ours, then writes the
   * new body to `<path>.<instance>.tmp` and renames it over the lease, so a
   * reader never sees a half-written body.
   */
  heartbeat(): Promise<LeaseOutcome> {
    return this.#serial(async () => {
      const checked = await this.#verify();
      if (!checked.ok) return checked;
      const fs = this.#runtime.fs;
      const temporary = `${this.path}.${this.instanceId}.tmp`;
      const bytes = encodeLeaseBody({
        v: 1,
        pid: this.#runtime.pid,
        instance_id: this.instanceId,
        host: leaseHost(this.#runtime),
        acquired_at: this.#acquiredAt,
        heartbeat_at: leaseTimestamp(this.#now()),
      });
      // The temporary name is ours alone, so an existing one is our own leftover from a failed renewal.
      if (!(await createFresh(fs, temporary, bytes))) return FAILED;
      try {
        await fs.rename(temporary, this.path);
        return OK;
      } catch {
        await fs.unlink(temporary).catch(() => {});
        return FAILED;
      }
    });
  }

  /**
   * Removes the file if it still carries our instance id; a lease that was
   * lost, or already released, is left alone. Idempotent. Stops the
   * heartbeat. A read or unlink failure leaves the lease held so a later
   * call can retry.
   */
  release(): Promise<LeaseOutcome> {
    this.#heartbeat?.dispose();
    return this.#serial(async () => {
      if (this.#state !== "held") {
        this.#state = "released";
        return OK;
      }
      const found = await this.#check();
      if (found === "failed") return FAILED;
      if (found === "ours") {
        try {
          await this.#runtime.fs.unlink(this.path);
        } catch (error) {
          if (!isRuntimeError(error, "not_found")) return FAILED;
        }
      }
      this.#state = "released";
      return OK;
    });
  }

  /**
   * Renews the lease every `everyMs` until disposed, released or lost; the
   * next renewal is armed only after the previous one finished, so they never
   * overlap; a renewal that finds the lease lost stops the schedule (the
   * owner sees it in {@link state} and in the next {@link verify}). Starting
   * again replaces the previous schedule.
   */
  startHeartbeat(everyMs = LEASE_HEARTBEAT_MS): Disposable {
    this.#heartbeat?.dispose();
    let timer: Disposable | null = null;
    let stopped = false;
    const arm = () => {
      timer = this.#runtime.setTimer(everyMs, () => void beat());
    };
    const beat = async () => {
      if (stopped) return;
      await this.heartbeat();
      if (stopped) return;
      if (this.#state === "held") return arm();
      stopped = true;
    };
    const handle: Disposable = {
      dispose: () => {
        stopped = true;
        timer?.dispose();
        if (this.#heartbeat === handle) this.#heartbeat = null;
      },
    };
    this.#heartbeat = handle;
    arm();
    return handle;
  }

  async #verify(): Promise<LeaseOutcome> {
    if (this.#state !== "held") return BUSY;
    const found = await this.#check();
    if (found === "failed") return FAILED;
    if (found === "ours") return OK;
    this.#state = "lost";
    return BUSY;
  }

  /**
   * Whether the file still carries our instance id. A file whose identity
   * (device, inode, size, mtime) equals that of the last read that found our
   * id holds the same bytes, since nobody rewrites a lease in place
   * (`leaseIdentity`): one `lstat` answers, where a read costs an open, a
   * stat, a read and a close before each append group (docs/storage.md,
   * "Leases"). Any other identity is read again, and so is a file read
   * within {@link LEASE_IDENTITY_SETTLE_MS} of its write, whose mtime a
   * replacement written in the same clock tick could share.
   */
  async #check(): Promise<"ours" | "other" | "failed"> {
    const fs = this.#runtime.fs;
    if (this.#known !== null) {
      const current = await leaseIdentity(fs, this.path);
      if (current.state === "failed") return "failed";
      if (current.state === "present" && current.identity === this.#known) return "ours";
    }
    const found = await inspectLease(fs, this.path);
    if (found.state === "failed") return "failed";
    const ours = found.state === "present" && this.#ours(found.holder);
    this.#known = ours && this.#now() - found.mtimeMs > LEASE_IDENTITY_SETTLE_MS ? found.identity : null;
    return ours ? "ours" : "other";
  }

  #ours(holder: LeaseHolder): boolean {
    return holder.state === "parsed" && holder.body.instance_id === this.instanceId;
  }

  #serial<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(operation, operation);
    this.#queue = next.catch(() => {});
    return next;
  }
}
