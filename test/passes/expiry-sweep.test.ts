import { describe, expect, it } from 'vitest';
import { expireIssuedPasses } from '../../src/modules/passes/index.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { useApp } from '../support/app.ts';
import { lastOutboxId, outboxSince } from '../support/db-state.ts';
import { createPassPackage, createReseller, issuePass } from '../support/factories.ts';
import { v3 } from '../support/http.ts';
import { planScans } from '../support/plans.ts';

// The pass expiry sweep (docs/partner-guide.md "Events"): an ACTIVE pass past its expiry is stored EXPIRED once,
// with issued_pass.expired carrying the pass as it then is; a new expiry makes it ACTIVE again and
// its next expiry is announced again. Reads show EXPIRED before the sweep as after it.

const app = useApp({}, { now: new Date('2027-01-10T09:00:00Z') });
const log = createLogger({ LOG_LEVEL: 'silent' });
const sweep = () => expireIssuedPasses(app.orm.em, { clock: app.clock, config: app.config, log });
const unix = (iso: string) => Math.floor(new Date(iso).getTime() / 1000);

describe('expireIssuedPasses', () => {
  it('expires each pass past its expiry once, with its event; a pass given a new expiry is announced again when that passes', async () => {
    const reseller = await createReseller(app, { balance: 100_000 });
    const pkg = await createPassPackage(app, reseller, { name: 'Monthly' });
    const issued = await issuePass(app, reseller, pkg.id);
    const other = await issuePass(app, reseller, pkg.id, { first_name: 'Grace', last_name: 'Hopper', email: 'grace@example.com' });
    const expiresAt = new Date(issued.expires_at * 1000);
    // Only the first pass is past its expiry: the other is given a later one.
    await v3(app, `/issued_passes/${other.client_id}/expiry`, { key: reseller.key, body: { expires_at: issued.expires_at + 86_400 * 30 } });

    app.clock.set(new Date(expiresAt.getTime() + 1000));
    const before = await v3(app, `/issued_passes/${issued.client_id}`, { key: reseller.key });
    expect(before.body.status).toBe('EXPIRED');
    const since = await lastOutboxId(app);

    expect(await sweep()).toBe(1);
    const rows = await app.sql<{ id: string; status: string }>('select id, status from issued_pass where reseller_id = ? order by id', [
      reseller.id,
    ]);
    expect(rows).toEqual([
      { id: issued.id, status: 'EXPIRED' },
      { id: other.id, status: 'ACTIVE' },
    ]);
    const events = await outboxSince(app, since);
    expect(events.map((e) => [e.payload.type, e.reseller_id])).toEqual([['issued_pass.expired', reseller.id]]);
    const after = await v3(app, `/issued_passes/${issued.client_id}`, { key: reseller.key });
    expect(events[0].payload.data.object).toEqual(after.body);
    expect(after.body).toEqual(before.body);
    expect(await sweep()).toBe(0);

    // A new expiry: ACTIVE again, and announced again once it passes.
    const later = unix('2027-06-01T00:00:00Z');
    const reactivated = await v3(app, `/issued_passes/${issued.client_id}/expiry`, { key: reseller.key, body: { expires_at: later } });
    expect(reactivated.body.status).toBe('ACTIVE');
    expect(await sweep()).toBe(0);
    app.clock.set(new Date(later * 1000));
    const again = await lastOutboxId(app);
    expect(await sweep()).toBe(2);
    expect((await outboxSince(app, again)).map((e) => [e.payload.type, e.payload.data.object.client_id]).sort()).toEqual(
      [
        ['issued_pass.expired', issued.client_id],
        ['issued_pass.expired', other.client_id],
      ].sort(),
    );
  });

  it('finds the passes past their expiry through issued_pass_active_expiry_idx, not by reading every issued pass', async () => {
    app.queries!.reset();
    await sweep();
    const scans = await planScans(
      app,
      app.queries!.statements,
      /^select id from issued_pass where status = 'ACTIVE' and expires_at <= /,
      [app.clock.now().toISOString(), '100'],
      { indexesOnly: true },
    );
    expect(scans, JSON.stringify(scans)).toHaveLength(1);
    expect(scans[0]).toMatchObject({ 'Index Name': 'issued_pass_active_expiry_idx' });
  });
});
