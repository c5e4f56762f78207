import { Migration } from '@mikro-orm/migrations';

// Money follows coverage (docs/domain-rules.md "Decisions recorded here"): an issued pass keeps `paid_through`, the end of
// its last paid PREPAID period, and its expiry may not pass it. Existing PREPAID passes get the end
// their ledger paid for, replayed as issue and renewal computed it: the debit pays one
// duration from the start date, each later debit one duration from the later of its own time and
// the period paid before it. A price-0 package costs nothing, so its expiry is paid through.
// Expiries are not changed here: a pass extended for free before this rule keeps its expiry, and
// its next change obeys the rule.
//
// Lookups get REVOKED: an issuer turning lookup off revokes its clients' lookups for good, so the
// ones still PENDING or ACTIVE at an issuer that has it off now are revoked (turning it on again
// revives none of them).
export class Migration20261128000000_paid_through extends Migration {
  override name = 'Migration20261128000000_paid_through';

  up(): void {
    this.addSql(`
      alter table issued_pass add column paid_through timestamptz;

      with recursive debit as (
        select ip.id as pass_id, bt.created_at,
               row_number() over (partition by ip.id order by bt.created_at, bt.id) as n,
               case pp.duration when 'MONTHLY' then interval '1 month' when 'QUARTERLY' then interval '3 months' else interval '12 months' end as period,
               (ip.start_date::timestamp at time zone 'UTC') as start_at
          from issued_pass ip
          join pass_package pp on pp.id = ip.pass_id
          join business_transaction bt on bt.reference_id = ip.id and bt.type = 'DEBIT'
         where ip.payment_model = 'PREPAID'
      ), paid (pass_id, n, through) as (
        select pass_id, n, ((start_at at time zone 'UTC') + period) at time zone 'UTC' from debit where n = 1
        union all
        select d.pass_id, d.n, ((greatest(d.created_at, p.through) at time zone 'UTC') + d.period) at time zone 'UTC'
          from paid p join debit d on d.pass_id = p.pass_id and d.n = p.n + 1
      )
      update issued_pass ip set paid_through = last.through
        from (select distinct on (pass_id) pass_id, through from paid order by pass_id, n desc) last
       where ip.id = last.pass_id;

      -- A PREPAID pass its ledger paid nothing for: free when its package is, else paid up to its start only.
      update issued_pass ip
         set paid_through = case when pp.price = 0 then ip.expires_at else ip.start_date::timestamp at time zone 'UTC' end
        from pass_package pp
       where pp.id = ip.pass_id and ip.payment_model = 'PREPAID' and ip.paid_through is null;

      alter table lookup drop constraint lookup_status_check;
      alter table lookup add constraint lookup_status_check check (status in ('PENDING', 'ACTIVE', 'FAILED', 'REVOKED'));
      update lookup l set status = 'REVOKED', updated_at = now()
        from reseller i
       where i.id = l.issuer_id and not i.lookup_enabled and l.status in ('PENDING', 'ACTIVE');
    `);
  }
}
