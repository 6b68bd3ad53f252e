/**
 * The events handed to `onEvent`, one at a time in arrival order, after their 200 (docs/service.md
 * "Webhook delivery": answer first, process afterwards). A handler that throws is said and the
 * queue goes on: what it failed to process is recorded already.
 */
import type { EventRecord } from '../events-file.js';
import type { ReceiverNotice, ReceiverOptions } from './options.js';

/** `onEvent`'s queue: each event after the one before it has been processed. */
export class EventQueue {
  private last: Promise<void> = Promise.resolve();

  constructor(
    private readonly onEvent: ReceiverOptions['onEvent'],
    private readonly notify: (notice: ReceiverNotice) => void,
  ) {}

  /** Queues `event` behind those already queued (nothing without an `onEvent`). */
  add(event: EventRecord): void {
    const onEvent = this.onEvent;
    if (!onEvent) return;
    this.last = this.last.then(async () => {
      try {
        await onEvent(event);
      } catch (error) {
        const { operation, resourceId } = event.event;
        this.notify({ kind: 'failed', reason: `processing ${operation} ${resourceId} failed`, error });
      }
    });
  }

  /** Resolves once every event queued so far has been processed; a newer tail means more came. */
  get tail(): Promise<void> {
    return this.last;
  }
}
