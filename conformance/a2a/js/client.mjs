// Drives a mosh herd serve member endpoint with the official @a2a-js/sdk 0.3.x client:
// discover → send → get → answer an input-required task → cancel → the error cases.
//
//   A2A_BASE=http://127.0.0.1:7683/a2a/members/api/ A2A_TOKEN=$(mosh herd token --show) node client.mjs
//
// A2A_BASE    the member's base URL, with its trailing slash (a2a-js resolves the card path
//             relative to it)
// A2A_TOKEN   the herd token or a credential from POST /auth
// A2A_ASK     a prompt that makes the member stop and ask (default "?ask which database")
// A2A_ANSWER  the answer typed back (default "postgres")
// A2A_LONG    a prompt that keeps the member working long enough to be canceled
//             (default "run the whole test suite")
// A2A_SETTLE  when set, wait (polling tasks/get, as a non-streaming client does) for each task
//             to finish before the next message, for members that take one prompt at a time
// A2A_RECORD  optional file: every HTTP exchange is appended as one JSON line
//             {method, url, status, request, response} so a Go test can validate each answer
//             against the A2A JSON Schema
//
// Prints PASS/FAIL per check. Exit 0: all passed; 1: a check failed; 2: could not run at all.
import { appendFileSync } from 'node:fs';
import {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory,
  TaskNotFoundError, TaskNotCancelableError, ContentTypeNotSupportedError,
} from '@a2a-js/sdk/client';

const base = process.env.A2A_BASE;
const token = process.env.A2A_TOKEN;
if (!base || !token) {
  console.error('set A2A_BASE (member URL ending in /) and A2A_TOKEN (the herd token)');
  process.exit(2);
}
const askText = process.env.A2A_ASK || '?ask which database';
const answerText = process.env.A2A_ANSWER || 'postgres';
const longText = process.env.A2A_LONG || 'run the whole test suite';
const settle = !!process.env.A2A_SETTLE;
const record = process.env.A2A_RECORD;

async function recordingFetch(url, init = {}) {
  const headers = new Headers(init.headers || {});
  headers.set('Authorization', `Bearer ${token}`);
  const resp = await fetch(url, { ...init, headers });
  if (record) {
    const text = await resp.clone().text();
    appendFileSync(record, JSON.stringify({
      method: init.method || 'GET', url: String(url), status: resp.status,
      request: typeof init.body === 'string' ? init.body : null, response: text,
    }) + '\n');
  }
  return resp;
}

let failed = 0;
function check(name, ok, detail = '') {
  console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${ok || !detail ? '' : ': ' + detail}`);
  if (!ok) failed++;
}
async function expectError(name, fn, cls) {
  try {
    await fn();
    check(name, false, `no error, want ${cls.name}`);
  } catch (e) {
    check(name, e instanceof cls, `${e?.constructor?.name}: ${e?.message}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const terminal = ['completed', 'canceled', 'failed', 'rejected'];
// finished polls tasks/get until the task is terminal (at most ~20 s) and returns its state.
async function finished(client, id) {
  let state = '';
  for (let i = 0; i < 200; i++) {
    state = (await client.getTask({ id })).status.state;
    if (terminal.includes(state)) break;
    await sleep(100);
  }
  return state;
}
const text = (s, extra = {}) => ({
  message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'text', text: s }], ...extra },
});

async function main() {
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: recordingFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: recordingFetch }),
    clientConfig: { polling: true },
  }));
  const client = await factory.createFromUrl(base);
  const card = await new DefaultAgentCardResolver({ fetchImpl: recordingFetch }).resolve(base);
  check('discover: card is A2A 0.3.0 over JSON-RPC', card.protocolVersion === '0.3.0' && card.preferredTransport === 'JSONRPC',
    JSON.stringify({ protocolVersion: card.protocolVersion, preferredTransport: card.preferredTransport }));
  check('discover: streaming and push declared off', card.capabilities?.streaming === false && card.capabilities?.pushNotifications === false);

  const sent = await client.sendMessage(text('port the auth routes'));
  check('send: returns a task at once', sent.kind === 'task' && ['submitted', 'working'].includes(sent.status?.state),
    JSON.stringify(sent.status));
  const got = await client.getTask({ id: sent.id, historyLength: 1 });
  check('get: same task, history capped at 1', got.id === sent.id && Array.isArray(got.history) && got.history.length <= 1,
    `history ${JSON.stringify(got.history)}`);
  if (settle) {
    const st = await finished(client, sent.id);
    check('get: the first task completes', st === 'completed', st);
  }

  const asked = await client.sendMessage(text(askText));
  let state = asked.status?.state;
  for (let i = 0; i < 200 && state !== 'input-required'; i++) {
    await sleep(100);
    state = (await client.getTask({ id: asked.id })).status.state;
  }
  check('input-required: the member stopped to ask', state === 'input-required', state);
  const answered = await client.sendMessage(text(answerText, { taskId: asked.id }));
  check('answer: the follow-up resumes the same task', answered.id === asked.id && answered.status.state !== 'input-required',
    JSON.stringify(answered.status));
  if (settle) {
    const st = await finished(client, asked.id);
    check('answer: the answered task completes', st === 'completed', st);
  }

  const doomed = await client.sendMessage(text(longText));
  const canceled = await client.cancelTask({ id: doomed.id });
  check('cancel: task canceled', canceled.status?.state === 'canceled', JSON.stringify(canceled.status));
  await expectError('cancel again: not cancelable', () => client.cancelTask({ id: doomed.id }), TaskNotCancelableError);
  await expectError('get unknown task: not found', () => client.getTask({ id: 'no-such-task' }), TaskNotFoundError);
  await expectError('file part: content type not supported', () => client.sendMessage({
    message: { kind: 'message', role: 'user', messageId: crypto.randomUUID(), parts: [{ kind: 'file', file: { uri: 'file:///etc/passwd' } }] },
  }), ContentTypeNotSupportedError);

  const anon = await fetch(new URL('.', card.url), {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: sent.id } }),
  });
  check('no credentials: 401 with a Bearer challenge', anon.status === 401 && /Bearer/.test(anon.headers.get('www-authenticate') || ''),
    `HTTP ${anon.status}`);
  const raw = await recordingFetch(card.url, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 42, method: 'tasks/get', params: { id: sent.id } }),
  });
  const rawBody = await raw.json();
  check('numeric id echoed as a number', rawBody.id === 42, JSON.stringify(rawBody.id));
}

try {
  await main();
} catch (e) {
  console.error(`could not run: ${e?.stack || e}`);
  process.exit(2);
}
console.log(failed ? `${failed} check(s) failed` : 'all checks passed');
process.exit(failed ? 1 : 0);
