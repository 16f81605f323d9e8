import { useRef, useState } from 'preact/hooks';
import { type FoundPassage, agents } from '../../api/agents';
import { Button } from '../../ui/buttons';
import { valueOf } from '../../ui/fields';
import { Empty, Panel } from '../../ui/page';
import { useAction } from '../../ui/resource';
import { ErrorBox } from '../../ui/status';
import { PassageList } from './passage-list';
import type { TabProps } from './tab';

/** The longest question the search takes (lib/limits.ts, `knowledgeSearch.queryChars`): a chat message's. */
const MAX_QUESTION_CHARS = 8000;

/**
 * "Test a question": what the agent reads for a question, before a visitor asks it. The passages a chat turn asking it
 * alone would give the model, best first, with their source, heading path, page and score
 * (`POST …/knowledge/search`). A follow-up in a conversation is searched with its context; the test chat shows those.
 */
export function TestQuestion(props: TabProps) {
  const [question, setQuestion] = useState('');
  const [found, setFound] = useState<{ question: string; passages: FoundPassage[] } | undefined>();
  const action = useAction();
  const input = useRef<HTMLInputElement>(null);

  async function submit(event: Event) {
    event.preventDefault();
    const asked = question.trim();
    if (!asked || action.busy) return;
    const res = await action.run(() => agents.searchKnowledge(props.bot.id, asked));
    if (res.ok) setFound({ question: asked, passages: res.value.passages });
  }

  return (
    <Panel
      title="Test a question"
      id="test-question"
      description="See which passages the agent reads for a question, best first: what it answers from."
    >
      <form class="test-question-form" onSubmit={(e) => void submit(e)}>
        <label for="test-question-input" class="visually-hidden">
          Question
        </label>
        <input
          id="test-question-input"
          ref={input}
          type="search"
          maxLength={MAX_QUESTION_CHARS}
          placeholder="A question a visitor would ask, e.g. How much is delivery?"
          value={question}
          onInput={(e) => setQuestion(valueOf(e))}
        />
        <Button type="submit" variant="primary" busy={Boolean(action.busy)} busyLabel="Searching…">
          Show passages
        </Button>
      </form>
      {action.failure && <ErrorBox failure={action.failure} />}
      {found && (
        <div class="test-question-result" aria-live="polite" data-testid="test-question-result">
          {found.passages.length ? (
            <>
              <p class="muted small">
                {found.passages.length === 1 ? 'The passage' : `The ${found.passages.length} passages`} the agent reads
                for “{found.question}”, best first. A follow-up in a conversation is searched with what came before it.
              </p>
              <PassageList
                botId={props.bot.id}
                passages={found.passages}
                label="Passages for the question"
                testId="test-question-passages"
              />
            </>
          ) : (
            <Empty title={`Nothing in the knowledge matches “${found.question}”`}>
              <p>
                The agent would say it does not know. Add a text or a file that answers it, or ask with the words your
                sources use.
              </p>
            </Empty>
          )}
        </div>
      )}
    </Panel>
  );
}
