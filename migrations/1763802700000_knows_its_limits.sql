-- Up Migration
-- An agent that cannot answer from its knowledge says so (docs/decisions/059-agent-knows-its-limits.md):
-- with handoff on, it offers a person (`offer`) or hands the conversation over at once (`hand_over`), by the owner's
-- choice. Why a conversation was last handed over: `requested` (the visitor or the integrator asked), `unanswered`
-- (the agent could not answer), `operator` (a person took it over).
ALTER TABLE bots ADD COLUMN when_unanswered text NOT NULL DEFAULT 'offer' CHECK (when_unanswered IN ('offer', 'hand_over'));
ALTER TABLE conversations ADD COLUMN escalation_reason text CHECK (escalation_reason IN ('requested', 'unanswered', 'operator'));

-- Down Migration
ALTER TABLE conversations DROP COLUMN escalation_reason;
ALTER TABLE bots DROP COLUMN when_unanswered;
