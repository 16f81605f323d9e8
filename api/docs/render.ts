import type { OpenApiDocument } from '../openapi';

/**
 * The `/docs` page: an HTML reference rendered on the server from the same OpenAPI document. Its stylesheet and
 * script are served by the API itself (`/docs/assets/*`), so the page works with no network beyond the API.
 */
const esc = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Inline `code` spans in descriptions, nothing more: descriptions are ours, but escape first anyway. */
const prose = (s: unknown) => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');

export function renderDocs(doc: OpenApiDocument): string {
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(ops)) {
      const op = raw as Record<string, any>;
      const id = esc(op.operationId);
      const params = (op.parameters ?? []) as Record<string, any>[];
      const html = `
<section class="op" id="${id}" data-search="${esc(`${method} ${path} ${op.summary}`.toLowerCase())}">
  <h3><span class="method ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code>
    ${op['x-stability'] === 'unstable' ? '<span class="badge">unstable</span>' : ''}</h3>
  <p>${prose(op.summary)}</p>
  ${op.description ? `<p class="desc">${prose(op.description)}</p>` : ''}
  ${op.security ? `<p class="auth">Auth: ${op.security.map((s: object) => `<code>${esc(Object.keys(s)[0])}</code>`).join(' or ')}</p>` : '<p class="auth">Auth: none</p>'}
  ${
    params.length
      ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>description</th></tr>${params
          .map((p) => `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td>${prose(p.description ?? '')}</td></tr>`)
          .join('')}</table>`
      : ''
  }
  ${
    op.requestBody
      ? `<h4>Request body</h4><pre>${esc(JSON.stringify(Object.values(op.requestBody.content)[0], null, 2))}</pre>`
      : ''
  }
  <h4>Responses</h4>
  <table><tr><th>status</th><th>description</th></tr>${Object.entries(op.responses as Record<string, any>)
    .map(([status, r]) => `<tr><td>${esc(status)}</td><td>${prose(r.description)}</td></tr>`)
    .join('')}</table>
</section>`;
      const tag = (op.tags?.[0] as string) ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const nav = [...byTag.keys()].map((t) => `<li><a href="#tag-${esc(t)}">${esc(t)}</a></li>`).join('');
  const body = [...byTag.entries()].map(([t, ops]) => `<h2 id="tag-${esc(t)}">${esc(t)}</h2>${ops.join('')}`).join('');
  const schemas = Object.entries(doc.components.schemas)
    .map(([name, s]) => `<section class="schema" id="schema-${esc(name)}"><h3>${esc(name)}</h3><pre>${esc(JSON.stringify(s, null, 2))}</pre></section>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} ${esc(doc.info.version)}</title>
<link rel="stylesheet" href="/docs/assets/docs.css"></head>
<body><nav><h1>${esc(doc.info.title)}</h1><p class="version">version ${esc(doc.info.version)} · <a href="/v1/openapi.json">openapi.json</a></p>
<input id="filter" type="search" placeholder="Filter endpoints" aria-label="Filter endpoints"><ul>${nav}<li><a href="#schemas">Schemas</a></li></ul></nav>
<main><p>${prose(doc.info.description)}</p>${body}<h2 id="schemas">Schemas</h2>${schemas}</main>
<script src="/docs/assets/docs.js"></script></body></html>`;
}
