import type { ResolutionReport } from '../../api/reports';
import { ThumbDownIcon, ThumbUpIcon } from '../../../../shared/icons';
import { Time, formatNumber } from '../../ui/format';
import { Panel } from '../../ui/page';
import { percent } from './model';

const SCORE_WORDS = ['very bad', 'bad', 'okay', 'good', 'very good'];

/**
 * How visitors felt about the conversations of the period: the answers they rated helpful or not, and how they rated
 * the help of a person who resolved their conversation (answers, average, each score's count, the latest comments).
 */
export function Feedback(props: {
  ratings: ResolutionReport['ratings'];
  satisfaction: ResolutionReport['satisfaction'];
}) {
  const { ratings, satisfaction: sat } = props;
  const rated = ratings.up + ratings.down;
  const most = Math.max(1, ...sat.scores);
  return (
    <div class="report-feedback">
      <Panel title="Ratings of answers" id="ratings" description="Visitors’ thumbs on the agent’s answers.">
        <dl class="report-ratings">
          <div>
            <dt>
              <ThumbUpIcon size={18} /> Helpful
            </dt>
            <dd data-testid="ratings-up">{formatNumber(ratings.up)}</dd>
          </div>
          <div>
            <dt>
              <ThumbDownIcon size={18} /> Not helpful
            </dt>
            <dd data-testid="ratings-down">{formatNumber(ratings.down)}</dd>
          </div>
        </dl>
        <p class="muted small report-note">
          {rated === 0
            ? 'No answer was rated in this period.'
            : `${percent(ratings.up, rated)} of rated answers helpful.`}
        </p>
      </Panel>
      <Panel
        title="Satisfaction"
        id="satisfaction"
        description="How visitors rated the help, asked after a person resolved their conversation."
      >
        {sat.answers === 0 ? (
          <p class="muted report-note">Nobody said how the help went in this period.</p>
        ) : (
          <>
            <p class="report-satisfaction-head">
              <span class="report-average" data-testid="satisfaction-average">
                {sat.average === null ? '—' : sat.average.toFixed(1)}
              </span>{' '}
              <span class="muted">of 5, from</span>{' '}
              <strong data-testid="satisfaction-answers">
                {formatNumber(sat.answers)} answer{sat.answers === 1 ? '' : 's'}
              </strong>
            </p>
            <table class="report-scores" data-testid="satisfaction-scores">
              <caption class="visually-hidden">How many answered each score</caption>
              <thead class="visually-hidden">
                <tr>
                  <th scope="col">Score</th>
                  <th scope="col">Answers</th>
                </tr>
              </thead>
              <tbody>
                {[5, 4, 3, 2, 1].map((score) => {
                  const n = sat.scores[score - 1] ?? 0;
                  return (
                    <tr key={score}>
                      <th scope="row">
                        {score} <span class="muted">· {SCORE_WORDS[score - 1]}</span>
                      </th>
                      <td>
                        <span class="report-score-bar" aria-hidden="true">
                          <span style={{ width: `${(n / most) * 100}%` }} />
                        </span>
                        <span class="report-score-count">{formatNumber(n)}</span>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            {sat.comments.length > 0 && (
              <>
                <h3 class="subheading report-comments-title">Latest comments</h3>
                <ul class="report-comments" data-testid="satisfaction-comments">
                  {sat.comments.map((c) => (
                    <li key={`${c.session_id}-${c.at}`}>
                      <q>{c.comment}</q>
                      <span class="muted small">
                        {' '}
                        · {c.score} of 5 · <Time ms={c.at} relative />
                      </span>
                    </li>
                  ))}
                </ul>
              </>
            )}
          </>
        )}
      </Panel>
    </div>
  );
}
