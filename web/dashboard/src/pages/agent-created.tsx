import type { Bot, BotKeys } from '../api/agents';
import { Link } from '../router';
import { Button } from '../ui/buttons';
import { CopyField } from '../ui/secrets';
import { widgetSnippet } from './agent/widget-snippet';
import './agent-created.css';

/**
 * What an owner sees once an agent is made: first what most of them want — the widget's snippet for their site and
 * where to teach the agent — and the keys for developers folded away under it. The keys are still shown only this
 * once (only fingerprints are kept), so the fold says so before it is opened.
 */
export function AgentCreated(props: { bot: Bot; keys: BotKeys; onDone: () => void }) {
  const { bot, keys } = props;
  const title = `${bot.name} is ready`;
  return (
    <div class="once agent-created" role="region" aria-label={title}>
      <h3 class="once-title">{title}</h3>
      <ol class="next-steps">
        <li>
          <strong>Put it on your site.</strong> Paste this before <code>&lt;/body&gt;</code> on the pages where visitors
          should find it, then allow your site&rsquo;s address on the agent&rsquo;s{' '}
          <Link href={`/agents/${bot.id}/widget`}>Widget</Link> tab.
          <CopyField label="Widget snippet" value={widgetSnippet(keys.public_key)} testId="new-snippet" multiline />
        </li>
        <li>
          <strong>Teach it.</strong> Add texts or scan your site on its{' '}
          <Link href={`/agents/${bot.id}/knowledge`}>Knowledge</Link> tab: it answers only from what it knows.
        </li>
      </ol>
      <details class="developer-keys" data-testid="developer-keys">
        <summary>Keys for developers — shown only now</summary>
        <p class="once-note">
          For the server-side API, the builder, webhooks and signed visitors. Copy what you need now: only fingerprints
          are kept, and a lost key is reissued on the Keys tab.
        </p>
        <CopyField label="Secret key (server-side API, X-Bot-Key)" value={keys.secret_key} testId="new-secret-key" />
        <CopyField label="Public key (the widget on your pages)" value={keys.public_key} testId="new-public-key" />
        <CopyField label="Builder key (MCP clients)" value={keys.builder_key} testId="new-builder-key" />
        <CopyField label="Handoff webhook secret" value={keys.handoff_webhook_secret} />
        <CopyField label="Visitor identity secret" value={keys.visitor_identity_secret} />
      </details>
      <div class="once-actions form-actions">
        <Link class="btn btn-primary" href={`/agents/${bot.id}`}>
          Open {bot.name}
        </Link>
        <Button onClick={props.onDone}>Done</Button>
      </div>
    </div>
  );
}
