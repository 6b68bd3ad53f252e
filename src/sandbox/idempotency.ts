import { createHash } from 'node:crypto';
import type { SandboxDb } from './store.js';
import { RecordTable } from './table.js';

/** A stored answer to replay. */
export interface StoredReply {
  status: number;
  /** The serialized JSON body, or undefined for an answer without a body. */
  payload: string | undefined;
}

export type IdempotencyDecision =
  | { kind: 'new' }
  | { kind: 'replay'; reply: StoredReply }
  | { kind: 'conflict' }
  | { kind: 'in-progress' };

type Kept = { fingerprint: string; reply: StoredReply };

/**
 * Longest Idempotency-Key accepted (assumed: the service does not name the header;
 * docs/api-assumptions.md "Limits").
 */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * Idempotency-Key handling, per integrator. A key is bound to the SHA-256 of
 * the method, path and raw body of its first request. Only a 2xx answer is kept for replay:
 * a 4xx releases the key, so a corrected request may reuse it (a transaction refused for an
 * expired quote is re-sent with a new simulationId and the same key).
 *
 * A key whose request is running is held in memory; a kept answer goes to the sandbox's store,
 * one for every POST a run makes, with the recent ones in memory (table.ts).
 */
export class IdempotencyStore {
  private readonly running = new Map<string, string>();
  private readonly kept: RecordTable<Kept>;

  /** `recent`: kept answers held as objects, per generation (table.ts). */
  constructor(db: SandboxDb, recent?: number) {
    this.kept = new RecordTable<Kept>(db, {
      name: 'idempotency_keys',
      ...(recent === undefined ? {} : { recent }),
    });
  }

  /** Fingerprint of a request: what "the same body" means. */
  static fingerprint(method: string, path: string, rawBody: Buffer): string {
    return createHash('sha256').update(`${method} ${path}\n`).update(rawBody).digest('base64');
  }

  /** Looks the key up and, when it is new, reserves it for this request. */
  begin(integratorId: string, key: string, fingerprint: string): IdempotencyDecision {
    const id = `${integratorId}\u0000${key}`;
    const running = this.running.get(id);
    if (running !== undefined)
      return running === fingerprint ? { kind: 'in-progress' } : { kind: 'conflict' };
    const kept = this.kept.get(id);
    if (kept === undefined) {
      this.running.set(id, fingerprint);
      return { kind: 'new' };
    }
    if (kept.fingerprint !== fingerprint) return { kind: 'conflict' };
    return { kind: 'replay', reply: kept.reply };
  }

  /** Records the answer of a reserved key: kept when 2xx, released otherwise. */
  finish(integratorId: string, key: string, reply: StoredReply): void {
    const id = `${integratorId}\u0000${key}`;
    const fingerprint = this.running.get(id);
    if (fingerprint === undefined) return;
    this.running.delete(id);
    if (reply.status >= 200 && reply.status < 300) this.kept.add(id, { fingerprint, reply });
  }

  /** Releases a reserved key whose request never ran (the sandbox closed meanwhile). */
  release(integratorId: string, key: string): void {
    this.running.delete(`${integratorId}\u0000${key}`);
  }
}
