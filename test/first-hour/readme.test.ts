import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeSeed } from '../../src/cli/banner.ts';
import { seedDemo, type DemoSeed } from '../../src/db/seed.ts';
import { useApp } from '../support/app.ts';
import { call, type Reply } from '../support/http.ts';
import { killStartedProcesses, repoRoot, runCli } from '../ops/processes.ts';

// README "First hour", followed as written on the demo data: its curl lines run as HTTP requests
// (a small reader of the `curl -s URL -H … -d …` lines), its fetch snippet runs as a Node script,
// and its catalogue file goes through `catalog import` as an operator runs it.

const app = useApp();
let demo: DemoSeed;
let dir: string;

beforeAll(async () => {
  demo = (await seedDemo(app.orm.em.fork(), app.clock.now()))!;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'first-hour-'));
});
afterEach(async () => {
  await killStartedProcesses();
});
afterAll(async () => {
  await killStartedProcesses();
  fs.rmSync(dir, { recursive: true, force: true });
});

const section = (() => {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## First hour\n');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end);
})();

/** The section's fenced code blocks in `lang`, in order. */
function blocks(lang: string): string[] {
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].filter((m) => m[1] === lang).map((m) => m[2]);
}

/** Shell words of one line: quotes, backslash escapes in double quotes, `$NAME` expansion, `#` comments. */
function words(line: string, vars: Record<string, string>): string[] {
  const out: string[] = [];
  let word: string | undefined;
  const expand = (s: string) =>
    s.replace(/\$(\w+)/g, (_, name: string) => {
      if (!(name in vars)) throw new Error(`README uses $${name} before setting it`);
      return vars[name];
    });
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === ' ' || c === '\t') {
      if (word !== undefined) out.push(word);
      word = undefined;
      continue;
    }
    if (c === '#' && word === undefined) break;
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      word = (word ?? '') + line.slice(i + 1, close);
      i = close;
    } else if (c === '"') {
      let s = '';
      for (i++; line[i] !== '"'; i++) s += line[i] === '\\' ? line[++i] : line[i];
      word = (word ?? '') + expand(s);
    } else {
      const m = /^[^\s'"]+/.exec(line.slice(i))![0];
      word = (word ?? '') + expand(m);
      i += m.length - 1;
    }
  }
  if (word !== undefined) out.push(word);
  return out;
}

/** A `curl -s [-X method] URL [-H header]… [-d body]` line as a request to the in-process app. */
async function curl(args: string[]): Promise<Reply> {
  expect(args.slice(0, 2)).toEqual(['curl', '-s']);
  const headers: Record<string, string> = {};
  let url: string | undefined;
  let body: string | undefined;
  let method: string | undefined;
  for (let i = 2; i < args.length; i++) {
    if (args[i] === '-H') {
      const [name, ...value] = args[++i].split(':');
      headers[name.trim()] = value.join(':').trim();
    } else if (args[i] === '-d') body = args[++i];
    else if (args[i] === '-X') method = args[++i];
    else url = args[i];
  }
  expect(url!.startsWith(app.baseUrl)).toBe(true);
  return call(app, url!.slice(app.baseUrl.length), { raw: body, headers, method: method ?? (body === undefined ? 'GET' : 'POST') });
}

type Pick = (previous: Reply) => string;

/**
 * Runs a sh block line by line. `NAME=value` sets a variable: BASE and AUTH become this app's and
 * a demo key; a placeholder (`pass_...`) is what the README says to copy from the answer before,
 * taken by `picks`. Returns every curl answer in order.
 */
async function follow(sh: string, vars: Record<string, string>, picks: Record<string, Pick>): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (const line of sh.replace(/\\\n\s*/g, ' ').split('\n')) {
    const assignment = /^(\w+)=(\S+)/.exec(line);
    if (assignment) {
      const [, name, value] = assignment;
      if (name === 'BASE') vars.BASE = app.baseUrl + new URL(value).pathname;
      else if (name === 'AUTH') vars.AUTH = `Authorization: Bearer ${demo.resellers[0].api_key}`;
      else {
        expect(value, `${name} is a placeholder the reader fills in`).toMatch(/\.\.\.$/);
        expect(picks[name], `how to fill ${name}`).toBeDefined();
        vars[name] = picks[name](replies.at(-1)!);
        expect(vars[name].startsWith(value.slice(0, -3)), `${name}=${vars[name]}`).toBe(true);
      }
      continue;
    }
    const args = words(line, vars);
    if (args.length === 0) continue;
    const reply = await curl(args);
    expect(reply.status, `${line}\n${reply.text}`).toBeLessThan(300);
    replies.push(reply);
  }
  return replies;
}

/** BASE and AUTH as the first block sets them. */
const shellOfFirstBlock = () => ({
  BASE: `${app.baseUrl}/v3/api/business/reseller`,
  AUTH: `Authorization: Bearer ${demo.resellers[0].api_key}`,
});

const ids = (r: Reply) => (r.body.data as { id: string }[]).map((d) => d.id);

describe('README "First hour"', () => {
  const [readBack, paging, afterImport, classBooking, sessions, spaCopay] = blocks('sh');

  it('issues a pass and reads it back by client_id, over REST', async () => {
    const vars: Record<string, string> = {};
    const [passes, issued, pass, client] = await follow(readBack, vars, {
      PASS: (r) => r.body.data[0].id,
      CLIENT: (r) => r.body.client_id,
    });
    expect(ids(passes).sort()).toEqual(demo.resellers[0].passes.map((p) => p.id).sort());
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({ object: 'issued_pass', pass_id: vars.PASS, status: 'ACTIVE' });
    expect(pass.body).toEqual(issued.body);
    expect(client.body).toMatchObject({ object: 'client', id: vars.CLIENT, email: 'ada@example.com', active_pass: { id: issued.body.id } });
  });

  it('pages REST lists with starting_after and ending_before', async () => {
    // The reader is still in the shell of the block before: BASE and AUTH are set.
    const [first, next, back] = await follow(paging, shellOfFirstBlock(), {
      LAST: (r) => r.body.data.at(-1).id,
      FIRST: (r) => r.body.data[0].id,
    });
    expect(first.body.has_more).toBe(true);
    expect(ids(first)).toHaveLength(2);
    expect(ids(next)).toHaveLength(2);
    expect(ids(next).some((id) => ids(first).includes(id))).toBe(false);
    expect(ids(next)[0] < ids(first)[1]).toBe(true); // newest first: ids fall
    expect(ids(back)).toEqual(ids(first));
  });

  it('the fetch snippet pages the passes with after/endCursor and issues a pass with an Idempotency-Key', async () => {
    const [snippet] = blocks('js');
    expect(snippet).toContain('... on Error { code message }');
    expect(snippet).toContain('... on InputError { param }');
    expect(snippet).toContain("'Idempotency-Key'");
    const file = path.join(dir, 'first-hour.mjs');
    fs.writeFileSync(file, snippet);
    // Asynchronously: the app answering the script runs in this process.
    const run = await promisify(execFile)(path.join(repoRoot, 'node_modules', '.bin', 'node'), [file], {
      env: { PATH: process.env.PATH, KEY: demo.resellers[0].api_key, BASE_URL: app.baseUrl },
      encoding: 'utf8',
      timeout: 30_000,
    });
    const lines = run.stdout.trimEnd().split('\n');
    // Two demo passes, one a page: both are listed, so the loop followed endCursor.
    expect(
      lines
        .slice(0, -1)
        .map((l) => l.split(' ')[0])
        .sort(),
    ).toEqual(demo.resellers[0].passes.map((p) => p.id).sort());
    const issued = JSON.parse(lines.at(-1)!);
    expect(issued).toMatchObject({
      id: expect.stringMatching(/^ipass_/),
      status: 'ACTIVE',
      client: { id: expect.stringMatching(/^client_/) },
    });
    const [client] = await app.sql<{ email: string }>('select email from client where id = ?', [issued.client.id]);
    expect(client.email).toBe('grace@example.com');
    // The key it sent was recorded with the pass, so a retry would answer this pass again.
    const [record] = await app.sql<{ n: string }>('select count(*) as n from idempotency_record where reseller_id = ?', [
      demo.resellers[0].id,
    ]);
    expect(Number(record.n)).toBeGreaterThanOrEqual(1);
  });

  it('the catalogue example imports as written next to the demo data, with dates still ahead', async () => {
    const [json] = blocks('json');
    const catalog = JSON.parse(json) as { class_instances: { date: string }[]; providers: { id: string }[] };
    const today = app.clock.now().toISOString().slice(0, 10);
    for (const instance of catalog.class_instances) expect(instance.date > today, instance.date).toBe(true);

    const file = path.join(dir, 'first-hour-catalogue.json');
    fs.writeFileSync(file, json);
    const run = await runCli(['catalog', 'import', file], { DATABASE_URL: app.databaseUrl });
    expect(run.code, run.stderr).toBe(0);
    const imported = JSON.parse(run.stdout).imported as Record<string, { inserted: number; updated: number; unchanged: number }>;
    for (const [name, counts] of Object.entries(imported)) expect(counts.updated + counts.unchanged, name).toBe(0);
    expect(imported.providers.inserted).toBe(2);

    const [provider, classes] = await follow(
      afterImport
        .split('\n')
        .filter((l) => !l.startsWith('npx '))
        .join('\n'),
      shellOfFirstBlock(),
      {},
    );
    expect(provider.body).toMatchObject({ id: catalog.providers[0].id, name: 'Spreeufer Boulderhalle' });
    expect(classes.body.data.map((c: { name: string }) => c.name)).toEqual(['Bouldering Basics']);

    // What the text says: the demo's Premium Quarterly pass covers both new providers.
    const premium = demo.resellers[0].passes.find((p) => p.name === 'Premium Quarterly')!;
    const covered = await call(app, `/v3/api/business/reseller/passes/${premium.id}/providers?lat=52.52&lon=13.42&radius_km=3&limit=100`, {
      key: demo.resellers[0].api_key,
    });
    expect(ids(covered)).toEqual(expect.arrayContaining(catalog.providers.map((p) => p.id)));
  }, 60_000);
  it('books a class and a spa slot with the ids of the banner: the three class outcomes, confirms, cancel, the bookings list', async () => {
    const b = demo.resellers[0].bookings;
    // The banner prints the curl lines and ids these placeholders stand for.
    const banner = describeSeed(demo, app.baseUrl);
    for (const id of [
      b.client_id,
      b.visits_client_id,
      b.class!.class_instance_id,
      b.copay_class!.class_instance_id,
      b.last_spot_class!.class_instance_id,
      b.spa!.spa_id,
      b.copay_spa!.spa_id,
      ...b.copay_spa!.service_ids,
    ])
      expect(banner).toContain(id);
    expect(banner).toMatch(/copay_required: class_instance_id ci_/);
    expect(banner).toMatch(/class_full: class_instance_id ci_/);
    expect(banner).toMatch(/additional_visits_required: client_id client_/);
    expect(banner).toMatch(/a spa co-pay session: \{"spa_id"/);

    const vars: Record<string, string> = shellOfFirstBlock();
    const [booked, list, cancelled] = await follow(classBooking, vars, {
      CLIENT: () => b.client_id,
      CLASS: () => b.class!.class_instance_id,
      BOOKING: (r) => r.body.booking_id,
    });
    expect(booked.status).toBe(201);
    expect(booked.body).toMatchObject({ status: 'PENDING', copay_required: false, additional_visits_required: false, visits_deducted: 1 });
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([booked.body.booking_id]);
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED', refund: { policy: 'FULL', visits_restored: 1 } });

    const [copay, copayConfirmed, lastVisit, extra, extraConfirmed] = await follow(sessions, vars, {
      COPAY_CLASS: () => b.copay_class!.class_instance_id,
      SESSION: (r) => r.body.session_id,
      OPTION: (r) => r.body.copay_options[0].id,
      SAM: () => b.visits_client_id,
      FULL: () => b.last_spot_class!.class_instance_id,
    });
    expect(copay.body).toMatchObject({ copay_required: true, status: 'AWAITING_COPAY' });
    expect(copayConfirmed.status).toBe(201);
    expect(copayConfirmed.body).toMatchObject({
      object: 'booking',
      status: 'PENDING',
      class_instance_id: b.copay_class!.class_instance_id,
    });
    expect(lastVisit.body).toMatchObject({ status: 'PENDING', visits_deducted: 1 });
    expect(extra.body).toMatchObject({ additional_visits_required: true, status: 'AWAITING_VISITS', visits_used: 8, max_visits: 8 });
    expect(extraConfirmed.body).toMatchObject({ status: 'PENDING', class_instance_id: b.last_spot_class!.class_instance_id });
    // What the text says next: the class is full now.
    const full = await call(app, `/v3/api/business/reseller/bookings/class`, {
      key: demo.resellers[0].api_key,
      body: { class_instance_id: vars.FULL, client_id: vars.CLIENT },
    });
    expect(full.status).toBe(409);
    expect(full.body.error.code).toBe('class_full');

    const [spaSession, spaConfirmed] = await follow(spaCopay, vars, {
      SPA: () => b.copay_spa!.spa_id,
      SERVICE: () => b.copay_spa!.service_ids[0],
      DATE: () => b.copay_spa!.date,
      TIME: () => b.copay_spa!.time,
      SESSION: (r) => r.body.session_id,
    });
    expect(spaSession.body).toMatchObject({ copay_required: true, status: 'AWAITING_COPAY' });
    expect(spaSession.body.copay_amount).toBeGreaterThan(0);
    expect(spaConfirmed.status).toBe(201);
    expect(spaConfirmed.body).toMatchObject({ type: 'spa', status: 'PENDING', copay_amount: spaSession.body.copay_amount });
  });
});
