import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { HEADERS, type WebhookPayload } from '../api/contract.js';
import type { Clock } from '../clock.js';
import type { Scheduler, WorkTracker } from './scheduler.js';
import { isoWithOffset } from './time.js';

/** One delivery of one webhook event to one callback URL, as the ledger shows it. */
export interface WebhookDelivery {
  id: string;
  integratorId: string;
  operation: string;
  resourceId: string;
  url: string;
  /** The delivery this one repeats (`--duplicate-rate`), or null for the first. */
  duplicateOf: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** HTTP status of the last attempt, or null when it got none. */
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  payload: WebhookPayload;
}

export interface WebhookDispatcherOptions {
  maxAttempts: number;
  backoffMs: number;
  timeoutMs: number;
  clock: Clock;
  scheduler: Scheduler;
  work: WorkTracker;
  /** The integrator's secret at the time of an attempt: a rotation applies to retries too. */
  secretOf: (integratorId: string) => string;
}

interface Job {
  delivery: WebhookDelivery;
  body: string;
}

/** Deliveries in flight at once; more wait in a queue so a burst never floods the receiver. */
const MAX_IN_FLIGHT = 16;

/**
 * Base64 of HMAC-SHA256 of the raw body keyed with the webhook secret (docs/service.md "Webhook
 * signature").
 */
export function signWebhook(body: string, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('base64');
}

/**
 * Delay before attempt `attempt` (2, 3, ...): backoff, doubled per earlier retry. With the
 * defaults (500 ms, 6 attempts) a failing receiver is tried at 0, 0.5, 1.5, 3.5, 7.5 and 15.5 s.
 */
export function retryDelay(attempt: number, backoffMs: number): number {
  return backoffMs * 2 ** (attempt - 2);
}

/**
 * Sends webhook payloads to callback URLs (docs/service.md "Webhooks"), signed, retried with
 * exponential backoff while the receiver fails (no answer, or not 2xx), never on the path of
 * an API request.
 */
export class WebhookDispatcher {
  private readonly agent: Agent;
  private readonly log: WebhookDelivery[] = [];
  private readonly queue: Job[] = [];
  private inFlight = 0;
  private closed = false;
  private withoutUrl = 0;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.agent = new Agent({ keepAliveTimeout: 1000, connect: { timeout: options.timeoutMs } });
  }

  /** Every delivery so far. */
  get deliveries(): readonly WebhookDelivery[] {
    return this.log;
  }

  /** Events that found no callback URL. */
  get eventsWithoutUrl(): number {
    return this.withoutUrl;
  }

  /** Queues the event for the URL, twice when `duplicate`. Returns at once. */
  emit(url: string | null, payload: WebhookPayload, duplicate: boolean): void {
    if (this.closed) return;
    if (url === null) {
      this.withoutUrl += 1;
      return;
    }
    const body = JSON.stringify(payload);
    const first = this.enqueue(url, payload, body, null);
    if (duplicate) this.enqueue(url, payload, body, first.id);
    this.pump();
  }

  /** Stops every retry and aborts every delivery in flight. */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.length = 0;
    await this.agent.destroy().catch(() => undefined);
  }

  private enqueue(
    url: string,
    payload: WebhookPayload,
    body: string,
    duplicateOf: string | null,
  ): WebhookDelivery {
    const delivery: WebhookDelivery = {
      id: randomUUID(),
      integratorId: payload.integratorId,
      operation: payload.operation,
      resourceId: payload.resourceId,
      url,
      duplicateOf,
      status: 'pending',
      attempts: 0,
      lastStatus: null,
      lastError: null,
      createdAt: isoWithOffset(this.options.clock.now()),
      deliveredAt: null,
      payload,
    };
    this.log.push(delivery);
    this.options.work.start();
    this.queue.push({ delivery, body });
    return delivery;
  }

  private pump(): void {
    while (!this.closed && this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.inFlight += 1;
      void this.attempt(job).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async attempt(job: Job): Promise<void> {
    const { delivery, body } = job;
    delivery.attempts += 1;
    try {
      const response = await request(delivery.url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          'content-type': 'application/json',
          [HEADERS.webhookSignature]: signWebhook(body, this.options.secretOf(delivery.integratorId)),
        },
        body,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      });
      await response.body.dump();
      delivery.lastStatus = response.statusCode;
      delivery.lastError = response.statusCode < 300 ? null : `receiver answered ${response.statusCode}`;
    } catch (error) {
      delivery.lastStatus = null;
      delivery.lastError = error instanceof Error ? error.message : String(error);
    }
    if (this.closed) return;
    if (delivery.lastStatus !== null && delivery.lastStatus >= 200 && delivery.lastStatus < 300) {
      delivery.status = 'delivered';
      delivery.deliveredAt = isoWithOffset(this.options.clock.now());
      this.options.work.done();
    } else if (delivery.attempts >= this.options.maxAttempts) {
      delivery.status = 'failed';
      this.options.work.done();
    } else {
      this.options.scheduler.after(retryDelay(delivery.attempts + 1, this.options.backoffMs), () => {
        this.queue.push(job);
        this.pump();
      });
    }
  }
}
