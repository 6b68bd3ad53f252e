import { createHash } from 'node:crypto';

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

type Entry = { fingerprint: string; reply: StoredReply | undefined };

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
 */
export class IdempotencyStore {
  private readonly entries = new Map<string, Entry>();

  /** Fingerprint of a request: what "the same body" means. */
  static fingerprint(method: string, path: string, rawBody: Buffer): string {
    return createHash('sha256').update(`${method} ${path}\n`).update(rawBody).digest('base64');
  }

  /** Looks the key up and, when it is new, reserves it for this request. */
  begin(integratorId: string, key: string, fingerprint: string): IdempotencyDecision {
    const id = `${integratorId}\u0000${key}`;
    const entry = this.entries.get(id);
    if (entry === undefined) {
      this.entries.set(id, { fingerprint, reply: undefined });
      return { kind: 'new' };
    }
    if (entry.fingerprint !== fingerprint) return { kind: 'conflict' };
    if (entry.reply === undefined) return { kind: 'in-progress' };
    return { kind: 'replay', reply: entry.reply };
  }

  /** Records the answer of a reserved key: kept when 2xx, released otherwise. */
  finish(integratorId: string, key: string, reply: StoredReply): void {
    const id = `${integratorId}\u0000${key}`;
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    if (reply.status >= 200 && reply.status < 300) entry.reply = reply;
    else this.entries.delete(id);
  }

  /** Releases a reserved key whose request never ran (the sandbox closed meanwhile). */
  release(integratorId: string, key: string): void {
    const id = `${integratorId}\u0000${key}`;
    if (this.entries.get(id)?.reply === undefined) this.entries.delete(id);
  }
}
