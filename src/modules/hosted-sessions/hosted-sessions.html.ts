// The hosted page's HTML (docs/partner-guide.md "Hosted sessions"): server-rendered, one inline style sheet and one
// small script (both allowed by the response's CSP nonce), no external assets, so it works offline
// and on a phone. Every value is escaped here; nothing else writes HTML.

export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A fragment of HTML already escaped; `html` below interpolates strings escaped and fragments as they are. */
export class Html {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}
type Part = string | number | Html | Html[] | undefined | null | false;

export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0];
  parts.forEach((part, i) => {
    out += render(part) + strings[i + 1];
  });
  return new Html(out);
}

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return '';
  if (Array.isArray(part)) return part.map((p) => p.text).join('');
  if (part instanceof Html) return part.text;
  return escapeHtml(String(part));
}

// Contrast: text #1b1b1b and links/buttons #0a4b8c on white are above 7:1 (WCAG AAA); focus is a thick outline.
const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:1.05rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;background:#fff}
main{max-width:40rem;margin:0 auto;padding:1rem}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
h2{font-size:1.25rem;margin:1.5rem 0 .5rem}
ul{list-style:none;padding:0;margin:0}
li{border:1px solid #8a8a8a;border-radius:.5rem;padding:.75rem;margin:.5rem 0}
.meta{color:#3d3d3d;font-size:.95rem}
button,.button{display:inline-block;min-height:2.75rem;padding:.5rem 1rem;border:0;border-radius:.4rem;background:#0a4b8c;color:#fff;font:inherit;font-weight:600;cursor:pointer;text-decoration:none}
button[disabled]{background:#5a5a5a}
a{color:#0a4b8c}
:focus-visible{outline:3px solid #b35c00;outline-offset:2px}
label{display:block;font-weight:600;margin-top:.75rem}
select,input{font:inherit;min-height:2.75rem;width:100%;padding:.4rem;border:1px solid #5a5a5a;border-radius:.4rem;color:#1b1b1b;background:#fff}
.alert{border:2px solid #a4000f;background:#fff1f1;color:#6b0009;border-radius:.5rem;padding:.75rem;margin:1rem 0}
.pass{background:#f1f5fa;border-radius:.5rem;padding:.75rem}
.code{font:700 2rem/1.2 ui-monospace,Menlo,Consolas,monospace;letter-spacing:.2em}
img.qr{width:16rem;max-width:100%;height:auto;image-rendering:pixelated}
.times{display:flex;flex-wrap:wrap;gap:.5rem}
.times li{border:0;padding:0;margin:0}
`;

// A submitted form's button says it is working and cannot be pressed twice.
const SCRIPT = `
document.addEventListener('submit', function (e) {
  var b = e.target.querySelector('button[type=submit]');
  if (!b || e.target.method.toLowerCase() !== 'post') return;
  if (b.disabled) { e.preventDefault(); return; }
  setTimeout(function () { b.disabled = true; b.textContent = 'Working…'; }, 0);
});
`;

export function page(title: string, nonce: string, body: Html): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main>
${body.text}
</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}
