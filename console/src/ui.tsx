/** Small accessible building blocks: labelled fields, the API's error in its own words, busy buttons. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api.ts';

export function ErrorText({ error }: { error: unknown }) {
  if (error === undefined || error === null) return null;
  const text = error instanceof ApiError ? `${error.message} (${error.code})` : error instanceof Error ? error.message : String(error);
  return <p class="error" role="alert">{text}</p>;
}

export function Field(props: { label: string; children: ComponentChildren; hint?: string }) {
  return (
    <label class="field">
      <span>{props.label}</span>
      {props.children}
      {props.hint && <small>{props.hint}</small>}
    </label>
  );
}

/** Runs an action with its error shown and the form busy while it runs. */
export function useAction(): { busy: boolean; error: unknown; run: (action: () => Promise<void>) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (action: () => Promise<void>): Promise<void> => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export function formatTime(seconds: number): string {
  return new Date(seconds * 1000).toLocaleString();
}
