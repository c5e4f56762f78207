import pg from 'pg';

// After the load: what both targets wrote must still add up (docs/domain-rules.md "Money", "Ledgers"): each
// wallet equals its credit ledger, the business account its ledger, each class instance's
// spots_taken its live bookings, each pass's visit counter its visit ledger for the month.

export interface LedgerCheck {
  bookings: number;
  mismatches: string[];
}

export async function checkLedgers(databaseUrl: string): Promise<LedgerCheck> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const one = async (sql: string) => Number((await client.query<{ n: string }>(sql)).rows[0].n);
    const mismatches: string[] = [];
    const wallets = await one(`select count(*) as n from client c
      where c.credit_balance <> coalesce((select sum(case when t.type = 'CREDIT' then t.amount else -t.amount end)
                                            from credit_transaction t where t.client_id = c.id), 0)`);
    if (wallets) mismatches.push(`${wallets} wallets differ from their credit ledger`);
    const accounts = await one(`select count(*) as n from business_account a
      where a.balance <> coalesce((select sum(case when t.type = 'CREDIT' then t.amount else -t.amount end)
                                     from business_transaction t where t.reseller_id = a.reseller_id), 0)`);
    if (accounts) mismatches.push(`${accounts} business accounts differ from their ledger`);
    const spots = await one(`select count(*) as n from class_instance ci
      where ci.spots_taken <> (select count(*) from booking b where b.class_instance_id = ci.id and b.status in ('PENDING', 'CONFIRMED'))`);
    if (spots) mismatches.push(`${spots} class instances' spots_taken differ from their live bookings`);
    const visits = await one(`select count(*) as n from issued_pass ip
      where coalesce((ip.visits_used->>'GYM')::int, 0) <> coalesce((select sum(v.delta) from visit_transaction v
              where v.issued_pass_id = ip.id and v.category = 'GYM' and v.period = ip.visits_period and v.visit_entitlement_id is null), 0)`);
    if (visits) mismatches.push(`${visits} passes' GYM visit counters differ from their visit ledger`);
    return { bookings: await one('select count(*) as n from booking'), mismatches };
  } finally {
    await client.end();
  }
}
