import { widgetSnippet } from './widget-snippet';
import { useState } from 'preact/hooks';
import { type WidgetSite, agents } from '../../api/agents';
import { usePolling } from '../../use-polling';
import { Button, RefreshButton } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Time } from '../../ui/format';
import { Empty, Panel } from '../../ui/page';
import { useAction, useResource } from '../../ui/resource';
import { CopyField } from '../../ui/secrets';
import { ErrorBox, Notice } from '../../ui/status';
import { readOrigin } from '../../origin';
import type { TabProps } from './tab';
import { WidgetLookPanel } from './widget-look';

/**
 * The visitor widget: which sites may embed it (the API refuses other origins) and the snippet to paste. An origin
 * is `scheme://host[:port]`, exactly what browsers send, nothing after.
 */
export function WidgetTab(props: TabProps) {
  const { bot, admin } = props;
  const snippet = widgetSnippet(bot.public_key);
  return (
    <>
      <Panel
        title="Embed the widget"
        description="Paste this before </body> on every page of your site where visitors should be able to chat."
      >
        <CopyField label="Snippet" value={snippet} testId="widget-snippet" multiline />
        <CopyField label="Public key" value={bot.public_key} testId="public-key" />
        {bot.allowed_origins.length === 0 && (
          <Notice tone="warning">
            No site may use the widget yet: add your site&rsquo;s address below, or the widget refuses to start there.
          </Notice>
        )}
      </Panel>
      <Origins {...props} readOnly={!admin} />
      <Sites {...props} readOnly={!admin} />
      <WidgetLookPanel {...props} readOnly={!admin} />
    </>
  );
}

/** New sightings are written at most once a minute; reading every 20 s shows an owner's test visit soon enough. */
const SITES_POLL_MS = 20_000;

/**
 * Where the widget ran and where it was refused (lib/widget/sightings.ts): the set-up mistake a visitor sees as "not
 * available on this page" is named here, with the way to fix it.
 */
function Sites(props: TabProps & { readOnly: boolean }) {
  const { bot } = props;
  const sites = useResource(() => agents.widgetSites(bot.id), [bot.id]);
  usePolling(
    async () => {
      sites.reload();
      return 'ok';
    },
    { everyMs: SITES_POLL_MS, waitFirst: true, onlyWhenVisible: true },
    [bot.id],
  );
  const action = useAction();
  const [status, setStatus] = useState('');
  async function allow(origin: string) {
    setStatus('');
    const res = await action.run(() => agents.update(bot.id, { allowed_origins: [...bot.allowed_origins, origin] }));
    if (res.ok) {
      props.onChange(res.value);
      setStatus(`${origin} allowed.`);
      sites.reload();
    }
  }

  // `allowed` is read with the sites; the agent on screen may have changed since (a site removed or added above).
  const list = (sites.data?.sites ?? []).map((s) => ({ ...s, allowed: bot.allowed_origins.includes(s.origin) }));
  const running = list.filter((s) => s.allowed);
  const refused = list.filter((s) => !s.allowed && s.last_refused_at !== null);
  return (
    <Panel
      title="Where the widget runs"
      id="widget-sites"
      description="The sites the widget was loaded on, and those it refused because they are not allowed. Seen within a minute of a visit."
      actions={<RefreshButton resource={sites} />}
    >
      {sites.state === 'error' && <ErrorBox failure={sites.failure} onRetry={sites.retry} />}
      {sites.state !== 'error' && list.length === 0 && (
        <Empty title="Not seen on any site yet">
          Open a page of your site where you pasted the snippet; it shows up here within a minute.
        </Empty>
      )}
      {running.length > 0 && (
        <>
          <h3 class="subheading">Running on</h3>
          <ul class="list" aria-label="Sites the widget runs on" data-testid="sites-running">
            {running.map((s) => (
              <li key={s.origin} class="list-row">
                <code class="origin">{s.origin}</code>
                <span class="muted small">{seenText(s)}</span>
              </li>
            ))}
          </ul>
        </>
      )}
      {refused.length > 0 && (
        <>
          <h3 class="subheading">Refused on</h3>
          <Notice tone="warning">
            Visitors on these sites saw &ldquo;not available on this page&rdquo;: they are not among the allowed sites.
          </Notice>
          <ul class="list" aria-label="Sites the widget refused" data-testid="sites-refused">
            {refused.map((s) => (
              <li key={s.origin} class="list-row">
                <code class="origin">{s.origin}</code>
                <span class="muted small">
                  refused <Time ms={s.last_refused_at!} relative />
                </span>
                {!props.readOnly && (
                  <Button
                    small
                    disabled={Boolean(action.busy)}
                    aria-label={`Allow ${s.origin}`}
                    onClick={() => void allow(s.origin)}
                  >
                    Allow
                  </Button>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      {action.failure && <ErrorBox failure={action.failure} />}
      <p class="visually-hidden" aria-live="polite">
        {status}
      </p>
    </Panel>
  );
}

/** An allowed site that has not loaded the widget since it was refused (just allowed) says so. */
function seenText(s: WidgetSite) {
  if (s.last_allowed_at === null || (s.last_refused_at ?? 0) > s.last_allowed_at) {
    return 'allowed — not loaded since';
  }
  return (
    <>
      last seen <Time ms={s.last_allowed_at} relative />
    </>
  );
}

function Origins(props: TabProps & { readOnly: boolean }) {
  const { bot } = props;
  const [typed, setTyped] = useState('');
  const [problem, setProblem] = useState<string | undefined>();
  const [trimmedTo, setTrimmedTo] = useState<string | undefined>();
  const [status, setStatus] = useState('');
  const action = useAction();

  async function save(origins: string[], what: string) {
    setStatus('');
    const res = await action.run(() => agents.update(bot.id, { allowed_origins: origins }));
    if (res.ok) {
      props.onChange(res.value);
      setStatus(what);
      return true;
    }
    return false;
  }

  async function add(event: Event) {
    event.preventDefault();
    const read = readOrigin(typed);
    if (!read.ok) {
      setProblem(read.problem);
      return;
    }
    const { origin } = read;
    setProblem(undefined);
    setTrimmedTo(undefined);
    if (bot.allowed_origins.includes(origin)) {
      setProblem(`${origin} is already allowed.`);
      return;
    }
    if (await save([...bot.allowed_origins, origin], `${origin} added.`)) {
      setTyped('');
      // A pasted page address is kept as its site: say so, since the widget then works on every page of it.
      if (read.trimmed) setTrimmedTo(origin);
    }
  }

  return (
    <Panel
      title="Allowed sites"
      id="allowed-origins"
      description="Pages on these origins may load the widget and talk to this agent. Requests from anywhere else are refused."
    >
      {bot.allowed_origins.length === 0 ? (
        <Empty title="No allowed sites" />
      ) : (
        <ul class="list" aria-label="Allowed sites">
          {bot.allowed_origins.map((origin) => (
            <li key={origin} class="list-row">
              <code class="origin">{origin}</code>
              {!props.readOnly && (
                <Button
                  small
                  variant="ghost"
                  disabled={Boolean(action.busy)}
                  aria-label={`Remove ${origin}`}
                  onClick={() =>
                    void save(
                      bot.allowed_origins.filter((o) => o !== origin),
                      `${origin} removed.`,
                    )
                  }
                >
                  Remove
                </Button>
              )}
            </li>
          ))}
        </ul>
      )}
      {!props.readOnly && (
        <form class="inline-form" onSubmit={(e) => void add(e)}>
          <Field
            id="origin-new"
            label="Add a site"
            error={problem}
            hint="The site’s address, for example https://shop.example.com or http://localhost:3000 (a page’s address is kept as its site)"
          >
            <div class="input-row">
              <input
                id="origin-new"
                inputMode="url"
                autoComplete="off"
                spellcheck={false}
                placeholder="https://shop.example.com"
                aria-invalid={problem ? true : undefined}
                aria-describedby={problem ? 'origin-new-error' : 'origin-new-hint'}
                value={typed}
                onInput={(e) => setTyped(valueOf(e))}
              />
              <Button type="submit" variant="primary" busy={Boolean(action.busy)} busyLabel="Saving…">
                Add
              </Button>
            </div>
          </Field>
        </form>
      )}
      {trimmedTo && (
        <p class="muted small" data-testid="origin-trimmed">
          Added as {trimmedTo}: the widget may run on every page of that site, so the rest of the address was left out.
        </p>
      )}
      {action.failure && <ErrorBox failure={action.failure} />}
      <p class="visually-hidden" aria-live="polite">
        {status}
      </p>
    </Panel>
  );
}
