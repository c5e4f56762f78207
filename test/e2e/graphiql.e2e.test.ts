import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useApp } from '../support/app.ts';
import { launchChromium, type Chromium } from './chromium.ts';
import { createPassPackage, createReseller } from '../support/factories.ts';

// A real browser on the real GraphiQL page: Debian's Chromium (`apt-get install chromium`),
// never a browser downloaded by Playwright. Run with `npm run test:e2e`; CI runs it too.

const app = useApp();
let browser: Chromium | undefined;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe('GraphiQL in Chromium', () => {
  it('issues a pass with the Authorization header typed into its Headers tab', { timeout: 90_000 }, async () => {
    const reseller = await createReseller(app);
    const payg = await createPassPackage(app, reseller, { name: 'Flex', paymentModel: 'PAYG' });
    const mutation = `mutation {
  issuePass(input: { passId: "${payg.id}", firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" }) {
    __typename
    ... on IssuedPassPayload { issuedPass { id passcode status client { id email } } }
    ... on Error { code message }
  }
}`;

    const page = await browser!.context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => {
      requested.push(request.url());
    });

    await page.goto(`${app.baseUrl}/graphql?query=${encodeURIComponent(mutation)}`);
    const execute = page.locator('.graphiql-execute-button');
    await execute.waitFor({ state: 'visible', timeout: 30_000 });

    await page.getByText('Headers', { exact: true }).click();
    await page.locator('.graphiql-editor-tool').last().click();
    await page.keyboard.insertText(`{"Authorization": "Bearer ${reseller.key}"}`);

    // GraphiQL also POSTs its introspection query (again once the headers change): wait for the mutation.
    const response = page.waitForResponse(
      (r) =>
        new URL(r.url()).pathname === '/graphql' && r.request().method() === 'POST' && (r.request().postData() ?? '').includes('issuePass'),
      { timeout: 30_000 },
    );
    await execute.click();
    expect((await response).status()).toBe(200);

    const result = page.locator('.graphiql-response');
    await expect.poll(() => result.innerText(), { timeout: 30_000 }).toMatch(/ipass_[0-9A-Za-z]+/);
    // The editor renders indentation as non-breaking spaces.
    const shown = JSON.parse((await result.innerText()).replace(/\u00a0/g, ' '));
    expect(shown).toEqual({
      data: {
        issuePass: {
          __typename: 'IssuedPassPayload',
          issuedPass: {
            id: expect.stringMatching(/^ipass_/),
            passcode: expect.stringMatching(/^[A-Z0-9]{8}$/),
            status: 'ACTIVE',
            client: { id: expect.stringMatching(/^client_/), email: 'ada@example.com' },
          },
        },
      },
    });
    const issuedPassId: string = shown.data.issuePass.issuedPass.id;

    const passes = await app.sql<{ id: string; client_id: string }>('select id, client_id from issued_pass where reseller_id = ?', [
      reseller.id,
    ]);
    expect(passes).toEqual([{ id: issuedPassId, client_id: shown.data.issuePass.issuedPass.client.id }]);
    const clients = await app.sql<{ id: string; email: string }>('select id, email from client where reseller_id = ?', [reseller.id]);
    expect(clients).toEqual([{ id: passes[0].client_id, email: 'ada@example.com' }]);

    // The page works offline: everything it loads comes from the gateway itself.
    const elsewhere = requested.filter((url) => !/^(data|blob):/.test(url) && new URL(url).hostname !== '127.0.0.1');
    expect(elsewhere).toEqual([]);
    expect(requested.length).toBeGreaterThan(0);
  });
});
