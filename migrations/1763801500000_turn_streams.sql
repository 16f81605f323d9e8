-- Up Migration
-- What each streamed turn has published so far (docs/decisions/014-streams-that-stay-true.md): written in the same
-- statement as the notification that carries it, so a retry on another worker reads exactly what any visitor saw and
-- continues after it. `owner` is the attempt that may append (a retry claims it); `step` is the model call of the
-- turn (a turn with tool calls has several), `step_start` where that call's text starts. Offsets and lengths are in
-- UTF-16 units, as the workers and the API count them. UNLOGGED: after a Postgres crash the rows are gone, and a
-- retry then starts the step afresh (the API tells the visitor with an error frame if the text differs).
CREATE UNLOGGED TABLE turn_streams (
  turn_id     text PRIMARY KEY,
  owner       uuid NOT NULL,
  step        integer NOT NULL DEFAULT 0,
  step_start  integer NOT NULL DEFAULT 0,
  len         integer NOT NULL DEFAULT 0,
  text        text NOT NULL DEFAULT '',
  complete    boolean NOT NULL DEFAULT false,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX turn_streams_updated_idx ON turn_streams (updated_at);

-- Down Migration
DROP TABLE turn_streams;
