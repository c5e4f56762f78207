import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createReseller } from '../support/factories.ts';
import { createEndpoint, deliveriesOf, dispatch, makeEvent, passFor } from '../support/webhooks.ts';
import { repoRoot } from '../ops/processes.ts';

// docs/partner-guide.md "Webhooks" shows a receiver that verifies with the standardwebhooks library and drops
// repeats by webhook-id: it runs here as written, in its own Node process, and receives a delivery,
// then the same event again after a retry by hand (printed once).

const app = useApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-receiver-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function readmeReceiver(): string {
  const readme = fs.readFileSync(path.join(repoRoot, 'docs', 'partner-guide.md'), 'utf8');
  const start = readme.indexOf('\n## Webhooks\n');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const [snippet] = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  expect(snippet, 'README "Webhooks" has a js receiver').toBeDefined();
  return snippet;
}

describe('the README receiver', () => {
  it('verifies a real delivery, answers 204, and acts on an event once however often it comes', async () => {
    fs.writeFileSync(path.join(dir, 'receiver.mjs'), readmeReceiver());
    fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'));
    const reseller = await createReseller(app);
    const pass = await passFor(app, reseller);
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const endpoint = await createEndpoint(app, reseller, { url: `http://127.0.0.1:${port}/` });
    const child = spawn(path.join(repoRoot, 'node_modules', '.bin', 'node'), ['receiver.mjs'], {
      cwd: dir,
      env: { ...process.env, WEBHOOK_SECRET: endpoint.secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    try {
      for (let i = 0; i < 100; i++) {
        const up = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }).then(
          (r) => r.status,
          () => 0,
        );
        if (up === 400) break; // listening, and refusing an unsigned body
        await new Promise((r) => setTimeout(r, 100));
      }
      const { eventId } = await makeEvent(app, reseller, pass);
      expect(await dispatch(app)).toBe(1);
      const [delivery] = await deliveriesOf(app, endpoint.id);
      expect(delivery).toMatchObject({ event_id: eventId, status: 'SUCCEEDED', last_response_status: 204 });

      const retried = await fetch(
        `${app.baseUrl}/v3/api/business/reseller/webhook_endpoints/${endpoint.id}/deliveries/${delivery.id}/retry`,
        {
          method: 'POST',
          headers: { Authorization: `Bearer ${reseller.key}` },
        },
      );
      expect(retried.status).toBe(200);
      expect(await dispatch(app)).toBe(1);
      expect((await deliveriesOf(app, endpoint.id))[0]).toMatchObject({ status: 'SUCCEEDED', attempts: 2, last_response_status: 204 });
      await new Promise((r) => setTimeout(r, 100));
      const [event] = await app.sql<{ object_id: string }>("select payload->'data'->'object'->>'id' as object_id from event where id = ?", [
        eventId,
      ]);
      expect(stdout).toBe(`issued_pass.created ${event.object_id}\n`);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
