// Time comes from a clock so tests can move it; the database's now() is never used for rules.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests set and advance; it starts at the real time. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: Date = new Date()) {
    this.current = start.getTime();
  }
  now(): Date {
    return new Date(this.current);
  }
  set(at: Date): void {
    this.current = at.getTime();
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export const unixSeconds = (d: Date): number => Math.floor(d.getTime() / 1000);
