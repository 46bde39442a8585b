import { useEffect, useRef, useState } from 'preact/hooks';
import type { MediaSession, MediaSessionList, ParticipantDayMinutes, ProjectUsage, RoomList, RtcRoom, TokenDayCount, UsageCost } from '@rtc/protocol';
import { api } from '../api.ts';
import { ErrorText, Field, formatTime, TableScroll, useAction } from '../ui.tsx';
import { onTestRoomChange } from './test-room.tsx';

/** The live figures are read this often while the page is visible (docs/console.md, "Sessions and usage"). */
const LIVE_POLL_MS = 2000;
/** The usage per day and its cost, this often. */
const USAGE_POLL_MS = 15_000;
const SESSIONS_PAGE = 10;

const KIND_NAMES: Readonly<Record<string, string>> = {
  audio: 'Audio', video_sd: 'Video SD', video_hd: 'Video HD', video_full_hd: 'Video Full HD', video_2k_plus: 'Video 2K+', turn_relay: 'TURN relay',
};
const kindName = (kind: string): string => KIND_NAMES[kind] ?? kind;

function money(minor: number, units: number, currency: string): string {
  return `${(minor / 10 ** units).toFixed(units)} ${currency}`;
}

function duration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s} s` : `${s} s`;
}

/**
 * Calls `read` now, every `everyMs` while the page is visible (never two at once), at once when the
 * page becomes visible again and when the test room's call changes.
 */
function usePoll(read: () => Promise<void>, everyMs: number, deps: readonly unknown[]): void {
  const latest = useRef(read);
  latest.current = read;
  useEffect(() => {
    let running = false;
    const tick = (): void => {
      if (running || document.visibilityState !== 'visible') return;
      running = true;
      void latest.current().finally(() => { running = false; });
    };
    tick();
    const timer = setInterval(tick, everyMs);
    document.addEventListener('visibilitychange', tick);
    const unsubscribe = onTestRoomChange(tick);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', tick);
      unsubscribe();
    };
  }, deps);
}

/**
 * The project's live rooms and participants, its session history, its tokens and participant minutes
 * per day and what those minutes would cost on its plan (docs/console.md, "Sessions and usage").
 */
export function UsageSection({ projectId }: { projectId: string }) {
  const [rooms, setRooms] = useState<readonly RtcRoom[] | undefined>(undefined);
  const [usage, setUsage] = useState<ProjectUsage | undefined>(undefined);
  const live = useAction();
  const load = useAction();
  usePoll(() => live.run(async () => setRooms((await api<RoomList>('GET', `/v1/projects/${projectId}/rooms`)).rooms)), LIVE_POLL_MS, [projectId]);
  usePoll(() => load.run(async () => setUsage(await api<ProjectUsage>('GET', `/v1/projects/${projectId}/usage`))), USAGE_POLL_MS, [projectId]);
  const participants = rooms?.reduce((n, r) => n + r.participants.length, 0) ?? 0;
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Sessions and usage</h1>
      <p class="lead">What is live in the project now, who joined which room, and the tokens and participant minutes of the last
        14 days with what they would cost.</p>
      <section aria-labelledby="live-title">
        <h2 id="live-title">Live now</h2>
        <ErrorText error={live.error} />
        {rooms && (
          <p data-testid="live-summary" role="status">Live now: {rooms.length} room{rooms.length === 1 ? '' : 's'}, {participants}{' '}
            participant{participants === 1 ? '' : 's'}</p>
        )}
        <ul>
          {rooms?.map((r) => <li key={r.room_id}><strong>{r.room_id}</strong>: {r.participants.map((p) => p.user_id).join(', ')}</li>)}
        </ul>
      </section>
      <ErrorText error={load.error} />
      {usage && <CostCard cost={usage.cost} />}
      <SessionHistory projectId={projectId} />
      {usage && <PerDay tokens={usage.tokens_per_day} minutes={usage.participant_minutes_per_day} />}
    </section>
  );
}

function CostCard({ cost }: { cost: UsageCost }) {
  const minutes = Object.entries(cost.usage).filter(([, n]) => n > 0);
  return (
    <section aria-labelledby="cost-title" class="card">
      <h2 id="cost-title">Cost of the period</h2>
      <p data-testid="period-cost"><strong>{money(cost.total_minor, cost.minor_units, cost.currency)}</strong> on the {cost.plan} plan
        {cost.plan_source === 'default' ? ' (no subscription: the default plan)' : ''}, {cost.from_day} to {cost.to_day} (UTC).</p>
      <p>{minutes.length === 0 ? 'No participant minutes yet' : minutes.map(([k, n]) => `${kindName(k)}: ${n} min`).join(', ')}.
        Monthly fee {money(cost.plan_fee_minor, cost.minor_units, cost.currency)}, minutes above the included ones{' '}
        {money(cost.usage_subtotal_minor, cost.minor_units, cost.currency)}
        {cost.discount_minor > 0 ? `, volume discount ${money(cost.discount_minor, cost.minor_units, cost.currency)}` : ''}; priced
        with price list {cost.price_list_version} as a quote would be. See the <a href="#/pricing">pricing page</a> for the plans and rates.</p>
    </section>
  );
}

function PerDay({ tokens, minutes }: { tokens: readonly TokenDayCount[]; minutes: readonly ParticipantDayMinutes[] }) {
  const byDay = new Map(minutes.map((m) => [m.day, m]));
  const most = Math.max(1, ...tokens.map((d) => d.tokens));
  return (
    <section aria-labelledby="per-day-title">
      <h2 id="per-day-title">Tokens and participant minutes per day (UTC)</h2>
      <TableScroll label="Tokens and participant minutes per day">
        <table class="usage" aria-labelledby="per-day-title">
          <thead><tr><th scope="col">Day</th><th scope="col">Tokens</th><th scope="col">Participant minutes</th><th scope="col">Minutes by kind</th></tr></thead>
          <tbody>
            {[...tokens].reverse().map((d) => {
              const m = byDay.get(d.day);
              const kinds = Object.entries(m?.minutes_by_kind ?? {}).filter(([, n]) => n > 0);
              return (
                <tr key={d.day}>
                  <td class="nowrap">{d.day}</td>
                  <td data-testid={`tokens-${d.day}`}><span class="bar" style={{ width: `${(d.tokens / most) * 6}rem` }} aria-hidden="true" />{d.tokens}</td>
                  <td data-testid={`minutes-${d.day}`}>{m?.participant_minutes ?? 0}</td>
                  <td>{kinds.length === 0 ? '–' : kinds.map(([k, n]) => `${kindName(k)} ${n}`).join(', ')}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

function SessionHistory({ projectId }: { projectId: string }) {
  const [sessions, setSessions] = useState<readonly MediaSession[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [room, setRoom] = useState('');
  const [filter, setFilter] = useState('');
  const list = useAction();
  const more = useAction();
  const shown = useRef(sessions);
  shown.current = sessions;
  const wanted = useRef(filter);
  wanted.current = filter;
  const page = (roomId: string, after: string | null): Promise<MediaSessionList> => {
    const query = new URLSearchParams({ limit: String(SESSIONS_PAGE) });
    if (roomId) query.set('room_id', roomId);
    if (after) query.set('cursor', after);
    return api<MediaSessionList>('GET', `/v1/projects/${projectId}/sessions?${query}`);
  };
  // the first page follows the live figures: a join or leave shows within their refresh; rows loaded
  // with "Load more" stay, the first page's updated in place and newer ones put on top
  useEffect(() => {
    shown.current = [];
    setSessions([]);
    setCursor(null);
  }, [projectId, filter]);
  usePoll(() => list.run(async () => {
    const first = await page(filter, null);
    // an answer for the filter before the last change is dropped
    if (wanted.current !== filter) return;
    const held = shown.current;
    if (held.length <= SESSIONS_PAGE) {
      setSessions(first.sessions);
      setCursor(first.next_cursor);
      return;
    }
    const fresh = new Map(first.sessions.map((s) => [s.participant_id, s]));
    const kept = new Set(held.map((s) => s.participant_id));
    setSessions([...first.sessions.filter((s) => !kept.has(s.participant_id)), ...held.map((s) => fresh.get(s.participant_id) ?? s)]);
  }), LIVE_POLL_MS, [projectId, filter]);
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Session history</h2>
      <form class="inline" role="search" aria-label="Filter the sessions" onSubmit={(e) => { e.preventDefault(); setFilter(room.trim()); }}>
        <Field label="Room"><input maxLength={64} value={room} placeholder="every room" onInput={(e) => setRoom(e.currentTarget.value)} /></Field>
        <button type="submit">Filter</button>
        {filter && <button type="button" class="secondary" onClick={() => { setRoom(''); setFilter(''); }}>Show every room</button>}
      </form>
      <ErrorText error={list.error ?? more.error} />
      {sessions.length === 0 && !list.busy && <p>No session {filter ? `in ${filter} ` : ''}in the last 90 days.</p>}
      {sessions.length > 0 && (
        <TableScroll label="Sessions">
          <table aria-labelledby="sessions-title">
            <thead><tr><th scope="col">Who</th><th scope="col">Room</th><th scope="col">Joined</th><th scope="col">Left</th><th scope="col">Why</th>
              <th scope="col">Duration</th><th scope="col">Priced as</th></tr></thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.participant_id}>
                  <td data-label="Who" class="nowrap">{s.user_id}</td>
                  <td data-label="Room" class="nowrap">{s.room_id}</td>
                  <td data-label="Joined">{formatTime(s.joined_at)}</td>
                  <td data-label="Left">{s.left_at === null ? 'in the room' : formatTime(s.left_at)}</td>
                  <td data-label="Why">{s.reason ?? '–'}</td>
                  <td data-label="Duration">{duration(s.duration_seconds)}</td>
                  <td data-label="Priced as">{s.usage_kind === null ? '–' : kindName(s.usage_kind)}{s.turn_relay ? ' + TURN relay' : ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {cursor && (
        <button type="button" class="secondary" disabled={more.busy} onClick={() => void more.run(async () => {
          const next = await page(filter, cursor);
          if (wanted.current !== filter) return;
          setSessions((held) => [...held, ...next.sessions.filter((s) => !held.some((h) => h.participant_id === s.participant_id))]);
          setCursor(next.next_cursor);
        })}>Load more</button>
      )}
    </section>
  );
}
