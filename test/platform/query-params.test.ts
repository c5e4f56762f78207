import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createReseller, createPassPackage, type TestReseller } from '../support/factories.ts';
import { createProvider, createSpaService } from '../support/catalog.ts';
import { v3 } from '../support/http.ts';

const app = useApp();
let reseller: TestReseller;
beforeAll(async () => {
  reseller = await createReseller(app);
  await createPassPackage(app, reseller);
});

describe('a query parameter sent twice', () => {
  it.each([
    ['/passes?limit=5&limit=500', 'limit'],
    ['/providers?lat=52.5&lon=13.4&lat=48.8', 'lat'],
    ['/providers?category=GYM&category=SPA', 'category'],
    ['/classes?date=2026-12-01&date=2026-12-02', 'date'],
  ])('%s › 400 validation_error naming it, not the last value silently', async (path, param) => {
    const res = await v3(app, path, { key: reseller.key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', param });
  });

  it('service_ids on spa availability › may repeat: it is a list', async () => {
    const spa = await createProvider(app, { category: 'SPA' });
    const a = await createSpaService(app, spa.id, { durationMinutes: 30 });
    const b = await createSpaService(app, spa.id, { durationMinutes: 30 });
    const res = await v3(app, `/spas/${spa.id}/availability?date=2030-01-07&service_ids=${a.id}&service_ids=${b.id}`, {
      key: reseller.key,
    });
    expect(res.status).toBe(200);
    expect(res.body.duration_minutes).toBe(60);
    const twice = await v3(app, `/spas/${spa.id}/availability?date=2030-01-07&date=2030-01-08&service_ids=${a.id}`, { key: reseller.key });
    expect(twice.status).toBe(400);
    expect(twice.body.error).toMatchObject({ code: 'validation_error', param: 'date' });
  });
});
