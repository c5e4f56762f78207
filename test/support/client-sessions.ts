import type { TestApp } from './app.ts';
import { registerDbTable } from './db-state.ts';
import { gql, v3 } from './http.ts';

// Client sessions (docs/partner-guide.md "Client sessions"): made with the reseller's key, used as a
// bearer on /graphql. Their table joins every dbState of these files.
registerDbTable('client_session', 'select id, revoked_at from client_session order by id');
registerDbTable('access_code');

/** A client session made over REST; fails the test unless it was created. */
export async function clientSession(
  app: TestApp,
  key: string,
  clientId: string,
  opts: { scopes?: string[]; expires_in?: number } = {},
): Promise<{ id: string; token: string; expires_at: number; scopes: string[] }> {
  const res = await v3(app, '/client_sessions', { key, body: { client_id: clientId, ...opts } });
  if (res.status !== 201) throw new Error(`creating a client session failed: ${res.status} ${res.text}`);
  return res.body;
}

/** A GraphQL operation sent with a client-session token as its bearer. */
export const asClient = (app: TestApp, token: string, query: string, variables: Record<string, unknown> = {}) =>
  gql(app, token, query, variables);
