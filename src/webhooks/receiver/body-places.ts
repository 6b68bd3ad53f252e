/**
 * The bodies being read at once, a bounded number: a few hundred clients sending bytes slowly
 * must not keep every real delivery out, so when every place is taken the body read longest
 * gives way if it has been slow, and otherwise the newcomer is turned away.
 */
import type { IncomingMessage } from 'node:http';
import type { Timers } from '../../clock.js';

export interface BodyPlacesLimits {
  /** Bodies read at once. */
  places: number;
  /** A body still arriving after this gives way to a newcomer when every place is taken. */
  slowBodyMs: number;
}

/** The requests whose bodies are being read, with when the reading began, oldest first. */
export class BodyPlaces {
  private readonly reading = new Map<IncomingMessage, number>();

  constructor(
    private readonly limits: BodyPlacesLimits,
    private readonly timers: Timers,
    /** Told of each body cut to make room (its connection is destroyed). */
    private readonly onCut: () => void,
  ) {}

  /** Takes a place for `req`'s body; false when every place is taken and none has been slow. */
  take(req: IncomingMessage): boolean {
    if (this.reading.size >= this.limits.places && !this.cutSlowest()) return false;
    this.reading.set(req, this.timers.elapsed());
    return true;
  }

  /** Gives the place back once the body is read, refused or gone. */
  release(req: IncomingMessage): void {
    this.reading.delete(req);
  }

  /** Cuts the body read longest, if it has taken over `slowBodyMs`; whether a place was freed. */
  private cutSlowest(): boolean {
    const oldest = this.reading.entries().next().value;
    if (oldest === undefined || this.timers.elapsed() - oldest[1] < this.limits.slowBodyMs) return false;
    const [req] = oldest;
    this.reading.delete(req);
    this.onCut();
    req.socket.destroy();
    return true;
  }
}
