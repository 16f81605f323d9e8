import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Conversation, State } from './conversation';
import { ChatIcon, CloseIcon, NoteIcon, PersonIcon } from '../../shared/icons';
import { MessageView, NoticeView } from './timeline';
import { SatisfactionCard } from './satisfaction';
import { accentVariables } from './look';
import { ContactForm } from './contact-form';
import { Composer } from './composer';
import { awayPrompt } from './hours';
import { statusLine, teamAway } from './wording';

/** The conversation's state, re-read whenever it changes. */
function useConversation(conversation: Conversation): State {
  const [state, setState] = useState(conversation.state);
  useEffect(() => {
    setState(conversation.state);
    return conversation.subscribe(() => setState(conversation.state));
  }, [conversation]);
  return state;
}

/**
 * The widget: a launcher in the page's corner and the panel it opens (docs/widget.md) — who answers and how things
 * stand, the conversation, a person or a contact to ask for, and the message box. It draws `conversation.state` and
 * calls the conversation's methods; the rules live there (conversation.ts).
 */
export function Widget(props: { conversation: Conversation; resolveUrl: (url: string) => string }) {
  const { conversation } = props;
  const state = useConversation(conversation);
  const launcher = useRef<HTMLButtonElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);
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

  const botName = state.config?.bot.name || 'Chat';
  const look = state.config?.look;
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
        <Header state={state} botName={botName} onClose={close} />
        <Log conversation={conversation} state={state} botName={botName} resolveUrl={props.resolveUrl} />

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

/** The panel's head: the owner's avatar, the bot's name, where the conversation stands, and Close. */
function Header(props: { state: State; botName: string; onClose: () => void }) {
  const { state } = props;
  const look = state.config?.look;
  const human = state.status === 'waiting' || state.status === 'operator';
  return (
    <header class="header">
      <div class="header-who">
        {look?.avatar_url && <img class="header-avatar" src={look.avatar_url} alt="" />}
        <div class="header-text">
          <h2 id="ap-title" class="title">
            {props.botName}
          </h2>
          <p class="subtitle" role="status">
            {human && <span class={teamAway(state) ? 'dot dot-away' : 'dot'} aria-hidden="true" />}
            {statusLine(state)}
          </p>
        </div>
      </div>
      <button type="button" class="icon-button header-close" aria-label="Close chat" onClick={props.onClose}>
        <CloseIcon />
      </button>
    </header>
  );
}

/**
 * The conversation: the greeting, messages and notices, the satisfaction question, who is writing, and why the widget
 * cannot work. The newest message stays in view while the answer grows, unless the visitor scrolled up to read.
 */
function Log(props: {
  conversation: Conversation;
  state: State;
  botName: string;
  resolveUrl: (url: string) => string;
}) {
  const { conversation, state } = props;
  const look = state.config?.look;
  const log = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  useLayoutEffect(() => {
    const el = log.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [state.items, state.awaitingAnswer, state.operatorTyping, state.open]);

  return (
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
            botName={props.botName}
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
  );
}
