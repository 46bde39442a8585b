import { useEffect, useState } from 'preact/hooks';
import type { PricingPlan } from '@rtc/protocol';
import { api, publicApi } from '../api.ts';
import { ErrorText, Field, useAction } from '../ui.tsx';

interface UsageKind {
  readonly id: string;
  readonly name: string;
}

/** One plan's price of one usage kind (`GET /v1/public/pricing/rates`). */
interface Rate {
  readonly plan: string;
  readonly usage_kind: string;
  readonly currency: string;
  /** The exact price of a minute in major units, a decimal string. */
  readonly per_minute: string;
}

interface Currency {
  readonly code: string;
  readonly name: string;
  readonly minor_units: number;
}

interface Quote {
  readonly id: string;
  readonly currency: string;
  readonly minor_units: number;
  readonly total_minor: number;
  readonly usage_subtotal_minor: number;
  readonly plan_fee: { readonly amount_minor: number };
  readonly discount: { readonly amount_minor: number };
  readonly lines: readonly { readonly usage_kind: string; readonly description: string; readonly billable_minutes: number; readonly amount_minor: number }[];
}

function money(minor: number, units: number, currency: string): string {
  return `${(minor / 10 ** units).toFixed(units)} ${currency}`;
}

/** Plans from the public pricing API, and a quote calculator (quotes need a session: they are stored). */
export function PricingPage({ signedIn }: { signedIn: boolean }) {
  const [plans, setPlans] = useState<readonly PricingPlan[]>([]);
  const [kinds, setKinds] = useState<readonly UsageKind[]>([]);
  const [rates, setRates] = useState<readonly Rate[]>([]);
  const [currencies, setCurrencies] = useState<readonly Currency[]>([]);
  const [plan, setPlan] = useState('');
  const [currency, setCurrency] = useState('');
  const [minutes, setMinutes] = useState<Record<string, string>>({});
  const [quote, setQuote] = useState<Quote | undefined>(undefined);
  const load = useAction();
  const price = useAction();
  useEffect(() => void load.run(async () => {
    const [p, r, c] = await Promise.all([
      publicApi<{ plans: PricingPlan[] }>('/v1/public/pricing/plans'),
      publicApi<{ usage_kinds: UsageKind[]; rates: Rate[] }>('/v1/public/pricing/rates'),
      publicApi<{ currencies: Currency[] }>('/v1/public/pricing/currencies'),
    ]);
    setPlans(p.plans);
    setKinds(r.usage_kinds);
    setRates(r.rates);
    setCurrencies(c.currencies);
    setPlan(p.plans[0]?.id ?? '');
  }), []);
  const currencyOf = (code: string): Currency | undefined => currencies.find((c) => c.code === code);
  return (
    <section>
      <h1>Pricing</h1>
      <ErrorText error={load.error} />
      <ul class="cards">
        {plans.map((p) => (
          <li key={p.id}>
            <strong>{p.name}</strong> <span>{money(p.monthly_fee_minor, currencyOf(p.currency)?.minor_units ?? 2, p.currency)} a month</span>
            <small>{p.description}</small>
            <PlanTerms plan={p} kinds={kinds} rates={rates.filter((r) => r.plan === p.id)} />
          </li>
        ))}
      </ul>
      <h2>Quote calculator</h2>
      {!signedIn && <p><a href="#/signin">Sign in</a> to price your expected usage: quotes are kept in your account.</p>}
      {signedIn && (
        <form onSubmit={(e) => {
          e.preventDefault();
          void price.run(async () => {
            const usage = Object.fromEntries(Object.entries(minutes).filter(([, v]) => v !== '').map(([k, v]) => [k, Number(v)]));
            setQuote(await api<Quote>('POST', '/v1/billing/quotes', { plan, ...(currency ? { currency } : {}), usage }));
          });
        }}>
          <Field label="Plan">
            <select value={plan} onChange={(e) => setPlan(e.currentTarget.value)}>
              {plans.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
            </select>
          </Field>
          <Field label="Currency">
            <select value={currency} onChange={(e) => setCurrency(e.currentTarget.value)}>
              <option value="">The plan's currency</option>
              {currencies.map((c) => <option key={c.code} value={c.code}>{c.code} · {c.name}</option>)}
            </select>
          </Field>
          {kinds.map((k) => (
            <Field key={k.id} label={`${k.name} (minutes a month)`}>
              <input type="number" min={0} step={1} value={minutes[k.id] ?? ''} onInput={(e) => setMinutes({ ...minutes, [k.id]: e.currentTarget.value })} />
            </Field>
          ))}
          <ErrorText error={price.error} />
          <button type="submit" disabled={price.busy}>Get a quote</button>
        </form>
      )}
      {quote && (
        <table aria-label="Quote">
          <tbody>
            <tr><th scope="row">Plan fee</th><td>{money(quote.plan_fee.amount_minor, quote.minor_units, quote.currency)}</td></tr>
            {quote.lines.map((l) => (
              <tr key={l.usage_kind}><th scope="row">{l.description} ({l.billable_minutes} billable minutes)</th><td>{money(l.amount_minor, quote.minor_units, quote.currency)}</td></tr>
            ))}
            <tr><th scope="row">Volume discount</th><td>−{money(quote.discount.amount_minor, quote.minor_units, quote.currency)}</td></tr>
            <tr><th scope="row">Total a month</th><td data-testid="quote-total"><strong>{money(quote.total_minor, quote.minor_units, quote.currency)}</strong></td></tr>
          </tbody>
        </table>
      )}
    </section>
  );
}

/** What a plan includes every month and what a minute above that costs, per usage kind. */
function PlanTerms({ plan, kinds, rates }: { plan: PricingPlan; kinds: readonly UsageKind[]; rates: readonly Rate[] }) {
  if (kinds.length === 0) return null;
  return (
    <dl class="terms" aria-label={`${plan.name}: included minutes and rates`}>
      {kinds.map((k) => {
        const included = plan.included_minutes[k.id] ?? 0;
        const rate = rates.find((r) => r.usage_kind === k.id);
        return (
          <div key={k.id}>
            <dt>{k.name}</dt>
            <dd>{included > 0 ? `${included.toLocaleString('en')} min free a month, then ` : ''}
              {rate ? `${rate.per_minute} ${rate.currency} a minute` : 'no rate'}</dd>
          </div>
        );
      })}
    </dl>
  );
}
