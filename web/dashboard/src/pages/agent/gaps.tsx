import { useEffect, useRef, useState } from 'preact/hooks';
import { type GapGroup, reportsApi } from '../../api/reports';
import { Link } from '../../router';
import { Button, RefreshButton } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Time } from '../../ui/format';
import { Empty, Panel } from '../../ui/page';
import { Loaded, useAction, useResource } from '../../ui/resource';
import { ErrorBox, Notice } from '../../ui/status';
import { addressOf } from '../inbox/model';
import { knowledgeAddress } from './knowledge';
import type { Bot } from '../../api/agents';

/** The longest title the API takes for an answer (lib/schemas/reports.ts, GapAnswer). */
const MAX_TITLE = 200;

/** A question as a source's title: without the `[[…]]` directives a text may carry, on one line, within the limit. */
function titleOf(question: string): string {
  const plain = question
    .replace(/\[\[[^\]]*\]\]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return plain.length > MAX_TITLE ? `${plain.slice(0, MAX_TITLE - 1).trimEnd()}…` : plain;
}

const times = (n: number) => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`);

type Outcome = { tone: 'success'; title: string; sourceId: string } | { tone: 'warning' };

/**
 * "Questions it couldn't answer" (docs/decisions/063-what-is-missing.md): the questions of the period the agent could
 * not answer from its knowledge, grouped, most asked first. "Add an answer" writes a knowledge source through
 * `POST …/gaps/answer`; the group then leaves the list (409: answered meanwhile, the list is read again).
 */
export function GapsPanel(props: { bot: Bot; days: number; onAnswered: () => void }) {
  const { bot, days } = props;
  const gaps = useResource(() => reportsApi.gaps(bot.id, days), [bot.id, days]);
  const [outcome, setOutcome] = useState<Outcome | undefined>();
  const noteBox = useRef<HTMLDivElement>(null);

  function told(next: Outcome) {
    setOutcome(next);
    // The form that had focus is gone with its group: focus goes to what happened.
    setTimeout(() => noteBox.current?.focus({ preventScroll: false }), 0);
  }

  function answered(group: GapGroup, title: string, sourceId: string) {
    gaps.set((data) => ({ ...data, groups: data.groups.filter((g) => g !== group) }));
    told({ tone: 'success', title, sourceId });
    props.onAnswered();
  }

  function answeredMeanwhile() {
    told({ tone: 'warning' });
    gaps.reload();
  }

  return (
    <Panel
      title="Questions it couldn’t answer"
      id="gaps"
      description="What visitors asked that the agent could not answer from its knowledge, most asked first. Add an answer and the agent answers from it from now on."
      actions={<RefreshButton resource={gaps} />}
    >
      {outcome && (
        <div class="gap-outcome" ref={noteBox} tabIndex={-1} data-testid="gap-outcome">
          {outcome.tone === 'success' ? (
            <Notice tone="success">
              Added “{outcome.title}” to the agent&rsquo;s knowledge.{' '}
              <Link href={knowledgeAddress(bot.id, outcome.sourceId)}>See it in Knowledge</Link>
            </Notice>
          ) : (
            <Notice tone="warning">
              Someone answered this question meanwhile, so nothing was added. The list is up to date again.
            </Notice>
          )}
        </div>
      )}
      <Loaded resource={gaps.resource} retry={gaps.retry} label="Loading the questions…">
        {(data) =>
          data.groups.length === 0 ? (
            <Empty title="No unanswered questions">
              <p>Nothing visitors asked in the last {data.days} days is waiting for an answer.</p>
            </Empty>
          ) : (
            <ol class="gap-list" aria-label="Questions the agent couldn't answer" data-testid="gaps">
              {data.groups.map((group) => (
                <GapRow
                  key={group.run_ids.join(' ')}
                  bot={bot}
                  group={group}
                  onAnswered={(title, sourceId) => answered(group, title, sourceId)}
                  onConflict={answeredMeanwhile}
                />
              ))}
            </ol>
          )
        }
      </Loaded>
    </Panel>
  );
}

function GapRow(props: {
  bot: Bot;
  group: GapGroup;
  onAnswered: (title: string, sourceId: string) => void;
  onConflict: () => void;
}) {
  const { group } = props;
  const [form, setForm] = useState<{ title: string; text: string } | undefined>();
  const save = useAction();
  const id = `gap-${group.run_ids[0]}`;
  const answerBox = useRef<HTMLTextAreaElement>(null);
  const addButton = useRef<HTMLDivElement>(null);
  const opened = form !== undefined;
  const wasOpened = useRef(false);
  // Opened: the answer is what is left to write (the title is filled in). Cancelled: back to the button.
  useEffect(() => {
    if (opened) answerBox.current?.focus();
    else if (wasOpened.current) addButton.current?.querySelector('button')?.focus();
    wasOpened.current = opened;
  }, [opened]);
  // The other wordings: the group is named by its most frequent one.
  const others = group.examples.filter((e) => e.text.trim() !== group.question.trim());

  async function submit(event: Event) {
    event.preventDefault();
    if (!form || !form.text.trim()) return;
    const title = form.title.trim();
    const res = await save.run(() =>
      reportsApi.answerGap(props.bot.id, { run_ids: group.run_ids, title: title || undefined, text: form.text }),
    );
    if (res.ok) props.onAnswered(title || form.text.trim().split('\n')[0].slice(0, 60), res.value.source_id);
    else if (res.status === 409) props.onConflict();
  }

  return (
    <li class="gap" data-testid="gap">
      <div class="list-row">
        <div>
          <p class="gap-question" id={`${id}-q`}>
            {group.question}
          </p>
          <p class="gap-meta">
            <strong data-testid="gap-count">Asked {times(group.count)}</strong> · last asked{' '}
            <Time ms={group.last_asked_at} relative />
          </p>
        </div>
        {!form && (
          <div class="row-actions" ref={addButton}>
            <Button
              small
              aria-describedby={`${id}-q`}
              onClick={() => setForm({ title: titleOf(group.question), text: '' })}
            >
              Add an answer
            </Button>
            <Link
              class="btn btn-ghost btn-small"
              href={`/agents/${props.bot.id}/check?question=${encodeURIComponent(titleOf(group.question))}`}
              aria-label={`Add to the check: ${titleOf(group.question)}`}
            >
              Add to the check
            </Link>
          </div>
        )}
      </div>
      {others.length > 0 && (
        <div class="gap-wordings">
          <p class="gap-wordings-title">Also asked as</p>
          <ul>
            {others.map((e) => (
              <li key={e.run_id}>
                {e.session_id ? (
                  <Link
                    href={addressOf({ status: 'all', agent: '', bot: props.bot.id, session: e.session_id })}
                    title="Open the conversation in the inbox"
                  >
                    {e.text}
                  </Link>
                ) : (
                  e.text
                )}{' '}
                <span class="muted small">
                  · <Time ms={e.at} relative />
                </span>
              </li>
            ))}
          </ul>
        </div>
      )}
      {form && (
        <form
          class="gap-form"
          onSubmit={(e) => void submit(e)}
          aria-label={`Answer: ${titleOf(group.question)}`}
          data-testid="gap-form"
        >
          <Field id={`${id}-title`} label="Title" optional hint="How the answer is listed in the knowledge.">
            <input
              id={`${id}-title`}
              maxLength={MAX_TITLE}
              value={form.title}
              onInput={(e) => setForm({ ...form, title: valueOf(e) })}
            />
          </Field>
          <Field
            id={`${id}-text`}
            label="Answer"
            hint="Write it as you would tell a visitor. It is added to the agent’s knowledge and used at once."
          >
            <textarea
              id={`${id}-text`}
              rows={5}
              required
              aria-describedby={`${id}-text-hint`}
              value={form.text}
              onInput={(e) => setForm({ ...form, text: valueOf(e) })}
              ref={answerBox}
            />
          </Field>
          {save.failure && save.failure.status !== 409 && <ErrorBox failure={save.failure} title="Not saved." />}
          <div class="form-actions">
            <Button
              type="submit"
              variant="primary"
              busy={Boolean(save.busy)}
              busyLabel="Saving…"
              disabled={!form.text.trim()}
            >
              Save answer
            </Button>
            <Button variant="ghost" disabled={Boolean(save.busy)} onClick={() => setForm(undefined)}>
              Cancel
            </Button>
          </div>
        </form>
      )}
    </li>
  );
}
