import { render } from 'preact';
import { type Identity, createApi } from './api';
import { Conversation } from './conversation';
import { widgetCss as css } from './styles';
import { Widget } from './widget';

/**
 * `<script src="{api}/widget.js" data-key="pk_…" async>` on any site (docs/widget.md, Embedding). The API is the
 * origin this script came from. The widget draws into an open shadow root on an element of its own at the end of
 * `<body>`: the page's styles cannot reach in, and the widget's cannot leak out.
 */

export interface WidgetHandle {
  open(): void;
  close(): void;
  identify(identity: Identity): void;
}

declare global {
  interface Window {
    AgentPlatformWidget?: WidgetHandle;
  }
}

/** This script's own tag: `currentScript` while it runs (async included); else the tag that loads a widget.js. */
function ownScript(): HTMLScriptElement | null {
  const current = document.currentScript;
  if (current instanceof HTMLScriptElement && current.dataset.key) return current;
  return document.querySelector<HTMLScriptElement>('script[data-key][src*="widget.js"]');
}

function mount(script: HTMLScriptElement): WidgetHandle | null {
  const key = script.dataset.key?.trim();
  if (!key) {
    console.error('Agent Platform widget: the script tag needs data-key="pk_…" (the bot\'s public key).');
    return null;
  }
  const base = new URL(script.src, location.href).origin;
  const identity: Identity = {};
  if (script.dataset.userToken) identity.user_token = script.dataset.userToken;
  if (script.dataset.userAuth) identity.user_auth = script.dataset.userAuth;

  const conversation = new Conversation(createApi(base, key), key, identity);
  const host = document.createElement('agent-platform-widget');
  const shadow = host.attachShadow({ mode: 'open' });
  // A constructed style sheet is not an inline <style>, so a page whose CSP forbids inline styles still shows the
  // widget styled; older browsers get the <style> element.
  if ('adoptedStyleSheets' in shadow && typeof CSSStyleSheet.prototype.replaceSync === 'function') {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    shadow.adoptedStyleSheets = [sheet];
  } else {
    const style = document.createElement('style');
    style.textContent = css;
    shadow.appendChild(style);
  }
  document.body.appendChild(host);

  const resolveUrl = (url: string) => new URL(url, base).href;
  render(<Widget conversation={conversation} resolveUrl={resolveUrl} />, shadow);
  if (script.dataset.open === 'true') conversation.setOpen(true);
  void conversation.start();

  return {
    open: () => conversation.setOpen(true),
    close: () => {
      // Focus inside the widget goes back to the launcher rather than to nowhere.
      const inside = document.activeElement === host;
      conversation.setOpen(false);
      if (inside) shadow.querySelector<HTMLButtonElement>('.launcher')?.focus();
    },
    identify: (next: Identity) => conversation.identify(next),
  };
}

// One widget per page, even when the tag is included twice.
if (!window.AgentPlatformWidget) {
  const script = ownScript();
  const boot = () => {
    const handle = script && mount(script);
    if (handle) window.AgentPlatformWidget = handle;
  };
  // A tag in <head> without async runs before <body> exists.
  if (document.body) boot();
  else document.addEventListener('DOMContentLoaded', boot, { once: true });
}
