/** `rtc projects`: the account's projects, as the stored session of `rtc login` (docs/reference/cli.md). */
import type { Project, ProjectList } from '@rtc/protocol';
import { asCustomer, exportLine, parseCommand, print, required, SESSION_FLAGS, type ClientIO } from './common.ts';
import { UsageError } from './http.ts';

function projectLine(p: Project): string {
  return `${p.id}  ${p.archived ? 'archived' : 'active  '}  ${p.name}`;
}

export async function projects(args: readonly string[], io: ClientIO): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'list') {
    const { values } = parseCommand('projects list', rest, SESSION_FLAGS, 0);
    const body = await asCustomer<ProjectList>(io, values, '/v1/projects');
    print(io, values['json'] === true, body, () => (body.projects.length === 0 ? ['no projects'] : body.projects.map(projectLine)));
    return 0;
  }
  if (sub === 'create') {
    const { values } = parseCommand('projects create', rest, {
      ...SESSION_FLAGS, name: { type: 'string' }, reuse: { type: 'boolean' }, env: { type: 'boolean' },
    }, 0);
    const name = required('projects create', values, 'name');
    // --reuse: a script run again takes the project its first run made (the oldest active one of that name)
    const existing = values['reuse'] === true
      ? (await asCustomer<ProjectList>(io, values, '/v1/projects')).projects
        .filter((p) => p.name === name && !p.archived).sort((a, b) => a.created_at - b.created_at)[0]
      : undefined;
    const body = existing ?? await asCustomer<Project>(io, values, '/v1/projects', { body: { name } });
    print(io, values['json'] === true, body, () => (values['env'] === true ? [exportLine('RTC_PROJECT', body.id)] : [projectLine(body)]));
    return 0;
  }
  throw new UsageError(`projects: unknown subcommand ${JSON.stringify(sub ?? '')} (list, create)`);
}
