import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { createPassPackage, createReseller, issuePass, type TestReseller } from '../support/factories.ts';
import { gql } from '../support/http.ts';

// DateTime is RFC 3339 with an offset and Date a real calendar day (docs/errors.md): anything
// else is refused before the mutation runs, whether sent as a variable or as an inline literal.
const app = useApp();
const NOW = new Date('2027-06-01T08:00:00Z');

let reseller: TestReseller;
let passId: string;
beforeAll(async () => {
  reseller = await createReseller(app, { balance: 10_000_000 });
  passId = (await createPassPackage(app, reseller)).id;
});
beforeEach(() => app.clock.set(NOW));

const RESULT = `__typename ... on IssuedPassPayload { issuedPass { startDate expiresAt } } ... on Error { code message }`;
type Payload = { __typename: string; issuedPass?: { startDate: string; expiresAt: string }; code?: string };

/** setIssuedPassExpiry with `expiresAt` sent as a variable or written into the document. */
function setExpiry(clientId: string, expiresAt: string, as: 'variable' | 'literal') {
  return as === 'variable'
    ? gql<{ setIssuedPassExpiry: Payload }>(
        app,
        reseller.key,
        `mutation($input: SetIssuedPassExpiryInput!) { setIssuedPassExpiry(input: $input) { ${RESULT} } }`,
        { input: { clientId, expiresAt } },
      )
    : gql<{ setIssuedPassExpiry: Payload }>(
        app,
        reseller.key,
        `mutation { setIssuedPassExpiry(input: { clientId: ${JSON.stringify(clientId)}, expiresAt: ${JSON.stringify(expiresAt)} }) { ${RESULT} } }`,
      );
}

function issue(startDate: string, as: 'variable' | 'literal') {
  const fields = { passId, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' };
  return as === 'variable'
    ? gql<{ issuePass: Payload }>(app, reseller.key, `mutation($input: IssuePassInput!) { issuePass(input: $input) { ${RESULT} } }`, {
        input: { ...fields, startDate },
      })
    : gql<{ issuePass: Payload }>(
        app,
        reseller.key,
        `mutation { issuePass(input: { passId: "${passId}", firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", startDate: ${JSON.stringify(startDate)} }) { ${RESULT} } }`,
      );
}

const issuedPassRow = async (clientId: string) => (await app.sql('select * from issued_pass where client_id = ?', [clientId]))[0];
const clientCount = async () => Number((await app.sql<{ n: string }>('select count(*) as n from client'))[0].n);

type Reply = { status: number; text: string; body: { data?: unknown; errors?: { extensions?: Record<string, unknown> }[] } };

/** Refused before anything runs: 400, no data, every error a validation_error (docs/errors.md). */
function expectRefused(res: Reply, why = '') {
  expect.soft(res.body.errors?.length, `${why} ${res.text}`).toBeGreaterThan(0);
  expect.soft(res.body.data ?? null, `${why} ${res.text}`).toBeNull();
  expect.soft(res.status, `${why} ${res.text}`).toBe(400);
  for (const error of res.body.errors ?? []) expect.soft(error.extensions?.code, `${why} ${res.text}`).toBe('validation_error');
}

describe('DateTime', () => {
  const refused = [
    ['a day February does not have', '2027-02-30T00:00:00Z'],
    ['29 February outside a leap year', '2027-02-29T10:00:00Z'],
    ['month 13', '2027-13-01T10:00:00Z'],
    ['no offset (would be read in the server zone)', '2027-03-01T10:00:00'],
    ['a date alone', '2027-03-01'],
    ['leading whitespace', ' 2027-03-01T10:00:00Z'],
    ['trailing whitespace', '2027-03-01T10:00:00Z '],
    ['hour 24', '2027-07-01T24:00:00Z'],
    ['minute 60', '2027-07-01T10:60:00Z'],
    ['a leap second (not representable)', '2027-06-30T23:59:60Z'],
    ['an offset without its colon', '2027-07-01T10:00:00+0200'],
    ['an offset hour of 24', '2027-07-01T10:00:00+24:00'],
    ['a space for the T', '2027-07-01 10:00:00Z'],
    ['a fraction without digits', '2027-07-01T10:00:00.Z'],
    ['a Unix timestamp', '1814400000'],
  ] as const;

  for (const as of ['variable', 'literal'] as const) {
    it(`refuses every date-time that is not strict RFC 3339 with an offset (${as}), and changes nothing`, async () => {
      const { client_id: clientId } = await issuePass(app, reseller, passId);
      const before = await issuedPassRow(clientId);
      for (const [why, value] of refused) expectRefused(await setExpiry(clientId, value, as), `${why}: ${JSON.stringify(value)} →`);
      expect(await issuedPassRow(clientId)).toEqual(before);
    });
  }

  it('accepts an offset and stores the instant it names, answered in UTC', async () => {
    for (const as of ['variable', 'literal'] as const) {
      const { client_id: clientId } = await issuePass(app, reseller, passId);
      const res = await setExpiry(clientId, '2027-07-01T12:30:00+02:00', as);
      expect(res.body.data?.setIssuedPassExpiry, res.text).toMatchObject({ issuedPass: { expiresAt: '2027-07-01T10:30:00Z' } });
      const [stored] = await app.sql<{ epoch: string }>(
        'select extract(epoch from expires_at) as epoch from issued_pass where client_id = ?',
        [clientId],
      );
      expect(Number(stored.epoch) * 1000).toBe(Date.parse('2027-07-01T10:30:00Z'));
    }
  });

  it('accepts Z, a negative offset, fractional seconds, lowercase t/z and a leap day', async () => {
    const accepted = [
      ['2027-07-01T10:30:00Z', '2027-07-01T10:30:00Z'],
      ['2027-07-01T05:30:00-05:00', '2027-07-01T10:30:00Z'],
      ['2027-07-01T10:30:00.999999Z', '2027-07-01T10:30:00Z'],
      ['2027-07-01t10:30:00z', '2027-07-01T10:30:00Z'],
      ['2027-12-31T23:30:00-01:00', '2028-01-01T00:30:00Z'],
      ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00Z'],
    ] as const;
    const { client_id: clientId } = await issuePass(app, reseller, passId);
    for (const [sent, answered] of accepted) {
      const res = await setExpiry(clientId, sent, 'variable');
      expect.soft(res.body.data?.setIssuedPassExpiry?.issuedPass?.expiresAt, `${sent} → ${res.text}`).toBe(answered);
    }
  });
});

describe('Date', () => {
  for (const as of ['variable', 'literal'] as const) {
    it(`refuses a day the calendar does not have (${as}); nothing is written`, async () => {
      const clients = await clientCount();
      for (const value of ['2027-02-29', '2027-06-31', '2027-13-01', '2027-00-10', '2027-6-30', '2027-06-30T00:00:00Z', ' 2027-06-30']) {
        expectRefused(await issue(value, as), `${value} →`);
      }
      expect(await clientCount()).toBe(clients);
    });
  }

  it('accepts 29 February of a leap year', async () => {
    for (const as of ['variable', 'literal'] as const) {
      const res = await issue('2028-02-29', as);
      expect(res.body.data?.issuePass, res.text).toMatchObject({
        __typename: 'IssuedPassPayload',
        issuedPass: { startDate: '2028-02-29' },
      });
    }
  });
});
