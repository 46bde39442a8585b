import { useEffect, useState } from 'preact/hooks';
import type { ProjectUsage, RoomList, RtcRoom, TokenDayCount } from '@rtc/protocol';
import { api } from '../api.ts';
import { ErrorText, useAction } from '../ui.tsx';

/** The project's live rooms and participants and its tokens per day, refreshed every five seconds while shown. */
export function UsageSection({ projectId }: { projectId: string }) {
  const [rooms, setRooms] = useState<readonly RtcRoom[] | undefined>(undefined);
  const [days, setDays] = useState<readonly TokenDayCount[]>([]);
  const load = useAction();
  useEffect(() => {
    const reload = (): void => void load.run(async () => {
      const [live, usage] = await Promise.all([
        api<RoomList>('GET', `/v1/projects/${projectId}/rooms`),
        api<ProjectUsage>('GET', `/v1/projects/${projectId}/usage`),
      ]);
      setRooms(live.rooms);
      setDays(usage.tokens_per_day);
    });
    reload();
    const timer = setInterval(reload, 5000);
    return () => clearInterval(timer);
  }, [projectId]);
  const participants = rooms?.reduce((n, r) => n + r.participants.length, 0) ?? 0;
  const most = Math.max(1, ...days.map((d) => d.tokens));
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Sessions and usage</h1>
      <p class="lead">What is live in the project now and the tokens it issued per day.</p>
      <ErrorText error={load.error} />
      <h2>Live now</h2>
      {rooms && <p data-testid="live-summary">{rooms.length} room{rooms.length === 1 ? '' : 's'}, {participants} participant{participants === 1 ? '' : 's'}</p>}
      <ul>
        {rooms?.map((r) => <li key={r.room_id}><strong>{r.room_id}</strong>: {r.participants.map((p) => p.user_id).join(', ')}</li>)}
      </ul>
      <h2>Tokens issued per day (UTC)</h2>
      <table class="usage" aria-label="Tokens issued per day">
        <thead><tr><th scope="col">Day</th><th scope="col">Tokens</th></tr></thead>
        <tbody>
          {[...days].reverse().map((d) => (
            <tr key={d.day}>
              <td>{d.day}</td>
              <td data-testid={`tokens-${d.day}`}><span class="bar" style={{ width: `${(d.tokens / most) * 8}rem` }} aria-hidden="true" />{d.tokens}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
