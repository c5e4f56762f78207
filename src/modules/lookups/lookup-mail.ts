// The e-mail that carries a lookup's code to the client (docs/partner-guide.md "Lookup", "E-mail"): plain text and
// simple HTML, naming the reseller that asks, the issuer the client knows, and how long the code works.

export interface LookupMailParts {
  requester: string;
  issuer: string;
  firstName: string;
  code: string;
  expiresAt: Date;
}

export function lookupMail(p: LookupMailParts): { subject: string; text: string; html: string } {
  const until = `${p.expiresAt.toISOString().slice(11, 16)} UTC on ${p.expiresAt.toISOString().slice(0, 10)}`;
  const subject = `Your code for ${p.requester}`;
  const text = [
    `Hello ${p.firstName},`,
    '',
    `${p.requester} asks to use your wellness pass from ${p.issuer}, to book for you.`,
    '',
    `Your code: ${p.code}`,
    '',
    `It works for 15 minutes, until ${until}. Give it to ${p.requester} only if you asked them to book for you.`,
    'If you did not, ignore this e-mail: nothing happens without the code.',
    '',
  ].join('\n');
  const html = `<!doctype html>
<html><body style="font-family: sans-serif">
<p>Hello ${escape(p.firstName)},</p>
<p>${escape(p.requester)} asks to use your wellness pass from ${escape(p.issuer)}, to book for you.</p>
<p>Your code: <strong style="font-size: 1.5em; letter-spacing: 0.2em">${p.code}</strong></p>
<p>It works for 15 minutes, until ${until}. Give it to ${escape(p.requester)} only if you asked them to book for you.
If you did not, ignore this e-mail: nothing happens without the code.</p>
</body></html>
`;
  return { subject, text, html };
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
