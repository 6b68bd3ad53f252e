/**
 * Rows finish in any order (a slow payee, a retried request), but a results file is written in
 * the sheet's order. This window holds the results of the rows between the first unfinished one
 * and the last one taken, hands each on as soon as every row before it has finished, and makes
 * the feeder wait while it is full: what a run holds grows with its concurrency, never with its
 * sheet.
 */

/** A row's place in the window, taken in sheet order. */
export interface Place<T> {
  readonly seq: number;
  value?: T;
  settled: boolean;
}

export class InOrder<T> {
  private places: Place<T>[] = [];
  /** The first place not handed on yet. */
  private start = 0;
  private wake: (() => void) | undefined;

  constructor(
    /** Rows held at most (taken and not handed on) before `room` waits. */
    readonly limit: number,
    /** Receives each finished row, in the order the places were taken. */
    private readonly handOn: (seq: number, value: T) => void,
  ) {
    if (!(limit >= 1)) throw new RangeError(`an in-order window holds at least one row, not ${limit}`);
  }

  /** Rows taken and not handed on. */
  get size(): number {
    return this.places.length - this.start;
  }

  /**
   * Resolves when there is room for one more row, or when `giveUp` says to stop waiting (a stop,
   * an error that ends the run): rows that then never finish must not hold the feeder forever.
   * Each `settle` and `nudge` asks again.
   */
  async room(giveUp: () => boolean): Promise<void> {
    while (this.size >= this.limit && !giveUp()) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  /** Takes the next place (call in sheet order). */
  take(seq: number): Place<T> {
    const place: Place<T> = { seq, settled: false };
    this.places.push(place);
    return place;
  }

  /** A row finished: hands on every row now finished in order. */
  settle(place: Place<T>, value: T): void {
    place.value = value;
    place.settled = true;
    while (this.start < this.places.length && this.places[this.start]!.settled) {
      const next = this.places[this.start]!;
      this.places[this.start] = EMPTY as Place<T>;
      this.start += 1;
      this.handOn(next.seq, next.value as T);
    }
    // The handed-on head is dropped now and then, not on every row (an array shift is a copy).
    if (this.start > 1024 && this.start * 2 > this.places.length) {
      this.places = this.places.slice(this.start);
      this.start = 0;
    }
    this.nudge();
  }

  /** Lets a waiting `room` look again (after a stop, or a row that will never finish). */
  nudge(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /**
   * The end: hands on, in order, every row that finished behind one that never will (the run
   * stopped before it was sent), and forgets the rest.
   */
  close(): void {
    for (let i = this.start; i < this.places.length; i++) {
      const place = this.places[i]!;
      if (place.settled) this.handOn(place.seq, place.value as T);
    }
    this.places = [];
    this.start = 0;
    this.nudge();
  }
}

const EMPTY: Place<unknown> = { seq: -1, settled: true };
