import { builder } from '../../graphql/builder.ts';
import { mutationErrors } from '../../graphql/errors.ts';
import { childConnections, connectionCost, registerNode, rowsById } from '../../graphql/loaders.ts';
import { runMutation, runQuery, forClientSession } from '../../graphql/use-case.ts';
import { pageArgsFromConnection, toConnection } from '../../platform/pagination.ts';
import { resellerOf } from '../../platform/request-context.ts';
import { ClientRef } from '../clients/clients.graphql.ts';
import type { Client } from '../clients/index.ts';
import { creditTransactionPagesOfClients } from './client-credits.ts';
import { listCreditPackages } from './list-credit-packages.ts';
import { purchaseCredits } from './purchase-credits.ts';
import { CreditPackageSchema, type CreditPackage, type CreditPurchase, type CreditTransaction } from './credits.entity.ts';

// The GraphQL surface of credits (docs/partner-guide.md "Credits"): the same use cases as credits.rest.ts, with
// the V3 input mapped from camelCase, so both surfaces answer the same values and catalogue codes.

export const CreditPackageRef = builder.loadableNode(builder.objectRef<CreditPackage>('CreditPackage'), {
  description: "A package of credits the reseller sells to its clients, in the reseller's currency (the V3 `credit_package`).",
  id: { resolve: (p) => p.id },
  load: rowsById(CreditPackageSchema, 'reseller'),
  fields: (t) => ({
    name: t.exposeString('name', { description: 'Name of the package.' }),
    credits: t.int({ description: "Credits a purchase puts in the client's wallet.", resolve: (p) => p.credits }),
    price: t.int({ description: 'What a purchase debits from the business account, minor units of `currency`.', resolve: (p) => p.price }),
    currency: t.exposeString('currency', { description: 'ISO-4217 currency code of `price`.' }),
    createdAt: t.field({ type: 'DateTime', description: 'When the package was created.', resolve: (p) => p.createdAt }),
  }),
});

registerNode('creditPackage', CreditPackageRef, { clientSession: true });

const CreditTransactionTypeEnum = builder.enumType('CreditTransactionType', {
  description: 'Which way credits moved.',
  values: {
    CREDIT: { description: 'Credits came into the wallet.' },
    DEBIT: { description: 'Credits were spent from the wallet.' },
  },
});

const CreditTransactionRef = builder.objectRef<CreditTransaction>('CreditTransaction').implement({
  description: "One change of a client's credit wallet.",
  fields: (t) => ({
    id: t.id({ description: 'Wallet transaction id; also its cursor.', resolve: (r) => r.id }),
    type: t.field({ type: CreditTransactionTypeEnum, description: 'CREDIT or DEBIT.', resolve: (r) => r.type }),
    amount: t.int({ description: 'Credits moved.', resolve: (r) => r.amount }),
    balanceAfter: t.int({ description: 'The wallet balance right after this change.', resolve: (r) => r.balanceAfter }),
    description: t.exposeString('description', { description: 'Human-readable reason.' }),
    bookingId: t.id({
      nullable: true,
      description: 'The booking that spent or refunded the credits; null otherwise.',
      resolve: (r) => r.bookingId ?? null,
    }),
    creditPurchaseId: t.id({
      nullable: true,
      description: 'The credit purchase that brought the credits; null otherwise.',
      resolve: (r) => r.creditPurchaseId ?? null,
    }),
    createdAt: t.field({ type: 'DateTime', description: 'When the wallet changed.', resolve: (r) => r.createdAt }),
  }),
});

const CreditTransactionsConnection = builder.connectionObject(
  { type: CreditTransactionRef, name: 'CreditTransactionsConnection' },
  { name: 'CreditTransactionsConnectionEdge' },
);

/** A client's wallet: the client row already carries the balance; the currency is the caller's. */
interface CreditBalanceShape {
  client: Client;
  currency: string;
}

const CreditBalanceRef = builder.objectRef<CreditBalanceShape>('CreditBalance').implement({
  description: "A client's credit wallet (the V3 `credit_balance`).",
  fields: (t) => ({
    balance: t.int({ description: "Credits in the client's wallet.", resolve: (b) => b.client.creditBalance }),
    currency: t.string({
      description: 'ISO-4217 currency code of the reseller, in which credit packages are priced.',
      resolve: (b) => b.currency,
    }),
    transactions: t.loadable({
      type: CreditTransactionsConnection,
      description: 'Wallet changes, newest first: the order the balance moved in (as GET /clients/{id}/credits).',
      byPath: true,
      args: { ...t.arg.connectionArgs() },
      complexity: connectionCost,
      load: childConnections((ctx, clientIds, page) => creditTransactionPagesOfClients(ctx, clientIds, page)),
      resolve: (b) => b.client.id,
    }),
  }),
});

builder.objectFields(ClientRef, (t) => ({
  credits: t.field({
    type: CreditBalanceRef,
    description: "The client's credit wallet: its balance and its transactions (as GET /clients/{id}/credits).",
    resolve: (client, _, ctx) => ({ client, currency: resellerOf(ctx).currency }),
  }),
}));

builder.queryFields((t) => ({
  creditPackages: t.connection({
    extensions: forClientSession('read'),
    type: CreditPackageRef,
    description: "The reseller's credit packages, newest first (as GET /credit_packages).",
    authScopes: { reseller: true },
    complexity: connectionCost,
    resolve: (_, args, ctx) =>
      runQuery(async () => {
        const page = pageArgsFromConnection(args);
        return toConnection(await listCreditPackages(ctx, page), page);
      }),
  }),
}));

const CreditPurchaseRef = builder.objectRef<CreditPurchase>('CreditPurchase').implement({
  description: "A credit package bought into a client's wallet, paid from the business account (the V3 `credit_purchase`).",
  fields: (t) => ({
    id: t.id({ description: 'Credit purchase id; both ledger rows of the purchase reference it.', resolve: (p) => p.id }),
    client: t.field({
      type: ClientRef,
      description: 'The client whose wallet was credited.',
      resolve: (p, _, ctx) => ClientRef.getDataloader(ctx).load(p.clientId),
    }),
    creditPackage: t.field({
      type: CreditPackageRef,
      description: 'The credit package bought.',
      resolve: (p, _, ctx) => CreditPackageRef.getDataloader(ctx).load(p.creditPackageId),
    }),
    credits: t.int({ description: "Credits put in the client's wallet.", resolve: (p) => p.credits }),
    amount: t.int({
      description: 'The price paid: debited from the business account, minor units of `currency`.',
      resolve: (p) => p.amount,
    }),
    currency: t.exposeString('currency', { description: 'ISO-4217 currency code of `amount`.' }),
    balance: t.int({ description: "The client's wallet balance right after the purchase.", resolve: (p) => p.balanceAfter }),
    createdAt: t.field({ type: 'DateTime', description: 'When the purchase was made.', resolve: (p) => p.createdAt }),
  }),
});

const PurchaseCreditsInputRef = builder.inputType('PurchaseCreditsInput', {
  description: "A credit package to buy into a client's wallet (V3 POST /credit_purchases).",
  fields: (t) => ({
    clientId: t.id({ required: true, description: 'The client whose wallet receives the credits.' }),
    creditPackageId: t.id({ required: true, description: 'One of the reseller’s credit packages.' }),
  }),
});

builder.mutationFields((t) => ({
  purchaseCredits: t.field({
    type: CreditPurchaseRef,
    description:
      "Buys a credit package into a client's wallet: debits the business account the package's price and credits the " +
      'wallet, atomically. Idempotency-Key accepted.',
    authScopes: { reseller: true },
    args: { input: t.arg({ type: PurchaseCreditsInputRef, required: true }) },
    errors: { types: mutationErrors, directResult: true, union: { name: 'PurchaseCreditsResult' } },
    resolve: (_, { input }, ctx) =>
      runMutation(ctx, (c) => purchaseCredits(c, { client_id: input.clientId, credit_package_id: input.creditPackageId })),
  }),
}));
