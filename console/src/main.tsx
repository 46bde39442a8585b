import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { onSessionChange, signOut, signedIn } from './api.ts';
import { AuthPage } from './pages/auth.tsx';
import { InspectorPage } from './pages/inspector.tsx';
import { PricingPage } from './pages/pricing.tsx';
import { ProjectPage } from './pages/project.tsx';
import { ProjectsPage } from './pages/projects.tsx';
import './styles.css';

/** Project ids as the API gives them; anything else in the hash is not put into an API path. */
const PROJECT_ID = /^prj_[A-Za-z0-9_-]{1,64}$/;

/** The route is the hash: #/projects, #/projects/prj_…, #/pricing, #/inspect, #/signin, #/signup. */
function useRoute(): string[] {
  const read = (): string[] => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = (): void => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function App() {
  const route = useRoute();
  const [session, setSession] = useState(signedIn());
  useEffect(() => onSessionChange(() => setSession(signedIn())), []);
  const [page, id] = route;
  const publicPage = page === 'pricing' || page === 'inspect';
  const content = page === 'pricing' ? <PricingPage signedIn={session} />
    : page === 'inspect' ? <InspectorPage />
    : !session ? <AuthPage kind={page === 'signup' ? 'register' : 'login'} />
    : page === 'projects' && id && PROJECT_ID.test(id) ? <ProjectPage id={id} />
    : <ProjectsPage />;
  useEffect(() => {
    if (!session && !publicPage && page !== 'signin' && page !== 'signup') location.hash = '#/signin';
  }, [session, page, publicPage]);
  return (
    <>
      <header>
        <a class="brand" href="#/projects">RTC console</a>
        <nav aria-label="Main">
          {session && <a href="#/projects">Projects</a>}
          <a href="#/pricing">Pricing</a>
          <a href="#/inspect">Grant inspector</a>
          {session ? <button type="button" class="link" onClick={() => { void signOut(); location.hash = '#/signin'; }}>Sign out</button>
            : <a href="#/signin">Sign in</a>}
        </nav>
      </header>
      <main>{content}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
