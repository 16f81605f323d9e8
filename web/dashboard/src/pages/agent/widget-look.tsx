import { useState } from 'preact/hooks';
import { type WidgetLook, agents } from '../../api/agents';
import { Button } from '../../ui/buttons';
import { Field, valueOf } from '../../ui/fields';
import { Panel } from '../../ui/page';
import { useAction } from '../../ui/resource';
import { ErrorBox } from '../../ui/status';
import type { TabProps } from './tab';
import { LIMITS } from '../../../../shared/contract';

const DEFAULT_LOOK: WidgetLook = {
  color: '#4f46e5',
  greeting: null,
  position: 'right',
  team_name: null,
  avatar_url: null,
};

/**
 * How the widget looks on the owner's site (docs/widget.md, "Its look"): the accent colour, the greeting, the corner,
 * the team's name on people's replies and an avatar. Saved together; an empty field goes back to the widget's own.
 */
export function WidgetLookPanel(props: TabProps & { readOnly: boolean }) {
  const { bot } = props;
  const look = bot.widget_look ?? DEFAULT_LOOK;
  const [color, setColor] = useState(look.color);
  const [greeting, setGreeting] = useState(look.greeting ?? '');
  const [position, setPosition] = useState(look.position);
  const [teamName, setTeamName] = useState(look.team_name ?? '');
  const [avatarUrl, setAvatarUrl] = useState(look.avatar_url ?? '');
  const [status, setStatus] = useState('');
  const save = useAction();
  const [problems, setProblems] = useState<{ color?: string; avatar?: string }>({});

  async function submit(event: Event) {
    event.preventDefault();
    setStatus('');
    // Said here, before the API would refuse them, next to the field.
    const found = {
      color: /^#[0-9a-fA-F]{6}$/.test(color) ? undefined : 'A colour as #rrggbb, for example #0f766e.',
      avatar:
        !avatarUrl.trim() || /^https:\/\/\S+$/i.test(avatarUrl.trim()) ? undefined : 'An https address of an image.',
    };
    setProblems(found);
    if (found.color || found.avatar) return;
    const res = await save.run(() =>
      agents.update(bot.id, {
        widget_look: {
          color,
          greeting: greeting.trim() || null,
          position,
          team_name: teamName.trim() || null,
          avatar_url: avatarUrl.trim() || null,
        },
      }),
    );
    if (res.ok) {
      props.onChange(res.value);
      setStatus('The widget’s look is saved: pages show it from their next load.');
    }
  }

  return (
    <Panel
      title="Look"
      id="widget-look"
      description="How the widget appears on your site. Visitors see a change the next time a page loads."
    >
      <form class="form" onSubmit={(e) => void submit(e)}>
        <fieldset disabled={props.readOnly}>
          <Field
            id="look-color"
            label="Colour"
            hint="The launcher, the header, the visitor’s messages and buttons"
            error={problems.color}
          >
            <div class="input-row">
              <input
                id="look-color-picker"
                type="color"
                aria-label="Pick the colour"
                value={color}
                onInput={(e) => setColor(valueOf(e))}
              />
              <input
                id="look-color"
                spellcheck={false}
                value={color}
                aria-describedby="look-color-hint"
                aria-invalid={problems.color ? true : undefined}
                onInput={(e) => setColor(valueOf(e))}
              />
            </div>
          </Field>
          <Field id="look-greeting" label="Greeting" optional hint="The first words a visitor reads in an empty chat">
            <textarea
              id="look-greeting"
              rows={2}
              maxLength={LIMITS.widget.greetingChars}
              placeholder="Hi! Ask us anything — we are here to help."
              value={greeting}
              onInput={(e) => setGreeting(valueOf(e))}
            />
          </Field>
          <fieldset>
            <legend>Corner</legend>
            <label class="check">
              <input
                type="radio"
                name="look-position"
                checked={position === 'right'}
                onChange={() => setPosition('right')}
              />
              Bottom right
            </label>
            <label class="check">
              <input
                type="radio"
                name="look-position"
                checked={position === 'left'}
                onChange={() => setPosition('left')}
              />
              Bottom left
            </label>
          </fieldset>
          <Field
            id="look-team"
            label="Team name"
            optional
            hint="Who a person’s reply is from: “From Acme support” (without it, “From the team”)"
          >
            <input
              id="look-team"
              maxLength={LIMITS.widget.teamNameChars}
              value={teamName}
              onInput={(e) => setTeamName(valueOf(e))}
            />
          </Field>
          <Field
            id="look-avatar"
            label="Avatar"
            optional
            hint="The https address of a square image shown beside the agent’s name"
            error={problems.avatar}
          >
            <input
              id="look-avatar"
              inputMode="url"
              placeholder="https://shop.example.com/team.png"
              aria-invalid={problems.avatar ? true : undefined}
              value={avatarUrl}
              onInput={(e) => setAvatarUrl(valueOf(e))}
            />
          </Field>
          {!props.readOnly && (
            <Button type="submit" variant="primary" busy={Boolean(save.busy)} busyLabel="Saving…">
              Save look
            </Button>
          )}
        </fieldset>
      </form>
      {save.failure && <ErrorBox failure={save.failure} />}
      <p class="muted small" aria-live="polite" data-testid="look-status">
        {status}
      </p>
    </Panel>
  );
}
