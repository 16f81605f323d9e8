import type { OpenApiDocument } from '../openapi';

/**
 * The `/docs` page: the interactive reference (Scalar, with its try-it console) mounted by `/docs/assets/docs.js`
 * on `#reference` from `/v1/openapi.json`, plus a server-rendered index of the operations from the same document,
 * which is what readers without JavaScript get (and what shows if the Scalar bundle fails to load). Every script
 * and stylesheet comes from `/docs/assets/*` on the API itself; nothing is fetched from elsewhere.
 */
const esc = (s: unknown) =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** Inline `code` spans in summaries, nothing more: they are ours, but escape first anyway. */
const prose = (s: unknown) => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');

/** `#tag-…` anchors: letters, digits and dashes only. */
const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const SPEC_URL = '/v1/openapi.json';

export function renderDocs(doc: OpenApiDocument): string {
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(ops)) {
      if (!METHODS.includes(method)) continue;
      const op = raw as { summary?: string; tags?: string[]; 'x-stability'?: string };
      const tag = op.tags?.[0] ?? 'Other';
      const unstable = op['x-stability'] === 'unstable' ? ' <span class="badge">unstable</span>' : '';
      byTag.set(tag, [
        ...(byTag.get(tag) ?? []),
        `<li><span class="method ${esc(method)}">${esc(method.toUpperCase())}</span> <code class="path">${esc(path)}</code>${unstable}` +
          `<span class="summary">${prose(op.summary)}</span></li>`,
      ]);
    }
  }
  const title = `${doc.info.title} ${doc.info.version}`;
  const toc = [...byTag.keys()].map((t) => `<li><a href="#tag-${esc(slug(t))}">${esc(t)}</a></li>`).join('');
  const sections = [...byTag.entries()]
    .map(
      ([t, items]) =>
        `<section aria-labelledby="tag-${esc(slug(t))}"><h2 id="tag-${esc(slug(t))}">${esc(t)}</h2><ul class="ops">${items.join('')}</ul></section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · API reference</title>
<meta name="description" content="${esc(doc.info.description)}">
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/assets/docs.css">
<script src="/docs/assets/docs.js"></script>
<script src="/docs/assets/scalar.js" defer></script>
</head>
<body>
<div id="reference" data-openapi-url="${SPEC_URL}"></div>
<p id="docs-loading" class="docs-loading" role="status">Loading the interactive reference…</p>
<main id="docs-index" class="docs-index">
<header>
<h1>${esc(doc.info.title)}</h1>
<p class="version">version ${esc(doc.info.version)} · OpenAPI document: <a href="${SPEC_URL}">${SPEC_URL}</a></p>
<p class="fallback-note">The interactive reference could not be loaded; this is the plain index of the operations.</p>
<p>${prose(doc.info.description)}</p>
</header>
<nav aria-label="Groups"><ul>${toc}</ul></nav>
${sections}
</main>
</body>
</html>
`;
}
