import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import type { Metrics } from './metrics.ts';

// One scrape of `serve --workers N` answers for the whole server (docs/operator-guide.md "Metrics").
// The HTTP worker that receives GET /metrics asks the primary over the cluster's IPC channel; the
// primary asks every live worker for its registries as prom-client JSON, adds its own (the pool it
// holds and the background jobs it runs) and sums them with prom-client's AggregatorRegistry.aggregate:
// counters, histograms and gauges add up, except where prom-client's default process metrics name
// another rule (event-loop lag averaged, min and max kept; the Node version the first; start time omitted).
// A worker that does not answer within WORKER_ANSWER_MS is left out, and cluster_scrape_workers says so.

/** How long the primary waits for each worker's registries: well under Prometheus's default 10 s scrape timeout. */
export const WORKER_ANSWER_MS = 2000;
/** How long a worker waits for the primary before answering with its own registries alone. */
const PRIMARY_ANSWER_MS = WORKER_ANSWER_MS + 3000;

type Json = MetricObjectWithValues<MetricValue<string>>[];
type Message =
  | { type: 'metrics:scrape'; id: number }
  | { type: 'metrics:scraped'; id: number; text: string }
  | { type: 'metrics:collect'; id: number }
  | { type: 'metrics:collected'; id: number; metrics: Json };

const ignore = () => undefined;
const isMessage = (m: unknown): m is Message => typeof (m as Message)?.type === 'string' && (m as Message).type.startsWith('metrics:');

// The HTTP worker's side: the server that answers its collects (one per worker process), and its scrapes waiting for the primary.
let served: Pick<Metrics, 'json'> | undefined;
const waiting = new Map<number, (text: string) => void>();
let nextId = 0;

/** In an HTTP worker: answers the primary's requests for this process's registries, those of `metrics`. */
export function answerPrimary(metrics: Pick<Metrics, 'json'>): void {
  if (!served) {
    process.on('message', (m: unknown) => {
      if (!isMessage(m)) return;
      if (m.type === 'metrics:scraped') waiting.get(m.id)?.(m.text);
      else if (m.type === 'metrics:collect')
        void served!.json().then(
          (metrics) => process.send?.({ type: 'metrics:collected', id: m.id, metrics } satisfies Message, undefined, {}, ignore),
          // Nothing to give: the primary's wait for this worker runs out and the scrape goes on without it.
          () => undefined,
        );
    });
  }
  served = metrics;
}

/**
 * In an HTTP worker: the whole server's exposition, from the primary; this worker's own `local`
 * when the primary does not answer in time (it is stopping, or stuck), so a scrape never hangs.
 */
export async function scrapeThroughPrimary(local: Pick<Metrics, 'exposition' | 'json'>): Promise<string> {
  const id = nextId++;
  const text = await new Promise<string | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), PRIMARY_ANSWER_MS);
    waiting.set(id, (t) => {
      clearTimeout(timer);
      resolve(t);
    });
    if (!process.send || !process.connected) return resolve(undefined);
    process.send({ type: 'metrics:scrape', id } satisfies Message, undefined, {}, (err) => err && resolve(undefined));
  });
  waiting.delete(id);
  return text ?? local.exposition();
}

/**
 * In the primary: answers each worker's scrape with the sum of every worker's registries and
 * `own` (the primary's pool and background jobs).
 */
export function aggregateForWorkers(own: Pick<Metrics, 'json'>): void {
  const pending = new Map<number, { answered: Json[]; waitingFor: Set<number>; done: () => void }>();
  let collectId = 0;
  cluster.on('message', (from: Worker, m: unknown) => {
    if (!isMessage(m)) return;
    if (m.type === 'metrics:collected') {
      const collect = pending.get(m.id);
      if (!collect?.waitingFor.delete(from.id)) return;
      collect.answered.push(m.metrics);
      if (collect.waitingFor.size === 0) collect.done();
    } else if (m.type === 'metrics:scrape') {
      void gather().then(
        (text) => from.isConnected() && from.send({ type: 'metrics:scraped', id: m.id, text } satisfies Message, undefined, ignore),
        () => undefined,
      );
    }
  });

  async function gather(): Promise<string> {
    const id = collectId++;
    const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w && w.isConnected());
    let done = () => undefined as void;
    const allIn = new Promise<void>((resolve) => {
      done = resolve;
      setTimeout(resolve, WORKER_ANSWER_MS);
    });
    const collect = { answered: [] as Json[], waitingFor: new Set(live.map((w) => w.id)), done };
    pending.set(id, collect);
    // A worker that dies meanwhile never answers: the wait runs out and the scrape goes on without it.
    for (const w of live) w.send({ type: 'metrics:collect', id } satisfies Message, undefined, ignore);
    if (live.length === 0) done();
    const mine = await own.json();
    await allIn;
    pending.delete(id);
    const answered = collect.answered.length;
    const text = await AggregatorRegistry.aggregate([mine, ...collect.answered]).metrics();
    return `${text}${scrapeWorkers(answered, live.length - answered)}`;
  }
}

/** How many HTTP workers this scrape includes and how many it waited for in vain (died, or slower than WORKER_ANSWER_MS). */
function scrapeWorkers(answered: number, missing: number): string {
  return [
    '# HELP cluster_scrape_workers HTTP workers in this scrape (answered) and those left out because they did not answer in time (missing).',
    '# TYPE cluster_scrape_workers gauge',
    `cluster_scrape_workers{state="answered"} ${answered}`,
    `cluster_scrape_workers{state="missing"} ${missing}`,
    '',
  ].join('\n');
}
