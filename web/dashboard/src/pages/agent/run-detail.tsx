import type { Run } from '../../api/automation';
import { Time, formatNumber } from '../../ui/format';
import { MarkdownText } from '../../../../shared/markdown-view';

/** What woke the agent, as it came: a webhook's JSON body indented, any other text as it is. */
function readableInput(input: string): string {
  const trimmed = input.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return input;
  try {
    return JSON.stringify(JSON.parse(trimmed), null, 2);
  } catch {
    return input;
  }
}

/**
 * One run in full, under its row of the run log: what woke the agent (the task, the webhook's body, the visitor's
 * message) and its whole answer or error, the model and its tokens, and the ids an operator looks for in the Temporal
 * UI or in a support request.
 */
export function RunDetail(props: { run: Run; id: string }) {
  const { run } = props;
  return (
    <div class="run-detail" id={props.id} data-testid="run-detail">
      <section>
        <h4>Input</h4>
        {run.input ? <pre class="run-input">{readableInput(run.input)}</pre> : <p class="muted">None</p>}
      </section>
      <section>
        <h4>{run.status === 'failed' ? 'Error' : 'Answer'}</h4>
        {run.status === 'failed' ? (
          <p class="text-error">
            {run.error ?? 'Failed'}
            {run.error_code && <span class="cell-sub">Code: {run.error_code}</span>}
          </p>
        ) : run.answer ? (
          <div class="run-answer">
            <MarkdownText text={run.answer} />
          </div>
        ) : (
          <p class="muted">{run.status === 'running' ? 'Still running…' : 'No answer'}</p>
        )}
      </section>
      <dl class="dl run-facts">
        <dt>Model</dt>
        <dd>{run.model ?? '—'}</dd>
        <dt>Tokens</dt>
        <dd>
          {formatNumber(run.prompt_tokens)} in · {formatNumber(run.completion_tokens)} out
        </dd>
        <dt>Credits</dt>
        <dd>{formatNumber(run.credits)}</dd>
        <dt>Started</dt>
        <dd>
          <Time ms={run.started_at} />
        </dd>
        {run.finished_at && (
          <>
            <dt>Finished</dt>
            <dd>
              <Time ms={run.finished_at} />
            </dd>
          </>
        )}
        <dt>Run</dt>
        <dd>
          <code>{run.run_id}</code>
        </dd>
        {run.session_id && (
          <>
            <dt>Conversation</dt>
            <dd>
              <code>{run.session_id}</code>
            </dd>
          </>
        )}
      </dl>
    </div>
  );
}
