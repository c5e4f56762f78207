import { beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { expectError, expectValidationError } from '../support/assertions.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { v3 } from '../support/http.ts';

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
const ids: string[] = [];
beforeAll(async () => {
  w = await createBookingWorld(app);
  for (const hours of [20, 30, 40]) {
    const instance = await instanceIn(app, w.gym.classId, hours);
    ids.push((await book.cls(app, w, { class_instance_id: instance.id, client_id: w.client.id })).body.booking_id);
  }
  ids.push(
    (await book.spa(app, w, { date: '2026-03-10', time: '10:00', spa_id: w.spa.id, service_ids: [w.spa.sauna], client_id: w.client.id }))
      .body.booking_id,
  );
  await v3(app, `/bookings/${ids[0]}/cancel`, { key: w.reseller.key, method: 'POST' });
});

const list = (query = '') => v3(app, `/clients/${w.client.id}/bookings${query}`, { key: w.reseller.key });

describe('GET /clients/{client_id}/bookings', () => {
  it('newest first, in the list envelope', async () => {
    const res = await list();
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', has_more: false, url: `/v3/api/business/reseller/clients/${w.client.id}/bookings` });
    expect(res.body.data.map((b: { id: string }) => b.id)).toEqual([...ids].reverse());
  });

  it('status and type filters in any case', async () => {
    expect((await list('?status=cancelled')).body.data.map((b: { id: string }) => b.id)).toEqual([ids[0]]);
    expect((await list('?status=Pending&type=CLASS')).body.data.map((b: { id: string }) => b.id)).toEqual([ids[2], ids[1]]);
    expect((await list('?type=spa')).body.data.map((b: { id: string }) => b.id)).toEqual([ids[3]]);
  });

  it('pages with limit and starting_after', async () => {
    const first = await list('?limit=2');
    expect(first.body).toMatchObject({ has_more: true });
    const second = await list(`?limit=2&starting_after=${first.body.data[1].id}`);
    expect(second.body.data.map((b: { id: string }) => b.id)).toEqual([ids[1], ids[0]]);
    expect(second.body.has_more).toBe(false);
  });

  it('bad filters › 400 naming them; an unknown or foreign client › 404', async () => {
    expectValidationError(await list('?status=done'), 'status');
    expectValidationError(await list('?type=gym'), 'type');
    expectValidationError(await list('?colour=red'), 'colour');
    const other = await createBookingWorld(app);
    expectError(await v3(app, `/clients/${other.client.id}/bookings`, { key: w.reseller.key }), 404, 'resource_not_found');
  });
});

describe('GET /bookings/{id} and /bookings/{id}/status', () => {
  it('the booking and its history; another reseller’s booking › 404', async () => {
    const status = await v3(app, `/bookings/${ids[0]}/status`, { key: w.reseller.key });
    expect(status.body).toEqual({
      object: 'booking_status',
      booking_id: ids[0],
      status: 'CANCELLED',
      history: [
        { status: 'PENDING', at: expect.any(Number) },
        { status: 'CANCELLED', at: expect.any(Number) },
      ],
    });
    const other = await createBookingWorld(app);
    expectError(await v3(app, `/bookings/${ids[0]}`, { key: other.reseller.key }), 404, 'resource_not_found');
    expectError(await v3(app, `/bookings/${ids[0]}/status`, { key: other.reseller.key }), 404, 'resource_not_found');
  });
});
