import pg from 'pg';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { book, createBookingWorld, instanceIn, type BookingWorld } from '../support/bookings.ts';
import { gql, v3 } from '../support/http.ts';
import { until as waitUntil } from '../support/until.ts';

// A transaction PostgreSQL aborts to break a deadlock left nothing behind, so the pipeline runs it
// again instead of answering 500 (src/platform/pipeline.ts). Here a second session takes the two
// rows a cancel locks, in the opposite order, so the cancel is the one PostgreSQL aborts: it waited
// first, so its deadlock check (after deadlock_timeout, 1 s by default) runs first.

const app = useApp({}, { now: new Date('2026-03-02T08:00:00Z') });
let w: BookingWorld;
beforeAll(async () => {
  w = await createBookingWorld(app);
});

let other: pg.Client | undefined;
afterEach(async () => {
  await other?.end().catch(() => undefined);
  other = undefined;
});

const waitingOnLocks = async () =>
  Number(
    (
      await app.sql<{ n: string }>(
        "select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
      )
    )[0].n,
  );

describe('pipeline › deadlock', () => {
  /**
   * Books a class, then makes its cancel (sent by `cancel`) the victim of a deadlock with a second
   * session, and returns the cancel's answer once the second session has committed.
   */
  async function cancelThroughADeadlock<T>(
    cancel: (bookingId: string) => Promise<T>,
  ): Promise<{ answer: T; bookingId: string; instanceId: string }> {
    const instance = await instanceIn(app, w.gym.classId, 48);
    const booked = await book.cls(app, w, { class_instance_id: instance.id, client_id: w.client.id });
    expect(booked.status, booked.text).toBe(201);

    other = new pg.Client({ connectionString: app.databaseUrl });
    await other.connect();
    await other.query('begin');
    await other.query('select id from class_instance where id = $1 for update', [instance.id]);

    // The cancel locks the booking, then waits for the instance the other session holds.
    const answer = cancel(booked.body.booking_id);
    await waitUntil(async () => (await waitingOnLocks()) === 1, 'the cancel waits for the class instance');
    // The other session now waits for the booking: a cycle. The cancel is aborted, its retry waits.
    await other.query('select id from booking where id = $1 for update', [booked.body.booking_id]);
    await waitUntil(async () => (await waitingOnLocks()) === 1, 'the retried cancel waits for the booking');
    await other.query('commit');
    return { answer: await answer, bookingId: booked.body.booking_id, instanceId: instance.id };
  }

  async function expectCancelledOnce(bookingId: string, instanceId: string) {
    const [spots] = await app.sql<{ spots_taken: number }>('select spots_taken from class_instance where id = ?', [instanceId]);
    expect(spots.spots_taken).toBe(0);
    const refunds = await app.sql("select id from visit_transaction where booking_id = ? and reason = 'CANCELLATION'", [bookingId]);
    expect(refunds).toHaveLength(1);
  }

  it('REST › a write aborted by PostgreSQL to break a deadlock is run again and succeeds once', async () => {
    const { answer, bookingId, instanceId } = await cancelThroughADeadlock((id) =>
      v3(app, `/bookings/${id}/cancel`, { key: w.reseller.key, method: 'POST' }),
    );
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body).toMatchObject({ status: 'CANCELLED', refund: { policy: 'FULL', visits_restored: 1 } });
    await expectCancelledOnce(bookingId, instanceId);
  }, 30_000);

  it('GraphQL › a mutation field aborted to break a deadlock runs again in its savepoint and succeeds once', async () => {
    const { answer, bookingId, instanceId } = await cancelThroughADeadlock((id) =>
      gql(
        app,
        w.reseller.key,
        'mutation($id: ID!) { cancelBooking(input: { bookingId: $id }) { __typename ... on BookingPayload { booking { status } } } }',
        { id },
      ),
    );
    expect(answer.body.errors, answer.text).toBeUndefined();
    expect(answer.body.data).toEqual({ cancelBooking: { __typename: 'BookingPayload', booking: { status: 'CANCELLED' } } });
    await expectCancelledOnce(bookingId, instanceId);
  }, 30_000);
});
