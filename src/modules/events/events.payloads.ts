import type { z } from 'zod';
import type { Ctx } from '../../platform/request-context.ts';
import { eventCatalog, type EventType } from './events.catalog.ts';

// An event's `data.object` is the V3 representation of what its use case changed, which only the
// module that records it can present. So each module defines its event types here (its
// `<m>.events.ts` calls defineEvents with its presenters) and its use cases pass the domain result:
// the events module builds the payload without importing any module (docs/architecture.md "Module boundaries").

/** How one event type's `data.object` is built: its V3 schema, and the module's presenter of the use case's result. */
export interface EventPayload<Subject, Obj extends { object: string }> {
  readonly schema: z.ZodType<Obj>;
  /** `now` is the instant the use case judged the subject at (an issued pass's effective status). */
  readonly present: (subject: Subject, now: Date) => Obj;
}

/**
 * Each recorded type's payload, added by the module that records it:
 * `declare module '../events/index.ts' { interface EventPayloads extends typeof-its-definitions {} }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging, one module at a time
export interface EventPayloads {}

/** The types some use case records today: those a module defined a payload for. */
export type EmittedEventType = keyof EventPayloads & EventType;

/** What the use case recording each type passes: its domain result. */
export type EventSubjects = { [T in EmittedEventType]: EventPayloads[T] extends EventPayload<infer S, { object: string }> ? S : never };

/** Each recorded type's `data.object`. */
export type EventObjects = { [T in EmittedEventType]: EventPayloads[T] extends EventPayload<never, infer O> ? O : never };

/** When and for whom an event is recorded. */
export interface EventOptions {
  /** The reseller it goes to; the caller's by default (a provider or a sweep must name it). */
  resellerId?: string;
  /** The instant the use case acted at, which the payload's time-dependent fields are judged at; the event's by default. */
  now?: Date;
}

/** What a module's defineEvents gives its use cases: recordEvent for its own types only. */
export type EventRecorder<D> = <T extends keyof D & EmittedEventType>(
  ctx: Ctx,
  type: T,
  subject: EventSubjects[T],
  options?: EventOptions,
) => Promise<void>;

type AnyEventPayload = EventPayload<never, { object: string }>;

/** The payloads the modules defined, by type; one instance, filled as the modules load. */
export class EventPayloadRegistry {
  readonly #payloads = new Map<string, AnyEventPayload>();
  #objectSchemas: z.ZodType[] | undefined;

  define(payloads: Partial<Record<EventType, AnyEventPayload>>): void {
    for (const [type, payload] of Object.entries(payloads) as [EventType, AnyEventPayload][]) {
      if (!Object.hasOwn(eventCatalog, type)) throw new Error(`${type} is not in the event catalogue (events.catalog.ts)`);
      if (this.#payloads.has(type)) throw new Error(`${type}: its payload is defined twice`);
      this.#payloads.set(type, payload);
    }
    this.#objectSchemas = undefined;
  }

  present(type: string, subject: unknown, now: Date): { object: string } {
    const payload = this.#payloads.get(type);
    if (!payload)
      throw new Error(
        `${type}: no payload is defined for this event type; its module's <m>.events.ts defines it (defineEvents) when loaded`,
      );
    return payload.present(subject as never, now);
  }

  /** The distinct `data.object` schemas, in the catalogue's order; every recorded type must have one. */
  objectSchemas(): z.ZodType[] {
    if (this.#objectSchemas) return this.#objectSchemas;
    const missing = Object.entries(eventCatalog).filter(([type, spec]) => spec.emitted && !this.#payloads.has(type));
    if (missing.length > 0)
      throw new Error(`No payload defined for ${missing.map(([type]) => type).join(', ')}: load the modules that record them first`);
    const schemas = [...new Set(Object.keys(eventCatalog).flatMap((type) => this.#payloads.get(type)?.schema ?? []))];
    this.#objectSchemas = schemas;
    return schemas;
  }
}

export const eventPayloads = new EventPayloadRegistry();
