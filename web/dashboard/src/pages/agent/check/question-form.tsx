import { useEffect, useRef, useState } from 'preact/hooks';
import { agents } from '../../../api/agents';
import type { CheckQuestion, QuestionInput } from '../../../api/checks';
import type { Result } from '../../../api/client';
import { reportsApi } from '../../../api/reports';
import { Button } from '../../../ui/buttons';
import { Field, valueOf } from '../../../ui/fields';
import { Time } from '../../../ui/format';
import { Empty } from '../../../ui/page';
import { Loaded, useAction, useResource } from '../../../ui/resource';
import { ErrorBox } from '../../../ui/status';
import { useDebounced } from '../../../use-debounced';
import { questionFrom } from './model';

/** Sources offered at once in the picker; a search narrows them. */
const SOURCES_SHOWN = 6;
/** Typing pauses this long before the sources are asked again. */
const SEARCH_DELAY_MS = 300;

export interface Limits {
  questions: number;
  question_chars: number;
  note_chars: number;
}

/** The source a question is to be answered by: its id, and its title when known (null: it no longer exists). */
interface Chosen {
  id: string;
  title: string | null;
}

/**
 * Adding or editing a test question: its wording (typed, or picked from the questions visitors asked that the agent
 * could not answer), the knowledge source that should answer it (searched by title or id), and a note.
 */
export function QuestionForm(props: {
  botId: string;
  limits: Limits;
  /** Editing this question; absent: a new one. */
  editing?: CheckQuestion;
  /** A new question's wording to start from (`?question=` from "what is missing"). */
  initialQuestion?: string;
  /** A new question's note is absent when empty; an edited one's is null (removed). */
  save: (input: Omit<QuestionInput, 'note'> & { note?: string | null }) => Promise<Result<CheckQuestion>>;
  onSaved: (saved: CheckQuestion) => void;
  onCancel: () => void;
}) {
  const { editing, limits } = props;
  const key = editing ? `check-edit-${editing.id}` : 'check-new';
  const [question, setQuestion] = useState(editing?.question ?? props.initialQuestion ?? '');
  const [note, setNote] = useState(editing?.note ?? '');
  const [chosen, setChosen] = useState<Chosen | undefined>(
    editing ? { id: editing.expected_source_id, title: editing.expected_source_title } : undefined,
  );
  const [picking, setPicking] = useState(false);
  const action = useAction();
  const questionBox = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    questionBox.current?.focus();
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    if (!question.trim() || !chosen) return;
    const input = {
      question: question.trim(),
      expected_source_id: chosen.id,
      note: editing ? note.trim() || null : note.trim() || undefined,
    };
    const res = await action.run(() => props.save(input));
    if (res.ok) props.onSaved(res.value);
  }

  return (
    <form
      class="check-form"
      onSubmit={(e) => void submit(e)}
      aria-label={editing ? 'Edit the test question' : 'Add a test question'}
      data-testid="check-form"
    >
      <Field id={`${key}-question`} label="Question" hint="As a visitor would ask it.">
        <textarea
          id={`${key}-question`}
          rows={2}
          required
          maxLength={limits.question_chars}
          value={question}
          ref={questionBox}
          onInput={(e) => setQuestion(valueOf(e))}
        />
      </Field>
      {!editing && (
        <div class="check-gap-pick">
          <Button small variant="ghost" aria-expanded={picking} onClick={() => setPicking(!picking)}>
            {picking ? 'Hide what is missing' : 'Pick from what is missing'}
          </Button>
          {picking && (
            <GapPicker
              botId={props.botId}
              maxChars={limits.question_chars}
              onPick={(text) => {
                setQuestion(questionFrom(text, limits.question_chars));
                setPicking(false);
                questionBox.current?.focus();
              }}
            />
          )}
        </div>
      )}
      <SourcePicker botId={props.botId} name={`${key}-source`} chosen={chosen} onChoose={setChosen} />
      <Field id={`${key}-note`} label="Note" optional hint="For the team: why this question matters.">
        <input id={`${key}-note`} maxLength={limits.note_chars} value={note} onInput={(e) => setNote(valueOf(e))} />
      </Field>
      {action.failure && <ErrorBox failure={action.failure} title="Not saved." />}
      <div class="form-actions">
        <Button
          type="submit"
          variant="primary"
          busy={Boolean(action.busy)}
          busyLabel="Saving…"
          disabled={!question.trim() || !chosen}
        >
          {editing ? 'Save question' : 'Add question'}
        </Button>
        <Button variant="ghost" disabled={Boolean(action.busy)} onClick={props.onCancel}>
          Cancel
        </Button>
      </div>
    </form>
  );
}

/**
 * The source that should answer the question: the agent's newest sources, or those whose title or id contain what is
 * typed, as radio buttons. The chosen one stays offered (first) whatever the search shows, and says if it is gone.
 */
function SourcePicker(props: { botId: string; name: string; chosen?: Chosen; onChoose: (c: Chosen) => void }) {
  const { chosen } = props;
  const [typed, setTyped] = useState('');
  const q = useDebounced(typed.trim(), SEARCH_DELAY_MS);
  const found = useResource(() => agents.knowledge(props.botId, { q, limit: SOURCES_SHOWN }), [props.botId, q]);
  const listed = found.data?.sources ?? [];
  const options: Chosen[] = [
    ...(chosen && !listed.some((s) => s.source_id === chosen.id) ? [chosen] : []),
    ...listed.map((s) => ({ id: s.source_id, title: s.title })),
  ];
  return (
    <fieldset class="check-sources" data-testid="source-picker">
      <legend>Source that should answer it</legend>
      <input
        type="search"
        class="check-sources-search"
        aria-label="Find a source by title or id"
        placeholder="Find a source by title or id"
        value={typed}
        onInput={(e) => setTyped(valueOf(e))}
      />
      {found.state === 'error' && <ErrorBox failure={found.failure} onRetry={found.retry} />}
      {options.length === 0 && found.state === 'ready' ? (
        <p class="muted small">{q ? `No source matches “${q}”.` : 'The agent has no knowledge yet.'}</p>
      ) : (
        <ul class="check-source-options">
          {options.map((o) => (
            <li key={o.id}>
              <label class="check-source-option">
                <input
                  type="radio"
                  name={props.name}
                  value={o.id}
                  checked={chosen?.id === o.id}
                  onChange={() => props.onChoose(o)}
                />
                <span>
                  <span class="cell-main">{o.title ?? o.id}</span>
                  <span class="cell-sub">{o.title === null ? `${o.id} · this source no longer exists` : o.id}</span>
                </span>
              </label>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}

/** The questions visitors asked that the agent could not answer (the last 30 days), to start a test question from. */
function GapPicker(props: { botId: string; maxChars: number; onPick: (question: string) => void }) {
  const gaps = useResource(() => reportsApi.gaps(props.botId, 30), [props.botId]);
  return (
    <div class="check-gaps" data-testid="check-gaps">
      <Loaded resource={gaps.resource} retry={gaps.retry} label="Loading what is missing…">
        {(data) =>
          data.groups.length === 0 ? (
            <Empty title="Nothing is missing">
              <p>No question of the last {data.days} days is waiting for an answer.</p>
            </Empty>
          ) : (
            <ul class="list">
              {data.groups.map((g) => (
                <li key={g.run_ids.join(' ')} class="list-row" data-testid="check-gap">
                  <div>
                    <span class="cell-main">{questionFrom(g.question, props.maxChars)}</span>
                    <span class="cell-sub">
                      Asked {g.count === 1 ? 'once' : `${g.count} times`} · last <Time ms={g.last_asked_at} relative />
                    </span>
                  </div>
                  <Button small onClick={() => props.onPick(g.question)}>
                    Use this question
                  </Button>
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </div>
  );
}
