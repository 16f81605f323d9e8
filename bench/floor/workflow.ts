import { condition, defineSignal, defineUpdate, proxyLocalActivities, setHandler } from '@temporalio/workflow';

/**
 * The least a chat turn can cost through Temporal (bench/floor.ts): a conversation workflow whose update handler
 * runs one local activity that only waits as long as the model would and returns an answer-sized text (after the
 * time the activity started, for the client's hop split). The platform's turn is this plus its own work (the
 * database, the model's stream, the API's HTTP).
 */
export const turnUpdate = defineUpdate<string, [number]>('turn');
export const endSignal = defineSignal('end');

const { model } = proxyLocalActivities<{ model(ms: number): Promise<string> }>({ startToCloseTimeout: '1 minute' });

export async function floorConversation(): Promise<void> {
  let ended = false;
  setHandler(turnUpdate, (ms) => model(ms));
  setHandler(endSignal, () => {
    ended = true;
  });
  await condition(() => ended);
}
