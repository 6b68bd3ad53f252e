/**
 * Recording an event before it is acknowledged: the register (`persist`) commits it, or held it
 * already, which makes it a duplicate; the register decides what is new, not this process's
 * memory. A recording that takes longer than the record deadline is not waited for (the answer
 * is 503). The events file is the record only without a register; with one, it is an export
 * written after the commit.
 */
import type { EventLog, EventRecord } from '../events-file.js';
import { eventKey } from '../payload.js';
import { DEADLINE, withDeadline } from './deadline.js';
import { RECEIVER_DEFAULTS, type ReceiverNotice, type ReceiverSettings } from './options.js';

/** What became of a recording: new, held already, or not recorded (with why). */
export type Recorded = 'new' | 'duplicate' | { unrecorded: unknown };

/** Records each event once, answering copies of a recent one from memory. */
export class EventRecorder {
  private readonly recent = new RecentKeys(RECEIVER_DEFAULTS.recentKeys);
  private readonly write: (event: EventRecord) => Promise<boolean>;

  constructor(
    private readonly settings: ReceiverSettings,
    private readonly log: EventLog | undefined,
  ) {
    // Without a register the events file is the record; with one, the file is its export.
    this.write =
      settings.persist ?? (async (event) => (log === undefined ? true : log.append(event).then(() => true)));
  }

  /** Records `event` within the record deadline, or says why it could not. */
  async record(event: EventRecord): Promise<Recorded> {
    const key = eventKey(event.event);
    // A copy of an event recorded a moment ago, or still being recorded, shares that outcome.
    let recording = this.recent.get(key);
    const first = recording === undefined;
    if (recording === undefined) {
      recording = this.write(event);
      this.recent.set(key, recording);
    }
    try {
      const isNew = await withDeadline(recording, this.settings.recordDeadlineMs, this.settings.timers);
      return isNew && first ? 'new' : 'duplicate';
    } catch (error) {
      this.recent.delete(key, recording);
      return { unrecorded: error };
    }
  }

  /** Appends a new event to the events file when that is an export: a failure is said, never decisive. */
  async export(event: EventRecord): Promise<void> {
    if (this.log === undefined || this.settings.persist === undefined) return;
    try {
      await this.log.append(event);
    } catch (error) {
      this.settings.notify({
        kind: 'failed',
        reason: 'the event is recorded, but the events file could not be written (tried again)',
        error,
      });
    }
  }
}

/** The notice of an event not recorded: past the deadline, or refused by the register. */
export function unrecordedNotice(error: unknown, deadlineMs: number): ReceiverNotice {
  return {
    kind: 'unrecorded',
    reason:
      error === DEADLINE
        ? `the register did not record the event within ${deadlineMs / 1000} s`
        : 'the register could not record the event',
    ...(error === DEADLINE ? {} : { error }),
  };
}

/**
 * The keys of recent events with their recording, oldest dropped first: a redelivery that
 * comes quickly is answered without the register; older ones ask it (which knows them all).
 */
class RecentKeys {
  private readonly keys = new Map<string, Promise<boolean>>();

  constructor(private readonly limit: number) {}

  get(key: string): Promise<boolean> | undefined {
    return this.keys.get(key);
  }

  set(key: string, recording: Promise<boolean>): void {
    this.keys.set(key, recording);
    if (this.keys.size > this.limit) this.keys.delete(this.keys.keys().next().value as string);
  }

  /** Forgets a key whose recording failed, unless a newer one took its place. */
  delete(key: string, recording: Promise<boolean>): void {
    if (this.keys.get(key) === recording) this.keys.delete(key);
  }
}
