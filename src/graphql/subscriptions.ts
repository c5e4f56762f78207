import { createSourceEventStream, execute, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type FetchAPI } from 'graphql-yoga';
import type { EventType, LiveEvent } from '../modules/events/index.ts';
import { DomainError } from '../platform/errors.ts';
import { resellerOf } from '../platform/request-context.ts';
import type { ExecutionPlugin, GraphQLContext } from './context.ts';
import { isGraphQLError } from './errors.ts';
import { asGraphQLError } from './transport-errors.ts';

// GraphQL subscriptions over Server-Sent Events (docs/partner-guide.md "Live booking status"):
// yoga's own transport, GraphQL over SSE in its "distinct connections" mode (one stream per
// subscription, `Accept: text/event-stream`, GET or POST), with three things of ours:
//
// - **Each event runs on a context of its own**: a fresh entity manager and fresh loaders, so an
//   event reads the booking as it is now, not as the first event of the stream loaded it, and a
//   stream open for hours holds no identity map that grows. No transaction is opened: a
//   subscription is not a mutation (src/graphql/plugins/write-stage.ts), and each read takes a pool
//   connection only while it runs, so an idle stream holds none.
// - **Each SSE message carries `id:`**, the event's id (`evt_…`): a client that reconnects sends it
//   back as `Last-Event-ID` (EventSource does so itself) and gets what it missed, then the live ones.
// - **Errors before the stream starts keep their catalogue status** (a bad `after`: 400), as queries' do.

/** Where an event's id rides on its execution result: a symbol, so spreading keeps it and JSON never shows it. */
const EVENT_ID = Symbol('event id');
type WithEventId = ExecutionResult & { [EVENT_ID]?: string };

/** The reads shared by the subscribers of one live event, by reseller (src/graphql/subscriptions.ts onceForEvent). */
const sharedReads = new WeakMap<LiveEvent, Map<string, Promise<unknown>>>();

/**
 * The object a live event names, read once for all of this process's subscribers that receive
 * that event (one event object is offered to them all), by reseller: the read is the first
 * subscriber's, with its tenancy, which every other receiver of the event shares (a client
 * session's events were already filtered to its client). A thousand subscribers cost one read,
 * not a thousand. Replayed events are each subscriber's own objects: read for it alone.
 */
export function onceForEvent<T>(event: LiveEvent, ctx: GraphQLContext, read: () => Promise<T>): Promise<T> {
  const { resellerId } = resellerOf(ctx);
  let reads = sharedReads.get(event);
  if (!reads) sharedReads.set(event, (reads = new Map()));
  let shared = reads.get(resellerId) as Promise<T> | undefined;
  if (!shared) reads.set(resellerId, (shared = read()));
  return shared;
}

/** yoga's keep-alive interval: a comment line every 12 s keeps proxies from closing an idle stream. */
const PING_MS = 12_000;

/**
 * The events a subscription field streams (its `subscribe`): the caller's, of `types`, after the
 * event named by the `Last-Event-ID` header (a reconnecting client's, so it wins) or by `after`.
 */
export function subscribeToEvents(
  ctx: GraphQLContext,
  types: readonly EventType[],
  after: string | null | undefined,
): Promise<AsyncIterableIterator<LiveEvent>> {
  if (!ctx.live) throw new Error('A subscription reached execution without the live events of its server');
  const from =
    ctx.lastEventId !== undefined
      ? { id: ctx.lastEventId, param: 'Last-Event-ID' }
      : after !== null && after !== undefined
        ? { id: after, param: 'after' }
        : undefined;
  return ctx.live.subscribe(ctx, { types, after: from });
}

export function useSubscriptions(): ExecutionPlugin {
  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(async (args) => {
        const context = args.contextValue as GraphQLContext;
        const source = await createSourceEventStream(args);
        if (!isAsyncIterable(source)) return withCatalogueStatus(source, context.requestId);
        return eventByEvent(source, args, context);
      });
    },
    onResultProcess({ request, result, setResultProcessor }) {
      if (isAsyncIterable(result) && (request.headers.get('accept') ?? '').includes('text/event-stream'))
        setResultProcessor(sseWithIds, 'text/event-stream');
    },
  };
}

/** A domain error thrown by a field's `subscribe` (a bad `after`) answers with its catalogue code and status. */
function withCatalogueStatus(result: ExecutionResult, requestId: string): ExecutionResult {
  return {
    ...result,
    errors: result.errors?.map((error) => {
      let original: unknown = error;
      while (isGraphQLError(original) && original.originalError) original = original.originalError;
      return original instanceof DomainError ? asGraphQLError(original, requestId) : error;
    }),
  };
}

/** graphql-js's mapping of source events to results (execute with the event as root), each on a context of its own. */
function eventByEvent(
  source: AsyncIterable<unknown>,
  args: ExecutionArgs,
  context: GraphQLContext,
): AsyncIterableIterator<ExecutionResult> {
  const events = source[Symbol.asyncIterator]();
  const done = (): IteratorResult<ExecutionResult> => ({ done: true, value: undefined });
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      const step = await events.next();
      if (step.done) return done();
      const event = step.value as Partial<LiveEvent>;
      const result: WithEventId = await execute({ ...args, rootValue: event, contextValue: { ...context, em: context.em.fork() } });
      if (typeof event.id === 'string') result[EVENT_ID] = event.id;
      return { done: false, value: result };
    },
    async return() {
      await events.return?.();
      return done();
    },
    async throw(err?: unknown) {
      await events.return?.();
      throw err;
    },
  };
}

/**
 * yoga's SSE result processor (graphql-yoga 5.24, plugins/result-processor/sse.js) with an `id:`
 * line on every message that carries an event: the same headers, first comment, pings, `next`
 * and `complete` messages.
 */
function sseWithIds(input: unknown, fetchAPI: FetchAPI): Response {
  const results = input as AsyncIterable<WithEventId>;
  const encoder = new fetchAPI.TextEncoder();
  let iterator: AsyncIterator<WithEventId> | undefined;
  let ping: NodeJS.Timeout | undefined;
  const stream = new fetchAPI.ReadableStream<Uint8Array>({
    start(controller) {
      // Some browsers hold a fetch until the first bytes arrive: a comment goes out at once.
      controller.enqueue(encoder.encode(':\n\n'));
      ping = setInterval(() => {
        if (controller.desiredSize === null) return clearInterval(ping);
        if (controller.desiredSize > 0) controller.enqueue(encoder.encode(':\n\n'));
      }, PING_MS);
      iterator = results[Symbol.asyncIterator]();
    },
    async pull(controller) {
      try {
        const step = await iterator!.next();
        if (step.value != null) {
          const id = step.value[EVENT_ID];
          const { extensions, ...rest } = step.value;
          const { http: _, ...own } = (extensions ?? {}) as Record<string, unknown>;
          const body = Object.keys(own).length > 0 ? { ...rest, extensions: own } : rest;
          controller.enqueue(encoder.encode(`${id ? `id: ${id}\n` : ''}event: next\ndata: ${JSON.stringify(body)}\n\n`));
        }
        if (step.done) {
          controller.enqueue(encoder.encode('event: complete\ndata:\n\n'));
          clearInterval(ping);
          controller.close();
        }
      } catch (err) {
        clearInterval(ping);
        controller.error(err);
      }
    },
    async cancel() {
      clearInterval(ping);
      await iterator?.return?.();
    },
  });
  return new fetchAPI.Response(stream, {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream', Connection: 'keep-alive', 'Cache-Control': 'no-cache', 'Content-Encoding': 'none' },
  });
}
