import type { EntityManager } from '@mikro-orm/postgresql';
import { createTransport } from 'nodemailer';
import type { Config } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Logger } from '../../platform/logger.ts';
import { enqueue, type OutboxHandler, type OutboxRow } from '../../platform/outbox.ts';
import { masterKey, secretBox, type SecretBox } from '../../platform/secrets.ts';
import { preparedRead, preparedWrite, type TxEm } from '../../db/engine/index.ts';

// E-mail (docs/partner-guide.md "E-mail"). A message is queued in the use case's transaction: a mail_message row
// with its body sealed (it may hold a code: docs/operator-guide.md "Secrets at rest") and an outbox row (topic
// `mail`) that delivers it. Delivery is the outbox's: a failure is retried with its backoff, and the
// message is marked delivered in the transaction that completes its outbox row, so it is sent once;
// only a crash between the SMTP server's "250" and that commit sends it again, with the same
// Message-ID (one per outbox row), which receiving servers use to drop the copy. Delivered or past
// its expiry, a message keeps its address and subject but no body.

export const MAIL_TOPIC = 'mail';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Undelivered by then, the message is dropped instead of sent (a lookup code that no longer works). */
  expiresAt?: Date;
  /** The reseller it is sent for, if any. */
  resellerId?: string;
}

/** Queues `mail` in the caller's transaction; the outbox payload names the message, never its content. */
export async function queueMail(em: TxEm, config: Config, mail: OutgoingMail, at: Date): Promise<void> {
  const box = await mailBox(em, config);
  const [row] = await preparedWrite<{ id: string }>(
    em,
    `insert into mail_message (reseller_id, to_address, subject, sealed_body, status, expires_at, created_at)
     values (?, ?, ?, ?, 'QUEUED', ?, ?) returning id::text as id`,
    [
      mail.resellerId ?? null,
      mail.to,
      mail.subject,
      box.seal(JSON.stringify({ text: mail.text, html: mail.html })),
      mail.expiresAt ?? null,
      at,
    ],
  );
  await enqueue(em, { topic: MAIL_TOPIC, resellerId: mail.resellerId, payloadJson: JSON.stringify({ mail_message_id: row.id }), at });
}

const boxes = new WeakMap<Buffer, SecretBox>();

async function mailBox(em: EntityManager, config: Config): Promise<SecretBox> {
  const master = await masterKey(em, config);
  let box = boxes.get(master);
  if (!box) boxes.set(master, (box = secretBox(master, 'mail bodies')));
  return box;
}

/** How long one SMTP conversation may take before the attempt fails and is retried later. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

interface MailRow {
  id: string;
  to_address: string;
  subject: string;
  sealed_body: string | null;
  status: string;
  expires_at: Date | null;
  created_at: Date;
}

/**
 * The outbox handler of topic `mail` (src/cli/serve.ts registers it wherever background jobs run).
 * With SMTP_URL: sent there. Without it, in development (NODE_ENV=development, what `npm start`
 * runs) the message is written to this process's log instead, so a developer can read a code and
 * finish a lookup; in test or production it is not delivered: it waits in the outbox, retried with
 * the outbox's backoff, until SMTP_URL is set or it expires. A throw leaves the row for a retry.
 */
export function mailHandler(deps: { config: Config; clock: Clock; log: Logger }): OutboxHandler {
  const { config, clock, log } = deps;
  const transport = config.SMTP_URL === undefined ? undefined : createTransport({ url: config.SMTP_URL, ...SMTP_TIMEOUTS });
  return async (outboxRow: OutboxRow, em: EntityManager) => {
    const id = (outboxRow.payload as { mail_message_id?: string }).mail_message_id;
    const [mail] = await preparedRead<MailRow>(
      em,
      'select id::text as id, to_address, subject, sealed_body, status, expires_at, created_at from mail_message where id = ? for update',
      [id ?? null],
    );
    // Already delivered or dropped: nothing left to do for this row.
    if (!mail || mail.status !== 'QUEUED' || mail.sealed_body === null) return;
    const now = clock.now();
    if (mail.expires_at && new Date(mail.expires_at).getTime() <= now.getTime()) {
      await finish(em, mail.id, 'EXPIRED', null, now);
      log.info({ mail_message_id: mail.id, outbox_id: outboxRow.id }, 'mail expired before it could be delivered; dropped');
      return;
    }
    const body = JSON.parse((await mailBox(em, config)).open(mail.sealed_body)) as { text: string; html: string };
    const messageId = `<outbox-${outboxRow.id}.${new Date(mail.created_at).getTime()}@${domainOf(config.MAIL_FROM)}>`;
    if (!transport) {
      if (config.NODE_ENV !== 'development')
        throw new Error('SMTP_URL is not set: mail waits in the outbox until it is (docs/partner-guide.md "E-mail")');
      await finish(em, mail.id, 'LOGGED', messageId, now);
      // Development only (docs/partner-guide.md "E-mail"): the log stands in for the mailbox, code included.
      log.info(
        { mail_message_id: mail.id, mail: { to: mail.to_address, subject: mail.subject, text: body.text } },
        'SMTP_URL is not set (development): the mail is written here instead of sent',
      );
      return;
    }
    try {
      await transport.sendMail({
        from: config.MAIL_FROM,
        to: mail.to_address,
        subject: mail.subject,
        text: body.text,
        html: body.html,
        messageId,
      });
    } catch (err) {
      // The outbox logs and keeps the error: only what failed, never the server's words, which may repeat the address.
      const e = err as { code?: string; command?: string; responseCode?: number };
      // No `cause`: the logger would print it, with the server's reply and the recipient.
      // eslint-disable-next-line preserve-caught-error
      throw new Error(
        `SMTP delivery failed (${[e.code, e.command, e.responseCode].filter((v) => v !== undefined).join(' ') || 'no reply'})`,
      );
    }
    await finish(em, mail.id, 'SENT', messageId, now);
    log.info({ mail_message_id: mail.id, outbox_id: outboxRow.id }, 'mail sent');
  };
}

/** Delivered or dropped: the body goes, in the transaction that completes the outbox row. */
async function finish(
  em: EntityManager,
  id: string,
  status: 'SENT' | 'LOGGED' | 'EXPIRED',
  messageId: string | null,
  at: Date,
): Promise<void> {
  await preparedWrite(em, 'update mail_message set status = ?, message_id = ?, sealed_body = null, delivered_at = ? where id = ?', [
    status,
    messageId,
    status === 'EXPIRED' ? null : at,
    id,
  ]);
}

/** The domain of MAIL_FROM (`Name <a@b>` or `a@b`), for Message-IDs. */
function domainOf(from: string): string {
  const match = /@([^\s>]+)>?\s*$/.exec(from);
  return match ? match[1] : 'localhost';
}
