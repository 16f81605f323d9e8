import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Conversation, State } from './conversation';
import { ACCEPTED_IMAGES } from './wording';
import { ChatIcon, CloseIcon, ImageIcon, NoteIcon, PersonIcon, SendIcon } from '../../shared/icons';
import { MessageView, NoticeView } from './timeline';
import { SatisfactionCard } from './satisfaction';
import { accentVariables } from './look';
import { ContactForm } from './contact-form';
import { awayLine, awayPrompt } from './hours';

/** The conversation's state, re-read whenever it changes. */
function useConversation(conversation: Conversation): State {
  const [state, setState] = useState(conversation.state);
  useEffect(() => {
    setState(conversation.state);
    return conversation.subscribe(() => setState(conversation.state));
  }, [conversation]);
  return state;
}

/** Handed over outside the team's hours, and they are not back yet: nobody is coming now. */
function teamAway(state: State): boolean {
  const backAt = state.afterHours?.backAt;
  return state.status === 'waiting' && !!state.afterHours && (backAt === null || backAt! > Date.now());
}

/** The line under the title: where the conversation stands with a person (spec, Poll response). */
function statusLine(state: State): string {
  if (state.status === 'operator') return 'You are chatting with a person';
  if (state.status === 'waiting' && state.operatorHere) return 'Someone from the team is reading';
  if (teamAway(state)) return awayLine(state.afterHours!.backAt);
  if (state.status === 'waiting') return 'Waiting for a person…';
  if (state.unavailable) return 'Unavailable';
  if (!state.config) return 'Connecting…';
  return 'We usually answer right away';
}

export function Widget(props: { conversation: Conversation; resolveUrl: (url: string) => string }) {
  const { conversation } = props;
  const state = useConversation(conversation);
  const launcher = useRef<HTMLButtonElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const log = useRef<HTMLDivElement>(null);
  const wasOpen = useRef(state.open);
  const [contactOpen, setContactOpen] = useState(false);

  // Nobody is there to answer the handoff: the contact form is offered at once.
  useEffect(() => {
    if (!state.contactSuggested) return;
    setContactOpen(true);
    conversation.contactOffered();
  }, [state.contactSuggested]);

  // Opening moves focus to the message box (not when the page asked for the panel open at load).
  useEffect(() => {
    if (state.open && !wasOpen.current) input.current?.focus();
    wasOpen.current = state.open;
  }, [state.open]);

  /** Closing from inside the panel returns focus to the launcher. */
  const close = () => {
    conversation.setOpen(false);
    launcher.current?.focus();
  };

  // The newest message stays in view while the answer grows, unless the visitor scrolled up to read.
  const stick = useRef(true);
  useLayoutEffect(() => {
    const el = log.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [state.items, state.awaitingAnswer, state.operatorTyping, state.open]);

  const botName = state.config?.bot.name || 'Chat';
  const look = state.config?.look;
  const human = state.status === 'waiting' || state.status === 'operator';
  const canHandoff = !!state.config?.handoff_enabled && state.status === 'bot';
  const away = teamAway(state);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Escape') {
      e.stopPropagation();
      close();
    }
  };

  return (
    <div
      class={look?.position === 'left' ? 'root left' : 'root'}
      style={look ? accentVariables(look.color) : undefined}
    >
      <div
        class="panel"
        id="ap-panel"
        role="dialog"
        aria-labelledby="ap-title"
        hidden={!state.open}
        onKeyDown={onKeyDown}
      >
        <header class="header">
          <div class="header-who">
            {look?.avatar_url && <img class="header-avatar" src={look.avatar_url} alt="" />}
            <div class="header-text">
              <h2 id="ap-title" class="title">
                {botName}
              </h2>
              <p class="subtitle" role="status">
                {human && <span class={away ? 'dot dot-away' : 'dot'} aria-hidden="true" />}
                {statusLine(state)}
              </p>
            </div>
          </div>
          <button type="button" class="icon-button header-close" aria-label="Close chat" onClick={close}>
            <CloseIcon />
          </button>
        </header>

        <div
          class="log"
          role="log"
          aria-live="polite"
          aria-label="Conversation"
          ref={log}
          tabIndex={0}
          onScroll={(e) => {
            const el = e.currentTarget;
            stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
          }}
        >
          {state.items.length === 0 && !state.unavailable && (
            <p class="empty">{look?.greeting || 'Hi! Ask us anything — we are here to help.'}</p>
          )}
          {state.items.map((item) =>
            item.kind === 'message' ? (
              <MessageView
                key={item.key}
                item={item}
                botName={botName}
                teamName={look?.team_name ?? null}
                resolveUrl={props.resolveUrl}
                onRate={(key, rating) => void conversation.rate(key, rating)}
                onAskPerson={() => void conversation.handoff()}
              />
            ) : (
              <NoticeView key={item.key} item={item} onAction={() => void conversation.send()} />
            ),
          )}
          {state.satisfaction && <SatisfactionCard conversation={conversation} asked={state.satisfaction} />}
          {state.awaitingAnswer && (
            <div class="typing">
              <span class="sr-only">The assistant is writing…</span>
              <span class="dot-anim" aria-hidden="true" />
              <span class="dot-anim" aria-hidden="true" />
              <span class="dot-anim" aria-hidden="true" />
            </div>
          )}
          {state.operatorTyping && <p class="typing-line">Someone from the team is typing…</p>}
          {state.unavailable && (
            <div class="notice notice-error unavailable" role="alert">
              <span class="notice-mark" aria-hidden="true">
                !
              </span>
              <span class="notice-text">{state.unavailable}</span>
              <button type="button" class="link" onClick={() => void conversation.start()}>
                Try again
              </button>
            </div>
          )}
        </div>

        {contactOpen ? (
          <ContactForm
            conversation={conversation}
            prompt={away ? awayPrompt(state.afterHours!.backAt) : undefined}
            onDone={() => setContactOpen(false)}
          />
        ) : (
          state.config && (
            <div class="actions">
              {canHandoff && (
                <button type="button" class="chip" onClick={() => void conversation.handoff()}>
                  <PersonIcon />
                  Talk to a person
                </button>
              )}
              <button type="button" class="chip" onClick={() => setContactOpen(true)}>
                <NoteIcon />
                Leave your contact
              </button>
            </div>
          )
        )}

        <Composer conversation={conversation} state={state} input={input} />
      </div>

      <button
        type="button"
        class="launcher"
        ref={launcher}
        aria-label={`Chat with ${botName === 'Chat' ? 'us' : botName}`}
        aria-expanded={state.open ? 'true' : 'false'}
        aria-controls="ap-panel"
        onClick={() => (state.open ? close() : conversation.setOpen(true))}
      >
        {state.open ? <CloseIcon size={24} /> : <ChatIcon />}
        {state.unread > 0 && !state.open && (
          <span class="badge" aria-label={`${state.unread} new`}>
            {state.unread}
          </span>
        )}
      </button>
    </div>
  );
}

function Composer(props: { conversation: Conversation; state: State; input: { current: HTMLTextAreaElement | null } }) {
  const { conversation, state } = props;
  const file = useRef<HTMLInputElement>(null);
  const disabled = !!state.unavailable;

  const submit = (e?: Event) => {
    e?.preventDefault();
    void conversation.send();
  };

  return (
    <form class="composer" onSubmit={submit}>
      <input
        ref={file}
        type="file"
        accept={ACCEPTED_IMAGES}
        class="file"
        tabIndex={-1}
        aria-hidden="true"
        onChange={(e) => {
          const el = e.currentTarget;
          const chosen = el.files?.[0];
          el.value = '';
          if (chosen) void conversation.attach(chosen);
        }}
      />
      <button
        type="button"
        class="icon-button attach"
        aria-label="Attach an image"
        title="Attach an image"
        disabled={disabled || state.uploading}
        onClick={() => file.current?.click()}
      >
        <ImageIcon />
      </button>
      <textarea
        ref={props.input}
        class="input"
        rows={1}
        aria-label="Message"
        placeholder={state.uploading ? 'Sending the image…' : 'Write a message…'}
        maxLength={8000}
        disabled={disabled}
        value={state.draft}
        onInput={(e) => {
          conversation.setDraft(e.currentTarget.value);
          conversation.typing();
        }}
        onKeyDown={(e) => {
          // Enter sends, Shift+Enter is a new line; never while an input method is composing a character.
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) submit(e);
        }}
      />
      <button
        type="submit"
        class="icon-button send"
        aria-label="Send"
        title="Send"
        disabled={disabled || state.sending || !state.draft.trim()}
      >
        <SendIcon />
      </button>
    </form>
  );
}
