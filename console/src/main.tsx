import { render, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Project, ProjectList } from '@rtc/protocol';
import { api, onSessionChange, signOut, signedIn } from './api.ts';
import { AccountPage } from './pages/account.tsx';
import { AuthPage } from './pages/auth.tsx';
import { InspectorPage } from './pages/inspector.tsx';
import { JoinPage } from './pages/join.tsx';
import { PricingPage } from './pages/pricing.tsx';
import { ProjectPages } from './pages/project.tsx';
import { ProjectsPage } from './pages/projects.tsx';
import { isProjectPage, navigate, PROJECT_ID, PROJECT_PAGES, returnPath, signInPath, useRoute, type ProjectPageId } from './router.ts';
import { Logo, PRODUCT } from './ui.tsx';
import './styles.css';

/** The project switcher: every project of the account; choosing one keeps the page, on that project. */
function ProjectSwitcher({ projects, current, page }: { projects: readonly Project[]; current: string | undefined; page: string }) {
  return (
    <label class="switcher">
      <span>Project</span>
      <select value={current ?? ''} onChange={(e) => {
        const id = e.currentTarget.value;
        navigate(id ? `/projects/${id}${page ? `/${page}` : ''}` : '/projects');
      }}>
        <option value="">All projects</option>
        {projects.map((p) => <option key={p.id} value={p.id}>{p.name}{p.archived ? ' (archived)' : ''}</option>)}
      </select>
    </label>
  );
}

function NavLink({ href, current, children }: { href: string; current: boolean; children: ComponentChildren }) {
  return <li><a href={`#${href}`} aria-current={current ? 'page' : undefined}>{children}</a></li>;
}

/** Top bar, side navigation (a menu at phone width) and the page. */
function Shell(props: { session: boolean; path: string; projectId: string | undefined; page: string; children: ComponentChildren }) {
  const { session, path, projectId, page } = props;
  const [open, setOpen] = useState(false);
  const [projects, setProjects] = useState<readonly Project[]>([]);
  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!session) return;
    // the list again when a project appears that it does not hold yet (one just created or renamed)
    if (projectId && projects.some((p) => p.id === projectId) && path !== '/projects') return;
    void api<ProjectList>('GET', '/v1/projects').then((l) => setProjects(l.projects), () => undefined);
  }, [session, projectId, path]);
  const nav = (
    <nav id="side-nav" class={`sidenav${open ? ' open' : ''}`} aria-label="Console">
      {session && <ProjectSwitcher projects={projects} current={projectId} page={projectId ? page : ''} />}
      {session && projectId && (
        <ul>
          {PROJECT_PAGES.map(([id, title]) => (
            <NavLink key={id} href={`/projects/${projectId}${id ? `/${id}` : ''}`} current={page === id}>{title}</NavLink>
          ))}
        </ul>
      )}
      <ul>
        {session && <NavLink href="/projects" current={path === '/projects'}>All projects</NavLink>}
        {(!session || !projectId) && <NavLink href="/inspect" current={path === '/inspect'}>Grant inspector</NavLink>}
        {session && <NavLink href="/account" current={path === '/account'}>Account</NavLink>}
        <NavLink href="/pricing" current={path === '/pricing'}>Pricing</NavLink>
        {!session && <NavLink href="/signin" current={path === '/signin'}>Sign in</NavLink>}
      </ul>
      {session && <button type="button" class="secondary" onClick={() => { void signOut(); navigate('/signin'); }}>Sign out</button>}
    </nav>
  );
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
      <header class="topbar">
        <a class="brand" href={session ? '#/projects' : '#/signin'}><Logo /> <span>{PRODUCT}</span></a>
        <button type="button" class="menu-button" aria-expanded={open} aria-controls="side-nav" onClick={() => setOpen(!open)}>Menu</button>
      </header>
      <div class="shell">
        {nav}
        <main id="main" tabIndex={-1}>{props.children}</main>
      </div>
    </>
  );
}

function App() {
  const route = useRoute();
  const [session, setSession] = useState(signedIn());
  useEffect(() => onSessionChange(() => setSession(signedIn())), []);
  const [section, id, sub] = route.parts;
  const publicPage = section === 'pricing' || section === 'inspect' || section === 'join';
  const authPage = section === 'signin' || section === 'signup';
  const projectId = section === 'projects' && id && PROJECT_ID.test(id) ? id : undefined;
  const page: ProjectPageId | undefined = projectId ? (sub === undefined ? '' : isProjectPage(sub) ? sub : undefined) : undefined;
  useEffect(() => {
    // a tab whose session ended goes to sign in, and comes back here after it
    if (!session && !publicPage && !authPage) location.replace(`#${signInPath(route.path)}`);
    else if (session && authPage) navigate(returnPath(route.query));
  }, [session, route.path]);
  let content: ComponentChildren;
  let title: string;
  if (section === 'join' && id) [content, title] = [<JoinPage invitation={id} />, 'Join a test room'];
  else if (section === 'pricing') [content, title] = [<PricingPage signedIn={session} />, 'Pricing'];
  else if (section === 'inspect') [content, title] = [<InspectorPage />, 'Grant inspector'];
  else if (!session) {
    const kind = section === 'signup' ? 'register' : 'login';
    // keyed: the sign-up page's error never shows on the sign-in page
    [content, title] = [<AuthPage key={kind} kind={kind} query={route.query} />, kind === 'register' ? 'Create your account' : 'Sign in'];
  } else if (section === 'account') [content, title] = [<AccountPage />, 'Account'];
  else if (projectId && page !== undefined) {
    [content, title] = [<ProjectPages key={projectId} projectId={projectId} page={page} />, PROJECT_PAGES.find(([p]) => p === page)?.[1] ?? ''];
  } else [content, title] = [<ProjectsPage />, 'Projects'];
  useEffect(() => {
    document.title = `${title} · ${PRODUCT} console`;
  }, [title]);
  return <Shell session={session} path={route.path} projectId={projectId} page={page ?? ''}>{content}</Shell>;
}

render(<App />, document.getElementById('app')!);
