import { useEffect, useState } from 'preact/hooks';
import { api, type Room } from '../api.ts';
import { ErrorText, useAction } from '../ui.tsx';

/** The project's live rooms and participants, refreshed every five seconds while shown. */
export function UsageSection({ projectId }: { projectId: string }) {
  const [rooms, setRooms] = useState<readonly Room[] | undefined>(undefined);
  const load = useAction();
  useEffect(() => {
    const reload = (): void => void load.run(async () => setRooms((await api<{ rooms: Room[] }>('GET', `/v1/projects/${projectId}/rooms`)).rooms));
    reload();
    const timer = setInterval(reload, 5000);
    return () => clearInterval(timer);
  }, [projectId]);
  const participants = rooms?.reduce((n, r) => n + r.participants.length, 0) ?? 0;
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Live now</h2>
      <ErrorText error={load.error} />
      {rooms && <p data-testid="live-summary">{rooms.length} room{rooms.length === 1 ? '' : 's'}, {participants} participant{participants === 1 ? '' : 's'}</p>}
      <ul>
        {rooms?.map((r) => <li key={r.room_id}><strong>{r.room_id}</strong>: {r.participants.map((p) => p.user_id).join(', ')}</li>)}
      </ul>
    </section>
  );
}
